"""Issue 29's careful pass, second sweep, on the real course (content/ and recordings/) in
headless Chromium: what a demanding reader meets with a keyboard, a finger, a printer or a
dark screen (recorded values' notes, the header's steadiness, breadcrumbs, cards, print,
tab stops)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course
from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
DONATION = "l/donation/index.html"
LESSONS = (DONATION, "l/residuals/index.html", "l/lab-j3/index.html")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")


# -- recorded values: where each came from, for a keyboard and a finger too ----------------


def test_a_recorded_value_says_where_it_came_from_to_a_keyboard_and_a_finger(
    new_page: Any, course_url: str
) -> None:
    """A title tooltip shows on a mouse's hover only; the note is a focus (or a tap) away,
    is the value's accessible description, and closes with Escape."""
    page = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    _open(page, course_url + DONATION)
    value = page.locator("data.rv", has_text="1.4 MiB").first
    assert value.get_attribute("title") is None
    note = page.locator("#" + value.get_attribute("aria-describedby"))
    assert not note.is_visible()
    value.tap()
    assert note.is_visible()
    text = note.inner_text()
    assert "Recorded value 1,441,792, from panel 1" in text, text
    assert "in bytes (compiler estimate)" in text and "Recorded CPU computation" in text
    box, window = note.bounding_box(), PHONE["width"]
    assert box["x"] >= 0 and box["x"] + box["width"] <= window, box

    page = new_page(viewport=LAPTOP)
    _open(page, course_url + DONATION)
    value = page.locator("data.rv", has_text="1.4 MiB").first
    note = page.locator("#" + value.get_attribute("aria-describedby"))
    value.focus()
    assert note.is_visible()
    page.keyboard.press("Escape")
    assert not note.is_visible()


def test_every_value_note_reads_as_a_sentence(
    new_page: Any, course_url: str, course: Course
) -> None:
    """No doubled brackets ("(bytes (compiler estimate))"), every value in the tab order
    and described by its note."""
    page = new_page()
    bad = []
    for lesson in course.lessons:
        _open(page, f"{course_url}{lesson.url}index.html")
        for found in page.evaluate("""() => [...document.querySelectorAll('data.rv')].map(v => {
          const note = document.getElementById(v.getAttribute('aria-describedby') || '');
          return [v.tabIndex, note ? note.textContent : '', v.textContent]; })"""):
            tabindex, note, shown = found
            if tabindex != 0 or not note or "((" in note or "))" in note:
                bad.append(f"{lesson.id}: {shown!r} {tabindex} {note!r}")
    assert not bad, "\n".join(bad[:10])


# -- the header: steady from the first paint, the title whole ------------------------------


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "375"])
def test_the_theme_control_does_not_push_the_header_when_it_appears(
    browser: Any, course_url: str, viewport: dict[str, int]
) -> None:
    """Where the header's links and title sit before site.js runs (here: never) is where
    they stay once it has shown the theme control."""
    boxes = []
    for block in (True, False):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        if block:
            page.route("**/static/site.js", lambda route: route.abort())
        _open(page, course_url + DONATION)
        boxes.append(
            [page.locator(sel).bounding_box() for sel in (".top-links", ".brand", "main h1")]
        )
        context.close()
    assert boxes[0] == boxes[1], boxes


def test_the_course_title_is_whole_in_a_phones_header(new_page: Any, course_url: str) -> None:
    page = new_page(viewport=PHONE)
    for name in ("index.html", DONATION):
        _open(page, course_url + name)
        brand = page.locator(".brand")
        cut = brand.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        assert not cut, f"{name}: the course title is cut off"
        assert brand.bounding_box()["height"] <= 2 * 1.3 * 16, "more than two lines"


# -- breadcrumbs: big enough to touch, no line starting with a separator -------------------


LINE_STARTS = """() => { const ol = document.querySelector('.crumbs ol');
  const left = ol.getBoundingClientRect().left;
  return [...ol.children].slice(1).filter(li => li.getClientRects()[0].left < left + 2)
    .map(li => li.textContent.trim()); }"""


