"""What the recordings changed, as a reader's page reads it: the What-changed page
(`--since REV`) and each environment move's page (course.yml `moves:`).

A reader's page says the environment move once (`jax 0.9.2 → 0.10.2`, from the recordings'
environment fields) and compares each lesson without it, so a lesson that prints the same
on the new versions reads as the same (builder.review.page says it). A move names two fixed
revisions, so its comparison is kept in the build's cache under their commits, and a build
that finds it there asks git only which commits they are.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import BuildError, ContentError
from ..course.files import read_text
from . import git as revision
from .changes import CourseChanges, compare

if TYPE_CHECKING:
    from ..course.model import Course, Move
    from ..course.validation import Cache

# (environment field, before, after, how many recordings hold `after`, of how many)
Moved = tuple[tuple[str, str, str, int, int], ...]


@dataclass(frozen=True)
class Compared:
    """The lessons' changes (environment left out) and the environment fields that moved."""

    changes: CourseChanges
    moved: Moved


def compared(content: Path, recordings: Path, base: str, head: str | None) -> Compared:
    """recordings/ at `base` against `head` (a revision, or None: the work tree), with the
    page marks of the course as of `head`."""
    old = revision.json_files(recordings, base)
    new = revision.json_files(recordings, head)
    sides = revision.describe(recordings, base), revision.describe(recordings, head)
    changes = compare(old, new, *sides, environment=False)
    if any(x.category in ("changed", "timing") for x in changes.lessons):
        from .diff import with_pages  # markdown-it: only when a page shows a change

        changes = with_pages(changes, content, head, old, new)
    return Compared(changes, environment_moved(old, new))


def environment_moved(old: dict[str, bytes], new: dict[str, bytes]) -> Moved:
    """Each environment field that moved, lesson by lesson: its value before and after, in
    how many of the lessons recorded on both sides, of how many (a move half recorded:
    `jax 0.9.2 -> 0.10.2` in 11 of 15)."""
    before, after = _environments(old), _environments(new)
    both = sorted(before.keys() & after.keys())
    moved = Counter(
        (name, before[i].get(name, "—"), value)
        for i in both
        for name, value in after[i].items()
        if before[i].get(name, "—") != value
    )
    order = sorted(moved, key=lambda x: (x[0], _version_order(x[1]), _version_order(x[2])))
    return tuple((*x, moved[x], len(both)) for x in order)


def _environments(recordings: dict[str, bytes]) -> dict[str, dict[str, str]]:
    """Each readable recording's environment fields, by lesson id."""
    found: dict[str, dict[str, str]] = {}
    for lesson, data in recordings.items():
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
            found[lesson] = {k: str(v) for k, v in json.loads(data)["environment"].items()}
    return found


def _version_order(value: str) -> tuple[tuple[int, str], ...]:
    """0.9.2 before 0.10.2: numbers as numbers."""
    parts = re.split(r"[.\-]", value)
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in parts)


def move_pages(course: Course, recordings: Path, cache: Cache) -> tuple[tuple[Move, Compared], ...]:
    """Each move of course.yml and what it changed, kept in `cache` by the two commits (a
    revision git cannot find is an error naming course.yml, the move and the revision)."""
    found = []
    for number, move in enumerate(course.meta.moves):
        commits = tuple(_commit(course, recordings, number, side) for side in ("before", "after"))
        content = str(course.root.resolve())
        parts = (*commits, move.before, move.after, content, str(recordings.resolve()))
        make = partial(compared, course.root, recordings, move.before, move.after)
        found.append((move, cache("move", parts, make)))
    return tuple(found)


def _commit(course: Course, recordings: Path, number: int, side: str) -> str:
    rev: str = getattr(course.meta.moves[number], side)
    try:
        return revision.commit(recordings, rev)
    except BuildError as error:
        yml = course.root / "course.yml"
        line = _line_of(yml, f"{side}:", rev)
        raise ContentError(
            f"{line}moves[{number}].{side}: git finds no commit {rev!r} ({error.problem})",
            path=yml,
            hint="name a commit of this repository that holds the recordings (git log "
            "--oneline -- recordings), such as the re-record's commit and its parent (<hash>~1)",
        ) from None


def _line_of(path: Path, key: str, value: str) -> str:
    """'line N: ' of the line of `path` that gives `key` the `value`, or ''."""
    with contextlib.suppress(BuildError):
        for number, line in enumerate(read_text(path).splitlines(), start=1):
            if key in line and value in line:
                return f"line {number}: "
    return ""
