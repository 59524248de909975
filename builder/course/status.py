"""Compare the course with recordings/: one state per lesson, by hashing only.

Nothing here executes an example or imports jax or matplotlib.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..core.errors import RecordingError
from ..core.observe import editor_file, read_versions
from . import fingerprint
from .files import Reads, input_folder, json_files, reading
from .model import Course, Lesson
from .recording import Recording, read, read_bytes
from .rules import expected_versions, read_input
from .validation import Cache, uncached


class State(enum.StrEnum):
    FRESH = "fresh"
    MISSING = "missing"
    STALE_CONTENT = "stale(content)"
    STALE_HARNESS = "stale(harness)"
    STALE_ENVIRONMENT = "stale(environment)"
    INVALID = "invalid"
    NOT_CANONICAL = "not canonical"  # valid, but its bytes are not what saving writes
    ORPHAN = "orphan"
    NEEDS_GPU = "needs a GPU machine"  # a `requires: gpu` lesson, missing or stale
    NEEDS_TPU = "needs a TPU machine"  # a `requires: tpu` lesson, missing or stale


# By a lesson's `requires:`: the state of one whose recording is missing or stale.
WAITING = MappingProxyType({"gpu": State.NEEDS_GPU, "tpu": State.NEEDS_TPU})


@dataclass(frozen=True)
class LessonStatus:
    lesson_id: str
    state: State
    detail: str
    path: Path
    recording: Recording | None = None
    digest: str = ""  # of the recording file's bytes, when it was read
    line: int = 0  # of the recording file, where `detail` is (0: none), as BuildError's

    def key_fields(self) -> tuple[object, ...]:
        """What an artifact's key takes of a status (builder.core.artifact): the recording by
        its file's digest, of which it is a pure function (with the code, in every key), so
        that no key walks a recording's every line and value."""
        return (self.lesson_id, self.state, self.detail, self.path, self.digest or self.recording)

    @property
    def fresh(self) -> bool:
        return self.state is State.FRESH

    @property
    def waiting(self) -> bool:
        """Missing or stale, and only a GPU or TPU machine can record it (WAITING)."""
        return self.state in WAITING.values()

    @property
    def needs_run(self) -> bool:
        """On this machine: a lesson that needs a GPU or TPU runs only where there is one."""
        return not (self.waiting or self.state in (State.FRESH, State.ORPHAN))

    @property
    def passes(self) -> bool:
        """What `check` accepts: fresh, or waiting for a GPU or TPU machine (CI runs on CPUs)."""
        return self.fresh or self.waiting


_RECORDABLE = (State.MISSING, State.STALE_CONTENT, State.STALE_HARNESS, State.STALE_ENVIRONMENT)


def recording_path(recordings: Path, lesson_id: str) -> Path:
    return recordings / f"{lesson_id}.json"


def course_status(
    course: Course,
    recordings: Path,
    versions: dict[str, str] | None = None,
    cache: Cache = uncached,
    kept: Mapping[str, LessonStatus] | None = None,
    reads: Reads | None = None,
) -> list[LessonStatus]:
    """The state of every lesson in course order, then every orphaned recording.

    `versions` are the installed packages' (read here when not given: a build takes them
    from its manifest); `cache` keeps each recording as validated, by its bytes; `kept`:
    statuses taken before, by lesson id, of lessons whose inputs and recording have not
    changed since (the preview knows from the file events); `reads`: where the input door
    notes what each status is read from, by lesson id.
    """
    input_folder(recordings, RecordingError)  # read as every input is: never through a link
    kept = kept or {}
    versions = versions or read_versions()
    renderer = fingerprint.renderer_hash()
    expected = expected_versions(versions)

    def read(lesson: Lesson) -> LessonStatus:
        with reading(reads, lesson.id):
            return _lesson_status(lesson, recordings, renderer, expected, cache, reads)

    statuses = [kept.get(x.id) or read(x) for x in course.lessons]
    ids = {lesson.id for lesson in course.lessons}
    for name in json_files(recordings):
        if (stem := name[:-5]) not in ids and not name.startswith("_") and not editor_file(name):
            found = recordings / name
            statuses.append(LessonStatus(stem, State.ORPHAN, "no lesson has this id", found))
    return statuses


