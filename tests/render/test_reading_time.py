"""A lesson's reading time (builder/render/reading.py): the words of the text its prose
renderer gives a reader to read, counted as the prose renders (`RenderedProse.words`), and
checked here against the page a reader gets: its text outside what is not read as prose."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from builder.course.model import Course
from builder.course.recording import Recording
from builder.render import anchors, prose
from builder.render.reading import READING_WPM, reading_minutes
from tests.helpers import HERE

_WORD = re.compile(r"\w+(?:['’.-]\w+)*")


def _render(course: Course, body: str, recording: Recording | None = None) -> prose.RenderedProse:
    """`body` as basics-01's prose, with no errors (its anchored links checked against the
    other lessons' pages)."""
    lesson = course.lesson("basics-01")
    assert lesson is not None
    lesson = replace(lesson, body=body)
    edited = replace(
        course, lessons=tuple(lesson if x.id == lesson.id else x for x in course.lessons)
    )
    ids = anchors.linked_ids(edited, [], lambda x: anchors.page_ids(prose.parser(), x))
    linked = ids[edited.lessons.index(lesson)]
    rendered, errors = prose.render_prose(lesson, course, recording, "../../", linked=linked)
    assert errors == []
    return rendered


class _Reader(HTMLParser):
    """A page's words as a reader reads its prose: not in code, recorded output, figures
    (and a figure's folded whole file), formulas, a term's card, a value's note, a
    heading's `#`, a footnote's or a code note's number."""

    SKIPPED_TAGS = frozenset({"figure", "pre", "math", "script", "style"})
    SKIPPED_CLASSES = frozenset(
        {"term-card", "rv-note", "anchor", "footnote-ref", "code-note", "example-whole"}
    )
    VOID = frozenset({"br", "hr", "img", "input", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[bool] = []
        self.words = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = tag in self.SKIPPED_TAGS or bool(classes & self.SKIPPED_CLASSES)
        self.open.append(skipped or any(self.open))

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if not any(self.open):
            self.words += len(_WORD.findall(data))


def _read(html: str) -> int:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    assert reader.open == []
    return reader.words


def test_prose_inline_code_links_table_cells_and_headings_are_read(course: Course) -> None:
    body = (
        "## What `jax.jit` does\n\n"
        "One two [three four](https://example.com) `five.six`, it's well-known.\n\n"
        "| Head one | Head `two` |\n|---|---|\n| a cell | [b](https://example.com) |\n"
    )
    rendered = _render(course, body)
    assert 'class="anchor"' in rendered.html  # the heading's `#` is on the page, not read
    # What jax.jit does (3), One two three four five.six it's well-known (7), the table (7)
    assert rendered.words == 3 + 7 + 7


def test_code_output_figures_and_formulas_add_no_minutes(
    course: Course, reference: Recording
) -> None:
    prose_only = " ".join(["word"] * 300) + "\n"  # two minutes
    code = " ".join(["code"] * 1000)
    body = (
        f"{prose_only}\n```python\n{code}\n```\n\n    {code}\n\n{{{{ example }}}}\n\n"
        "{{ output }}\n\n{{ panels }}\n\n$$\nx + y + z\n$$\n\nThe sum $a + b$.\n\n"
        f"![{code}](chart.png)\n"
    )
    rendered = _render(course, body, reference)
    assert rendered.html.count("code") > 2000  # the code is on the page
    assert '<figure class="output"' in rendered.html and '<figure class="panel"' in rendered.html
    assert rendered.words == 300 + 2  # "The sum" of the last paragraph
    assert reading_minutes(rendered.words) == reading_minutes(300) == 2
    assert reading_minutes(300 + 1000) == 7  # what the code would have made it


def test_a_terms_card_and_a_values_note_are_not_read(course: Course, reference: Recording) -> None:
    rendered = _render(course, "The [[jaxpr]] said {{ value line=1 }} here.\n", reference)
    assert "one equation per primitive" in rendered.html  # the card's definition
    assert "recorded output, line 1" in rendered.html  # the value's note
    # The jaxpr said, the value as shown (Saved residual descriptions:), here
    assert rendered.words == 3 + 3 + 1


def test_callouts_tabs_and_a_folded_answer_are_read(course: Course) -> None:
    body = (
        "!!! tip\n    Tip text here.\n\n"
        '??? warning "Mind the trap"\n    Folded words count.\n\n'
        '=== "Tab A"\n\n    In A.\n\n'
        "{{ reveal }}\n\nThe answer.\n"
    )
    rendered = _render(course, body)
    assert "<details" in rendered.html
    # Tip + its text (1 + 3); Warning, read out before a title that does not say it, the
    # title and its folded text (1 + 3 + 3); the tab's title and text (2 + 2); the answer's
    # button (Show the solution and the recorded answer) and the answer (7 + 2)
    assert rendered.words == 4 + 7 + 4 + 9


CASES = sorted((HERE / "render_cases").glob("*.md"))
MORE = {
    "footnotes and a slice of the example": (
        "A claim[^1] and another[^2].\n\n{{ example lines=1-2 }}\n\n"
        "[^1]: The first note's text.\n[^2]: The second.\n"
    ),
    "escapes, entities and breaks": (
        "caf&eacute; &amp; tea's, <b>typed</b> \\*stars\\*, a hard\\\nbreak and "
        "<https://example.com/a-page>, ~~struck~~ **strong** *em*.\n\n> Quoted.\n\n"
        "1. first\n2. second\n\n- one\n- two\n"
    ),
}


@pytest.mark.parametrize(
    "body",
    [case.read_text().split("\n======\n")[0] for case in CASES] + list(MORE.values()),
    ids=[case.stem for case in CASES] + list(MORE),
)
def test_the_words_counted_are_the_words_the_page_gives_to_read(
    course: Course, reference: Recording, body: str
) -> None:
    """Whatever renders text for a reader counts it: a construct whose text the count
    missed, or counted where the page does not show it as prose, would differ here."""
    rendered = _render(course, body, reference)
    assert rendered.words == _read(rendered.html) > 0


def test_minutes_are_rounded_a_half_up_and_at_least_one() -> None:
    assert READING_WPM == 200
    assert [reading_minutes(n) for n in (0, 299, 301, 899, 900, 1100)] == [1, 1, 2, 4, 5, 6]
