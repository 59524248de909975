"""Issue 43: search from a site opened from disk (file://), over a lesson whose text would
break a script that holds it as it is: `</script>`, a comment's start, and the line and
paragraph separators (U+2028, U+2029)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builder.core.observe import Paths
from builder.pipeline.build import build

pytestmark = pytest.mark.browser

WORD = "quokkafish"
HOSTILE = (
    f"A {WORD} says </script><script>window.hacked = 1</script> <!-- and \u2028 then \u2029 too."
)


@pytest.fixture
def hostile_site(recorded: Paths) -> Path:
    lesson = recorded.content / "lessons" / "basics-01" / "lesson.md"
    text = lesson.read_text("utf-8")
    lesson.write_text(text.replace("## Tracing\n", f"## Tracing\n\n{HOSTILE}\n", 1), "utf-8")
    build(recorded, execute=False, jobs=1)
    return recorded.out


def test_a_hostile_lesson_is_found_from_disk_and_its_result_opens(
    new_page: Any, hostile_site: Path
) -> None:
    offline = (hostile_site / "search-index" / "basics-1" / "offline.js").read_text("utf-8")
    assert WORD in offline and "</script" not in offline and "\u2028" not in offline
    page = new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((hostile_site / "index.html").as_uri())
    page.locator("header .search-input").fill(WORD)
    page.wait_for_function(
        "() => /1 result for/.test(document.querySelector('header .search-status').textContent)"
    )
    hit = page.locator("header .search-results [role=option]").first
    assert hit.locator(".hit-title").inner_text() == "A first jaxpr"
    excerpt = page.locator("header .search-results .hit-excerpt").first.inner_text()
    assert "</script><script>window.hacked = 1</script>" in excerpt, excerpt
    assert page.evaluate("window.hacked") is None
    hit.click()
    page.wait_for_url("**/l/first/index.html?highlight=*")
    assert page.locator("h1").inner_text() == "A first jaxpr"
    assert page.locator("mark.search-hit").first.inner_text().lower() == WORD
    assert page.evaluate("window.hacked") is None
    assert not errors, errors


def test_from_disk_a_word_in_no_page_says_no_results(new_page: Any, hostile_site: Path) -> None:
    page = new_page()
    page.goto((hostile_site / "search" / "index.html").as_uri() + "?q=zzqxv")
    page.wait_for_function(
        "() => /No results/.test(document.querySelector('main .search-status').textContent)"
    )
    assert page.locator("main [role=option]").count() == 0
