"""The constructs issue 41 added, on the fixture course that uses every one of them
(tests/fixtures/constructs-course), in headless Chromium at 1280 and 375 px, light and dark:
axe finds nothing serious; the page is never wider than the window, a wide formula scrolling
in its own box instead; each construct is there and visible as a reader sees it (math laid
out as math, the panels' charts, five callouts in five colours, folds that open and close on
a click, links that land where they say)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.a11y import assert_none, findings
from tests.browser.conftest import Watch
from tests.browser.test_course_site import pages

pytestmark = pytest.mark.browser

PAGE = "l/every-construct/index.html"
TARGET = "l/the-target/index.html"
VIEWS = [("light", 1280), ("dark", 1280), ("light", 375), ("dark", 375)]
KINDS = ("note", "tip", "important", "warning", "danger")


def _open(new_page: Any, url: str, scheme: str, width: int, name: str = PAGE) -> tuple[Any, Watch]:
    """The page `name` of the constructs site, every image loaded, watched for console
    errors and requests that leave the site."""
    page = new_page(scheme, {"width": width, "height": 800})
    watch = Watch(allowed=(url, "data:", "blob:"))
    watch.attach(page)
    page.goto(url + name)
    page.evaluate("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
    page.wait_for_function("[...document.images].every(i => i.complete)")
    return page, watch


def _clean(watch: Watch) -> None:
    assert not watch.problems, "\n".join(watch.problems)


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_no_serious_accessibility_violations(
    new_page: Any, constructs_url: str, constructs_site: Path, scheme: str, width: int
) -> None:
    """On every page of the site (its folds opened, so that their text is checked too),
    none of which is wider than the window."""
    names, found = pages(constructs_site), []
    assert PAGE in names and TARGET in names
    page, watch = _open(new_page, constructs_url, scheme, width, PAGE)
    for name in names:
        page.goto(constructs_url + name)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        if page.evaluate("document.scrollingElement.scrollWidth") > width:
            found.append(f"{name}: wider than the window at {width} px")
        found += findings(page, name)
    assert_none(found)
    _clean(watch)


# The wide formula's box: how far it scrolls, and where the formula starts and ends in it.
WIDE = """() => {
  const box = [...document.querySelectorAll('.math-scroll')].pop(), math = box.firstElementChild;
  const before = math.getBoundingClientRect().left - box.getBoundingClientRect().left;
  box.scrollLeft = box.scrollWidth;
  const b = box.getBoundingClientRect(), m = math.getBoundingClientRect();
  return {scrolls: box.scrollWidth > box.clientWidth, before, boxRight: b.right,
          endShown: m.right <= b.right + 1, scrolled: box.scrollLeft};
}"""


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_the_page_fits_the_window_and_a_wide_formula_scrolls_in_its_box(
    new_page: Any, constructs_url: str, scheme: str, width: int
) -> None:
    page, watch = _open(new_page, constructs_url, scheme, width)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    wide = page.evaluate(WIDE)
    assert wide["boxRight"] <= width
    assert wide["before"] >= 0, "the formula starts before its box, where no scroll reaches"
    if width == 375:
        assert wide["scrolls"] and wide["scrolled"] > 0, wide
        assert wide["endShown"], "scrolled to its end, the formula's end is still hidden"
    _clean(watch)


# Each display formula's fraction: stacked (the numerator above the denominator) and taller
# than a line of text, as the browser's math layout draws it; the inline formulas' heights.
MATH = """() => {
  const fracs = [...document.querySelectorAll('math[display=block] mfrac')].map(f => {
    const [top, bottom] = [...f.children].map(c => c.getBoundingClientRect());
    return {stacked: top.bottom <= bottom.top + 1, height: f.getBoundingClientRect().height};
  });
  const font = parseFloat(getComputedStyle(document.querySelector('main p')).fontSize);
  const inline = [...document.querySelectorAll('main p > math:not([display])')]
    .map(m => m.getBoundingClientRect().height);
  return {fracs, font, inline};
}"""


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_math_is_laid_out_as_math(
    new_page: Any, constructs_url: str, scheme: str, width: int
) -> None:
    page, watch = _open(new_page, constructs_url, scheme, width)
    inline = page.locator("main p > math:not([display])")
    assert inline.count() == 2 and inline.first.is_visible()
    assert page.locator("main .math-scroll > math[display=block]").count() == 3
    for box in page.locator("main .math-scroll").all():
        box.scroll_into_view_if_needed()
        assert box.is_visible() and box.get_attribute("role") == "region"
    found = page.evaluate(MATH)
    assert len(found["fracs"]) == 2, found  # w*, and the integral's 1/3 inside a paragraph
    for frac in found["fracs"]:
        assert frac["stacked"] and frac["height"] > 1.5 * found["font"], found
    assert all(0 < h < 3 * found["font"] for h in found["inline"]), found
    _clean(watch)


SVG_TEXT = "img => fetch(img.currentSrc).then(r => r.text())"


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_each_panel_shows_its_chart(
    new_page: Any, constructs_url: str, scheme: str, width: int
) -> None:
    page, watch = _open(new_page, constructs_url, scheme, width)
    drawn = {}
    for number, kind in ((1, "Bar chart"), (2, "Line chart"), (3, "Scatter plot")):
        img = page.locator(f"#panel-{number} img.chart-{scheme}")
        img.scroll_into_view_if_needed()
        assert img.is_visible(), f"panel {number} at {width} px, {scheme}"
        assert img.evaluate("i => i.naturalWidth") > 0
        assert img.evaluate("i => i.currentSrc").endswith(".svg")
        assert (img.get_attribute("alt") or "").startswith(kind)
        box = img.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        drawn[number] = img.evaluate(SVG_TEXT)
    assert "size (log scale)" in drawn[2] and "seconds (log scale)" in drawn[2]
    assert re.search(r"y\s=\s3\.02x", drawn[3])  # the recorded fit, with its equation
    assert "log scale" not in drawn[1] and "log scale" not in drawn[3]
    text = page.locator("main").inner_text()
    assert "The fitted slope is 3.02." in text
    _clean(watch)


COLOURS = """els => els.map(e => [e.className, getComputedStyle(e).borderLeftColor,
  getComputedStyle(e.querySelector('.admonition-title')).color])"""


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_the_five_callouts_are_visible_in_five_colours(
    new_page: Any, constructs_url: str, scheme: str, width: int
) -> None:
    page, watch = _open(new_page, constructs_url, scheme, width)
    boxes = page.locator("main div.admonition")
    assert boxes.count() == 5
    for kind in KINDS:
        box = page.locator(f"main div.admonition.{kind}")
        box.scroll_into_view_if_needed()
        assert box.is_visible() and box.get_attribute("role") == "note"
        title = box.locator(".admonition-title")
        assert kind in title.inner_text().lower() or kind in title.text_content().lower()
    found = boxes.evaluate_all(COLOURS)
    assert len({border for _, border, _ in found}) == 5, found
    assert len({colour for _, _, colour in found}) == 5, found
    _clean(watch)


@pytest.mark.parametrize(("scheme", "width"), VIEWS)
def test_a_fold_opens_and_an_open_one_folds_on_a_click(
    new_page: Any, constructs_url: str, scheme: str, width: int
) -> None:
    page, watch = _open(new_page, constructs_url, scheme, width)
    folded = page.locator("main details.admonition.note")
    hidden = folded.get_by_text("The folded text")
    assert folded.get_attribute("open") is None and not hidden.is_visible()
    folded.locator("summary").click()
    assert folded.get_attribute("open") is not None and hidden.is_visible()
    opened = page.locator("main details.admonition.tip")
    shown = opened.get_by_text("The open text")
    assert opened.get_attribute("open") is not None and shown.is_visible()
    opened.locator("summary").click()
    assert opened.get_attribute("open") is None and not shown.is_visible()
    _clean(watch)


@pytest.mark.parametrize("width", [1280, 375])
def test_the_links_land_where_they_say(new_page: Any, constructs_url: str, width: int) -> None:
    page, watch = _open(new_page, constructs_url, "light", width)
    links = page.locator("main p").filter(has_text="reads its title")
    api = links.locator("a", has=page.locator("code"))
    assert api.inner_text() == "jax.jit"
    assert api.get_attribute("href") == "https://docs.jax.dev/en/latest/_autosummary/jax.jit.html"
    titled = links.get_by_role("link", name="The target of the links")
    assert titled.get_attribute("href") == "../../l/the-target/index.html"
    links.get_by_role("link", name="fitted line").click()
    page.wait_for_function("location.hash === '#panel-3'")
    assert page.locator("#panel-3").is_visible()
    assert page.evaluate("document.getElementById('panel-3').getBoundingClientRect().top") < 800
    links.get_by_role("link", name="its details").click()
    page.wait_for_url("**/the-target/index.html#details")
    heading = page.locator("h2#details")
    assert heading.is_visible() and heading.bounding_box()["y"] < 800
    page.get_by_role("link", name="the first lesson").click()
    page.wait_for_url("**/every-construct/index.html#callouts")
    assert page.locator("h2#callouts").is_visible()
    _clean(watch)
