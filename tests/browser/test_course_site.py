"""The real course (content/ and recordings/), not the fixture, in a real headless Chromium.

What a reader sees on every page: one chart per figure in each theme, readable search in
both themes, a working 404 at any depth, nothing wider than a phone, no serious axe
finding, and example code numbered as the recorded output cites it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from builder.course.model import Course
from builder.course.recording import load
from tests.browser.a11y import assert_none, findings

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
PHONE = {"width": 375, "height": 740}


def pages(site: Path) -> list[str]:
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if not p.relative_to(site).as_posix().startswith("search-index/")
    )


def lesson_pages(site: Path) -> list[str]:
    return [name for name in pages(site) if name.startswith("l/")]


# -- 1. one chart per figure, in each theme ---------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_each_chart_is_shown_once_in_each_theme(
    new_page: Any, course_url: str, course_site: Path, scheme: str
) -> None:
    page = new_page(scheme=scheme)
    figures = 0
    for name in lesson_pages(course_site):
        page.goto(course_url + name)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # labs
        for index in range(page.locator("figure.panel").count()):
            figure = page.locator("figure.panel").nth(index)
            where = f"{name} figure {index + 1} ({scheme})"
            shown = [
                img.get_attribute("class")
                for img in figure.locator("img").all()
                if img.is_visible()
            ]
            assert shown == [f"chart-{scheme}"], f"{where}: visible images {shown}"
            # Screen readers hear one image: the other is out of the accessibility tree.
            assert figure.get_by_role("img").count() == 1, f"{where}: alt text read twice"
            figures += 1
    assert figures >= 18


def test_the_theme_toggle_swaps_the_chart(new_page: Any, course_url: str, course: Course) -> None:
    page = new_page(scheme="light")
    lesson = next(x for x in course.lessons if x.id == "performance-05")
    page.goto(f"{course_url}{lesson.url}index.html")
    figure = page.locator("figure.panel").first
    assert figure.locator("img.chart-light").is_visible()
    assert not figure.locator("img.chart-dark").is_visible()
    page.locator(".theme-toggle").click()
    assert figure.locator("img.chart-dark").is_visible()
    assert not figure.locator("img.chart-light").is_visible()
    assert figure.get_by_role("img").count() == 1


# -- 2. search readable in both themes ---------------------------------------------------


def _luminance(css: str) -> float:
    """The relative luminance (WCAG) of a computed `rgb(...)`/`rgba(...)` colour."""

    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (float(x) for x in re.findall(r"[\d.]+", css)[:3])
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(foreground: str, background: str) -> float:
    dark, light = sorted((_luminance(foreground), _luminance(background)))
    return (light + 0.05) / (dark + 0.05)


BACKGROUND = """el => {
  for (let e = el; e; e = e.parentElement) {
    const bg = getComputedStyle(e).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(bg) && bg !== 'transparent') return bg;
  }
  return getComputedStyle(document.documentElement).backgroundColor;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_search_is_readable_with_results_in_each_theme(
    new_page: Any, course_url: str, scheme: str
) -> None:
    page = new_page(scheme=scheme)
    page.goto(course_url + "search/index.html?q=jit")
    page.locator("main .hit-title").first.wait_for()
    page.locator("main .hit-excerpt").first.wait_for()
    # The typed query, the results' titles and excerpts: readable on their background.
    for selector in (
        "main .search-input",
        "main .hit-title",
        "main .hit-excerpt",
        "main .search-status",
    ):
        element = page.locator(selector).first
        color = element.evaluate("el => getComputedStyle(el).color")
        ratio = contrast(color, element.evaluate(BACKGROUND))
        assert ratio >= 4.5, f"{selector} in {scheme}: contrast {ratio:.2f}:1"
    assert_none(findings(page))


def test_search_announces_its_results(new_page: Any, course_url: str) -> None:
    page = new_page()
    page.goto(course_url + "search/index.html")
    page.locator("main .search-input").fill("jit")
    page.locator("main [role=option]").first.wait_for()
    live = page.locator("main [aria-live]")
    assert live.count() >= 1
    page.wait_for_function(
        "() => /result/.test(document.querySelector('main [aria-live]').textContent)"
    )


# -- 3. the 404 page at any depth ---------------------------------------------------------


