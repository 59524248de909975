"""The reader's site in a real headless Chromium: every feature the reader relies on."""

from __future__ import annotations

import json
import os
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from builder.render.figures import format_number
from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

LESSON = "l/first/index.html"  # teaches `jaxpr`, marks two glossary terms, has one panel
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def pages(site: Path) -> list[str]:
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).as_posix().startswith("search-index/")
    )


def ids_in(path: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text("utf-8")))


def test_every_page_loads_cleanly_and_every_link_resolves(
    page: Any, base_url: str, site: Path
) -> None:
    checked = 0
    for name in pages(site):
        page.goto(base_url + name)
        page.wait_for_load_state("networkidle")
        targets = page.eval_on_selector_all(
            "a[href], img[src], link[href], script[src]",
            "els => els.map(e => e.href || e.src)",
        )
        for url in targets:
            if not url.startswith(base_url):
                assert url.startswith("data:"), f"{name}: link leaves the site: {url}"
                continue
            parts = urlsplit(url)
            inside = unquote(parts.path)[len(urlsplit(base_url).path) :]
            target = site / inside
            assert target.is_file(), f"{name}: {url} resolves to no file"
            if parts.fragment:
                assert parts.fragment in ids_in(target), f"{name}: no #{parts.fragment} in {inside}"
            checked += 1
    assert checked > 100


def test_pages_open_from_disk_without_errors(page: Any, site: Path) -> None:
    for name in pages(site):
        page.goto((site / name).as_uri())
        page.wait_for_load_state("load")
    page.goto((site / LESSON).as_uri())
    assert page.locator("#sidebar a[aria-current=page]").inner_text() == "1.1 A first jaxpr"


def test_navigation_marks_the_current_page(page: Any, base_url: str, site: Path) -> None:
    # The sidebar lives in static/nav.js, not in each page: a page names only its neighbours.
    assert "A first jaxpr" not in (site / "l" / "settings" / "index.html").read_text()
    page.goto(base_url + LESSON)
    current = page.locator("#sidebar a[aria-current=page]")
    assert current.count() == 1 and current.inner_text() == "1.1 A first jaxpr"
    assert page.locator("#sidebar a").count() == 2 + 3  # two arc links, three lessons
    assert page.locator("nav.crumbs a").all_inner_texts() == ["Course", "Basics"]
    assert page.locator("a[rel=next]").inner_text() == "A lesson without panels →"
    assert page.locator("nav.toc a").first.get_attribute("href") == "#tracing"
    page.goto(base_url + "a/speed/index.html")
    assert page.locator("#sidebar a[aria-current=page]").text_content() == "Speed"


def test_without_javascript_terms_and_navigation_are_links(browser: Any, base_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + LESSON)
    term = page.locator(".term-link").first
    assert term.get_attribute("href") == "../../glossary/index.html#jaxpr"
    assert page.locator("#sidebar a").get_attribute("href") == "../../index.html"
    assert not page.locator(".term-card").first.is_visible()
    context.close()


def test_glossary_card_shows_on_hover_opens_on_enter_and_closes_on_escape(
    page: Any, base_url: str
) -> None:
    page.goto(base_url + LESSON)
    term = page.locator(".term").first
    card = term.locator(".term-card")
    assert not card.is_visible()
    term.locator(".term-link").hover()  # a glance under the mouse
    assert card.is_visible()
    assert "The traced program" in card.inner_text()
    card.hover()  # the pointer can move onto the card
    assert card.is_visible()
    page.keyboard.press("Escape")
    assert not card.is_visible()
    page.mouse.move(0, 0)
    link = page.locator(".term-link").first
    link.focus()  # a disclosure: the focus alone opens nothing
    assert not card.is_visible()
    page.keyboard.press("Enter")
    assert card.is_visible() and link.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Escape")
    assert not card.is_visible()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # focus moves into the card's link, and the card stays open
    assert card.is_visible()
    # this page teaches the term: the card says so, and links only to the glossary
    assert card.locator(".term-more").inner_text().startswith("taught in this lesson · ")
    assert card.locator(".term-more a").all_inner_texts() == ["in the glossary"]
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith("/glossary/index.html#jaxpr")
    page.goto(base_url + LESSON)
    page.locator(".term").nth(1).locator(".term-link").click()
    page.locator(".term").nth(1).locator(".term-card a").first.click()
    page.wait_for_url("**/l/no-panels/index.html")


