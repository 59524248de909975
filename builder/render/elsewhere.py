"""Where a lesson is on the sites course.yml names, as its page links to them: its
lesson.md in an online editor (`source_url`), its notebook in Colab (`colab_url`), and a new
issue about it in the course's tracker (`issues_url`), for a reader whose run printed
something else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..course import addresses
from ..course.model import CourseMeta, Lesson
from ..course.recording import Recording


@dataclass(frozen=True)
class Elsewhere:
    """Where a lesson is on the sites course.yml names ("": not named): its lesson.md in
    an online editor, its notebook in Colab, a new issue about it in the tracker."""

    edit: str = ""
    colab: str = ""
    report: str = ""


def elsewhere(
    meta: CourseMeta, root: Path, lesson: Lesson, recording: Recording | None
) -> Elsewhere:
    """The lesson's addresses on the sites `meta` names (`root`: content/, which
    source_url stands for; `recording`: what the issue's text says it was recorded on)."""
    edit = meta.source_url
    report = ""
    if meta.issues_url:
        title = f"{lesson.title}: a difference from the recording"
        body = f"Lesson: {lesson.title} ({lesson.url})\n"
        if recording is not None:
            env = recording.environment
            versions = f"jax {env.jax}, numpy {env.numpy}, matplotlib {env.matplotlib}"
            body += f"Recorded on: {recording.device}, {versions}\n"
        body += "\nWhat I ran, on what machine and versions, and what it printed differently:\n"
        report = addresses.report_link(meta.issues_url, title, body)
    return Elsewhere(
        edit=f"{edit}/{lesson.lesson_path.relative_to(root).as_posix()}" if edit else "",
        colab=addresses.colab_link(meta.colab_url, lesson.url) if meta.colab_url else "",
        report=report,
    )
