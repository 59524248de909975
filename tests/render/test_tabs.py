"""Content tabs (`=== "Title"`, builder/render/tabs.py): every panel in the page's HTML under
its title, ids unique on the page, escaped titles, and errors naming the file and the line."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from html import unescape

import pytest

from builder.course.model import Course
from builder.course.recording import Recording
from builder.render import prose
from tests.helpers import FIXTURE_COURSE

LESSON = f"{FIXTURE_COURSE}/lessons/basics-01/lesson.md"
FIRST_LINE = 12  # of the Markdown after "Intro.\n\n", in the fixture lesson's file


def _render(course: Course, recording: Recording | None, markdown: str) -> tuple[str, list[str]]:
    lesson = course.lesson("basics-01")
    assert lesson is not None
    lesson = replace(lesson, body="Intro.\n\n" + markdown)
    rendered, errors = prose.render_prose(lesson, course, recording, "../../")
    return rendered.html, [str(error) for error in errors]


TWO = '=== "A Python loop"\n\n    Unrolled.\n\n=== "lax.scan"\n\n    One equation.\n'


def test_consecutive_tabs_are_one_group_each_panel_under_its_title(course: Course) -> None:
    html, errors = _render(course, None, TWO + "\nAfter.\n")
    assert errors == []
    assert html.count('<div class="tabs"') == 1
    titles = re.findall(r'<p class="tab-title" id="([^"]+)">([^<]*)</p>', html)
    assert titles == [("tabs-1-1-title", "A Python loop"), ("tabs-1-2-title", "lax.scan")]
    # in the order written, each body in its own panel, the text after the group outside it
    assert html.index("Unrolled.") < html.index('id="tabs-1-2"') < html.index("One equation.")
    assert html.rstrip().endswith("</div>\n</div>\n<p>After.</p>")


def test_a_panel_holds_any_markdown_and_the_recorded_marks(
    course: Course, reference: Recording
) -> None:
    markdown = (
        '=== "Code"\n\n    ```python\n    x = 1\n    ```\n\n'
        '=== "Output"\n\n    {{ output lines=1-2 }}\n\n    - a *list*\n'
    )
    html, errors = _render(course, reference, markdown)
    assert errors == []
    panels = html.split('<div class="tab-panel"')[1:]
    assert 'class="highlight"' in panels[0] and "<figure" not in panels[0]
    assert "<figure" in panels[1] and "<em>list</em>" in panels[1]


def test_two_groups_that_share_titles_share_no_id(course: Course) -> None:
    html, errors = _render(course, None, TWO + "\nBetween.\n\n" + TWO)
    assert errors == []
    ids = re.findall(r'id="([^"]+)"', html)
    assert len(ids) == len(set(ids)) == 8
    assert 'id="tabs-2-1"' in html and 'id="tabs-2-2-title"' in html


def test_a_bang_starts_a_new_group(course: Course) -> None:
    html, errors = _render(course, None, '=== "a"\n    one\n\n===! "a"\n    two\n')
    assert errors == []
    assert html.count('<div class="tabs"') == 2


def test_a_title_is_text_escaped_and_the_body_passes_no_raw_html(course: Course) -> None:
    markdown = (
        '=== "<script>alert(1)</script> & \\"it\\" \'s"\n\n    <img src=x onerror=alert(1)>\n'
    )
    html, errors = _render(course, None, markdown)
    assert errors == []
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;it&#34; &#39;s</p>" in html


@pytest.mark.parametrize(
    ("markdown", "line", "message"),
    [
        ('=== "Empty"\n\nProse.\n', 0, "tab 'Empty' has no body: indent its text by four spaces"),
        ('=== "a"\n    one\n=== "b"\n', 2, "tab 'b' has no body"),
        ('=== "Open\n    body\n', 0, 'tab title "Open is not closed by a quote: write === "Open"'),
        ("=== Bare\n    body\n", 0, 'tab title Bare is not in double quotes: write === "Bare"'),
        ('=== ""\n    body\n', 0, 'a tab needs a title: === "Title"'),
        (
            '=== "a"\n    one\n\n=== "b"\n    two\n\n=== "a"\n    three\n',
            6,
            "tab 'a' is said twice in one group of tabs: give each its own title",
        ),
    ],
)
def test_a_malformed_tab_fails_naming_the_file_and_line(
    course: Course, markdown: str, line: int, message: str
) -> None:
    html, errors = _render(course, None, markdown)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{LESSON}: line {FIRST_LINE + line}: "), errors[0]
    assert message in errors[0]
    assert 'class="broken"' in html


@pytest.mark.parametrize(
    "markdown",
    [
        '```\n=== "Not a tab"\n    code\n```\n',  # in a fence
        '    === "Not a tab"\n        code\n',  # an indented code block
        '`=== "Not a tab"` inline\n',
    ],
)
def test_in_code_the_syntax_stays_as_typed(course: Course, markdown: str) -> None:
    html, errors = _render(course, None, markdown)
    assert errors == [] and 'class="tabs"' not in html
    assert '=== "Not a tab"' in unescape(html)


def test_a_heading_never_takes_a_tab_s_id(course: Course) -> None:
    html, errors = _render(course, None, "## Tabs 1\n\n" + TWO)
    assert errors == []
    assert html.count('id="tabs-1-1"') == 1 and 'id="section-tabs-1"' in html


def test_many_tabs_render_in_time_linear_in_their_number(course: Course) -> None:
    def seconds(n: int) -> float:
        markdown = "".join(f'=== "t{i}"\n    body {i}\n\n' for i in range(n))
        began = time.perf_counter()
        html, errors = _render(course, None, markdown)
        assert errors == [] and html.count('class="tab-panel"') == n
        return time.perf_counter() - began

    small = min(seconds(500) for _ in range(3))  # the least of a few: a loaded machine
    large = min(seconds(4000) for _ in range(2))
    assert large < 8 * small * 3, (small, large)  # eight times the tabs: not 64 times the time


def test_a_group_ends_with_its_container_and_groups_nest(course: Course) -> None:
    markdown = (
        '> === "quoted"\n>     in the quote\n\n'
        '=== "outer"\n\n    === "inner"\n\n        deep\n\n    === "inner 2"\n\n        deeper\n'
    )
    html, errors = _render(course, None, markdown)
    assert errors == []
    quoted = html.split("</blockquote>")[0]
    assert "in the quote" in quoted and "outer" not in quoted  # not one group across the quote
    assert re.findall(r'data-tabs="(\d)"', html) == ["1", "2", "3"]
    assert html.index('id="tabs-2-1"') < html.index('id="tabs-3-1"') < html.index("deeper")


def test_a_tab_title_with_a_long_run_of_blanks_renders_in_linear_time(course: Course) -> None:
    """Issue 56's case: `=== "a` + 120,000 spaces + `b"` took 129 s (its title's pattern
    retried the run of blanks at every character)."""
    started = time.process_time()
    html, errors = _render(course, None, '=== "a' + " " * 120_000 + 'b"\n\n    Body.\n')
    assert time.process_time() - started < 5
    assert errors == [] and "Body." in html


def test_prose_over_its_deadline_fails_naming_the_lesson_file(
    course: Course, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any rule slower than linear is stopped: here a highlighter that takes a second."""

    def slow(code: str, language: str) -> str:
        until = time.monotonic() + 1
        while time.monotonic() < until:
            pass
        return code

    monkeypatch.setattr(prose, "SECONDS", 0.3)
    lesson = course.lesson("basics-01")
    assert lesson is not None
    lesson = replace(lesson, body="```python\nx = 1\n```\n")
    with pytest.raises(prose.RenderError) as raised:
        prose.render_prose(lesson, course, None, "../../", slow)
    assert str(raised.value).startswith(f"{LESSON}: rendering its prose ran over 0.3 s"), raised