def test_breadcrumbs_are_touchable_and_never_start_a_line_with_a_separator(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page(viewport=PHONE)
    found = []
    for lesson in course.lessons:
        _open(page, f"{course_url}{lesson.url}index.html")
        for link in page.locator(".crumbs a").all():
            box = link.bounding_box()
            if box["height"] < 24:
                found.append(f"{lesson.id}: {link.inner_text()} is {box['height']:.0f} px tall")
        found += [
            f"{lesson.id}: a line starts with › {text}" for text in page.evaluate(LINE_STARTS)
        ]
    assert not found, "\n".join(found[:10])


# -- prose names lessons by their titles ---------------------------------------------------


def test_no_lesson_is_called_by_its_id(new_page: Any, course_url: str, course: Course) -> None:
    """ "Lab J3" is the lesson id lab-j3 read aloud: the labs' titles do not say it."""
    page = new_page()
    said = []
    for lesson in course.lessons:
        _open(page, f"{course_url}{lesson.url}index.html")
        texts = page.locator(".prose a, h1, .pager a, .sidebar a").all_inner_texts()
        said += [f"{lesson.id}: {t!r}" for t in texts if re.search(r"\blab\W?j\d", t, re.I)]
    assert not said, "\n".join(sorted(set(said)))


# -- print ---------------------------------------------------------------------------------


LUMINANCE = """e => { const c = getComputedStyle(e).color.match(/[\\d.]+/g).slice(0, 3).map(Number)
  .map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; }"""


def test_code_prints_in_dark_ink_from_a_dark_screen(new_page: Any, course_url: str) -> None:
    """A printer leaves out backgrounds: the dark theme's pale code would be pale on paper."""
    page = new_page(scheme="dark")
    _open(page, course_url + DONATION)
    page.emulate_media(media="print")
    pale = []
    for token in page.locator(":is(figure.example, figure.cell) pre.highlight span").all()[:60]:
        luminance = token.evaluate(LUMINANCE)
        if (1.05) / (luminance + 0.05) < 4.5:  # its contrast with white paper
            pale.append(f"{token.inner_text()!r}: {luminance:.2f}")
    assert not pale, "\n".join(pale[:10])


def test_print_keeps_headings_and_captions_with_what_follows(
    new_page: Any, course_url: str
) -> None:
    page = new_page()
    loose = []
    for name in LESSONS:
        _open(page, course_url + name)
        page.emulate_media(media="print")
        loose += page.evaluate("""() => [...document.querySelectorAll(
            '.prose .heading, .prose h2, .prose h3, figcaption, .run-it h2')]
          .filter(e => getComputedStyle(e).breakAfter !== 'avoid')
          .map(e => e.tagName + ' ' + e.textContent.trim().slice(0, 30))""")
    assert not loose, "\n".join(loose[:10])


# -- cards and the list of lessons: what looks like a target is one ------------------------


def test_a_tap_anywhere_on_a_lesson_card_opens_the_lesson(new_page: Any, course_url: str) -> None:
    page = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    for name in ("index.html", "a/labs/index.html"):
        _open(page, course_url + name)
        card = page.locator(".card").nth(1)
        href = card.locator("a").evaluate("a => a.href")
        card.scroll_into_view_if_needed()
        box = card.locator("p").bounding_box()  # the summary, below the title
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_url(href)  # fails after 10 s when the tap led nowhere


def test_the_list_of_lessons_is_24_px_a_target_in_the_phones_menu(
    new_page: Any, course_url: str
) -> None:
    page = new_page(viewport=PHONE)
    _open(page, course_url + "index.html")
    page.locator(".menu-button").click()
    small = [
        f"{link.inner_text()} {link.bounding_box()['height']:.0f}px"
        for link in page.locator("#sidebar a").all()
        if link.bounding_box()["height"] < 24
    ]
    assert not small, small


# -- the glossary marks the term a link led to ---------------------------------------------


def test_the_glossary_marks_the_term_a_card_led_to(new_page: Any, course_url: str) -> None:
    page = new_page(scheme="dark")
    _open(page, course_url + DONATION)
    page.locator(".term-link").first.click()  # opens its card, which leads to the glossary
    page.locator(".term-card a", has_text="in the glossary").first.click()
    page.wait_for_load_state("networkidle")
    target = page.url.split("#", 1)[1]
    style = "e => getComputedStyle(e).backgroundColor + getComputedStyle(e).borderLeftStyle"
    marked = page.locator(f"dt#{target}").evaluate(style)
    other = page.locator(f"dt:not(#{target})").first.evaluate(style)
    assert marked != other, "the term arrived at looks like every other"


# -- focus: tab stops that lead somewhere, cards that stay on screen -----------------------


STOPS = """() => [...document.querySelectorAll('main [role=region]')].filter(e => e.getClientRects().length)
  .map(e => [e.getAttribute('aria-label'), e.tabIndex === 0,
             e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1])"""


def test_only_blocks_with_more_to_scroll_to_are_tab_stops(new_page: Any, course_url: str) -> None:
    """axe asks that a block which scrolls be focusable; one that shows all it holds is a
    stop on the way through the page that leads nowhere."""
    page = new_page()
    wrong = []
    for name in (*LESSONS, "recordings/index.html"):
        _open(page, course_url + name)
        for label, stop, scrolls in page.evaluate(STOPS):
            if stop != scrolls:
                wrong.append(
                    f"{name}: {label} ({'a stop' if stop else 'no stop'}, scrolls={scrolls})"
                )
    assert not wrong, "\n".join(wrong[:10])
    page.set_viewport_size(PHONE)  # narrower: the same blocks now scroll, and are stops
    page.wait_for_timeout(300)
    assert all(stop for _, stop, scrolls in page.evaluate(STOPS) if scrolls)


def test_a_card_near_the_foot_of_the_window_opens_upwards(new_page: Any, course_url: str) -> None:
    page = new_page()
    _open(page, course_url + DONATION)
    term = page.locator(".term-link").nth(2)
    term.evaluate("e => window.scrollBy(0, e.getBoundingClientRect().bottom - innerHeight + 4)")
    term.focus()
    page.keyboard.press("Enter")
    page.wait_for_timeout(100)
    card = page.locator("#" + term.get_attribute("aria-controls")).bounding_box()
    assert card["y"] >= 0 and card["y"] + card["height"] <= LAPTOP["height"], card


# Each kind of popup: what opens it, and the attribute that names its card.
POPUPS = {
    "value-note": ("data.rv", "aria-describedby"),
    "term-card": (".term-link", "aria-controls"),
}


@pytest.mark.parametrize("kind", list(POPUPS))
def test_every_popup_opened_at_a_phones_foot_stays_in_the_window(
    new_page: Any, course_url: str, kind: str
) -> None:
    """Value notes (site.js) and glossary cards (cards.js) share one placement: each mark
    brought to the foot of a phone's window opens its popup upwards, and one near the right
    edge is moved left, so that every popup is whole on screen."""
    selector, names = POPUPS[kind]
    page = new_page(viewport=PHONE)
    _open(page, course_url + DONATION)
    marks = page.locator(f"main {selector}").all()
    assert len(marks) >= 4, kind
    upwards = 0
    for mark in marks:
        mark.evaluate("e => window.scrollBy(0, e.getBoundingClientRect().bottom - innerHeight + 4)")
        mark.focus()
        if kind == "term-card":
            page.keyboard.press("Enter")
        page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        popup = page.locator("#" + (mark.get_attribute(names) or "").removesuffix("-def"))
        box = popup.bounding_box()
        assert box is not None, kind
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
        upwards += mark.evaluate("e => e.closest('.above') !== null")
        page.keyboard.press("Escape")
    assert upwards >= len(marks) // 2, kind  # most marks can be brought to the foot


# -- recordings: the whole hash without a hover --------------------------------------------


def test_the_whole_content_hash_is_a_tap_away(new_page: Any, course_url: str) -> None:
    page = new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    _open(page, course_url + "recordings/index.html")
    assert page.locator("main [title]").count() == 0, "a tooltip only a mouse can show"
    first = page.locator("details.hash").first
    first.locator("summary").tap()
    whole = first.locator(":scope > code").inner_text()
    assert re.fullmatch(r"[0-9a-f]{64}", whole), whole


def test_the_swept_pages_have_no_axe_findings(new_page: Any, course_url: str) -> None:
    found = []
    for scheme, viewport in (("light", LAPTOP), ("dark", PHONE)):
        page = new_page(scheme, viewport)
        for name in (DONATION, "recordings/index.html", "glossary/index.html", "index.html"):
            _open(page, course_url + name)
            found += findings(page, f"{scheme} {name}", impacts=None)
    assert_none(found)
