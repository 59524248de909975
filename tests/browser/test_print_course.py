"""Issue 43: the whole course in one page to print (print/index.html), on the real course in
headless Chromium: linked from the home page, printed to a PDF of more sheets than lessons
(each lesson starts a sheet) without the site's controls, every chart loaded, a Print button
that prints, and axe finding nothing serious and no two regions of one name, light or dark."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course
from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

PRINT = "print/index.html"


def test_the_home_page_leads_to_it_and_it_holds_every_lesson_in_order(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
    page.goto(course_url + "index.html")
    page.get_by_role("link", name="Print the whole course").click()
    page.wait_for_url("**/" + PRINT)
    titles = page.locator("article.print-lesson > h3").all_inner_texts()
    in_order = [x.title for arc in course.by_arc().values() for x in arc]
    assert [t.split(" ", 1)[1] for t in titles] == in_order
    contents = page.locator(".print-contents ul ul a")
    assert contents.count() == len(in_order)
    contents.nth(3).click()
    assert page.evaluate("location.hash") == "#" + str(contents.nth(3).get_attribute("href"))[1:]
    page.wait_for_load_state("load")
    broken = page.evaluate("[...document.images].filter(i => !i.naturalWidth).map(i => i.src)")
    assert page.evaluate("document.images.length") > 10 and not broken, broken
    assert not errors, errors
    page.evaluate("window.print = () => { window.printed = true; }")  # a phone's one way
    page.get_by_role("button", name="Print the course, or save it as a PDF").click()
    assert page.evaluate("window.printed === true")


def test_it_prints_to_more_sheets_than_lessons_without_the_sites_controls(
    new_page: Any, course_site: Path, course: Course
) -> None:
    page = new_page()
    page.goto((course_site / PRINT).as_uri())  # from disk, as a reader who saved the site
    page.wait_for_load_state("load")
    page.emulate_media(media="print")
    for control in ("header.top", ".sidebar", ".site-search", ".theme-toggle", ".copy", ".foot"):
        shown = page.locator(control).evaluate_all(
            "all => all.filter(e => e.checkVisibility()).length"
        )
        assert shown == 0, f"{control} is printed"
    starts = page.locator("article.print-lesson").evaluate_all(
        "all => all.map(e => getComputedStyle(e).breakBefore)"
    )
    assert starts.count("page") >= len(starts) - len(course.meta.arcs), starts
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF")
    sheets = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    assert sheets > len(course.lessons), f"{sheets} sheets for {len(course.lessons)} lessons"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious(new_page: Any, course_url: str, scheme: str) -> None:
    page = new_page(scheme)
    page.goto(course_url + PRINT)
    page.wait_for_load_state("load")
    assert_none(findings(page, PRINT, rules=("landmark-unique",)))  # regions told apart
