"""Issue 29, search like the best documentation sites, on the real course (content/ and
recordings/) in headless Chromium, light and dark, laptop and phone: a box in the header
of every page that `/` and Ctrl-K focus, results grouped by page with the sections that
matched, the words marked on the page a result opens, a true "no results", and the same
search from a site opened from disk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
SCREENS = [("light", LAPTOP), ("dark", LAPTOP), ("light", PHONE), ("dark", PHONE)]
SCREEN_IDS = ["light-1280", "dark-1280", "light-375", "dark-375"]
LESSON = "l/retracing/index.html"  # a lesson whose sections talk about jit
BOX = "header form.site-search input[type=search]"
STATUS = "header .search-status"
OPTIONS = "header .search-results [role=option]"


def focused(page: Any) -> str:
    return str(page.evaluate("document.activeElement.id || document.activeElement.tagName"))


def ask(page: Any, query: str) -> str:
    """`query` typed into the header's box; the sentence that says what it found."""
    page.locator(BOX).fill(query)
    page.wait_for_function(
        "([s, q]) => /results? for “/.test(document.querySelector(s).textContent)"
        " && document.querySelector(s).textContent.includes(`“${q}”`)",
        arg=[STATUS, query],
    )
    return str(page.locator(STATUS).inner_text())


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_slash_and_ctrl_k_focus_the_box_and_escape_goes_back(
    new_page: Any, course_url: str, scheme: str, viewport: dict[str, int]
) -> None:
    page = new_page(scheme, viewport)
    page.goto(course_url + LESSON)
    box = page.locator(BOX)
    assert box.is_visible(), "no search box in the header"
    found = box.bounding_box()
    assert found and found["x"] >= 0 and found["x"] + found["width"] <= viewport["width"]
    assert found["width"] >= 120, f"a box too narrow to type in: {found}"
    assert box.get_attribute("role") == "combobox"
    assert page.locator("header label[for=site-search]").inner_text() == "Search the course"
    page.keyboard.press("/")
    assert focused(page) == "site-search"
    assert box.input_value() == "", "the / was typed into the box"
    page.keyboard.press("Escape")
    assert focused(page) == "BODY"
    # From a link: Ctrl-K, then Escape returns there.
    glossary = page.locator("header .top-links a", has_text="Glossary")
    glossary.focus()
    page.keyboard.press("Control+k")
    assert focused(page) == "site-search"
    page.keyboard.press("Escape")
    assert glossary.evaluate("a => a === document.activeElement")
    # Not while typing in another field: the search page's own box takes its "/".
    page.goto(course_url + "search/index.html")
    own = page.locator("main .search-input")
    own.click()
    page.keyboard.type("a/b")
    assert own.input_value() == "a/b" and focused(page) == "search-page-input"


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_results_are_grouped_by_page_and_a_section_opens_at_its_heading_marked(
    new_page: Any, course_url: str, scheme: str, viewport: dict[str, int]
) -> None:
    page = new_page(scheme, viewport)
    page.goto(course_url + LESSON)
    page.keyboard.press("/")
    said = ask(page, "jit")
    count = int(re.match(r"(\d+) results for “jit”", said)[1])  # type: ignore[index]
    assert count >= 5, said
    panel = page.locator("header .search-panel")
    assert panel.is_visible()
    box = panel.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 0.5, box
    groups = page.locator("header .search-results [role=group]")
    assert groups.count() >= 3
    first = groups.first
    assert first.get_attribute("aria-label") == first.locator(".hit-page .hit-title").inner_text()
    sections = page.locator("header .search-results .hit-section")
    assert sections.count() >= 2, "no result for a section (heading) of a page"
    assert_none(findings(page, f"{LESSON} with its search panel open"))
    # Arrows move through the results; the box says which one is chosen.
    box_input = page.locator(BOX)
    assert box_input.get_attribute("aria-expanded") == "true"
    page.keyboard.press("ArrowDown")
    chosen = box_input.get_attribute("aria-activedescendant")
    assert chosen and page.locator(f"#{chosen}").get_attribute("aria-selected") == "true"
    while "hit-section" not in (page.locator(f"#{chosen}").get_attribute("class") or ""):
        page.keyboard.press("ArrowDown")
        chosen = box_input.get_attribute("aria-activedescendant")
    href = page.locator(f"#{chosen}").get_attribute("href") or ""
    target = href.split("#")[1]
    assert "highlight=jit" in href, href
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(f"#{re.escape(target)}$"))
    heading = page.locator(f"[id='{target}']")
    assert heading.evaluate("e => /^H[23]$/.test(e.tagName)"), target
    top = heading.evaluate("e => e.getBoundingClientRect().top")
    assert 0 <= top < viewport["height"] / 2, f"#{target} at {top} px"
    marks = page.locator("mark.search-hit")
    assert marks.count() >= 3
    assert all(m.lower().startswith("jit") for m in marks.all_inner_texts())
    assert page.locator(".prose mark.search-hit").count() == marks.count()
    color, background = marks.first.evaluate(
        "m => [getComputedStyle(m).color, getComputedStyle(m).backgroundColor]"
    )
    assert color == marks.first.evaluate("m => getComputedStyle(m.parentElement).color")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_marks_change_neither_the_layout_nor_the_code(
    new_page: Any, course_url: str, scheme: str, viewport: dict[str, int]
) -> None:
    shape = """() => ({
      height: document.documentElement.scrollHeight,
      wide: document.documentElement.scrollWidth,
      code: [...document.querySelectorAll('main pre')].map(p => [p.textContent, p.scrollWidth, p.offsetHeight]),
      inCode: document.querySelectorAll('main pre mark.search-hit').length,
    })"""
    page = new_page(scheme, viewport)
    page.goto(course_url + LESSON)
    plain = page.evaluate(shape)
    page.goto(course_url + LESSON + "?highlight=jit&highlight=traces")
    page.wait_for_selector("mark.search-hit")
    marked = page.evaluate(shape)
    assert marked["inCode"] >= 1, "no word marked in the code"
    assert marked["code"] == plain["code"]
    assert (marked["height"], marked["wide"]) == (plain["height"], plain["wide"])
    assert marked["wide"] <= viewport["width"]


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_a_nonsense_query_finds_nothing(
    new_page: Any, course_url: str, scheme: str, viewport: dict[str, int]
) -> None:
    """Pagefind searches the longest start of a word it does not know ("x" for "xyzzy": 15
    pages): such stand-ins are not results."""
    page = new_page(scheme, viewport)
    page.goto(course_url + LESSON)
    page.keyboard.press("Control+k")
    for query in ("qzxqzx", "xyzzy", "jit qzxqzx"):
        said = ask(page, query)
        assert said.startswith(f"No results for “{query}”"), said
        assert page.locator(OPTIONS).count() == 0
        assert page.locator("header .search-panel").is_visible()
    assert re.match(r"\d+ results? for “jitted”", ask(page, "jitted"))
    page.goto(course_url + "search/index.html?q=qzxqzx")
    status = page.locator("main .search-status")
    page.wait_for_function(
        "() => /No results/.test(document.querySelector('main .search-status').textContent)"
    )
    assert "No results for “qzxqzx”" in status.inner_text()
    assert page.locator("main [role=option]").count() == 0


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_opened_from_disk_the_box_finds_and_its_results_open(
    new_page: Any, course_site: Path, scheme: str, viewport: dict[str, int]
) -> None:
    """Issue 43: from a file, search reads each bundle's offline.js (a script: a page from
    disk may not fetch Pagefind's index); the lesson that teaches a term comes first, its
    sections lead to their headings, and the page opened marks the word."""
    page = new_page(scheme, viewport)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
    page.goto((course_site / LESSON).as_uri())
    page.keyboard.press("/")
    said = ask(page, "jaxpr")
    assert int(said.split()[0]) >= 3, said
    first = page.locator(OPTIONS).first
    assert first.inner_text().startswith("What the tracer writes down"), first.inner_text()
    box = page.locator(STATUS).bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    section = page.locator("header .search-results .hit-section").first
    href = str(section.get_attribute("href"))
    assert href.startswith("file://") and "?highlight=jaxpr#" in href, href
    section.click()
    page.wait_for_url(href)
    heading = page.locator(f"#{href.split('#')[1]}")
    assert heading.is_visible()
    assert page.locator("mark.search-hit").count() > 0
    assert not errors, errors
    page.goto((course_site / "search" / "index.html").as_uri() + "?q=jaxpr")
    page.wait_for_function(
        "() => /results for/.test(document.querySelector('main .search-status').textContent)"
    )
    assert page.locator("main .search-status").inner_text() == said