@pytest.mark.parametrize(
    "missing",
    [
        "l/old-slug/",
        "l/old-slug/index.html",
        "a/gone/x/y/",
        "nowhere.html",
        # outside the site's own folders: the root is found by looking for the site
        "l/",
        "old/docs/page.html",
        "docs/v1/a/",
    ],
)
def test_not_found_page_is_styled_and_its_links_work(
    new_page: Any, course_url: str, course_site: Path, missing: str
) -> None:
    page = new_page()
    failed: list[str] = []

    def guessed(url: str) -> bool:  # a stylesheet where the address's names put the root
        return url.endswith("/static/style.css") and url != f"{course_url}static/style.css"

    page.on("requestfailed", lambda r: None if guessed(r.url) else failed.append(r.url))

    def loaded(r: Any) -> None:  # the page itself is a 404; nothing it loads may be
        # the page looks for the site's root: a folder without static/nav.js is a 404, and
        # so is the stylesheet of a folder the address's names take for it (docs/v1/a/:
        # docs/v1/, as a/ is one of the site's folders) before the page probes
        kind, url = r.request.resource_type, r.url
        probe = (kind, url.endswith("/static/nav.js"), url.endswith("/static/style.css")) in {
            ("fetch", True, False),
            ("stylesheet", False, True),
        }
        if r.status >= 400 and r.request.resource_type != "document" and not probe:
            failed.append(f"{r.status} {r.url}")

    page.on("response", loaded)
    response = page.goto(course_url + missing)
    assert response is not None and response.status == 404
    # Hidden only until it is styled (it looks for the site's root first).
    page.wait_for_function("getComputedStyle(document.documentElement).visibility === 'visible'")
    assert page.locator("h1").inner_text() == "Page not found"
    page.wait_for_load_state("networkidle")
    # In the site's own typeface, not the browser's default serif, and shown.
    font = page.locator("h1").evaluate("el => getComputedStyle(el).fontFamily")
    assert "serif" not in font.replace("sans-serif", ""), font
    assert not failed, failed
    # Styled: the site's stylesheet applied (the header is a flex row, the sidebar filled).
    assert page.locator("header.top").evaluate("el => getComputedStyle(el).display") == "flex"
    assert page.locator("#sidebar a").count() > 18
    site_path = urlsplit(course_url).path
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
    assert len(links) > 20
    here = page.url.split("#")[0]
    for url in links:
        parts = urlsplit(url)
        if url.split("#")[0] == here:  # the skip link stays on this page
            assert page.locator(f"#{parts.fragment}").count() == 1, url
            continue
        assert parts.path.startswith(site_path), f"{missing}: {url} leaves the site"
        target = course_site / unquote(parts.path)[len(site_path) :]
        if target.is_dir() or not target.name:
            target = target / "index.html"
        assert target.is_file(), f"{missing}: {url} resolves to no file"
    page.get_by_role("link", name="Go to the course home").click()
    page.wait_for_url(course_url + "index.html")
    assert page.locator("header.top").evaluate("el => getComputedStyle(el).display") == "flex"


# -- 4. nothing wider than a phone --------------------------------------------------------


def test_no_page_is_wider_than_a_phone(new_page: Any, course_url: str, course_site: Path) -> None:
    page = new_page(viewport=PHONE, has_touch=True)
    wide = []
    for name in pages(course_site):
        page.goto(course_url + name)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            culprits = page.evaluate(
                """w => [...document.querySelectorAll('main *')]
                .filter(e => e.getBoundingClientRect().right > w + 1)
                .filter(e => !e.parentElement.closest('pre, .table-scroll, .code-scroll'))
                .slice(0, 3).map(e => e.tagName + '.' + e.className)""",
                PHONE["width"],
            )
            wide.append(f"{name}: {width} px ({culprits})")
    assert not wide, "\n".join(wide)


# -- 5. axe on every page of the real course ---------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "width"), [("light", 1280), ("dark", 1280), ("light", 375), ("dark", 375)]
)
def test_no_serious_accessibility_violations_on_the_course(
    new_page: Any, course_url: str, course_site: Path, scheme: str, width: int
) -> None:
    page = new_page(scheme=scheme, viewport={"width": width, "height": 800})
    found = []
    for name in [*pages(course_site), "search/index.html?q=residuals"]:
        page.goto(course_url + name)
        if name.startswith("search/"):
            page.locator("main .search-input").wait_for()
            if "?q=" in name:
                page.locator("main .hit-excerpt").first.wait_for()
        found += findings(page, name)
    assert_none(found)


