"""What the recordings changed, as a reader's page reads it: the What-changed page
(`--since REV`) and each environment move's page (course.yml `moves:`).

A move's comparison is committed with the course (content/moves/<slug>.json, written by
`python -m builder moves` where git holds both revisions), so any copy builds its page: a
shallow clone, a source tarball, a folder without .git.

A reader's page says the environment move once (`jax 0.9.2 → 0.10.2`, from the recordings'
environment fields) and compares each lesson without it, so a lesson that prints the same
on the new versions reads as the same (builder.review.page says it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import TypeAdapter, ValidationError

from ..core.errors import BuildError, ContentError
from ..core.fsutil import write_atomic
from ..course.files import read_text, shallow_json
from ..course.load import load_course
from . import git as revision
from .changes import CourseChanges, compare

if TYPE_CHECKING:
    from ..course.model import Course, Move
    from ..course.validation import Cache

# (environment field, before, after, how many recordings hold `after`, of how many)
Moved = tuple[tuple[str, str, str, int, int], ...]
MOVES_FOLDER = "moves"  # content/moves/<slug>.json
MAX_MOVE_BYTES = 8 * 1024 * 1024  # a move of every lesson's output: well under it
_WRITE_IT = (
    "run `python -m builder moves` in a checkout that has both revisions (a full clone), "
    "and commit content/moves/"
)


@dataclass(frozen=True)
class Compared:
    """The lessons' changes (environment left out) and the environment fields that moved."""

    changes: CourseChanges
    moved: Moved


@dataclass(frozen=True)
class Kept:
    """A move's file: the revisions it compares, as course.yml names them, and what changed."""

    before: str
    after: str
    compared: Compared


_ADAPTER: TypeAdapter[Kept] = TypeAdapter(Kept)


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


def move_pages(course: Course, cache: Cache) -> tuple[tuple[Move, Compared], ...]:
    """Each move of course.yml and what it changed, read from its committed file
    (content/moves/<slug>.json: no git), kept in `cache` by the file's text."""
    found = []
    for number, move in enumerate(course.meta.moves):
        path = move_file(course.root, move)
        text = _read_move(course, number, path)
        kept: Kept = cache("move", (text,), partial(_parse, text, path))
        if (kept.before, kept.after) != (move.before, move.after):
            raise _move_error(
                course,
                number,
                f"{path.name} compares {kept.before}..{kept.after}, and course.yml names "
                f"{move.before}..{move.after}",
            )
        found.append((move, kept.compared))
    return tuple(found)


def move_file(content: Path, move: Move) -> Path:
    """Where a move's comparison is committed: content/moves/<slug>.json."""
    return content / MOVES_FOLDER / f"{move.slug}.json"


def write_moves(content: Path, recordings: Path) -> list[Path]:
    """Each of course.yml's moves compared from git (both revisions must be in this
    checkout's history) and written to its file; the files written."""
    course = load_course(content)
    written = []
    for number, move in enumerate(course.meta.moves):
        for side in ("before", "after"):
            _commit(course, recordings, number, side)  # a missing revision names course.yml
        made = compared(content, recordings, move.before, move.after)
        path = move_file(content, move)
        path.parent.mkdir(exist_ok=True)
        data = _ADAPTER.dump_json(Kept(move.before, move.after, made), indent=2)
        write_atomic(path, data + b"\n")
        written.append(path)
    return written


def _read_move(course: Course, number: int, path: Path) -> str:
    if not os.path.lexists(path):
        problem = f"its page is made from {path.name}, which is missing"
        raise _move_error(course, number, problem)
    try:
        return read_text(path, MAX_MOVE_BYTES)
    except BuildError as error:
        raise _move_error(course, number, f"{path.name} {error.problem}") from None


def _parse(text: str, path: Path) -> Kept:
    try:
        return _ADAPTER.validate_json(shallow_json(text.encode(), path))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ContentError(
            f"{where or 'the file'}: {first['msg']}",
            path=path,
            hint=_WRITE_IT,
        ) from None


def _move_error(course: Course, number: int, problem: str) -> ContentError:
    move = course.meta.moves[number]
    yml = course.root / "course.yml"
    line = _line_of(yml, "slug:", move.slug)
    where = move_file(Path(course.root.name), move)
    return ContentError(f"{line}moves[{number}]: {problem} ({where})", path=yml, hint=_WRITE_IT)


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
