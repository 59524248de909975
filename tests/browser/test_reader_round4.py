"""Issue 43 on the real course in headless Chromium: chart text at every width, and the
details a reader of the site still missed (a pressed toggle that looks pressed, a date
kept whole, no search box that cannot work, controls whose edges can be seen, paper that
prints its edges, a 404 page kept out of search engines, an icon and a theme colour).

Which label stands with which bars is measured on every real panel as matplotlib draws
it, in tests/render/test_chart_labels.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_course_site import BACKGROUND, contrast

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
WIDTHS = [320, 375, 480, 560, 600, 654, 680, 681, 720, 800, 801, 1024, 1280]
# A lesson whose charts the phone mislabelled, and a lab whose charts are in a folded answer.
CHART_PAGES = ["l/vmap-vs-loops/", "l/lab-j2/"]

SMALLEST_TEXT = """async img => {
  if (!img.complete || !img.naturalWidth) await img.decode();
  const svg = new DOMParser().parseFromString(await (await fetch(img.currentSrc)).text(),
                                              'image/svg+xml');
  const width = parseFloat(svg.documentElement.getAttribute('viewBox').split(' ')[2]);
  const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(t.style.fontSize));
  return {src: img.currentSrc, px: Math.min(...sizes) * img.getBoundingClientRect().width / width};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chart_text_is_11_px_or_more_at_every_width(
    new_page: Any, course_url: str, scheme: str
) -> None:
    """From a 320 px phone to a 1280 px laptop, in a lesson and in a lab's folded answer."""
    page = new_page(scheme, LAPTOP)
    seen = 0
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        for path in CHART_PAGES:
            page.goto(course_url + path + "index.html")
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            page.evaluate("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
            for img in page.locator(f"figure.panel img.chart-{scheme}").all():
                found = img.evaluate(SMALLEST_TEXT)
                where = f"{path} {found['src'].rsplit('/', 1)[-1]} at {width} px"
                assert found["px"] >= 11, f"{where}: text at {found['px']:.1f} px"
                seen += 1
    assert seen >= len(WIDTHS) * 5


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_pressed_wrap_toggle_looks_pressed(new_page: Any, course_url: str, scheme: str) -> None:
    page = new_page(scheme, PHONE)
    page.goto(course_url + "l/vmap-vs-loops/index.html")
    button = page.get_by_role("button", name="Wrap long lines").first
    button.scroll_into_view_if_needed()
    style = "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]"
    before = button.evaluate(style)
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    after = button.evaluate(style)
    assert after != before
    assert contrast(after[0], before[0]) >= 3, (before, after)  # filled, against unfilled
    assert contrast(after[1], after[0]) >= 4.5, after  # its text still reads


def test_a_captions_date_is_never_broken_across_lines(new_page: Any, course_url: str) -> None:
    for width in (320, 375):
        page = new_page("light", {"width": width, "height": 740})
        page.goto(course_url + "l/vmap-vs-loops/index.html")
        dates = page.locator("figcaption .nowrap, .provenance .nowrap").all()
        assert len(dates) >= 5
        for date in dates:
            assert date.evaluate("e => e.getClientRects().length") == 1, date.inner_text()
            assert len(date.inner_text()) == 10  # 2026-12-01


def test_without_javascript_the_header_offers_no_search_box(new_page: Any, course_url: str) -> None:
    page = new_page("light", LAPTOP, java_script_enabled=False)
    page.goto(course_url + "l/vmap-vs-loops/index.html")
    assert not page.locator("header .site-search").is_visible()
    assert page.locator("header .brand").is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_edges_of_controls_stand_out_3_to_1(
    new_page: Any, course_url: str, scheme: str
) -> None:
    """WCAG 1.4.11: the search field's and the buttons' borders against what is inside
    them and what is around them."""
    page = new_page(scheme, LAPTOP)
    page.goto(course_url + "l/checkpoint-compiled/index.html")  # outputs wider than a laptop
    controls = [page.locator("#site-search"), page.get_by_role("button", name="Copy").first]
    controls.append(page.get_by_role("button", name="Wrap long lines").first)
    for control in controls:
        edge = control.evaluate("e => getComputedStyle(e).borderTopColor")
        inside = control.evaluate("e => getComputedStyle(e).backgroundColor")
        around = control.evaluate(BACKGROUND.replace("let e = el;", "let e = el.parentElement;"))
        assert contrast(edge, inside) >= 3, (control, edge, inside)
        assert contrast(edge, around) >= 3, (control, edge, around)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_printed_edges_of_output_and_notes_stand_out(
    new_page: Any, course_url: str, scheme: str
) -> None:
    """Printed from a dark screen too, the page is light: its accent and lines are dark."""
    page = new_page(scheme, LAPTOP)
    page.goto(course_url + "l/compiler-estimates/index.html")
    page.emulate_media(media="print")
    white = "rgb(255, 255, 255)"
    left = "e => getComputedStyle(e).borderLeftColor"
    assert (
        contrast(
            page.locator("figure.output pre, figure.cell pre.output").first.evaluate(left), white
        )
        >= 3
    )
    assert contrast(page.locator(".admonition").first.evaluate(left), white) >= 3
    top = "e => getComputedStyle(e).borderTopColor"
    assert contrast(page.locator("pre").first.evaluate(top), white) >= 3


def test_the_404_page_is_not_indexed_and_every_page_has_an_icon(
    new_page: Any, course_url: str
) -> None:
    page = new_page("light", LAPTOP)
    page.goto(course_url + "404.html")
    assert page.locator("meta[name=robots]").get_attribute("content") == "noindex"
    page.goto(course_url + "l/vmap-vs-loops/index.html")
    assert page.locator("meta[name=robots]").count() == 0
    icon = page.locator("link[rel=icon]").get_attribute("href") or ""
    assert icon == "../../static/favicon.svg"  # a file of the site: nothing fetched elsewhere
    assert page.evaluate(f"(async () => (await fetch({icon!r})).ok)()")
    colours = page.locator("meta[name=theme-color]").evaluate_all(
        "ms => ms.map(m => [m.media, m.content])"
    )
    assert sorted(colours) == [
        ["(prefers-color-scheme: dark)", "#12161d"],
        ["(prefers-color-scheme: light)", "#fdfdfc"],
    ]
