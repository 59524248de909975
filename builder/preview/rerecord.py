"""The preview's background recording: each lesson whose recording is not fresh is
re-recorded by a Build's own record step (builder.pipeline.build `Build.record`), under the
build lock as every build records, one lesson at a time, in a thread beside the server.

The pages of the lesson being recorded say "re-recording..." (the Hub's `recording`). A
success writes the recording, and its file event rebuilds the page with the new output; a
failure leaves the last good recording as it was and shows its error in the overlay until
the example (or what else its content hash covers) changes and is tried again.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ..core.errors import BuildError
from ..core.observe import Paths
from ..course import fingerprint
from ..pipeline.build import Build, Execute
from .hub import problems

if TYPE_CHECKING:
    from ..course.model import Course, Lesson
    from ..course.status import LessonStatus
    from ..run.execute import Runner
    from .hub import Hub

logger = logging.getLogger(__name__)


class Recorder:
    def __init__(self, paths: Paths, hub: Hub, runner: Runner | None, jobs: int) -> None:
        self.paths, self.hub, self.runner, self.jobs = paths, hub, runner, jobs
        self.tried: dict[str, str] = {}  # lesson id -> the content hash last recorded from
        self.thread: threading.Thread | None = None

    def poll(self, course: Course, statuses: list[LessonStatus]) -> None:
        """Start recording the lessons that need it and were not tried as they are now."""
        if self.thread is not None and self.thread.is_alive():
            return  # its recordings' file events bring the next poll
        due = [lesson for lesson in _needing_run(course, statuses) if self._untried(lesson)]
        if not due:
            return
        self.hub.publish(recording=[f"{lesson.url}index.html" for lesson in due])
        self.thread = threading.Thread(target=self._record, args=(course, statuses, due))
        self.thread.daemon = True
        self.thread.start()

    def _untried(self, lesson: Lesson) -> bool:
        return self.tried.get(lesson.id) != _content_hash(lesson)

    def _record(self, course: Course, statuses: list[LessonStatus], due: list[Lesson]) -> None:
        for n, lesson in enumerate(due):
            self.tried[lesson.id] = _content_hash(lesson)
            errors = {**self.hub.record_errors}
            errors.pop(lesson.id, None)
            try:
                with Build.opened(self.paths) as run:  # the lock: one writer of recordings/
                    run.course, run.statuses = course, statuses
                    run.record(self.jobs, Execute(runner=self.runner, only=(lesson.id,)))
            except Exception as error:  # shown until the example changes; never fatal
                found = problems(error)
                if isinstance(error, BuildError) and not error.path:
                    found = [{**p, "file": str(lesson.example_path)} for p in found]
                errors[lesson.id] = found
                logger.error("error: %s", error)
            left = [f"{x.url}index.html" for x in due[n + 1 :]]
            self.hub.publish(record_errors=errors, recording=left)

    def stop(self) -> None:
        """Kill the example being recorded, if any (the server is closing)."""
        if self.thread is not None and self.thread.is_alive():
            from ..run.execute import kill_all

            kill_all()
            self.thread.join(timeout=10)


def _needing_run(course: Course, statuses: list[LessonStatus]) -> list[Lesson]:
    stale = {s.lesson_id for s in statuses if s.needs_run}
    return [lesson for lesson in course.lessons if lesson.id in stale]


def _content_hash(lesson: Lesson) -> str:
    return fingerprint.content_hash(fingerprint.lesson_inputs(lesson))
