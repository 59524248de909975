"""Issue 43's widgets in headless Chromium, at 1280 and 375 px in both themes: glossary cards
that are disclosures (no links inside a tooltip, a term described by its definition alone)
and the way back to the top of a long lesson, on the real course; content tabs, on a lesson
of the fixture course."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course
from tests.browser.a11y import assert_none, findings
from tests.browser.conftest import _serve

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
SCREENS = [("light", LAPTOP), ("dark", LAPTOP), ("light", PHONE), ("dark", PHONE)]
SCREEN_IDS = ["light-1280", "dark-1280", "light-375", "dark-375"]
REPO = Path(__file__).resolve().parents[2]
DONATION = "l/donation/index.html"


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")


# -- 1. glossary cards: a disclosure, not a tooltip ----------------------------------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_a_glossary_card_is_a_disclosure_described_by_its_definition(
    new_page: Any, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    _open(page, course_url + DONATION)
    assert page.locator("[role=tooltip] a, [role=tooltip] button").count() == 0
    assert page.locator(".term-card[role=tooltip]").count() == 0
    # a term taught on another page: on its teacher's own page a card has no "taught in"
    term = page.locator(".term:has(.term-more a:text-matches('^taught in'))").first
    link, card = term.locator(".term-link"), term.locator(".term-card")
    # What a screen reader hears for the term: a button, collapsed, described by the
    # definition alone (not the term's name again, nor "taught in").
    assert link.get_attribute("role") == "button"
    assert link.get_attribute("aria-expanded") == "false"
    assert link.get_attribute("aria-controls") == card.get_attribute("id")
    described = page.locator("#" + link.get_attribute("aria-describedby"))
    glossary = {t.term: t.definition.replace("`", "") for t in course.glossary}
    name = term.locator(".term-name").text_content()
    assert described.text_content() == glossary[name]
    link.focus()  # the focus alone opens nothing: the reader asks
    assert not card.is_visible()
    page.keyboard.press("Enter")
    assert card.is_visible() and link.get_attribute("aria-expanded") == "true"
    assert_none(findings(page))
    page.keyboard.press("Tab")  # into the card: its "taught in" link
    taught = card.locator(".term-more a").first
    assert page.evaluate("() => document.activeElement.textContent").startswith("taught in")
    assert taught.is_visible()
    page.keyboard.press("Escape")
    assert not card.is_visible() and link.get_attribute("aria-expanded") == "false"
    assert page.evaluate("() => document.activeElement.classList.contains('term-link')")
    page.keyboard.press(" ")  # Space opens it too, and scrolls nothing
    assert card.is_visible()
    page.keyboard.press(" ")
    assert not card.is_visible()
    # A click (a tap on a phone) opens it; a click elsewhere closes it.
    link.click()
    assert card.is_visible()
    box = card.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
    page.locator("h1").click()
    assert not card.is_visible() and link.get_attribute("aria-expanded") == "false"


def test_a_card_s_links_lead_to_the_teaching_lesson_and_the_glossary(
    new_page: Any, course_url: str
) -> None:
    page = new_page()
    _open(page, course_url + DONATION)
    # a term taught on another page: on its teacher's own page a card has no "taught in"
    term = page.locator(".term:has(.term-more a:text-matches('^taught in'))").first
    term.locator(".term-link").click()
    glossary = term.locator(".term-more a").nth(1)
    assert glossary.inner_text() == "in the glossary"
    target = glossary.get_attribute("href").split("#")[1]
    glossary.click()
    page.wait_for_url(f"**/glossary/index.html#{target}")


def test_without_javascript_a_term_is_a_link_to_its_glossary_entry(
    browser: Any, course_url: str
) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(course_url + DONATION)
    link = page.locator(".term-link").first
    assert link.get_attribute("role") is None and link.get_attribute("aria-expanded") is None
    href = link.get_attribute("href")
    assert href.startswith("../../glossary/index.html#")
    link.click()
    page.wait_for_url("**/glossary/index.html#" + href.split("#")[1])
    context.close()


# -- 2. back to top, at the foot of a long page ----------------------------------------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_a_long_lesson_ends_with_a_way_back_to_the_top(
    new_page: Any, course_url: str, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    for name in (DONATION, "glossary/index.html"):
        _open(page, course_url + name)
        back = page.get_by_role("link", name="Back to top")
        assert back.count() == 1, name
        # Last in the page's order of keys, after the previous and next lessons: Shift+Tab
        # from the footer's end reaches it before anything else of <main>.
        after = page.evaluate(
            """() => [...document.querySelectorAll('main a[href], main button, main [tabindex="0"]')]
                .filter(e => e.getClientRects().length).pop().textContent.trim()"""
        )
        assert after.startswith("Back to top"), (name, after)
        back.focus()
        box = back.bounding_box()
        assert box["height"] >= 24 and box["width"] >= 24, box  # a thumb's target
        shown = back.evaluate(
            "e => getComputedStyle(e).color + ' ' + getComputedStyle(e).visibility"
        )
        assert "visible" in shown
        assert page.evaluate("() => window.scrollY") > viewport["height"], "not a long page"
        assert_none(findings(page, name))
        page.keyboard.press("Enter")
        page.wait_for_function("() => window.scrollY === 0")
        page.keyboard.press("Tab")  # the next key starts from the top, not from the foot
        assert page.evaluate("() => !!document.activeElement.closest('header.top')"), name
    page.emulate_media(media="print")
    assert not page.get_by_role("link", name="Back to top").is_visible()


def test_back_to_top_works_without_javascript(browser: Any, course_url: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.goto(course_url + DONATION)
    back = page.get_by_role("link", name="Back to top")
    back.scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") > 0
    back.click()
    page.wait_for_function("() => window.scrollY === 0")
    context.close()


# -- 3. content tabs, on a fixture lesson --------------------------------------------------

TABS = """