def test_glossary_page_says_where_each_term_is_taught_and_used(page: Any, base_url: str) -> None:
    page.goto(base_url + "glossary/index.html")
    entry = page.locator("dt#jaxpr + dd")
    assert "Taught in A first jaxpr" in entry.inner_text()
    # the lesson that teaches it is not said again as one that uses it
    assert "used in A first jaxpr" not in entry.inner_text()
    assert "not used in other lessons yet" in entry.inner_text()


def test_search_finds_the_lesson_that_teaches_a_term(page: Any, base_url: str) -> None:
    page.goto(base_url + "search/index.html?q=equations")
    result = page.locator("main .hit-page").first
    result.wait_for(timeout=10_000)
    assert result.get_attribute("href").endswith("/site/l/first/index.html?highlight=equations")
    result.click()
    page.wait_for_url("**/l/first/index.html?highlight=equations")


def test_search_merges_every_bundle_into_one_result_list(
    page: Any, base_url: str, site: Path
) -> None:
    """Each arc's lessons are indexed in a bundle of their own (search-index/<arc>-<n>/), the
    glossary in the main one (search-index/main/): one query must find pages from all of them."""
    bundles = sorted(p.name for p in (site / "search-index").iterdir())
    assert bundles == ["basics-1", "main", "speed-1"]
    # ("settings" says "panel" only in its markup, a figure's id: not a result)
    for query, lesson in (("panel", "first"), ("panel", "no-panels"), ("scaled", "settings")):
        page.goto(base_url + f"search/index.html?q={query}")
        link = f'main .hit-page[href*="/site/l/{lesson}/index.html?"]'
        page.locator(link).first.wait_for(timeout=10_000)
    page.goto(base_url + "search/index.html?q=dtype")  # only in a glossary definition
    first = page.locator("main .hit-page").first
    first.wait_for(timeout=10_000)
    assert first.get_attribute("href").endswith("/site/glossary/index.html?highlight=dtype")


def test_search_opened_from_disk_finds_what_it_finds_served(page: Any, site: Path) -> None:
    """From a file, the search page reads the bundles' offline.js: the glossary and the
    lessons alike, and no request fails (`page` watches)."""
    page.goto((site / "search" / "index.html").as_uri() + "?q=dtype")
    first = page.locator("main .hit-page").first
    first.wait_for(timeout=10_000)
    assert first.get_attribute("href").endswith("/glossary/index.html?highlight=dtype")
    page.goto((site / "search" / "index.html").as_uri() + "?q=panel")
    page.locator('main .hit-page[href*="/l/first/index.html?"]').first.wait_for()


