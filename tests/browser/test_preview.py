"""The preview in Chromium: an edit shows in the open page, keeping its scroll position, and
no other page reloads; a build error shows as an overlay that the next good build clears;
an example edit says "re-recording..." and then shows the new recording, or its error."""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder.core.observe import Paths
from builder.course.model import Lesson
from builder.preview.serve import Preview
from builder.run.execute import Execution, Limits, Outcome
from tests.helpers import canned_run, edit

pytestmark = pytest.mark.browser

OVERLAY = "#coursebuilder-preview-error"
RECORDING = "#coursebuilder-preview-recording"


class GatedRunner:
    """The canned runner, held until the test lets it go; fails when the example says so."""

    def __init__(self) -> None:
        self.go = threading.Event()

    def __call__(self, lesson: Lesson, limits: Limits) -> Execution:
        self.go.wait(20)
        if b"boom" in lesson.source:
            return Execution(lesson.id, Outcome.RAISED, 0.1, stderr="ValueError: boom")
        return canned_run(lesson, limits)


@pytest.fixture
def runner() -> GatedRunner:
    return GatedRunner()


@pytest.fixture
def live(recorded: Paths, runner: GatedRunner) -> Iterator[Preview]:
    preview = Preview(recorded, port=0, jobs=1, runner=runner, log=io.StringIO())
    preview.start()
    stop = threading.Event()
    thread = threading.Thread(target=preview.run, args=(stop,))
    thread.start()
    yield preview
    runner.go.set()
    stop.set()
    thread.join()
    preview.close()


@pytest.fixture
def small(browser: Any) -> Iterator[Any]:
    """A short window, so that a lesson page scrolls."""
    context = browser.new_context(viewport={"width": 800, "height": 300})
    context.set_default_timeout(10000)
    yield context
    context.close()


def lesson_md(paths: Paths, lesson: str = "basics-01") -> Path:
    return paths.content / "lessons" / lesson / "lesson.md"


def test_an_edit_shows_in_its_page_only_and_keeps_the_scroll(
    live: Preview, recorded: Paths, small: Any
) -> None:
    page, other = small.new_page(), small.new_page()
    page.goto(f"{live.url}l/first/")
    other.goto(f"{live.url}l/no-panels/")
    other.evaluate("window.untouched = true")
    page.evaluate("window.scrollTo(0, 200)")
    page.wait_for_function("window.scrollY === 200")
    edit(lesson_md(recorded), "{{ panel 1 }}", "A sentence typed just now.\n\n{{ panel 1 }}")
    page.wait_for_function("document.body?.textContent.includes('A sentence typed just now.')")
    page.wait_for_function("window.scrollY === 200")
    assert other.evaluate("window.untouched") is True, "another page was reloaded"
    assert b"A sentence typed just now." not in (recorded.out / "l/first/index.html").read_bytes()


def test_a_build_error_shows_over_the_page_and_the_next_good_build_clears_it(
    live: Preview, recorded: Paths, small: Any
) -> None:
    page = small.new_page()
    page.goto(f"{live.url}l/first/")
    edit(lesson_md(recorded), "{{ panel 1 }}", "See [[no-such-term]].\n\n{{ panel 1 }}")
    overlay = page.locator(OVERLAY)
    overlay.wait_for()
    text = overlay.inner_text()
    assert re.search(rf"{re.escape(str(lesson_md(recorded)))}:\d+: .*no-such-term", text), text
    assert page.locator(OVERLAY).get_attribute("role") == "alert"
    later = small.new_page()  # a page opened while the build is broken shows it too
    later.goto(f"{live.url}l/settings/")
    later.locator(OVERLAY).wait_for()
    edit(lesson_md(recorded), "See [[no-such-term]].", "See nothing.")
    page.wait_for_function("document.body?.textContent.includes('See nothing.')")
    overlay.wait_for(state="detached")
    later.locator(OVERLAY).wait_for(state="detached")


@pytest.mark.parametrize("outcome", ["recorded", "failed"])
def test_an_example_edit_is_re_recorded_while_the_page_says_so(
    live: Preview, recorded: Paths, small: Any, runner: GatedRunner, outcome: str
) -> None:
    page = small.new_page()
    page.goto(f"{live.url}l/first/")
    assert "stale" not in page.inner_text("main")
    example = recorded.content / "lessons" / "basics-01" / "example.py"
    line = "# boom\n" if outcome == "failed" else "# a comment\n"
    before = (recorded.recordings / "basics-01.json").read_bytes()
    example.write_text(example.read_text() + line)
    page.locator(RECORDING).wait_for()  # the page says "re-recording..."
    assert "re-recording" in page.inner_text(RECORDING)
    runner.go.set()
    page.locator(RECORDING).wait_for(state="detached")
    if outcome == "recorded":
        page.wait_for_function("!document.querySelector('main').textContent.includes('stale')")
        page.locator(OVERLAY).wait_for(state="detached")
    else:
        page.locator(OVERLAY).wait_for()
        assert str(example) in page.inner_text(OVERLAY) and "boom" in page.inner_text(OVERLAY)
        assert (recorded.recordings / "basics-01.json").read_bytes() == before
