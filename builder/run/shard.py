"""`record --shard K/N`: a deterministic K-th of the lessons to record, for a CI matrix.

Every job of an N-job matrix sees the same checkout, so the same lessons to record and the
same last run times; each splits them the same way and keeps its own part. The split is
LPT scheduling: longest lesson first, each to the part with the least work so far (ties:
the lower part, then the lesson id), so the parts end at about the same time. A lesson
never timed counts as long as the average of those that were (1 s when none was).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..course.model import Lesson

UNTIMED_SECONDS = 1.0
MAX_SHARDS = 1000  # a CI matrix has at most 256 jobs (GitHub); more parts is a typo


@dataclass(frozen=True)
class Shard:
    index: int  # 1 to count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """'2/3' -> Shard(2, 3); a ValueError says what was expected."""
        match = re.fullmatch(r"\s*([0-9]{1,9})\s*/\s*([0-9]{1,9})\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]) <= MAX_SHARDS:
            raise ValueError(f"{text!r} is not K/N with 1 <= K <= N <= {MAX_SHARDS}, such as 2/3")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def pick(self, lessons: list[Lesson], seconds: dict[str, float]) -> list[Lesson]:
        """This shard's lessons, longest first. Parts beyond the number of lessons are
        empty (LPT gives each of the first lessons a part of its own): never made."""
        parts = split(lessons, seconds, min(self.count, len(lessons)))
        return parts[self.index - 1] if self.index <= len(parts) else []


def split(lessons: list[Lesson], seconds: dict[str, float], count: int) -> list[list[Lesson]]:
    """`lessons` in `count` parts of about equal total run time (LPT)."""
    known = [seconds[x.id] for x in lessons if x.id in seconds]
    untimed = sum(known) / len(known) if known else UNTIMED_SECONDS
    cost = {x.id: seconds.get(x.id, untimed) for x in lessons}
    parts: list[list[Lesson]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for lesson in sorted(lessons, key=lambda x: (-cost[x.id], x.id)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        parts[lightest].append(lesson)
        loads[lightest] += cost[lesson.id]
    return parts