def test_copy_button_copies_exactly_the_code(browser: Any, base_url: str, site: Path) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(base_url + LESSON)
    assert page.locator("figure.output .copy").count() == 0
    page.locator("figure.example .copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    source = site.parent / "content" / "lessons" / "basics-01" / "example.py"
    assert copied == source.read_text("utf-8")
    context.close()


def test_mobile_navigation_opens_and_closes_with_the_keyboard(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, has_touch=True)
    page = context.new_page()
    page.goto(base_url + LESSON)
    button = page.locator(".menu-button")
    sidebar = page.locator("#sidebar")
    assert button.is_visible() and not sidebar.is_visible()
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "menu-button"
    page.keyboard.press("Enter")
    assert sidebar.is_visible() and button.get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.activeElement.getAttribute('aria-current')") == "page"
    page.keyboard.press("Escape")
    assert not sidebar.is_visible() and button.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.className") == "menu-button"
    page.keyboard.press("Space")
    assert sidebar.is_visible()
    button.tap()
    assert not sidebar.is_visible()
    context.close()


def test_chart_tables_hold_the_recorded_numbers(page: Any, base_url: str, site: Path) -> None:
    recording = json.loads((site.parent / "recordings" / "basics-01.json").read_text())
    panel = recording["data"]["panels"][0]
    page.goto(base_url + LESSON)
    figure = page.locator("figure#panel-1")
    assert figure.locator("figcaption").inner_text().startswith(panel["title"])
    rows = figure.locator("table.panel-data tbody tr")
    assert rows.count() == len(panel["labels"])
    for index, label in enumerate(panel["labels"]):
        cells = rows.nth(index).locator("th, td").all_inner_texts()
        assert cells == [label] + [format_number(s["y"][index]) for s in panel["series"]]
    alt = figure.locator("img.chart-light").get_attribute("alt")
    assert panel["title"] in alt and format_number(panel["series"][0]["y"][0]) in alt
    assert figure.locator("img.chart-light").is_visible()
    page.locator(".theme-toggle").click()
    assert figure.locator("img.chart-dark").is_visible()
    assert not figure.locator("img.chart-light").is_visible()


def test_theme_follows_the_system_and_the_toggle_persists(browser: Any, base_url: str) -> None:
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    page.goto(base_url + "index.html")
    theme = "document.documentElement.dataset.theme"
    assert page.evaluate(theme) == "dark"
    page.locator(".theme-toggle").click()
    assert page.evaluate(theme) == "light"
    page.goto(base_url + LESSON)
    assert page.evaluate(theme) == "light"
    assert page.locator(".theme-toggle").inner_text() == "Theme: light"
    context.close()


def test_recordings_page_lists_every_lesson(page: Any, base_url: str, site: Path) -> None:
    sidecar = site.parent / "recordings" / "_inputs" / "basics-01.json"
    seconds = json.loads(sidecar.read_text())["seconds"]
    page.goto(base_url + "recordings/index.html")
    rows = page.locator("table.recordings tbody tr")
    assert rows.count() == 3
    first = rows.first.inner_text()
    assert "fresh" in first
    # the versions every recording shares: said once, above the table
    assert f"jax {version('jax')}" not in first
    assert f"jax {version('jax')}" in page.locator("main p.recorded-with").inner_text()
    assert f"{seconds:.2f} s" in first


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violations(
    browser: Any, base_url: str, site: Path, scheme: str
) -> None:
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    found = []
    for name in pages(site):
        page.goto(base_url + name)
        if name.startswith("search/"):
            page.locator("main .search-input").wait_for()
        found += findings(page, name)
    context.close()
    assert_none(found)


def test_screenshots(browser: Any, base_url: str, tmp_path: Path) -> None:
    """Home and one lesson, light and dark, desktop and mobile; SAVE_SCREENSHOTS=1 keeps them."""
    out = SCREENSHOTS if os.environ.get("SAVE_SCREENSHOTS") == "1" else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    for device, viewport in (("desktop", (1200, 800)), ("mobile", (375, 740))):
        for scheme in ("light", "dark"):
            context = browser.new_context(
                viewport={"width": viewport[0], "height": viewport[1]}, color_scheme=scheme
            )
            page = context.new_page()
            for name, path in (("home", "index.html"), ("lesson", LESSON)):
                page.goto(base_url + path)
                page.wait_for_load_state("networkidle")
                shot = out / f"{name}-{scheme}-{device}.png"
                page.screenshot(path=str(shot))
                assert shot.stat().st_size > 5000
            context.close()


def test_an_old_lesson_address_redirects_keeping_the_section(browser: Any, base_url: str) -> None:
    """`aliases: [first-jaxpr]`: l/first-jaxpr/ was the lesson's address before a rename."""
    for javascript, wanted in ((True, "l/first/index.html#tracing"), (False, "l/first/index.html")):
        context = browser.new_context(java_script_enabled=javascript)
        page = context.new_page()
        page.goto(base_url + "l/first-jaxpr/index.html#tracing")
        page.wait_for_url(base_url + wanted)
        assert page.locator("h1").inner_text() == "A first jaxpr"
        context.close()
