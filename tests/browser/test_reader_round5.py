"""Issue 43's rest on the real course in headless Chromium: what a first-time reader is told
(who the course is for, where a lesson stands, how long it takes), permalinks and an A-Z
index in the glossary, a recordings table that fits a laptop, search that ranks the lesson
teaching a term first and never quotes a lab's solution, Colab and issue links where
course.yml names them, and a 404 page that finds the site's root without a failed request.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from builder.course.model import Course
from tests.browser.conftest import _serve

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}
COLAB = "https://colab.research.google.com/github/example/jax-course/blob/gh-pages/"
ISSUES = "https://github.com/example/jax-course/issues/new"
WPM = 200  # the reading speed docs/site.md states


def _result_urls(page: Any, course_url: str, query: str) -> list[str]:
    """Every page the search page lists for `query`, best first, as paths in the site."""
    page.goto(f"{course_url}search/index.html?q={query}")
    page.wait_for_function(
        "() => /results? for/.test(document.querySelector('main .search-status').textContent)"
    )
    said = page.locator("main .search-status").inner_text()
    count = 0 if said.startswith("No results") else int(said.split()[0])
    groups = page.locator("main [role=group]")
    while (shown := groups.count()) < count:  # ten at a time
        page.locator("main .search-more").click()
        page.wait_for_function(
            "n => document.querySelectorAll('main [role=group]').length > n", arg=shown
        )
    found = [link.get_attribute("href") or "" for link in page.locator("main a.hit-page").all()]
    return [href.split("?")[0].split("#")[0].split("/site/", 1)[-1] for href in found]


# -- 1. first-time guidance ---------------------------------------------------------------


def test_the_home_page_says_who_the_course_is_for_what_it_assumes_and_after(
    new_page: Any, course_url: str
) -> None:
    audience = yaml.safe_load((REPO / "content" / "course.yml").read_text())["audience"]
    for viewport in (LAPTOP, PHONE):  # in sight on the first screen, above the lessons
        page = new_page("light", viewport)
        page.goto(course_url + "index.html")
        summary = page.locator("main details.audience > summary")
        box = summary.bounding_box()
        assert box["y"] + box["height"] <= viewport["height"], viewport
        assert summary.inner_text().startswith("Before you start:")
    block = page.locator("main details.audience")
    summary.focus()
    page.keyboard.press("Enter")  # opened from the keyboard
    assert block.get_attribute("open") is not None
    text = " ".join(block.inner_text().split())
    assert "Who it is for." in text and "What it assumes." in text
    assert " ".join(audience["who"].split()) in text
    assert " ".join(audience["assumes"].split()) in text
    outcomes = block.locator("li").all_inner_texts()
    assert outcomes == audience["outcomes"] and len(outcomes) >= 4
    # before the arcs, where a first-time reader starts reading
    first_arc = page.locator("section.arc").first
    assert block.bounding_box()["y"] < first_arc.bounding_box()["y"]


def test_each_lesson_says_where_it_stands_and_how_long_it_takes(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page()
    arcs = {arc.id: arc for arc in course.meta.arcs}
    by_arc = course.by_arc()
    for lesson in course.lessons:
        page.goto(f"{course_url}{lesson.url}index.html")
        place = page.locator("main p.place")
        arc_lessons = by_arc[lesson.meta.arc]
        number = arc_lessons.index(lesson) + 1
        title = arcs[lesson.meta.arc].title
        said = place.inner_text()
        arc = [a.id for a in course.meta.arcs if by_arc[a.id]].index(lesson.meta.arc) + 1
        head = f"Lesson {arc}.{number} ({number} of {len(arc_lessons)} in {title}) · "
        assert said.startswith(head), said
        minutes = int(re.search(r"about (\d+) minutes? of reading", said).group(1))
        # the prose a reader reads: not code, output, charts, nor the cards of terms
        words = page.evaluate(
            """() => {
              const prose = document.querySelector('.prose').cloneNode(true);
              prose.querySelectorAll('figure, pre, math, .term-card, .rv-note, .anchor')
                .forEach(e => e.remove());
              return (prose.textContent.match(/\\w+(?:['’.-]\\w+)*/gu) || []).length;
            }"""
        )
        # the builder counts the prose as it renders, the browser its text: a few words apart
        assert abs(minutes - max(1, words / WPM)) <= 0.5 + 10 / WPM, (lesson.id, words, minutes)
        assert 2 <= minutes <= 8, lesson.id  # 400 to 1,600 words of prose
        # it sits under the title, above the first figure
        assert place.bounding_box()["y"] < page.locator("main h1").bounding_box()["y"] + 120


# -- 2. permalinks, A-Z, used in, code font ------------------------------------------------


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1280", "375"])
def test_run_it_yourself_and_every_glossary_term_have_a_permalink(
    new_page: Any, course_url: str, course: Course, viewport: dict[str, int]
) -> None:
    page = new_page("light", viewport)
    lesson = course.lessons[0]
    page.goto(f"{course_url}{lesson.url}index.html")
    heading = page.get_by_role("heading", name="Run it yourself")
    link = page.get_by_role("link", name="Link to this section: Run it yourself")
    assert link.get_attribute("href") == "#run-it-yourself"
    opacity = "e => getComputedStyle(e).opacity"
    if viewport is LAPTOP:  # hidden until hovered or focused
        page.mouse.move(0, 0)
        assert link.evaluate(opacity) == "0"
        heading.hover()
        assert link.evaluate(opacity) == "1"
    link.focus()
    assert link.evaluate(opacity) == "1"
    link.click()
    assert page.url.endswith("#run-it-yourself")

    page.goto(course_url + "glossary/index.html")
    for term in course.glossary:
        anchor = page.get_by_role("link", name=f"Link to this term: {term.term}", exact=True)
        assert anchor.get_attribute("href") == f"#{term.id}", term.id
    term = course.glossary[5]
    anchor = page.get_by_role("link", name=f"Link to this term: {term.term}", exact=True)
    if viewport is LAPTOP:
        page.mouse.move(0, 0)
        assert anchor.evaluate(opacity) == "0"
        page.locator(f"dt#{term.id}").hover()
        assert anchor.evaluate(opacity) == "1"
    anchor.focus()
    anchor.press("Enter")
    assert page.url.endswith(f"#{term.id}")


def test_the_glossary_has_an_a_to_z_index_leading_to_each_letters_terms(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page()
    page.goto(course_url + "glossary/index.html")
    index = page.get_by_role("navigation", name="Terms by first letter")
    letters = index.get_by_role("link").all()
    initials = sorted({t.term[0].upper() for t in course.glossary})
    assert [x.inner_text() for x in letters] == initials
    for link in letters:
        letter = link.inner_text()
        target = page.locator(link.get_attribute("href"))
        terms = target.locator("xpath=..").locator("dt").all_inner_texts()
        assert terms and all(t.upper().startswith(letter) for t in terms), letter
    link = index.get_by_role("link", name="S", exact=True)
    link.click()
    assert page.url.endswith("#letter-s")
    box = page.locator("#letter-s").bounding_box()
    assert 0 <= box["y"] < 100  # scrolled to it


def test_used_in_never_repeats_the_lesson_that_teaches_the_term(
    new_page: Any, course_url: str, course: Course
) -> None:
    page = new_page()
    page.goto(course_url + "glossary/index.html")
    also = 0
    for term in course.glossary:
        teacher = course.lesson(term.taught_in)
        assert teacher is not None
        taught = page.locator(f"dt#{term.id} + dd p.taught")
        links = taught.get_by_role("link").all_inner_texts()
        assert links[0] == teacher.title
        assert teacher.title not in links[1:], term.id
        also += len(links) > 1
    assert also >= 10  # most terms are used beyond their lesson


def test_identifiers_the_glossary_marks_are_in_code_font_in_definitions_and_cards(
    new_page: Any, course_url: str, course: Course
) -> None:
    marked = {t.id: re.findall(r"`([^`]+)`", t.definition) for t in course.glossary}
    assert sum(map(len, marked.values())) >= 30
    page = new_page()
    page.goto(course_url + "glossary/index.html")
    mono = "e => getComputedStyle(e).fontFamily"
    for term_id, names in marked.items():
        codes = page.locator(f"dt#{term_id} + dd > p:first-child code")
        assert codes.all_inner_texts() == names, term_id
        assert "`" not in page.locator(f"dt#{term_id} + dd > p:first-child").inner_text()
        for code in codes.all():
            assert "mono" in code.evaluate(mono).lower(), term_id
    # a card in a lesson: its definition's names in code too
    lesson = course.lesson("control-flow")
    assert lesson is not None
    page.goto(f"{course_url}{lesson.url}index.html")
    card = page.locator(".term-card:has(.term-name:text-is('structured control flow'))").first
    assert card.locator("code").all_inner_texts() == marked["structured-control-flow"]


# -- 3. the recordings table at 1280 px ----------------------------------------------------


def test_the_recordings_table_fits_a_laptop_and_says_the_shared_environment_once(
    new_page: Any, course_url: str, course: Course
) -> None:
    from builder.course.recording import load

    envs = {load(REPO / "recordings" / f"{x.id}.json").environment for x in course.lessons}
    assert len(envs) == 1  # the course was recorded on one environment
    env = envs.pop()
    said = f"jax {env.jax} · numpy {env.numpy} · matplotlib {env.matplotlib}"
    page = new_page("light", LAPTOP)
    page.goto(f"{course_url}recordings/index.html")
    main = page.locator("main").inner_text()
    assert main.count(said) == 1
    table = page.locator("table.recordings")
    above = page.locator("main p.recorded-with")
    assert said in above.inner_text()
    assert above.bounding_box()["y"] < table.bounding_box()["y"]
    headers = table.locator("thead th").all_inner_texts()
    assert "Environment" not in headers
    # nothing squeezed: every date, hash, count and time on one line, no sideways scroll
    region = page.locator(".table-scroll:has(table.recordings)")
    assert region.evaluate("e => e.scrollWidth <= e.clientWidth")
    one_line = """e => { const r = document.createRange(); r.selectNodeContents(e);
      const tops = [...r.getClientRects()].filter(x => x.width > 1).map(x => x.top).sort();
      return tops.filter((top, n) => n === 0 || top - tops[n - 1] > 4).length; }"""
    rows = table.locator("tbody tr").all()
    assert len(rows) == len(course.lessons)
    for row in rows:
        for cell in row.locator("td").all()[1:]:
            shown = cell.locator("summary code") if cell.locator("details").count() else cell
            assert shown.evaluate(one_line) <= 1, shown.inner_text()


# -- 4. search: the teaching lesson first, no lab solution quoted ----------------------------


@pytest.mark.parametrize("term_id", ["jaxpr", "tracer", "residual", "fusion"])
def test_search_ranks_the_lesson_that_teaches_a_term_first(
    new_page: Any, course_url: str, course: Course, term_id: str
) -> None:
    term = next(t for t in course.glossary if t.id == term_id)
    teacher = course.lesson(term.taught_in)
    assert teacher is not None
    page = new_page()
    results = _result_urls(page, course_url, term.term)
    assert results[0] == f"{teacher.url}index.html", results[:5]


def test_no_search_result_quotes_a_labs_solution(new_page: Any, course_url: str) -> None:
    page = new_page()
    checked = 0
    for lab in ("l/lab-j1/", "l/lab-j2/", "l/lab-j3/"):
        page.goto(course_url + lab + "index.html")
        # words of the folded solution that the rest of the page never uses
        words = page.evaluate(
            """() => {
              document.querySelectorAll('details').forEach(d => d.open = true);
              const words = t => new Set((t.toLowerCase().match(/[a-z]{7,}/g) || []));
              const fold = document.querySelector('.prose details.reveal');
              const inside = words(fold.innerText);
              fold.remove();
              const outside = words(document.body.innerText);
              // no word outside that shares its stem (Pagefind stems: "arguments", "argument")
              const stem = w => w.slice(0, Math.max(5, w.length - 3));
              const stems = [...outside].map(stem);
              return [...inside].filter(w => !stems.some(s => s.startsWith(stem(w)) ||
                                                               stem(w).startsWith(s))).sort();
            }"""
        )
        assert len(words) >= 3, lab
        for word in words[:4]:
            results = _result_urls(page, course_url, word)
            assert f"{lab}index.html" not in results, (lab, word)
            checked += 1
    assert checked >= 9


# -- 5. Colab and issue links where course.yml names them ------------------------------------


@pytest.fixture(scope="module")
def linked_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The real course with course.yml's colab_url and issues_url set, served."""
    root = tmp_path_factory.mktemp("linked")
    shutil.copytree(REPO / "content", root / "content")
    with (root / "content" / "course.yml").open("a") as handle:
        handle.write(f"colab_url: {COLAB}\nissues_url: {ISSUES}\n")
    command = [sys.executable, "-m", "builder", "render", "--content", str(root / "content")]
    command += ["--recordings", "recordings", "--out", str(root / "site")]
    command += ["--cache", str(root / "cache")]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    server, url = _serve(root)
    yield root / "site", url
    server.shutdown()
    server.server_close()


def test_each_lesson_opens_in_colab_and_reports_a_difference(
    new_page: Any, linked_site: tuple[Path, str], course_url: str, course: Course
) -> None:
    from urllib.parse import parse_qs, urlsplit

    from builder.course.recording import load

    site, url = linked_site
    page = new_page()
    for lesson in course.lessons:
        page.goto(f"{url}{lesson.url}index.html")
        fold = page.locator("section.run-it details.run-answer summary")
        if fold.count():
            fold.click()
        colab = page.get_by_role("link", name="Open in Colab")
        assert colab.is_visible(), lesson.id
        assert colab.get_attribute("href") == f"{COLAB}{lesson.url}example.ipynb"
        assert (site / lesson.url / "example.ipynb").is_file()  # what Colab opens, published
        report = page.get_by_role("link", name="Report a difference")
        assert report.is_visible(), lesson.id
        address = urlsplit(report.get_attribute("href"))
        assert f"{address.scheme}://{address.netloc}{address.path}" == ISSUES
        query = parse_qs(address.query)
        assert lesson.title in query["title"][0]
        jax = load(REPO / "recordings" / f"{lesson.id}.json").environment.jax
        assert lesson.url in query["body"][0] and f"jax {jax}," in query["body"][0]
    # without the keys (the real course.yml), neither link
    page.goto(f"{course_url}{course.lessons[0].url}index.html")
    assert page.get_by_role("link", name="Open in Colab").count() == 0
    assert page.get_by_role("link", name="Report a difference").count() == 0


# -- 6. the 404 page finds the root without a failed request ---------------------------------

DEEP = ("l/old-slug/", "a/b/c/d/e/page.html", "l/jaxpr/gone/index.html")


def test_a_deep_404_after_a_visit_makes_no_failed_request(new_page: Any, course_url: str) -> None:
    page = new_page()
    problems: list[str] = []
    page.goto(course_url + "glossary/index.html")  # a reader who has seen the site
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    page.on("requestfailed", lambda r: problems.append(f"failed {r.url}"))
    page.on("console", lambda m: m.type == "error" and problems.append(f"404 {m.location['url']}"))
    for deep in DEEP:
        page.goto(course_url + deep)
        page.locator("main h1").wait_for()
        page.wait_for_function("() => document.documentElement.style.visibility === ''")
        page.wait_for_load_state("networkidle")
        assert page.locator("main h1").inner_text() == "Page not found"
        sheets = page.evaluate("[...document.styleSheets].map(s => s.href)")
        assert course_url + "static/style.css" in sheets, deep  # styled: the root was found
        home = page.get_by_role("link", name="Go to the course home")
        assert home.evaluate("a => a.href") == course_url + "index.html"
    # the document itself is the one 404 each time (its response, and the console saying
    # so), nothing else
    documents = [f"404 {course_url}{deep}" for deep in DEEP for _ in range(2)]
    assert sorted(problems) == sorted(documents)


def test_a_404_of_a_published_site_needs_no_visit_and_no_probe(
    new_page: Any, tmp_path: Path
) -> None:
    """With course.yml's site_url, the 404 page knows the root's path from the start."""
    root = tmp_path / "published"
    shutil.copytree(REPO / "content", root / "content")
    with (root / "content" / "course.yml").open("a") as handle:
        handle.write("site_url: https://example.github.io/site/\n")
    command = [sys.executable, "-m", "builder", "render", "--content", str(root / "content")]
    command += ["--recordings", "recordings", "--out", str(root / "site")]
    command += ["--cache", str(root / "cache")]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    server, url = _serve(root)  # served under /site/, as the site_url's path says
    try:
        page = new_page()
        asked: list[str] = []
        page.on("response", lambda r: r.status >= 400 and asked.append(r.url))
        page.goto(url + "a/b/c/missing.html")
        page.wait_for_function("() => document.documentElement.style.visibility === ''")
        page.wait_for_load_state("networkidle")
        assert asked == [url + "a/b/c/missing.html"]
        assert page.get_by_role("link", name="Go to the course home").evaluate("a => a.href") == (
            url + "index.html"
        )
    finally:
        server.shutdown()
        server.server_close()
