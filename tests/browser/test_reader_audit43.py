"""Issue 43's defects that no earlier browser test held, on the real course in headless
Chromium: a numbered list that numbers each item once (lab J2's five numbers read 1, 2, 3,
4, 4), a Lessons menu that keeps each arc's title at the head of its lessons, commands in
Run it yourself that still read as commands once a phone wraps them, and charts that write
neither an SI prefix on a ratio ("468n") nor a caret for a power ("2n^3")."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 800}
LESSON = "l/vmap-vs-loops/index.html"

# Each numbered list of the prose: its items' own text (nested lists, code blocks and the
# cards of terms and values left out).
LISTS = """() => [...document.querySelectorAll('.prose ol:not(.code-notes)')].map(ol =>
  [...ol.children].map(li => {
    const own = li.cloneNode(true);
    own.querySelectorAll('ol, ul, pre, .term-card, .rv-note').forEach(e => e.remove());
    return own.textContent.replace(/\\s+/g, ' ').trim();
  }))"""


def test_a_numbered_list_numbers_each_item_once(
    new_page: Any, course_url: str, course: Course
) -> None:
    """An item that holds the next number ("3. a, 4. b") is two items the reader sees
    numbered as one."""
    page = new_page()
    lists = 0
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        for items in page.evaluate(LISTS):
            lists += 1
            swallowed = [t for t in items if re.search(r"(?:^|[\s,;:])\d{1,2}\.\s+\S", t)]
            assert not swallowed, f"{lesson.id}: an item holds the next number: {swallowed}"
    assert lists >= 3
    page.goto(f"{course_url}l/lab-j2/index.html")
    five = page.locator(".prose p:has-text('predict the five numbers') + ol > li")
    assert five.count() == 5
    said = five.all_inner_texts()
    assert [re.match(r"\S+", x)[0] for x in said] == [  # type: ignore[index]
        "flops",
        "transcendentals",
        "argument_size_in_bytes,",
        "output_size_in_bytes",
        "temp_size_in_bytes,",
    ]


# Each arc's title in the Lessons menu, and its first lesson's link: where each stands.
ARC_HEADS = """() => [...document.querySelectorAll('#sidebar .arc-title')].map(a => {
  const title = a.getBoundingClientRect();
  const first = a.nextElementSibling.firstElementChild.getBoundingClientRect();
  return [a.textContent, title.left, title.bottom, first.left, first.top];
})"""


def test_the_lessons_menu_keeps_each_arcs_title_at_the_head_of_its_lessons(
    new_page: Any, course_url: str, course: Course
) -> None:
    """Between 801 and 1599 px the menu lays the arcs out in columns: no title is left at
    the foot of one column with its lessons at the top of the next ("LABS" was)."""
    page = new_page()
    for width in (801, 900, 1024, 1100, 1280, 1400, 1599):
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(course_url + LESSON)
        page.get_by_role("button", name="Lessons").click()
        heads = page.evaluate(ARC_HEADS)
        assert [h[0] for h in heads] == [arc.title for arc in course.meta.arcs]
        columns = {round(h[1]) for h in heads}
        assert len(columns) >= 2, f"one column at {width} px"  # the columns are tested
        for title, left, bottom, first_left, first_top in heads:
            where = f"{title} at {width} px"
            assert abs(left - first_left) < 2, f"{where}: its lessons start in another column"
            assert 0 <= first_top - bottom < 16, f"{where}: its lessons are not under it"


# Each command of a <pre>'s one text node: the left edge of each row it takes on screen.
ROWS = """code => {
  if (code.childNodes.length !== 1) return null;
  const text = code.firstChild, rows = [];
  let start = 0;
  for (const line of code.textContent.split('\\n')) {
    if (line) {
      const range = document.createRange();
      range.setStart(text, start);
      range.setEnd(text, start + line.length);
      const boxes = [...range.getClientRects()].filter(b => b.width > 0);
      const tops = [...new Set(boxes.map(b => Math.round(b.top)))].sort((a, b) => a - b);
      rows.push(tops.map(top => Math.min(
        ...boxes.filter(b => Math.round(b.top) === top).map(b => b.left))));
    }
    start += line.length + 1;
  }
  return rows;
}"""


@pytest.mark.parametrize("width", [320, 375])
def test_a_command_a_phone_wraps_hangs_under_its_first_line(
    new_page: Any, course_url: str, course: Course, width: int
) -> None:
    """The rest of a wrapped pip line is indented, so that it never reads as a command of
    its own; every command starts at the same edge."""
    page = new_page("light", {"width": width, "height": 740})
    wrapped = 0
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        fold = page.locator("section.run-it details.run-answer > summary")
        if fold.count():
            fold.click()
        commands = page.locator("section.run-it pre code").evaluate(ROWS)
        assert commands, lesson.id
        starts = {round(rows[0]) for rows in commands}
        assert len(starts) == 1, f"{lesson.id}: commands start at {starts}"
        for rows in commands:
            assert all(left >= rows[0] + 8 for left in rows[1:]), f"{lesson.id}: {rows}"
            wrapped += len(rows) > 1
    assert wrapped >= len(course.lessons), f"no command wraps at {width} px"


def test_no_chart_writes_an_si_prefix_on_a_ratio_or_a_caret_for_a_power(
    course_site: Path,
) -> None:
    """Every chart a lesson page shows, wide and narrow, light and dark: a tick or value
    reads "4.68" on an axis counted in 10⁻⁷, not "468n"; a power is 2n³, not 2n^3."""
    shown: set[str] = set()
    for page in (course_site / "l").glob("*/index.html"):
        found = re.findall(r'(?:src|srcset)="\.\./\.\./(charts/[^"]+\.svg)"', page.read_text())
        shown.update(found)
    assert len(shown) >= 100
    bad = []
    for name in sorted(shown):
        for text in re.findall(r"<text\b[^>]*>([^<]*)</text>", (course_site / name).read_text()):
            said = html.unescape(text).strip()
            if re.search(r"\d\s*[pnuµm]$", said) or "^" in said:
                bad.append(f"{name}: {said}")
    assert not bad, "\n".join(bad[:20])
