"""A `lines=` reference whose code or output moved under it: `{{ example lines=12-18 }}`
after a line was added above line 12 shows other code, and `{{ output lines=4-6 }}` after a
re-record printed a line more above shows other output, and neither is an error on its own.
Given what the lesson's example and recording were at the last build, each such reference
whose old text now stands elsewhere is an error naming the lesson file, its line and what
to write instead. Pure: the build hands in the two sides (builder/build/pipeline.py).

Output is compared with its digits masked, so a shift is found through a re-record that
also moved numbers (timings); code is compared exactly. A slice whose lines were edited in
place is not a shift: it shows what the author wrote there.
"""

from __future__ import annotations

import re
import shlex

from ..core.errors import RenderError
from ..course.model import Lesson
from .terminal import terminal_lines

_REFERENCE = re.compile(r"^\{\{\s*(example|output)\b(.*?)\}\}\s*$")
_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_DIGITS = re.compile(r"\d+")


def moved_references(
    lesson: Lesson, old_source: bytes, old_stdout: str | None, new_stdout: str | None
) -> list[RenderError]:
    """An error for each `lines=` reference of `lesson` whose lines moved since the example
    was `old_source` and its recording printed `old_stdout`."""
    sides = {
        "example": (_code(old_source), _code(lesson.source)),
        "output": (_output(old_stdout), _output(new_stdout)),
    }
    errors = []
    for number, line in enumerate(lesson.body.splitlines()):
        found = _REFERENCE.match(line.strip())
        spec = _lines_spec(found[2]) if found else None
        if found is None or spec is None:
            continue
        old, new = sides[found[1]]
        moved = _moved(spec, old, new)
        if moved:
            first, last = moved
            now = f"{first}" if first == last else f"{first}-{last}"
            what = "code" if found[1] == "example" else "output"
            message = (
                f"line {lesson.body_line + number}: {{{{ {found[1]} lines={spec} }}}} now "
                f"shows other {what}: the lines it showed moved to {now}; write lines={now}"
            )
            hint = "or put the example in cells (docs/authoring.md, Cells): they never shift"
            errors.append(RenderError(message, path=lesson.lesson_path, hint=hint))
    return errors


def _lines_spec(arguments: str) -> str | None:
    try:
        words = shlex.split(arguments)
    except ValueError:
        return None  # the page says why when it renders
    found = dict(word.partition("=")[::2] for word in words if "=" in word)
    return None if "cell" in found else found.get("lines")


def _code(source: bytes) -> list[str]:
    return source.decode("utf-8-sig").splitlines()


def _output(stdout: str | None) -> list[str]:
    return [_DIGITS.sub("0", line.rstrip("\n")) for line in terminal_lines(stdout or "")]


def _moved(spec: str, old: list[str], new: list[str]) -> tuple[int, int] | None:
    """Where the lines `spec` named in `old` stand in `new`, when that is elsewhere and the
    lines it names in `new` are not those."""
    found = _RANGE.fullmatch(spec)
    if not found or not old or not new:
        return None
    first, last = int(found[1]), int(found[2] or found[1])
    if not 1 <= first <= last <= len(old):
        return None
    shown = old[first - 1 : last]
    if new[first - 1 : last] == shown or not any(line.strip() for line in shown):
        return None
    size = len(shown)
    for start in range(len(new) - size + 1):
        if new[start : start + size] == shown:
            return start + 1, start + size
    return None
