"""An environment move's page (course.yml `moves:`, issue 42 item 4) in headless Chromium,
light and dark, laptop and phone: a reader finds it from the course home, reads it without
scrolling sideways, and every word of it is readable in both themes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_paths
from tests.review.test_moves import TITLE, add_move, move_history

pytestmark = pytest.mark.browser

PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
SCREENS = [("light", LAPTOP), ("dark", LAPTOP), ("light", PHONE), ("dark", PHONE)]
SCREEN_IDS = ["light-1280", "dark-1280", "light-375", "dark-375"]

# The lowest contrast of a text against the background behind it (WCAG's formula), over
# every element that holds text of its own in `main`.
LOWEST_CONTRAST = """() => {
  const rgb = c => c.match(/[\\d.]+/g).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).slice(0, 3).map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const behind = e => { for (; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor; if (rgb(c)[3] !== 0) return c; }
    return getComputedStyle(document.documentElement).backgroundColor; };
  let worst = [99, ''];
  for (const e of document.querySelectorAll('main *')) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !e.getClientRects().length) continue;
    const [a, b] = [lum(getComputedStyle(e).color), lum(behind(e))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < worst[0]) worst = [ratio, e.tagName + '.' + e.className];
  }
  return worst;
}"""


@pytest.fixture(scope="module")
def moved_site(recorded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture course after a move to jax 0.10.2, its course.yml naming the move."""
    from builder.pipeline.build import build
    from builder.review.moves import write_moves

    root = tmp_path_factory.mktemp("moved") / "course"
    shutil.copytree(recorded_template, root)
    paths = make_paths(root)
    add_move(paths, *move_history(paths))
    write_moves(paths.content, paths.recordings)
    build(paths, execute=False, jobs=1)
    return paths.out


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_a_reader_finds_the_move_from_home_and_reads_it_at_any_width(
    new_page: Any, moved_site: Path, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    page.goto((moved_site / "index.html").as_uri())
    link = page.get_by_role("link", name=TITLE)
    assert link.is_visible()
    link.click()
    page.wait_for_url("**/moves/jax-0-10-2/index.html")
    assert page.get_by_role("heading", level=1).inner_text() == TITLE
    lede = page.locator("p.lede")
    assert lede.is_visible() and "jax 0.9.2 → 0.10.2" in lede.inner_text()
    # nothing wider than the window: the diff and the tables scroll inside their own boxes
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    for box in page.locator(".output-diff, .table-scroll").all():  # a keyboard scrolls it
        if box.evaluate("e => e.scrollWidth > e.clientWidth + 1"):
            assert box.get_attribute("tabindex") == "0", box.get_attribute("aria-label")
    # every text readable in this theme (4.5:1), the muted line naming the revisions too
    ratio, where = page.evaluate(LOWEST_CONTRAST)
    assert ratio >= 4.5, f"{where}: {ratio:.2f}:1"
    assert page.locator("p.compared").is_visible()
    # each lesson it names leads to that lesson's page
    named = page.locator(".changed-lesson h2 a, .timing-only a, .same a")
    assert named.count() == 3
    first = named.first.get_attribute("href")
    named.first.click()
    page.wait_for_url("**/l/first/index.html")
    assert first == "../../l/first/index.html"


def test_a_changed_numbers_link_lands_on_its_section(new_page: Any, moved_site: Path) -> None:
    page = new_page()
    page.goto((moved_site / "moves" / "jax-0-10-2" / "index.html").as_uri())
    page.locator(".changed-marks a").first.click()
    page.wait_for_url("**/l/first/index.html#tracing")
    assert page.locator("#tracing").is_visible()
