"""Issue 59's last site items on the real course in Chromium: the compiler-estimates panel
tells its two equal series apart, a lesson's page says its number as the sidebar does,
search finds the same from disk as served, and a nested 404 asks the host for nothing
that is not there on a reader's first visit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course

pytestmark = pytest.mark.browser

ESTIMATES = "l/compiler-estimates/index.html"
SAME = "hand count 2n³ has the same values as cost_analysis flops"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [375, 1280])
def test_the_equal_series_are_told_apart(
    new_page: Any, course_url: str, scheme: str, width: int
) -> None:
    """The legend showed two lines and the plot one: the second is dashed over the first,
    and the legend, the alt text and the table's caption say the two are equal."""
    page = new_page(scheme, {"width": width, "height": 800})
    page.goto(course_url + ESTIMATES)
    figure = page.locator("figure", has=page.locator(f"img[alt*='{SAME}']"))
    assert figure.count() == 1
    assert SAME in figure.locator("table caption").inner_text()
    shown = figure.locator("img").evaluate_all(
        "imgs => imgs.filter(i => i.getBoundingClientRect().width > 0).map(i => i.src)"
    )
    assert len(shown) == 1 and ("dark" in shown[0]) == (scheme == "dark"), shown
    svg = page.request.get(shown[0]).text()
    assert "(same values as" in svg  # the legend's entry (wrapped where narrow)
    second = svg.split('id="series-1"', 1)[1].split("</g>", 1)[0]
    assert "stroke-dasharray" in second and "stroke-dasharray" not in svg.split('id="series-1"')[0]


def test_each_lesson_page_says_the_number_the_sidebar_gives_it(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page("light", {"width": 1280, "height": 800})
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        current = page.locator("#sidebar a[aria-current=page]")
        number = current.inner_text().split()[0]
        assert page.locator("main p.place").inner_text().startswith(f"Lesson {number} ("), lesson.id


QUERIES = ["jit", "scan", "fusion", "residuals", "cost_analysis", "memory", "vmap grad", "qzxqzx"]
RESULTS = """() => [...document.querySelectorAll('main [role=option]')].map(o =>
  o.querySelector('.hit-title').textContent + ' ' + o.getAttribute('href').replace(/^.*?\\/site\\//, ''))"""


def _results(page: Any, base: str, query: str) -> tuple[str, list[str]]:
    page.goto(f"{base}search/index.html?q={query}")
    page.wait_for_function(
        "() => /results? for|No results/.test(document.querySelector('main .search-status').textContent)"
    )
    more = page.locator("main .search-more")
    while more.is_visible():
        more.click()
    return page.locator("main .search-status").inner_text(), page.evaluate(RESULTS)


@pytest.mark.parametrize("query", QUERIES)
def test_search_from_disk_finds_what_it_finds_served(
    new_page: Any, course_url: str, course_site: Path, query: str
) -> None:
    page = new_page("light", {"width": 1280, "height": 800})
    served = _results(page, course_url, query)
    on_disk = _results(page, course_site.as_uri() + "/", query)
    assert served == on_disk
    assert served[1] or query == "qzxqzx"


def test_a_search_for_a_term_opens_on_the_lesson_that_teaches_it(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page("light", {"width": 1280, "height": 800})
    lessons = {x.id: x for x in course.lessons}
    for term in ("scan", "fusion", "retracing", "tracer", "donation", "vmap"):
        entry = next(x for x in course.glossary if x.id == term)
        teacher = lessons[entry.taught_in]
        _, found = _results(page, course_url, term)
        assert found[0].split(" ")[-1].startswith(f"{teacher.url}index.html"), (term, found[:3])


@pytest.mark.parametrize("missing", ["l/no-such-lesson/", "a/gone/deeper/page.html", "glossary/x/"])
def test_a_nested_404_asks_for_nothing_missing_on_a_first_visit(
    new_page: Any, course_url: str, missing: str
) -> None:
    """A fresh browser (nothing remembered) at a missing address two folders under the
    site's root, on a site that names no site_url: styled, its links lead into the site,
    and no request but the page's own is answered 404."""
    page = new_page("dark", {"width": 1280, "height": 800})
    failed: list[str] = []
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.on("response", lambda r: failed.append(r.url) if r.status == 404 else None)
    response = page.goto(course_url + missing)
    assert response.status == 404
    page.wait_for_function("() => document.documentElement.style.visibility !== 'hidden'")
    page.wait_for_load_state("networkidle")
    assert failed == [course_url + missing], failed
    assert not [url for url in asked if url.endswith("nav.js") and "/site/static/" not in url]
    home = page.get_by_role("link", name="Go to the course home")
    assert home.evaluate("a => a.href") == course_url + "index.html"
    accent = page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--accent')"
    )
    assert accent.strip(), "the page is not styled"
