"""Issue 43's widgets on the real course in headless Chromium, at 1280 and 375 px in both
themes: glossary cards that are disclosures (no links inside a tooltip, a term described by
its definition alone) and the way back to the top of a long lesson."""

from __future__ import annotations

from typing import Any

import pytest

from builder.course.model import Course

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
SCREENS = [("light", LAPTOP), ("dark", LAPTOP), ("light", PHONE), ("dark", PHONE)]
SCREEN_IDS = ["light-1280", "dark-1280", "light-375", "dark-375"]
SERIOUS = ("serious", "critical")
DONATION = "l/donation/index.html"


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")


def _serious(page: Any) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in SERIOUS
    ]


# -- 1. glossary cards: a disclosure, not a tooltip ----------------------------------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_a_glossary_card_is_a_disclosure_described_by_its_definition(
    new_page: Any, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    _open(page, course_url + DONATION)
    assert page.locator("[role=tooltip] a, [role=tooltip] button").count() == 0
    assert page.locator(".term-card[role=tooltip]").count() == 0
    term = page.locator(".term").first
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
    assert not _serious(page)
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
    term = page.locator(".term").first
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
        assert not _serious(page), name
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
