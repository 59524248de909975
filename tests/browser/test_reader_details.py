"""Issue 29's careful pass, on the real course (content/ and recordings/) in headless
Chromium: the small things a demanding reader meets (print, layout shift, focus, touch,
labels), and the notebook beside each example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course
from builder.course.recording import load
from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
LESSONS = ("l/residuals/index.html", "l/donation/index.html", "l/lab-j1/index.html")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("networkidle")


# -- the notebook beside each example ------------------------------------------------------


def test_every_lesson_offers_its_notebook_with_the_recorded_output(
    new_page: Any, course_url: str, course: Course
) -> None:
    import nbformat

    page = new_page()
    for lesson in course.lessons:
        _open(page, f"{course_url}{lesson.url}index.html")
        link = page.locator(".run-it a.notebook-download")
        assert link.get_attribute("download") == "example.ipynb", lesson.id
        response = page.request.get(link.evaluate("a => a.href"))
        assert response.ok, lesson.id
        notebook = nbformat.reads(response.text(), as_version=nbformat.NO_CONVERT)
        nbformat.validate(notebook)
        intro, *cells = notebook.cells
        assert intro.source.startswith(f"# {lesson.title}"), lesson.id
        assert "](index.html)" in intro.source, f"{lesson.id}: no link back to its page"
        # the lesson's prose comes between its code cells, as Markdown
        code = [c for c in cells if c.cell_type == "code"]
        assert any(c.cell_type == "markdown" for c in cells), f"{lesson.id}: no prose"
        if lesson.cells:  # one notebook cell per cell of example.py, in order
            assert [c.source.strip() for c in code] == [
                cell.shown.strip() for cell in lesson.cells
            ], lesson.id
        else:
            assert [c.source for c in code] == [lesson.source.decode("utf-8-sig")], lesson.id
        recorded = load(REPO / "recordings" / f"{lesson.id}.json").stdout
        printed = "".join(o.text for c in code for o in c.outputs if o.get("name") == "stdout")
        assert printed == recorded, lesson.id


# -- print ---------------------------------------------------------------------------------


def test_print_leaves_out_what_only_works_on_a_screen(new_page: Any, course_url: str) -> None:
    """A download link, a wrap button, a folded listing nobody can unfold on paper."""
    page = new_page()
    shown = []
    for name in LESSONS:
        _open(page, course_url + name)
        page.emulate_media(media="print")
        for selector in (".example-download", ".wrap-toggle", "details.example-whole", ".copy"):
            for element in page.locator(selector).all():
                if element.is_visible():
                    shown.append(f"{name}: {selector}")
        page.emulate_media(media="screen")
    assert not shown, "\n".join(sorted(set(shown)))


# -- touch ---------------------------------------------------------------------------------


def test_controls_are_at_least_24_px_to_touch_on_a_phone(new_page: Any, course_url: str) -> None:
    """WCAG 2.5.8 at 375 px: every control that is not a link inside a sentence (the
    breadcrumbs are checked with them elsewhere)."""
    page = new_page(viewport=PHONE)
    small = []
    controls = "button, summary, .anchor, a.example-download, .pager a"
    for name in LESSONS:
        _open(page, course_url + name)
        for element in page.locator(controls).all():
            box = element.bounding_box()
            if box and element.is_visible() and (box["width"] < 24 or box["height"] < 24):
                what = element.evaluate("e => e.className + ' ' + e.textContent.trim()")
                small.append(f"{name}: {what[:40]} {box['width']:.0f}x{box['height']:.0f}")
    assert not small, "\n".join(sorted(set(small)))


# -- layout --------------------------------------------------------------------------------


COVERED = """() => [...document.querySelectorAll('.code-wrap > .copy')].map(button => {
  const pre = button.parentElement.querySelector('pre.highlight');
  const top = pre.getBoundingClientRect().top + parseFloat(getComputedStyle(pre).paddingTop);
  const right = pre.getBoundingClientRect().right - parseFloat(getComputedStyle(pre).paddingRight);
  const b = button.getBoundingClientRect();
  return b.bottom <= top + 0.5 || b.left >= right - 0.5 ? null : pre.textContent.slice(0, 40);
}).filter(Boolean)"""


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "375"])
def test_no_code_sits_under_its_copy_button(
    new_page: Any, course_url: str, viewport: dict[str, int]
) -> None:
    page = new_page(viewport=viewport)
    covered = []
    for name in LESSONS:
        _open(page, course_url + name)
        covered += [f"{name}: {text!r}" for text in page.evaluate(COVERED)]
    assert not covered, "\n".join(covered)


SHIFTS = """window.__shift = 0;
new PerformanceObserver(list => { for (const e of list.getEntries())
  if (!e.hadRecentInput) window.__shift += e.value; }).observe({type: 'layout-shift', buffered: true});"""


def test_nothing_moves_once_the_page_has_painted(browser: Any, course_url: str) -> None:
    """Cumulative layout shift: the header's buttons and the sidebar site.js and nav.js add,
    and the Copy buttons, push nothing (the theme control's own shift, 0.001, aside)."""
    context = browser.new_context(viewport=LAPTOP)  # a phone's header was steady already
    context.add_init_script(SHIFTS)
    page = context.new_page()

    def slowly(route: Any) -> None:  # scripts and styles arrive after the first paint
        if route.request.resource_type in ("script", "stylesheet", "image"):
            page.wait_for_timeout(100)
        route.continue_()

    page.route("**/*", slowly)
    moved = []
    for name in ("index.html", "glossary/index.html", "a/labs/index.html", *LESSONS):
        _open(page, course_url + name)
        page.wait_for_timeout(200)
        shift = page.evaluate("window.__shift")
        if shift > 0.005:
            moved.append(f"{name}: {shift:.3f}")
    context.close()
    assert not moved, "\n".join(moved)


# -- focus ---------------------------------------------------------------------------------


CLIPPED = """() => { const out = [];
 for (const el of document.querySelectorAll('.sidebar a, .toc a')) {
  el.focus(); if (document.activeElement !== el || !el.getBoundingClientRect().width) continue;
  const cs = getComputedStyle(el), r = el.getBoundingClientRect();
  const ring = parseFloat(cs.outlineWidth) + parseFloat(cs.outlineOffset);
  let box = el.parentElement;
  while (box && getComputedStyle(box).overflowY === 'visible') box = box.parentElement;
  const c = box.getBoundingClientRect(), left = c.left + box.clientLeft;
  if (r.left - ring < left - 0.5 || r.right + ring > left + box.clientWidth + 0.5)
    out.push(el.textContent.trim().slice(0, 30));
 } return out; }"""


def test_focus_rings_in_the_scrolling_lists_are_whole(new_page: Any, course_url: str) -> None:
    """The sidebar and the contents scroll on their own at desktop widths: a ring drawn
    outside a link there was cut off at the list's edges (only its top and bottom showed)."""
    clipped = []
    for viewport, name in (
        (LAPTOP, "index.html"),
        (LAPTOP, LESSONS[0]),
        ({"width": 1700, "height": 900}, LESSONS[1]),
    ):
        page = new_page(viewport=viewport)
        _open(page, course_url + name)
        page.keyboard.press("Tab")  # keyboard focus: :focus-visible applies from here on
        clipped += [f"{name} @{viewport['width']}: {text}" for text in page.evaluate(CLIPPED)]
    assert not clipped, "\n".join(clipped[:10])


# -- labels --------------------------------------------------------------------------------


def test_lesson_pages_have_no_minor_axe_findings_either(new_page: Any, course_url: str) -> None:
    """The serious ones are checked on every page elsewhere; these were left: an empty
    header cell in every chart's data table, and output regions sharing one name."""
    page, found = new_page(), []
    for name in LESSONS:
        _open(page, course_url + name)
        found += findings(page, name, impacts=None)
    assert_none(found)


def test_the_copy_button_is_called_what_it_says(browser: Any, course_url: str) -> None:
    """After a click it shows "Copied": its accessible name says so too, and is announced."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    _open(page, course_url + LESSONS[0])
    button = page.locator(".prose .copy").first
    assert button.get_attribute("aria-live") == "polite"
    button.click()
    page.wait_for_function("b => b.textContent === 'Copied'", arg=button.element_handle())
    assert button.get_attribute("aria-label") == "Copied"
    context.close()


# -- screenshots ---------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_the_home_page_and_a_lab(
    new_page: Any, course_url: str, tmp_path: Path, scheme: str
) -> None:
    """SAVE_SCREENSHOTS=1 keeps them in docs/screenshots/ (course-home-*, course-lab-*); the
    lesson's are test_course_site.py's (course-lesson-*)."""
    import os

    out = REPO / "docs" / "screenshots" if os.environ.get("SAVE_SCREENSHOTS") == "1" else tmp_path
    for device, viewport in (("desktop", LAPTOP), ("mobile", PHONE)):
        page = new_page(scheme, viewport)
        for name, url in (("home", "index.html"), ("lab", "l/lab-j1/index.html")):
            _open(page, course_url + url)
            shot = out / f"course-{name}-{scheme}-{device}.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 5000
