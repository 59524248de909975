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

import html
import re
from dataclasses import replace
from pathlib import Path

from ..core.errors import BuildError, BuildErrors
from ..core.scratch import scratch as scratch_folder
from ..course.load import load_course
from ..course.model import Course, Lesson
from ..course.recording import Recording, loads
from . import git as revision
from .changes import CourseChanges, LessonChange, PageMark, compare, line_keys, timing_panel


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

_MARK = re.compile(
    r'<h[23] id="(?P<hid>[^"]*)"[^>]*>(?P<heading>.*?)</h[23]>'
    r'|<data class="rv" [^>]*>(?P<value>.*?)</data>'
    r'<span class="rv-note"[^>]*>[^<]*<span class="rv-source">(?P<note>[^<]*)</span>'
    r'|<figure class="output"[^>]*>.*?<code>(?P<output>.*?)</code>'
    r'|<figure class="panel" id="panel-(?P<panel>\d+)"[^>]*>.*?(?P<table><table.*?</table>)'
    r'|<mark class="broken">(?P<broken>.*?)</mark>',
    re.DOTALL,
)
_TAG = re.compile(r"<[^>]+>")


def page_marks(
    course: Course, lesson: Lesson, old: Recording, new: Recording
) -> tuple[PageMark, ...]:
    """Every recorded thing the lesson's page shows whose text differs between the two
    recordings (the same prose, so the k-th mark of one side is the k-th of the other)."""
    before, after = _marks(course, lesson, old), _marks(course, lesson, new)
    if len(before) != len(after):  # cannot happen: a failed reference leaves a mark
        return ()
    return tuple(
        PageMark(lesson.url, b[0], b[1], b[2], a[3], b[3], _timing(a, b, old, new))
        for a, b in zip(before, after, strict=True)
        if a[3] != b[3]
    )


Mark = tuple[str, str, str, str]  # section, anchor, what, shown


def _marks(course: Course, lesson: Lesson, recording: Recording) -> list[Mark]:
    # markdown-it, only when pages are compared; imported before figures' Jinja, so that on
    # a light install the note says markdown-it is missing
    from ..render import prose
    from ..render.figures import unplaced_panels

    rendered, _ = prose.render_prose(lesson, course, recording, "../../", _plain)
    body = rendered.html + str(unplaced_panels(recording, rendered.placed_panels, "../../"))
    section = anchor = ""
    marks: list[Mark] = []
    for match in _MARK.finditer(body):
        if match["hid"] is not None:
            section, anchor = _text(match["heading"]), match["hid"]
        elif match["note"] is not None:
            marks.append((section, anchor, f"value: {_text(match['note'])}", _text(match["value"])))
        elif match["output"] is not None:
            marks.append((section, anchor, "recorded output", html.unescape(match["output"])))
        elif match["panel"] is not None:
            panel = match["panel"]
            marks.append((section, f"panel-{panel}", f"panel {panel}", _table(match["table"])))
        else:
            marks.append((section, anchor, "a reference this recording cannot resolve", ""))
    return marks


def _timing(a: Mark, b: Mark, old: Recording, new: Recording) -> bool:
    """A mark that only moved timings: its output text (or the output line a value reads)
    is the same once timings are masked, or the value is read from a timing panel."""
    what = b[2]
    if what == "recorded output":
        return _figure_keys(old, a[3]) == _figure_keys(new, b[3])
    lines = [re.search(r"recorded output, line (\d+)$", x[2]) for x in (a, b)]
    if lines[0] and lines[1]:
        return _line_key(old, lines[0][1]) == _line_key(new, lines[1][1])
    panel = re.match(r"(?:value: )?panel (\d+)", what)
    number = int(panel[1]) if panel else 0
    declared = None if new.timings is None else set(new.timings.panels)
    return 0 < number <= len(new.panels) and timing_panel(new.panels[number - 1], number, declared)


def _line_key(recording: Recording, number: str) -> str:
    keys = line_keys(recording.stdout, recording.timings)
    return keys[int(number) - 1] if int(number) <= len(keys) else ""


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


def _text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment)).strip()


def _table(table: str) -> str:
    """A panel's table as text: each row's cells, rows joined with ' / '."""
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.DOTALL)[1:]  # not the head row
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row) for row in rows]
    return " / ".join(" ".join(_text(cell) for cell in row) for row in cells)
