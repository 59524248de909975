"""A `lines=` reference whose code or output moved under it: `{{ example lines=12-18 }}`
after a line was added above line 12 shows other code, and `{{ output lines=4-6 }}` after a
re-record printed a line more above shows other output, and neither is an error on its own.
Given what the lesson's example and recording were at the last build, each such reference
whose old text now stands elsewhere is an error naming the lesson file, its line and what
to write instead. Pure: the build hands in the two sides (builder/pipeline/build.py).

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
    before: Lesson, lesson: Lesson, old_stdout: str | None, new_stdout: str | None
) -> list[RenderError]:
    """An error for each `lines=` reference of `lesson` that shows other lines than the
    reference in the same place of `before` (the k-th with the k-th) showed, when those
    lines now stand elsewhere: `before` is the lesson at the last build, `old_stdout` what
    its recording printed then."""
    sides = {
        "example": (_code(before.source), _code(lesson.source)),
        "output": (_output(old_stdout), _output(new_stdout)),
    }
    errors = []
    old_references = list(_references(before))
    for k, (kind, spec, number) in enumerate(_references(lesson)):
        if k >= len(old_references) or old_references[k][0] != kind:
            break  # the prose moved its references: nothing to pair with
        old, new = sides[kind]
        moved = _moved(old_references[k][1], spec, old, new)
        if moved:
            now = f"{moved[0]}" if moved[0] == moved[1] else f"{moved[0]}-{moved[1]}"
            what = "code" if kind == "example" else "output"
            message = (
                f"line {lesson.body_line + number}: {{{{ {kind} lines={spec} }}}} now shows "
                f"other {what} than it did: the lines it showed moved to {now}; write lines={now}"
            )
            hint = "or put the example in cells (docs/authoring.md, Cells): they never shift"
            errors.append(RenderError(message, path=lesson.lesson_path, hint=hint))
    return errors


def _references(lesson: Lesson) -> list[tuple[str, str, int]]:
    """(example | output, its lines= spec, its line in the body) of each `lines=` reference."""
    found = []
    for number, line in enumerate(lesson.body.splitlines()):
        reference = _REFERENCE.match(line.strip())
        spec = _lines_spec(reference[2]) if reference else None
        if reference and spec:
            found.append((reference[1], spec, number))
    return found


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


def _moved(old_spec: str, spec: str, old: list[str], new: list[str]) -> tuple[int, int] | None:
    """Where the lines `old_spec` named in `old` stand in `new`, when `spec` now names other
    lines and those stand elsewhere (lines edited in place are not a move)."""
    shown, now = _part(old_spec, old), _part(spec, new)
    if shown is None or shown == now or not any(line.strip() for line in shown):
        return None
    size = len(shown)
    for start in range(len(new) - size + 1):
        if new[start : start + size] == shown:
            return start + 1, start + size
    return None


def _part(spec: str, lines: list[str]) -> list[str] | None:
    found = _RANGE.fullmatch(spec)
    if not found:
        return None
    first, last = int(found[1]), int(found[2] or found[1])
    return lines[first - 1 : last] if 1 <= first <= last <= len(lines) else None
