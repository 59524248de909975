"""Compare the course with recordings/: one state per lesson, by hashing only.

Nothing here executes an example or imports jax or matplotlib.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import fingerprint
from .course import Course, Lesson
from .errors import RecordingError
from .recording import Recording, load
from .rules import INPUTS_FILE as INPUTS_FILE  # re-exported: their home before rules.py
from .rules import PINNED_PACKAGES
from .rules import installed_versions as installed_versions
from .rules import read_inputs as read_inputs


class State(enum.StrEnum):
    FRESH = "fresh"
    MISSING = "missing"
    STALE_CONTENT = "stale(content)"
    STALE_HARNESS = "stale(harness)"
    STALE_ENVIRONMENT = "stale(environment)"
    INVALID = "invalid"
    ORPHAN = "orphan"


@dataclass(frozen=True)
class LessonStatus:
    lesson_id: str
    state: State
    detail: str
    path: Path
    recording: Recording | None = None

    @property
    def fresh(self) -> bool:
        return self.state is State.FRESH

    @property
    def needs_run(self) -> bool:
        return self.state not in (State.FRESH, State.ORPHAN)


def recording_path(recordings: Path, lesson_id: str) -> Path:
    return recordings / f"{lesson_id}.json"


def course_status(
    course: Course,
    recordings: Path,
    known: dict[str, LessonStatus] | None = None,
    recorded: dict[str, Recording] | None = None,
) -> list[LessonStatus]:
    """The state of every lesson in course order, then every orphaned recording.

    `known` (from builder.state) holds statuses whose inputs are unchanged on disk, and
    `recorded` recordings whose file is unchanged (of lessons that changed): not read again.
    """
    known, recorded = known or {}, recorded or {}
    sidecar = read_inputs(recordings) if len(known) < len(course.lessons) else {}
    renderer = fingerprint.renderer_hash()
    statuses = [
        known.get(x.id)
        or _lesson_status(x, recordings, renderer, sidecar.get(x.id), recorded.get(x.id))
        for x in course.lessons
    ]
    ids = {lesson.id for lesson in course.lessons}
    for path in sorted(recordings.glob("*.json")):
        if path.stem not in ids and not path.name.startswith("_"):
            statuses.append(LessonStatus(path.stem, State.ORPHAN, "no lesson has this id", path))
    return statuses


def _lesson_status(
    lesson: Lesson,
    recordings: Path,
    renderer: str,
    remembered: Any,
    recording: Recording | None = None,
) -> LessonStatus:
    path = recording_path(recordings, lesson.id)
    if recording is None:
        if not path.exists():
            return LessonStatus(lesson.id, State.MISSING, "never recorded", path)
        try:
            recording = load(path)
        except RecordingError as error:
            return LessonStatus(lesson.id, State.INVALID, error.problem, path)
    if recording.lessonId != lesson.id:
        detail = f"its lessonId is {recording.lessonId!r}, not {lesson.id!r}"
        return LessonStatus(lesson.id, State.INVALID, detail, path)
    state, detail = _staleness(lesson, recording, renderer, remembered)
    return LessonStatus(lesson.id, state, detail, path, recording)


def _staleness(
    lesson: Lesson, recording: Recording, renderer: str, remembered: Any
) -> tuple[State, str]:
    inputs = fingerprint.lesson_inputs(lesson)
    if recording.contentHash != fingerprint.content_hash(inputs):
        return State.STALE_CONTENT, _content_detail(recording, inputs, remembered)
    if recording.rendererHash != renderer:
        return State.STALE_HARNESS, "the recording harness (builder/harness.py, panels.py) changed"
    drift = environment_drift(recording)
    if drift:
        return State.STALE_ENVIRONMENT, drift
    return State.FRESH, ""


def _content_detail(recording: Recording, inputs: dict[str, Any], remembered: Any) -> str:
    old = remembered.get("inputs") if isinstance(remembered, dict) else None
    if not isinstance(old, dict) or remembered.get("contentHash") != recording.contentHash:
        return "the example, its data files or its settings changed"
    changes = fingerprint.changed_inputs(old, inputs)
    return (", ".join(changes) or "the inputs") + " changed"


def environment_drift(recording: Recording) -> str:
    installed = installed_versions()
    env = {name: getattr(recording.environment, name) for name in PINNED_PACKAGES}
    drift = [
        f"{name} {env[name]} recorded, {installed[name]} installed"
        for name in PINNED_PACKAGES
        if env[name] != installed[name]
    ]
    return "; ".join(drift)