def test_the_search_page_shows_every_result_grouped(new_page: Any, course_url: str) -> None:
    """The fallback and the deep link: search/?q= lists the results in the page."""
    page = new_page()
    page.goto(course_url + "search/index.html?q=jit")
    page.wait_for_function(
        "() => /results for/.test(document.querySelector('main .search-status').textContent)"
    )
    assert page.locator("main .search-input").input_value() == "jit"
    said = page.locator("main .search-status").inner_text()
    count = int(said.split()[0])
    groups = page.locator("main [role=group]")
    groups.first.wait_for()
    while (before := groups.count()) < count:  # ten at a time
        page.locator("main .search-more").click()
        page.wait_for_function(
            "n => document.querySelectorAll('main [role=group]').length > n", arg=before
        )
    assert page.locator("main .hit-section").count() >= 2


def test_screenshots_of_the_search_panel(new_page: Any, course_url: str, tmp_path: Path) -> None:
    """The header's panel open on a lesson, light and dark, desktop and phone:
    SAVE_SCREENSHOTS=1 keeps them in docs/screenshots/ (course-search-box-*)."""
    import os

    repo = Path(__file__).resolve().parents[2]
    keep = os.environ.get("SAVE_SCREENSHOTS") == "1"
    out = repo / "docs" / "screenshots" if keep else tmp_path
    for device, viewport in (("desktop", LAPTOP), ("mobile", PHONE)):
        for scheme in ("light", "dark"):
            page = new_page(scheme, viewport)
            page.goto(course_url + LESSON)
            page.keyboard.press("/")
            ask(page, "jit")
            page.locator(OPTIONS).first.wait_for()
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            shot = out / f"course-search-box-{scheme}-{device}.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 5000
