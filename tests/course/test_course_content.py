"""The published course: every lesson is complete, recorded, and quotes its run by reference."""

from __future__ import annotations

import re

import pytest

from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.course.recording import Recording, load
from builder.render import anchors, figures, prose
from tests.helpers import ROOT

COURSE = load_course(ROOT / "content")
UNIT = re.compile(
    r"bytes|KiB|MiB|GiB|\bms\b|millisecond|seconds|equations|entries|instructions|operations|"
    r"FLOP|traces|count|ratio|lines|"
    # a ratio of like quantities ('time / bf16 time') is its own unit
    r"^(\w[\w ]*) / \w+ \1$",
    re.IGNORECASE,
)
# A typed figure a run could produce: a decimal, or four or more digits.
FIGURE = re.compile(r"(?<![\w.\-/\[])(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{4,})(?![\w\-\]])")
CODE_OR_MARK = re.compile(r"```.*?```|`[^`\n]*`|\{\{.*?\}\}|\[\[.*?\]\]|\]\([^)]*\)", re.DOTALL)


def _recording(lesson: Lesson) -> Recording:
    return load(ROOT / "recordings" / f"{lesson.id}.json")


def _linked(lesson: Lesson) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ids of the lessons its anchored links lead to, as the build gives them."""
    column = anchors.linked_ids(COURSE, [], lambda x: anchors.page_ids(prose.parser(), x))
    return column[COURSE.lessons.index(lesson)]


@pytest.fixture(scope="module")
def course() -> Course:
    return COURSE


def test_course_has_its_arcs_labs_and_enough_lessons(course: Course) -> None:
    arcs = {arc.id: course.arc_lessons(arc) for arc in course.meta.arcs}
    assert [a for a in arcs if a != "labs"] == ["jaxpr", "xla", "performance", "tpu"]
    assert len(course.lessons) >= 15
    assert len(arcs["labs"]) >= 3
    assert {"jaxpr", "xla", "residuals"} <= {x.slug for x in course.lessons}
    assert course.lesson("performance-05") is course.lesson("residuals")
    assert len(course.glossary) >= 30


@pytest.mark.parametrize("lesson", COURSE.lessons, ids=lambda x: x.id)
def test_each_lesson_is_complete_and_recorded(lesson: Lesson) -> None:
    words = len(CODE_OR_MARK.sub(" ", lesson.body).split())
    assert 550 <= words <= 1250, f"{lesson.id}: {words} words of prose"
    assert lesson.example_path.is_file()
    recording = _recording(lesson)
    assert recording.panels, f"{lesson.id}: no panel"
    for panel in recording.panels:
        assert UNIT.search(panel.ylabel), f"{lesson.id}: y-label {panel.ylabel!r} names no unit"
    shows_code = "{{ example" in lesson.body or "{{ cell " in lesson.body
    assert shows_code and (_outputs_placed(lesson, lesson.body) or "{{ output" in lesson.body)


def _outputs_placed(lesson: Lesson, body: str) -> list[str]:
    """The cells `body` places with their recorded output (not `code` alone) that printed,
    or made a value or an exception."""
    recording = _recording(lesson)
    ran = {cell.name: cell for cell in recording.cells or ()}
    placed = re.findall(r"^\{\{ cell ([a-z0-9_-]+) \}\}$", body, re.MULTILINE)
    return [
        name
        for name in placed
        if name in ran and (ran[name].end > ran[name].start or ran[name].value or ran[name].raised)
    ]


@pytest.mark.parametrize("lesson", COURSE.lessons, ids=lambda x: x.id)
def test_each_lesson_renders_without_a_dangling_reference(lesson: Lesson) -> None:
    rendered, errors = prose.render_prose(
        lesson, COURSE, _recording(lesson), root="../../", linked=_linked(lesson)
    )
    assert [str(e) for e in errors] == []
    assert rendered.terms, f"{lesson.id} marks no glossary term"


@pytest.mark.parametrize("lesson", COURSE.lessons, ids=lambda x: x.id)
def test_no_figure_from_the_run_is_typed_by_hand(lesson: Lesson) -> None:
    """A figure the run printed must be an inline reference, so re-recording updates it.

    Figures the example's source sets (sizes, counts) are the author's inputs, not outputs.
    """
    recording = _recording(lesson)
    produced = set(FIGURE.findall(recording.stdout))
    produced |= {figures.format_number(y) for p in recording.panels for s in p.series for y in s.y}
    produced -= set(re.findall(r"\d[\d_.]*", lesson.source.decode()))
    prose_text = CODE_OR_MARK.sub(" ", lesson.body)
    typed = [n for n in FIGURE.findall(prose_text) if n in produced and not n.startswith("20")]
    assert typed == [], f"{lesson.id}: typed figures that the recording holds: {typed}"


def test_every_glossary_term_is_taught_where_it_says_and_used(course: Course) -> None:
    used: set[str] = set()
    for lesson in course.lessons:
        rendered, _ = prose.render_prose(lesson, course, _recording(lesson), root="../../")
        used |= set(rendered.terms)
    for term in course.glossary:
        teacher = course.lesson(term.taught_in)
        assert teacher is not None
        assert term.id in used, f"glossary term {term.id!r} is never marked in any lesson"


def test_home_page_says_what_the_course_does_not_claim(course: Course) -> None:
    from builder.render.nav import site_nav
    from builder.render.renderer import page

    def home(of: Course) -> str:
        context = {"root": "", "title": "Course", "current": "", "description": ""}
        return page("home.html", site_nav(of), note=of.meta.note, **context)[0].decode()

    note = course.meta.note
    assert note is not None and note.title == "What this course does not claim"
    text = " ".join(note.paragraphs)
    assert "CPU" in text and "GPU or TPU" in text and "milliseconds" in text
    html = home(course)
    assert '<aside class="course-note" aria-labelledby="course-note">' in html
    assert "not as benchmarks" in html and "&#34;The first call pays" in html
    # A course without a note (the fixture) shows none.
    assert "course-note" not in home(load_course(ROOT / "tests" / "fixture_course"))


@pytest.mark.parametrize("lesson", COURSE.arc_lessons(COURSE.meta.arcs[-1]), ids=lambda x: x.id)
def test_each_lab_folds_its_solution_and_recorded_answer_behind_a_reveal(lesson: Lesson) -> None:
    """The exercise first; the solution and every recorded output after it, folded."""
    assert lesson.meta.arc == "labs"
    body = lesson.body
    start, end = body.index("{{ reveal }}"), body.find("{{ reveal end }}")
    folded = body[start : end if end >= 0 else len(body)]
    assert "{{ output" not in body[:start] and "{{ panel" not in body[:start], lesson.id
    assert not _outputs_placed(lesson, body[:start]), f"{lesson.id}: output before the reveal"
    assert "{{ output" in folded or _outputs_placed(lesson, folded), lesson.id


@pytest.mark.parametrize("lesson", COURSE.lessons, ids=lambda x: x.id)
def test_a_line_added_on_top_changes_no_cells_shown_code(lesson: Lesson) -> None:
    """Issue 40's bar on the real course: a line inserted at the top of an example changes
    the code no placed cell shows (only the numbers beside it), and the page still builds:
    nothing is addressed by a line number an insertion would shift."""
    from dataclasses import replace

    from builder.cells import parse

    assert lesson.cells, f"{lesson.id}: not in cells"
    source = lesson.source.decode("utf-8-sig")
    moved = parse("import os  # a line on top\n" + source)
    before = {c.name: c.shown for c in lesson.cells}
    after = {c.name: c.shown for c in moved}
    assert {n: s for n, s in after.items() if n in before and n != "preamble"} == {
        n: s for n, s in before.items() if n != "preamble"
    }
    edited = replace(lesson, source=("import os\n" + source).encode(), cells=moved)
    _, errors = prose.render_prose(
        edited, COURSE, _recording(lesson), root="../../", linked=_linked(lesson)
    )
    assert [str(e) for e in errors] == []
