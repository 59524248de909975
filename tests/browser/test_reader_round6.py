"""Issue 59's site items on the real course in Chromium: the sidebar's numbers and the
current lesson in its view at 1600 px and wider, the Lessons menu's column headings on one
line, a term's card on the page that teaches it, the search page without JavaScript."""

from __future__ import annotations

from typing import Any

import pytest

from builder.course.model import Course

# Each arc title's left and top, in the Lessons menu.
HEADS = """() => [...document.querySelectorAll('#sidebar .arc-title')].map(a => {
  const box = a.getBoundingClientRect();
  return [Math.round(box.left), Math.round(box.top)];
})"""
IN_VIEW = """() => {
  const a = document.querySelector('#sidebar a[aria-current=page]');
  const box = a.getBoundingClientRect(), frame = a.closest('#sidebar').getBoundingClientRect();
  return box.top >= frame.top && box.bottom <= frame.bottom && window.scrollY === 0;
}"""


@pytest.mark.parametrize("width", [1600, 1920])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_sidebar_numbers_lessons_and_shows_the_current_one(
    new_page: Any, course_url: str, course: Course, width: int, scheme: str
) -> None:
    page = new_page(scheme, {"width": width, "height": 700})
    last = course.lessons[-1]
    page.goto(f"{course_url}{last.url}index.html")
    current = page.locator("#sidebar a[aria-current=page]")
    arcs = [a for a in course.meta.arcs if course.by_arc()[a.id]]
    number = f"{len(arcs)}.{len(course.by_arc()[last.meta.arc])}"
    assert current.inner_text().replace("\n", " ") == f"{number} {last.title}"
    assert page.evaluate(IN_VIEW), f"{last.id}: the current lesson is out of the sidebar's view"


@pytest.mark.parametrize("width", [801, 1024, 1280, 1599])
def test_the_lessons_menus_column_headings_stand_on_one_line(
    new_page: Any, course_url: str, course: Course, width: int
) -> None:
    page = new_page("light", {"width": width, "height": 800})
    page.goto(f"{course_url}{course.lessons[0].url}index.html")
    page.get_by_role("button", name="Lessons").click()
    tops: dict[int, int] = {}
    for left, top in page.evaluate(HEADS):
        tops.setdefault(left, top)  # the first title of each column heads it
    assert len(tops) >= 2 and len(set(tops.values())) == 1, tops


def test_a_terms_card_on_its_own_lesson_links_nowhere_else(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page("light", {"width": 375, "height": 800})
    checked = 0
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        mine = {x.id for x in course.glossary if x.taught_in == lesson.id}
        for card in page.locator(".term-card").all():
            term = card.get_attribute("id").split("-")[1:-1]
            if "-".join(term) in mine:
                checked += 1
                more = card.locator(".term-more")
                assert "taught in this lesson" in more.text_content()
                assert more.locator("a").count() == 1  # the glossary's, not this page's
            hrefs = [a.get_attribute("href") for a in card.locator("a").all()]
            assert "index.html" not in hrefs
    assert checked, "no lesson uses a term it teaches"


def test_the_search_page_shows_no_box_without_javascript(new_page: Any, course_url: str) -> None:
    page = new_page("light", {"width": 375, "height": 800}, java_script_enabled=False)
    page.goto(course_url + "search/index.html")
    assert not page.locator("#search-page-input").is_visible()
    assert "needs JavaScript" in page.locator("#search-page-status").inner_text()
    page = new_page("dark", {"width": 1600, "height": 800})
    page.goto(course_url + "search/index.html")
    assert page.locator("#search-page-input").is_visible()