def test_scroll_containers_can_be_scrolled_by_keyboard(
    new_page: Any, course_url: str, course_site: Path
) -> None:
    page = new_page(viewport=PHONE)
    checked = 0
    for name in lesson_pages(course_site):
        page.goto(course_url + name)
        for box in page.locator("main pre, main .table-scroll").all():
            # what site.js counts as scrolling: more than a pixel of rounding
            if not box.evaluate("el => el.scrollWidth > el.clientWidth + 1"):
                continue
            assert box.get_attribute("tabindex") == "0", (
                f"{name}: {box.evaluate('e => e.outerHTML.slice(0, 80)')}"
            )
            assert box.get_attribute("aria-label") or box.get_attribute("aria-labelledby")
            checked += 1
    assert checked > 10


# -- 6. the example: numbered as the output cites it, whole, downloadable -----------------


# A code note's marker at a line's end, as the page takes it off (builder/render/code_notes.py)
NOTE_MARK = re.compile(r"\s*#\s*<(\d+)>\s*$")


def numbered_lines(figure: Any) -> list[tuple[int, str]]:
    """(number, text) of each line a code figure shows, numbers as the reader sees them."""
    numbers = figure.locator(".lineno").inner_text().split()
    code = figure.locator("pre.highlight").evaluate("e => e.textContent")
    code = code.removesuffix("\n").split("\n")
    assert len(numbers) == len(code), "one number per line"
    return [(int(n), text) for n, text in zip(numbers, code, strict=True)]


def test_example_code_is_numbered_as_the_output_cites_it(
    new_page: Any, course_url: str, course: Course
) -> None:
    """Every line of code on a page is numbered as example.py numbers it, and every position
    the recording cites (`<id>-example:LINE:COL`) is a numbered line the page shows: in a
    cell, or in the whole file's fold of an example without cells."""
    page = new_page()
    cited_total = 0
    for lesson in course.lessons:
        source = lesson.source.decode("utf-8-sig").splitlines()
        page.goto(f"{course_url}{lesson.url}index.html")
        # a lab's solution is folded: opened, as a reader who wants it does
        page.evaluate(
            "document.querySelectorAll('details.reveal').forEach(d => { d.open = true; })"
        )
        figures = page.locator("figure.example, figure.cell:has(pre.lineno)")
        assert figures.count() >= 1, lesson.id
        listing: dict[int, str] = {}
        for index in range(figures.count()):
            shown = numbered_lines(figures.nth(index))
            for number, text in shown:
                # a code note's `# <N>` is shown as its number, a link to the note
                want = NOTE_MARK.sub(lambda m: m[1], source[number - 1]).rstrip()
                got = text.rstrip()
                assert got == want, f"{lesson.id}: line {number} is {got!r}, not {want!r}"
            listing.update(shown)
        whole = page.locator("details.example-whole")
        if not lesson.cells:  # the whole example, numbered from 1, folded under the first slice
            assert whole.count() == 1, lesson.id
            whole.locator("summary").click()
            listing = dict(numbered_lines(whole))
            assert list(listing) == list(range(1, len(source) + 1))
            assert list(listing.values()) == source
        recording = load(REPO / "recordings" / f"{lesson.id}.json")
        for cited in re.findall(rf"{re.escape(lesson.id)}-example:(\d+):\d+", recording.stdout):
            assert int(cited) in listing, f"{lesson.id}: output cites line {cited}, not shown"
            cited_total += 1
    assert cited_total >= 10


def test_example_is_downloadable(new_page: Any, course_url: str, course: Course) -> None:
    page = new_page()
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        # the caption's link, or (a lab's exercise has none) the folded Run it yourself's
        link = page.locator("a[download='example.py']").first
        assert link.get_attribute("download") == "example.py"
        response = page.request.get(link.evaluate("a => a.href"))
        assert response.ok, lesson.id
        assert response.body() == lesson.source, f"{lesson.id}: the download is the example"


