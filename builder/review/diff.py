"""`python -m builder diff`: what a re-record changed between two revisions, for reviewers.

    read      recordings/ at BASE and at HEAD (a git revision, or the work tree)
    compare   per lesson: output lines, panel values, environment (builder/review/changes.py)
    pages     each changed lesson's prose rendered against both recordings: every inline
              value and recorded figure whose rendered text changed, by page and section
    report    text, Markdown or JSON (builder/review/report.py)

The pages step needs the course (at HEAD) and the Markdown renderer; without them (a light
install, `--no-pages`, a course that does not load) the rest of the report is unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import BuildError, BuildErrors
from ..core.scratch import scratch as scratch_folder
from ..course.load import load_course
from ..course.model import Course, Lesson
from ..course.recording import Recording, loads
from . import git as revision
from .changes import CourseChanges, LessonChange, PageMark, compare, line_keys, timing_panel

if TYPE_CHECKING:
    from ..render.marks import Placed  # markdown-it and Jinja: only when pages are compared


def diff(
    content: Path, recordings: Path, base: str, head: str | None, *, pages: bool = True
) -> CourseChanges:
    old = revision.json_files(recordings, base)
    new = revision.json_files(recordings, head)
    base_name = revision.describe(recordings, base)
    changes = compare(old, new, base_name, revision.describe(recordings, head))
    if not pages or not any(x.category in ("changed", "timing") for x in changes.lessons):
        return changes
    return with_pages(changes, content, head, old, new)


def with_pages(
    changes: CourseChanges,
    content: Path,
    head: str | None,
    old: dict[str, bytes],
    new: dict[str, bytes],
) -> CourseChanges:
    """`changes` with each changed lesson's page marks (the course as of `head`, a git
    revision, or None for the work tree); a note instead when pages cannot be compared."""
    try:
        lessons = _with_pages(changes.lessons, content, head, old, new)
    except (BuildError, ImportError) as error:  # a course that does not load; a light install
        problem = str(error).splitlines()[0]
        return replace(changes, note=f"pages not compared: {problem}")
    return replace(changes, lessons=lessons)


def _with_pages(
    lessons: tuple[LessonChange, ...],
    content: Path,
    head: str | None,
    old: dict[str, bytes],
    new: dict[str, bytes],
) -> tuple[LessonChange, ...]:
    with scratch_folder("diff") as scratch:
        root = content if head is None else revision.extract(content, head, scratch)
        try:
            course = load_course(root)
        except BuildError as error:  # named as in the repository, not in the scratch copy
            where = str(content) if head is None else f"{content} (at {head})"
            raise BuildError(_one_line(error).replace(str(root), where)) from None
        return tuple(_lesson_pages(x, course, old, new) for x in lessons)


def _one_line(error: BuildError) -> str:
    """The first problem and what to do about it, on one line."""
    errors = error.errors if isinstance(error, BuildErrors) else [error]
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return " ".join(line.strip() for line in str(errors[0]).splitlines()) + more


def _lesson_pages(
    change: LessonChange, course: Course, old: dict[str, bytes], new: dict[str, bytes]
) -> LessonChange:
    lesson = course.lesson(change.lesson_id)
    if lesson is None or change.category not in ("changed", "timing"):
        return change
    a, b = loads(old[lesson.id], lesson.id), loads(new[lesson.id], lesson.id)
    return replace(change, pages=page_marks(course, lesson, a, b))


# -- which pages show a changed number -------------------------------------------------------


def page_marks(
    course: Course, lesson: Lesson, old: Recording, new: Recording
) -> tuple[PageMark, ...]:
    """Every recorded thing the lesson's page shows whose text differs between the two
    recordings (the same prose, so the k-th mark of one side is the k-th of the other)."""
    before, after = _marks(course, lesson, old), _marks(course, lesson, new)
    if len(before) != len(after):  # cannot happen: a failed reference leaves a mark
        return ()
    return tuple(
        PageMark(lesson.url, b.section, b.anchor, b.kind, _what(b), a.shown, b.shown, timing)
        for a, b in zip(before, after, strict=True)
        if a.shown != b.shown
        for timing in (_timing(a, b, old, new),)
    )


def _marks(course: Course, lesson: Lesson, recording: Recording) -> list[Placed]:
    """What the lesson's page shows of `recording`, in order: the marks the renderer
    placed, then the panels the prose left to the end (under its last heading)."""
    # markdown-it, only when pages are compared; imported before figures' Jinja, so that on
    # a light install the note says markdown-it is missing
    from ..render import prose
    from ..render.marks import panel_placed

    rendered, _ = prose.render_prose(lesson, course, recording, "../../", _plain)
    last = rendered.toc[-1][2] if rendered.toc else ""
    unplaced = [n for n in range(1, len(recording.panels) + 1) if n not in rendered.placed_panels]
    return [*rendered.placed, *(panel_placed(recording, n, last) for n in unplaced)]


def _what(mark: Placed) -> str:
    """What a mark is, as the report says it: "value: <its source>", or its source."""
    return f"value: {mark.source}" if mark.kind == "value" else mark.source


def _timing(a: Placed, b: Placed, old: Recording, new: Recording) -> bool:
    """A mark that only moved timings: its output text (or the output line a value reads)
    is the same once timings are masked, or the value is read from a timing panel."""
    if b.kind == "output":
        return _figure_keys(old, a.shown) == _figure_keys(new, b.shown)
    if a.line and b.line:
        return _line_key(old, a.line) == _line_key(new, b.line)
    number = b.panel
    declared = None if new.timings is None else set(new.timings.panels)
    return 0 < number <= len(new.panels) and timing_panel(new.panels[number - 1], number, declared)


def _line_key(recording: Recording, number: int) -> str:
    keys = line_keys(recording.stdout, recording.timings)
    return keys[number - 1] if number <= len(keys) else ""


def _figure_keys(recording: Recording, shown: str) -> list[str]:
    """A figure's lines (a slice of stdout) as compared: each by the key of the first stdout
    line it is (a line the figure shows is a line of stdout)."""
    keys = dict(
        reversed(
            list(
                zip(
                    recording.stdout.splitlines(),
                    line_keys(recording.stdout, recording.timings),
                    strict=True,
                )
            )
        )
    )
    return [keys.get(line, line) for line in shown.splitlines()]


def _plain(code: str, language: str) -> str:
    """Code as the page would show it, unhighlighted: pages compare recorded text only."""
    from markupsafe import Markup  # with markdown-it: only when pages are compared

    return Markup('<pre class="plain"><code>%s</code></pre>') % code