def _lesson_status(
    lesson: Lesson,
    recordings: Path,
    renderer: str,
    expected: dict[str, tuple[str, str]],
    cache: Cache,
    reads: Reads | None,
) -> LessonStatus:
    path = recording_path(recordings, lesson.id)
    try:
        data = read_bytes(path, reads)
    except FileNotFoundError:
        return _on_device(lesson, LessonStatus(lesson.id, State.MISSING, "never recorded", path))
    except RecordingError as error:
        return LessonStatus(lesson.id, State.INVALID, error.problem, path, line=error.line)
    digest = fingerprint.sha256(data)
    try:
        recording, differs = cache("recording", (digest,), lambda: read(data, path))
    except RecordingError as error:
        return LessonStatus(lesson.id, State.INVALID, error.problem, path, line=error.line)
    if recording.lessonId != lesson.id:
        detail = f"its lessonId is {recording.lessonId!r}, not {lesson.id!r}"
        return LessonStatus(lesson.id, State.INVALID, detail, path, digest=digest)
    state, detail = _staleness(lesson, recording, renderer, expected, recordings, reads)
    if state is State.FRESH and (missing := incomplete(lesson, recording)):
        return LessonStatus(lesson.id, State.INVALID, missing, path, digest=digest)
    line = 0
    if state is State.FRESH and differs:
        state, (detail, line) = State.NOT_CANONICAL, _not_canonical(data, differs)
    status = LessonStatus(lesson.id, state, detail, path, recording, digest, line)
    return _on_device(lesson, status)


_NOT_CANONICAL = (
    "not byte for byte what the builder writes, from line {} (a key's order, spacing or a "
    "number's spelling): a hand edit, or another tool's"
)
_CRLF = (
    "has CRLF line endings, which the builder never writes: git's core.autocrlf? "
    "see .gitattributes (`recordings/** -text`), then check the recordings out again"
)


def _not_canonical(data: bytes, line: int) -> tuple[str, int]:
    """Why a valid recording is not canonical, and from which line: a line ending the
    builder never writes (a string's CR is written `\\r`) is git's or an editor's doing, not
    a hand edit, and at no one line."""
    return (_CRLF, 0) if b"\r\n" in data else (_NOT_CANONICAL.format(line), line)


def incomplete(lesson: Lesson, recording: Recording) -> str:
    """What a recording of `lesson` lacks that a run of its example writes, or "": one
    record of each of the example's cells that runs (all but `show` cells), in order
    (builder/cells.py), whichever executor made it (a Dask worker that lost the cells wrote
    a recording that rendering refuses)."""
    wanted = [cell.name for cell in lesson.cells if not cell.show]
    found = [cell.name for cell in recording.cells or ()]
    if wanted == found:
        return ""
    if recording.cells is None:
        said = f"has no `cells`, and its example runs {len(wanted)} cells ({', '.join(wanted)})"
    elif not wanted:
        said = "lists cells, and its example has none"
    else:
        gone = [name for name in wanted if name not in found]
        said = f"lists the cells {', '.join(found) or 'none'}, not {', '.join(wanted)}" + (
            f" (missing: {', '.join(gone)})" if gone else ""
        )
    return f"{said}: a run of it records each cell"


def _on_device(lesson: Lesson, status: LessonStatus) -> LessonStatus:
    """A `requires: gpu` (`tpu`) lesson whose recording is missing or stale needs a GPU (TPU)
    machine: not a failure of a CPU machine's check. An invalid recording stays invalid."""
    if lesson.accelerator is None or status.state not in _RECORDABLE:
        return status
    detail = f"{status.state}" + (f": {status.detail}" if status.detail else "")
    return replace(status, state=WAITING[lesson.accelerator], detail=detail)


def _staleness(
    lesson: Lesson,
    recording: Recording,
    renderer: str,
    expected: dict[str, tuple[str, str]],
    recordings: Path,
    reads: Reads | None,
) -> tuple[State, str]:
    inputs = fingerprint.lesson_inputs(lesson)
    if recording.contentHash != fingerprint.content_hash(inputs):
        remembered = read_input(recordings, lesson.id, reads)  # only a stale lesson's is read
        return State.STALE_CONTENT, _content_detail(recording, inputs, remembered)
    if recording.rendererHash != renderer:
        return (
            State.STALE_HARNESS,
            "the recording harness (builder/run/harness.py, builder/run/figures.py, "
            "builder/panels.py, builder/cells.py) changed",
        )
    drift = environment_drift(recording, expected)
    if drift:
        return State.STALE_ENVIRONMENT, drift
    return State.FRESH, ""


def _content_detail(recording: Recording, inputs: dict[str, Any], remembered: Any) -> str:
    old = remembered.get("inputs") if isinstance(remembered, dict) else None
    if not isinstance(old, dict) or remembered.get("contentHash") != recording.contentHash:
        return "the example, its data files or its settings changed"
    changes = fingerprint.changed_inputs(old, inputs)
    return (", ".join(changes) or "the inputs") + " changed"


def environment_drift(recording: Recording, expected: dict[str, tuple[str, str]]) -> str:
    """'jax 0.9.2 recorded, 0.9.3 installed' for each pinned package that differs from
    `expected` (builder.course.rules.expected_versions)."""
    drift = [
        f"{name} {getattr(recording.environment, name)} recorded, {version} {whence}"
        for name, (version, whence) in expected.items()
        if getattr(recording.environment, name) != version
    ]
    return "; ".join(drift)