## Two ways to loop

=== "A Python loop"

    The trace holds **one equation an iteration**.

    ```python
    for x in xs:
        carry = step(carry, x)
    ```

=== "lax.scan"

    One equation, whatever the length.

=== "<b>Quotes</b> & \\"marks\\""

    A title shown as typed.

Between the groups.

=== "A Python loop"

    The same titles again.

=== "lax.scan"

    Their own ids.
"""
HOSTILE = '<b>Quotes</b> & "marks"'


@pytest.fixture(scope="module")
def tabs_url(recorded_template: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The fixture course, its first lesson ending in two groups of tabs, served."""
    root = tmp_path_factory.mktemp("tabs")
    shutil.copytree(recorded_template / "content", root / "content")
    shutil.copytree(recorded_template / "recordings", root / "recordings")
    with (root / "content" / "lessons" / "basics-01" / "lesson.md").open("a") as handle:
        handle.write(TABS)
    command = [sys.executable, "-m", "builder", "render", "--content", str(root / "content")]
    command += ["--recordings", str(root / "recordings"), "--out", str(root / "site")]
    command += ["--cache", str(root / "cache")]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    server, url = _serve(root)
    yield url + "l/first/index.html"
    server.shutdown()
    server.server_close()


def _visible(page: Any, selector: str) -> list[str]:
    return [x.inner_text() for x in page.locator(selector).all() if x.is_visible()]


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_tabs_are_an_aria_tabs_widget_that_keys_and_clicks_drive(
    new_page: Any, tabs_url: str, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    _open(page, tabs_url)
    lists = page.get_by_role("tablist")
    assert lists.count() == 2
    first = lists.first.get_by_role("tab")
    assert first.all_inner_texts() == ["A Python loop", "lax.scan", HOSTILE]
    for at in range(3):
        tab = first.nth(at)
        panel = page.locator("#" + tab.get_attribute("aria-controls"))
        assert panel.get_attribute("role") == "tabpanel"
        assert panel.get_attribute("aria-labelledby") == tab.get_attribute("id")
        assert tab.get_attribute("aria-selected") == ("true" if at == 0 else "false")
        assert panel.is_visible() == (at == 0)
    assert not _visible(page, ".tab-title")  # the tab names its panel
    ids = page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids)), sorted(x for x in ids if ids.count(x) > 1)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    assert_none(findings(page))

    def shown() -> str:
        texts = _visible(page, ".tab-panel")
        return texts[0].split("\n")[0]

    first.nth(0).focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.textContent") == "lax.scan"
    assert first.nth(1).get_attribute("aria-selected") == "true"
    assert shown() == "One equation, whatever the length."
    page.keyboard.press("End")
    assert shown() == "A title shown as typed."
    page.keyboard.press("ArrowRight")  # round to the first
    assert shown().startswith("The trace holds")
    page.keyboard.press("ArrowLeft")  # and back round to the last
    assert first.nth(2).get_attribute("aria-selected") == "true"
    page.keyboard.press("Home")
    assert first.nth(0).get_attribute("aria-selected") == "true"
    page.keyboard.press("Tab")  # one stop a group: the next is the shown panel
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "tabpanel"
    assert_none(findings(page))
    second = lists.nth(1).get_by_role("tab")
    second.nth(1).click()  # the other group: its own choice
    assert second.nth(1).get_attribute("aria-selected") == "true"
    assert first.nth(0).get_attribute("aria-selected") == "true"
    assert "Their own ids." in _visible(page, ".tab-panel")


def test_an_address_inside_a_hidden_panel_shows_it(new_page: Any, tabs_url: str) -> None:
    page = new_page()
    _open(page, tabs_url + "#tabs-1-2")
    assert page.locator("#tabs-1-2").is_visible()
    assert page.get_by_role("tab", name="lax.scan").first.get_attribute("aria-selected") == "true"


def test_without_javascript_and_in_print_every_panel_shows_under_its_title(
    browser: Any, new_page: Any, tabs_url: str
) -> None:
    every = ["A Python loop", "lax.scan", HOSTILE, "A Python loop", "lax.scan"]
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.goto(tabs_url)
    assert page.get_by_role("tablist").count() == 0
    assert _visible(page, ".tab-title") == every
    assert len(_visible(page, ".tab-panel")) == 5
    context.close()
    page = new_page("dark")
    _open(page, tabs_url)
    page.emulate_media(media="print")
    assert _visible(page, ".tab-title") == every
    assert len(_visible(page, ".tab-panel")) == 5
    assert not page.get_by_role("tablist").first.is_visible()