def test_a_labs_answer_is_not_shown_linked_or_searched_before_its_reveal(
    new_page: Any, course_url: str, course_site: Path
) -> None:
    """A lab's example is its answer: until the reader opens "Show the solution", no line
    of the solution's code is on screen, no link downloads the example or its notebook,
    and search indexes none of it (issue 43: the whole example.py sat above the reveal)."""
    labs = [
        n for n in lesson_pages(course_site) if 'class="reveal"' in (course_site / n).read_text()
    ]
    assert len(labs) >= 3, labs
    page = new_page()
    for name in labs:
        page.goto(course_url + name)
        answer = page.locator(
            "details.reveal :is(figure.example, figure.cell) pre.highlight code"
        ).all_text_contents()
        lines = {line.strip() for code in answer for line in code.splitlines()}
        shown = page.evaluate("document.querySelector('main').innerText")
        outside = "main :is(figure.example, figure.cell):not(details.reveal *) pre.highlight code"
        exercise = "\n".join(page.locator(outside).all_text_contents())
        told = [x for x in lines if len(x) > 24 and x in shown and x not in exercise]
        assert told == [], f"{name}: the answer's code is on screen: {told[:3]}"
        whole = page.locator("details.example-whole:not(details.reveal details.example-whole)")
        assert whole.count() == 0, f"{name}: the whole example, a click away, above the reveal"
        links = page.locator("a[download]").evaluate_all(
            "links => links.filter(a => a.checkVisibility()).map(a => a.download)"
        )
        assert links == [], f"{name}: visible downloads before the reveal: {links}"
        searched = page.locator("details.reveal:not([data-pagefind-ignore='all'])").count()
        assert searched == 0, f"{name}: a reveal the search index reads"
        page.locator("details.reveal summary").first.click()
        answers = page.locator("details.reveal :is(figure.example, figure.cell)")
        assert answers.first.is_visible()


