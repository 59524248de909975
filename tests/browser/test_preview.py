"""The preview in Chromium: an edit is swapped into the open page without a reload, keeping
what the author looks at in view, open <details>, focus and theme, and no other page
reloads; a template or stylesheet change reloads; a build error shows as an overlay that
the next good build clears; an example edit says "re-recording..." and then shows the new
recording, or its error."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder.core.observe import TEMPLATES, Paths
from builder.course.model import Lesson
from builder.preview import serve
from builder.preview.serve import Preview
from builder.run.execute import Execution, Limits, Outcome
from tests.helpers import canned_run, charts_shown, edit, edit_panels, scaled

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
    preview = Preview(recorded, port=0, jobs=1, runner=runner)
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


def long_lesson(paths: Paths) -> None:
    """basics-01 with sections to scroll to, and the whole example folded in a <details>."""
    words = " ".join(f"word{n}" for n in range(120))
    sections = "".join(
        f"## Part {n}\n\nPart {n} says {words}.\n\n" for n in ("one", "two", "three")
    )
    edit(lesson_md(paths), "{{ example }}", "{{ example lines=1-2 }}")
    edit(lesson_md(paths), "{{ panel 1 }}", f"{{{{ panel 1 }}}}\n\n{sections}")


def top_of(page: Any, selector: str) -> float:
    return float(page.evaluate(f"document.querySelector({selector!r}).getBoundingClientRect().top"))


def shows(page: Any, text: str) -> None:
    page.wait_for_function("t => document.querySelector('main')?.textContent.includes(t)", arg=text)


def test_an_edit_is_patched_in_keeping_the_view_details_focus_and_theme(
    live: Preview, recorded: Paths, small: Any
) -> None:
    long_lesson(recorded)
    page = small.new_page()
    page.goto(f"{live.url}l/first/")
    shows(page, "Part three says")
    page.evaluate("window.notReloaded = true")
    page.evaluate("document.documentElement.setAttribute('data-theme', 'dark')")
    page.evaluate("document.querySelector('details.example-whole').open = true")
    page.focus("a[rel=next]")
    page.evaluate(
        "window.scrollTo(0, scrollY + document.getElementById('part-two').getBoundingClientRect().top - 40)"
    )
    page.wait_for_timeout(100)
    seen = top_of(page, "#part-two")
    assert 0 < seen < 100, seen
    edits = [("## Part one", "above"), ("## Part three", "below"), ("## Part one", "over")]
    for n, (where, text) in enumerate(edits):
        if text == "over":  # as in a browser without scroll anchoring: live.js keeps the view
            page.evaluate("document.documentElement.style.overflowAnchor = 'none'")
        added = f"A paragraph added {text} the view.\n\n" + "More lines.\n" * 12
        edit(lesson_md(recorded), where, f"{added}\n{where}")
        shows(page, f"added {text} the view")
        assert page.evaluate("window.notReloaded") is True, "the page was reloaded"
        assert abs(top_of(page, "#part-two") - seen) < 2, f"edit {n}: the view moved"
        assert page.evaluate("document.querySelector('details.example-whole').open")
        assert page.evaluate("document.activeElement.matches('a[rel=next]')")
        assert page.evaluate("document.documentElement.getAttribute('data-theme')") == "dark"
    # The contents list and the title are swapped too; site.js binds the new elements.
    edit(lesson_md(recorded), "## Part three", "## Part four\n\nNew.\n\n## Part three")
    page.wait_for_selector("nav.toc a[href='#part-four']")
    page.wait_for_selector("#part-four ~ .code-wrap .copy, .prose .code-wrap .copy")
    edit(lesson_md(recorded), "title: A first jaxpr", "title: A renamed jaxpr")
    page.wait_for_function("document.title.startsWith('A renamed jaxpr')")
    shows(page, "A renamed jaxpr")
    assert page.evaluate("window.notReloaded") is True, "the page was reloaded"


@pytest.fixture
def driven(recorded: Paths) -> Iterator[Preview]:
    """A preview whose rebuilds the test runs (what the watcher sees is not built)."""
    preview = Preview(recorded, port=0, execute=False)
    preview.start()
    yield preview
    preview.close()


def test_a_template_or_stylesheet_change_reloads_the_page(
    driven: Preview, recorded: Paths, small: Any
) -> None:
    page = small.new_page()
    page.goto(f"{driven.url}l/first/")
    page.evaluate("window.notReloaded = true")
    edit(lesson_md(recorded), "{{ panel 1 }}", "Seen after a template edit.\n\n{{ panel 1 }}")
    # The lesson and a template in one burst (the template itself left as it is).
    assert driven.rebuild([str(lesson_md(recorded)), str(TEMPLATES / "lesson.html")])
    shows(page, "Seen after a template edit.")
    assert page.evaluate("window.notReloaded") is None, "a template edit was patched in"
    page.evaluate("window.notReloaded = true")
    before = set(driven.hub.streams)
    assert driven.apply(lambda: ["static/style.css"])  # the stylesheet the page loads
    page.wait_for_function("window.notReloaded === undefined")
    page.evaluate("window.notReloaded = true")
    # The reloaded page listens again before the next change is sent: a change sent
    # before it connects reloads it once more on connecting (its build is older), by design.
    for _ in range(200):
        if set(driven.hub.streams) - before:
            break
        time.sleep(0.05)
    # A file the page shows that keeps its address (an image among its data files, say)
    chart = charts_shown(recorded.out, "l/first/index.html")[1]  # the light, wide chart
    assert driven.apply(lambda: ["static/nav.js", chart])  # data: patched
    page.wait_for_function(f"document.querySelector('img[src*=\"{chart}?v=\"]') !== null")
    assert page.evaluate("window.notReloaded") is True


def test_a_changed_chart_is_patched_in_under_its_new_name(
    driven: Preview, recorded: Paths, small: Any
) -> None:
    page = small.new_page()
    page.goto(f"{driven.url}l/first/")
    page.evaluate("window.notReloaded = true")
    light = "document.querySelector('img.chart-light')"
    page.evaluate(f"{light}.scrollIntoView()")
    old = page.evaluate(f"{light}.getAttribute('src')")
    recording = recorded.recordings / "basics-01.json"
    edit_panels(recording, scaled)
    assert driven.rebuild([str(recording)])
    page.wait_for_function(f"{light}.getAttribute('src') !== {json.dumps(old)}")
    new = page.evaluate(f"{light}.getAttribute('src')").split("?")[0]
    assert new.startswith("../../charts/") and new.endswith(".svg") and new != old, new
    page.wait_for_function(f"{light}.complete && {light}.naturalWidth > 0")  # the new file
    assert page.evaluate("window.notReloaded") is True, "the page was reloaded"


def test_an_edit_shows_in_its_page_only_and_keeps_the_scroll(
    live: Preview, recorded: Paths, small: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # site/ is written once the edits pause (SETTLE_AFTER): a pause long enough that a loaded
    # machine's browser sees the page before it (a clean clone's CI once took over a second)
    monkeypatch.setattr(serve, "SETTLE_AFTER", 5.0)
    page, other = small.new_page(), small.new_page()
    page.goto(f"{live.url}l/first/")
    other.goto(f"{live.url}l/no-panels/")
    other.evaluate("window.untouched = true")
    page.evaluate("window.scrollTo(0, 200)")
    page.wait_for_function("window.scrollY === 200")
    edit(lesson_md(recorded), "{{ panel 1 }}", "A sentence typed just now.\n\n{{ panel 1 }}")
    page.wait_for_function("document.body?.textContent.includes('A sentence typed just now.')")
    # Served from memory before site/ is written (once the edits pause): read at once, not
    # after the checks below, which a loaded machine can stretch past that pause.
    assert b"A sentence typed just now." not in (recorded.out / "l/first/index.html").read_bytes()
    page.wait_for_function("window.scrollY === 200")
    assert other.evaluate("window.untouched") is True, "another page was reloaded"


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
    page.evaluate("window.notReloaded = true")
    saved = time.perf_counter()
    example.write_text(example.read_text() + line)
    page.locator(RECORDING).wait_for()  # the page says "re-recording..." at once
    print(f"save to banner: {(time.perf_counter() - saved) * 1000:.0f} ms")
    assert "re-recording" in page.inner_text(RECORDING)
    assert page.evaluate("!!document.querySelector('main h1')"), "the page went blank"
    runner.go.set()
    page.locator(RECORDING).wait_for(state="detached")
    if outcome == "recorded":
        page.wait_for_function("!document.querySelector('main').textContent.includes('stale')")
        page.locator(OVERLAY).wait_for(state="detached")
        assert page.evaluate("window.notReloaded") is True, "the new output was not patched in"
    else:
        page.locator(OVERLAY).wait_for()
        assert str(example) in page.inner_text(OVERLAY) and "boom" in page.inner_text(OVERLAY)
        assert (recorded.recordings / "basics-01.json").read_bytes() == before
