"""Code notes (issue 43) in headless Chromium, on a lesson recorded through the real
subprocess (tests/fixtures/notes-lesson): at 1280 and 375 px, light and dark, each marked
line ends in a visible badge that keyboard focus reaches, that leads to its note and back,
that does not stretch its line away from its number; it works with JavaScript off and on
paper; Copy leaves the badges out; axe finds nothing serious."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from builder.pipeline.build import build
from tests.browser.a11y import assert_none, findings
from tests.browser.conftest import _serve
from tests.helpers import FIXTURE_COURSE, HERE, make_paths

pytestmark = pytest.mark.browser

LESSON = HERE / "fixtures" / "notes-lesson" / "basics-05"
PAGE = "l/notes/index.html"
VIEWS = [("light", 1280), ("dark", 1280), ("light", 375), ("dark", 375)]

# The top of the marked line's text and of its number in the gutter, in CSS pixels.
ROWS = """badge => {
  const pre = badge.closest('pre');
  const gutter = pre.parentElement.querySelector('pre.lineno');
  const lineHeight = parseFloat(getComputedStyle(pre).lineHeight);
  const codeTop = pre.getBoundingClientRect().top + parseFloat(getComputedStyle(pre).paddingTop);
  const gutterTop = gutter.getBoundingClientRect().top + parseFloat(getComputedStyle(gutter).paddingTop);
  const rect = badge.getBoundingClientRect();
  const middle = (rect.top + rect.bottom) / 2;
  return {lineHeight, row: Math.floor((middle - codeTop) / lineHeight),
          gutterHeight: gutter.getBoundingClientRect().height,
          codeHeight: pre.getBoundingClientRect().height, offset: codeTop - gutterTop,
          width: rect.width, height: rect.height};
}"""


@pytest.fixture(scope="module")
def notes_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    paths = make_paths(tmp_path_factory.mktemp("notes"))
    (paths.content / "lessons").mkdir(parents=True)
    shutil.copy(FIXTURE_COURSE / "course.yml", paths.content / "course.yml")
    shutil.copytree(LESSON, paths.content / "lessons" / LESSON.name)
    build(paths, execute=True, jobs=1)
    server, url = _serve(paths.out.parent)
    yield url
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_each_badge_is_visible_on_its_own_line_and_leads_to_its_note(
    new_page: Any, notes_url: str, scheme: str, width: int
) -> None:
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(notes_url + PAGE)
    badges = page.locator("#cell-trace pre.highlight a.code-note")
    assert badges.count() == 3
    for number in (1, 2, 3):
        badge = badges.nth(number - 1)
        badge.scroll_into_view_if_needed()
        assert badge.is_visible() and badge.inner_text() == str(number)
        found = badge.evaluate(ROWS)
        assert found["row"] == number - 1, found  # on its line, which stays beside its number
        assert abs(found["offset"]) < 1 and abs(found["gutterHeight"] - found["codeHeight"]) < 1
        assert found["width"] >= 24 and found["height"] >= 24, found  # WCAG 2.5.8's target
        box = badge.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize(("scheme", "width"), [("light", 1280), ("dark", 375)])
def test_keyboard_focus_reaches_a_badge_and_enter_opens_its_note_and_comes_back(
    new_page: Any, notes_url: str, scheme: str, width: int
) -> None:
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(notes_url + PAGE)
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('pre a.code-note')"):
            break
    else:
        pytest.fail("Tab never reached a code note's badge")
    active = page.evaluate(
        "[document.activeElement.getAttribute('aria-label'), document.activeElement.id]"
    )
    assert active == ["Note 1", "cell-trace.mark-1"]
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash === '#cell-trace.note-1'")
    note = page.locator("li[id='cell-trace.note-1']")
    assert note.is_visible() and "Three points" in note.inner_text()
    assert note.evaluate("n => n.matches(':target')")
    assert _in_view(note)
    note.locator("a.code-note").click()
    page.wait_for_function("location.hash === '#cell-trace.mark-1'")
    assert _in_view(page.locator("a[id='cell-trace.mark-1']"))


def _in_view(locator: Any) -> bool:
    return bool(
        locator.evaluate(
            "e => { const r = e.getBoundingClientRect(); "
            "return r.top >= 0 && r.bottom <= window.innerHeight; }"
        )
    )


def test_the_notes_read_and_link_with_javascript_off(browser: Any, notes_url: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 700})
    page = context.new_page()
    page.goto(notes_url + PAGE)
    notes = page.locator("ol.code-notes")
    assert notes.count() == 2
    assert notes.first.get_attribute("aria-label") == "Notes on cell trace"
    text = notes.first.inner_text()
    assert "math.sin takes a float" in text
    code = page.locator("#cell-trace pre.highlight").inner_text()
    assert "# <1>" not in code and "# <4> is text" in code
    page.locator("a[id='cell-again.mark-1']").click()
    assert page.evaluate("location.hash") == "#cell-again.note-1"
    assert _in_view(page.locator("li[id='cell-again.note-1']"))
    context.close()


def test_a_string_that_looks_like_a_marker_is_shown_as_written(
    new_page: Any, notes_url: str
) -> None:
    page = new_page()
    page.goto(notes_url + PAGE)
    code = page.locator("#cell-trace pre.highlight").inner_text()
    assert 'marker = "# <4> is text in a string"' in code
    assert "xs = [0.5, 1.5, 2.5]1" in code  # the comment gone, the badge after the code


def test_copy_takes_the_code_without_the_badges(browser: Any, notes_url: str) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(notes_url + PAGE)
    page.locator("#cell-trace .copy").click()
    page.wait_for_function("document.querySelector('#cell-trace .copy').textContent === 'Copied'")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.splitlines()[:3] == [
        "xs = [0.5, 1.5, 2.5]",
        "ys = [math.sin(x) for x in xs]",
        "total = sum(ys)",
    ]
    context.close()


def test_the_downloads_are_the_file_as_written(notes_url: str) -> None:
    """example.py and example.ipynb keep the marker comments: what ran, byte for byte."""
    from urllib.request import urlopen

    folder = notes_url + PAGE.removesuffix("index.html")
    with urlopen(folder + "example.py") as response:
        assert response.read() == (LESSON / "example.py").read_bytes()
    with urlopen(folder + "example.ipynb") as response:
        cells = json.loads(response.read())["cells"]
    # the notebook interleaves the lesson's prose: the cell is found by its code
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert any(x.startswith("xs = [0.5, 1.5, 2.5]  # <1>\n") for x in code), code


def test_a_badge_prints_as_a_black_outlined_number(new_page: Any, notes_url: str) -> None:
    page = new_page("dark")
    page.goto(notes_url + PAGE)
    page.emulate_media(media="print")
    badge = page.locator("a[id='cell-trace.mark-2']")
    style = badge.evaluate(
        "b => { const s = getComputedStyle(b); return [s.color, s.borderTopColor, s.display]; }"
    )
    assert style == ["rgb(0, 0, 0)", "rgb(0, 0, 0)", "inline"]


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_no_serious_accessibility_violations(
    new_page: Any, notes_url: str, scheme: str, width: int
) -> None:
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(notes_url + PAGE)
    assert_none(findings(page, rules=("target-size", "color-contrast")))  # minor ones too