def test_copy_takes_the_code_as_shown(browser: Any, course_url: str, course: Course) -> None:
    """A cell's Copy button copies its code exactly (no line numbers, no prompt, no code
    note's `# <N>` marker)."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    lesson = next(x for x in course.lessons if x.id == "performance-05")
    cell = next(c for c in lesson.cells if not c.hide and not c.show)
    page.goto(f"{course_url}{lesson.url}index.html")
    page.locator(f"#cell-{cell.name} .copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == "\n".join(NOTE_MARK.sub("", line) for line in cell.shown.split("\n"))
    context.close()


def test_screenshots_of_a_lesson_with_a_chart(
    new_page: Any, course_url: str, course: Course, tmp_path: Path
) -> None:
    """A real lesson with a chart, light and dark, desktop and phone: SAVE_SCREENSHOTS=1
    keeps them in docs/screenshots/ (course-lesson-*)."""
    import os

    out = REPO / "docs" / "screenshots" if os.environ.get("SAVE_SCREENSHOTS") == "1" else tmp_path
    lesson = next(x for x in course.lessons if x.id == "performance-05")
    for device, viewport in (("desktop", {"width": 1280, "height": 900}), ("mobile", PHONE)):
        for scheme in ("light", "dark"):
            page = new_page(viewport=viewport, scheme=scheme)
            page.goto(f"{course_url}{lesson.url}index.html#panel-1")
            page.wait_for_load_state("networkidle")
            shot = out / f"course-lesson-{scheme}-{device}.png"
            page.screenshot(path=str(shot))
            assert shot.stat().st_size > 5000
            page.goto(course_url + "search/index.html?q=residuals")
            page.locator("main .hit-excerpt").first.wait_for()
            shot = out / f"course-search-{scheme}-{device}.png"
            page.screenshot(path=str(shot))


# -- run it yourself: pinned versions, the files to download -----------------------------


def test_every_lesson_says_how_to_run_it_with_the_recorded_versions(
    new_page: Any, course_url: str, course: Course
) -> None:
    from builder.render.pages import shim

    page = new_page()
    for lesson in course.lessons:
        env = load(REPO / "recordings" / f"{lesson.id}.json").environment
        sidecar = json.loads((REPO / "recordings" / "_inputs" / f"{lesson.id}.json").read_text())
        python = sidecar["machine"]["python"]  # the interpreter the recording ran with
        minor = ".".join(python.split(".")[:2])
        page.goto(f"{course_url}{lesson.url}index.html")
        block = page.locator("section.run-it")
        assert block.get_by_role("heading").inner_text() == "Run it yourself"
        folded = block.locator("details.run-answer")  # a lab's: the example is its answer
        if folded.count():
            folded.locator("summary").click()
        commands = block.locator("pre").inner_text().strip().splitlines()
        tpu = lesson.accelerator == "tpu"  # jax's TPU build, quoted for the shell
        jax_pin = f'"jax[tpu]=={env.jax}"' if tpu else f"jax=={env.jax}"
        assert commands == [  # a virtual environment of that Python first (issue 43)
            f"python{minor} -m venv .venv",
            ". .venv/bin/activate",
            f"pip install {jax_pin} numpy=={env.numpy} matplotlib=={env.matplotlib}",
            "python example.py",
        ], lesson.id
        said = " ".join(block.locator("p.muted").inner_text().split())
        assert f"with Python {minor}, the one it was recorded with ({python})" in said
        assert ("It needs a TPU" in said) == tpu and ("On a CPU it prints" in said) != tpu
        assert "py -" + minor + " -m venv .venv" in said and ".venv\\Scripts\\activate" in said
        downloads = {
            link.get_attribute("download"): page.request.get(link.evaluate("a => a.href"))
            for link in block.locator("a[download]:not(.notebook-download)").all()
        }
        assert set(downloads) == {"example.py", "builder.py"}, lesson.id  # all import panels
        assert downloads["example.py"].body() == lesson.source
        assert downloads["builder.py"].body() == shim()
        # The contents list it, and its Copy button copies the commands.
        assert page.locator("nav.toc a[href='#run-it-yourself']").count() == 1
        assert block.locator(".copy").count() == 1


# -- navigation: heading links, sticky sidebar and contents that follow the reading -------


def test_every_heading_has_a_link_to_itself(new_page: Any, course_url: str, course: Course) -> None:
    page = new_page()
    headings = 0
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        for heading in page.locator(".prose h2, .prose h3").all():
            anchor = heading.get_attribute("id")
            link = heading.locator("xpath=following-sibling::a[1]")
            assert link.get_attribute("href") == f"#{anchor}", f"{lesson.id}: #{anchor}"
            name = link.get_attribute("aria-label") or ""
            text = heading.evaluate("e => e.textContent")  # folded in a lab: not rendered
            assert name == f"Link to this section: {text}", lesson.id
            headings += 1
        # The contents read headings as the page shows them, not their Markdown.
        for text in page.locator("nav.toc a").all_inner_texts():
            assert "`" not in text and "*" not in text, f"{lesson.id}: {text!r}"
    assert headings >= 50
    # Focused, the link shows; followed, it puts the section in the address.
    page.goto(f"{course_url}l/residuals/index.html")
    first = page.locator(".prose a.anchor").first
    first.focus()
    assert first.evaluate("a => getComputedStyle(a).opacity") == "1"
    page.keyboard.press("Enter")
    assert page.url.endswith("#" + first.get_attribute("href").lstrip("#"))


def test_sidebar_and_contents_stay_in_view_and_follow_the_reading(
    new_page: Any, course_url: str
) -> None:
    # Wide enough for the list of lessons too: below 1600 px a lesson page gives its room
    # to code and output, and the list steps aside behind the Lessons button.
    page = new_page(viewport={"width": 1680, "height": 800})
    page.goto(f"{course_url}l/residuals/index.html")
    toc = page.locator("nav.toc")
    hrefs = toc.locator("a").evaluate_all("ls => ls.map(l => l.getAttribute('href'))")
    assert len(hrefs) >= 4
    # Beside the text, not above it.
    assert toc.bounding_box()["x"] > page.locator(".prose").bounding_box()["x"] + 400
    # The section being read: the last heading above the window's top quarter.
    reading = """() => {
      const heads = [...document.querySelectorAll('nav.toc a')]
        .map(a => document.getElementById(a.getAttribute('href').slice(1)));
      const passed = heads.filter(h => h.getBoundingClientRect().top < innerHeight / 4);
      return passed.length ? '#' + passed[passed.length - 1].id : null;
    }"""
    marked = "() => document.querySelector('nav.toc a.active')?.getAttribute('href') ?? null"
    seen = set()
    for href in hrefs[1:-1]:
        page.evaluate("id => document.getElementById(id).scrollIntoView()", href[1:])
        page.wait_for_function(f"() => ({marked})() === ({reading})()")
        active = toc.locator("a[aria-current=location]")
        assert active.count() == 1 and active.get_attribute("href") == page.evaluate(reading)
        seen.add(active.get_attribute("href"))
        assert page.evaluate("window.scrollY") > 400
        for box in (toc.bounding_box(), page.locator("#sidebar").bounding_box()):
            assert box is not None and -1 <= box["y"] < 50, f"scrolled away at {href}"
    assert len(seen) >= 3
    # At the end of the page the last section is the one being read, whatever its length.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_function(f"() => ({marked})() === {hrefs[-1]!r}")
    # Back at the top, before the first heading, no section is marked.
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_function(f"() => ({marked})() === null")


def test_on_a_phone_the_contents_stay_above_the_text(new_page: Any, course_url: str) -> None:
    page = new_page(viewport=PHONE, has_touch=True)
    page.goto(f"{course_url}l/residuals/index.html")
    toc = page.locator("nav.toc")
    assert toc.evaluate("e => getComputedStyle(e).position") == "static"
    assert toc.bounding_box()["y"] < page.locator(".prose").bounding_box()["y"]
    assert page.locator(".prose a.anchor").first.is_visible()  # no hover on a phone
