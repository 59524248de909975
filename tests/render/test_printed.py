"""The printable course (print/index.html, builder/render/printed.py): every lesson's prose
rendered again for that page from its tokens, not read back from its own page; complete on
paper (the labs' solutions in an appendix, each lesson numbered once, the glossary, a Print
button); and the scripts a page loads are those its widgets need."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.render.relocate import Move
from tests.helpers import build_cli, edit

BUILDER = Path(__file__).resolve().parents[2] / "builder"
LAB = "tests/fixture_course/lessons/basics-02/lesson.md"
TABS = '\n=== "A loop"\n\n    One step at a time.\n\n=== "A scan"\n\n    The body once.\n'
SOLVED = "\n{{ reveal }}\n\nThe answer is SECRET-ANSWER, see [the start](lesson:first).\n"


@pytest.fixture
def site(recorded: Paths) -> Path:
    """The recorded fixture course, its second lesson a lab with tabs, rendered."""
    lesson = recorded.content / "lessons" / "basics-02" / "lesson.md"
    edit(lesson, "{{ output lines=1-2 }}\n", "{{ output lines=1-2 }}\n" + TABS + SOLVED)
    code, said = build_cli(recorded.content.parent)
    assert code == 0, said
    return recorded.out


def _print(site: Path) -> str:
    return (site / "print" / "index.html").read_text()


def test_a_labs_solution_is_in_the_appendix_not_under_its_exercise(site: Path) -> None:
    page = _print(site)
    body, appendix = page.split('<h2 id="solutions">Solutions</h2>')
    assert "SECRET-ANSWER" not in body and "SECRET-ANSWER" in appendix
    assert "<details" not in page and "Show the solution" not in page
    assert 'href="#solution-no-panels">The solution is in the appendix' in body
    assert '<h3 id="solution-no-panels">Solution to 1.2 A lesson without panels</h3>' in appendix
    assert 'href="#lesson-first"' in appendix  # its link leads to the lesson in the page


def test_each_lesson_is_numbered_once(site: Path, recorded: Paths) -> None:
    page = _print(site)
    contents = page.split('<nav class="print-contents"', 1)[1].split("</nav>", 1)[0]
    assert "<ol" not in contents  # a list's own numbers would be said before "1.1"
    course = load_course(recorded.content)
    for lesson in course.lessons:
        heading = re.findall(rf'<h3 id="lesson-{lesson.slug}">([^<]*)</h3>', page)
        assert len(heading) == 1 and re.fullmatch(
            rf"\d+\.\d+ {re.escape(lesson.title)}", heading[0]
        )


def test_the_glossary_is_printed_and_the_terms_lead_to_it(site: Path, recorded: Paths) -> None:
    page = _print(site)
    glossary = page.split('<h2 id="glossary">Glossary</h2>', 1)[1]
    for term in load_course(recorded.content).glossary:
        assert f'<dt id="_glossary--{term.id}">{term.term}</dt>' in glossary
    assert 'href="#_glossary--jaxpr"' in page.split('<h2 id="solutions">', 1)[0]


def test_ids_are_unique_and_every_link_in_the_page_leads_somewhere(site: Path) -> None:
    page = _print(site)
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert set(re.findall(r'href="#([^"]+)"', page)) <= set(ids)
    assert set(re.findall(r'aria-(?:describedby|labelledby)="([^"]+)"', page)) <= set(ids)
    regions = re.findall(r'role="region" aria-label="([^"]+)"', page)  # axe: landmark-unique
    assert regions and [r for r, n in Counter(regions).items() if n > 1] == []
    assert not re.search(r'(src|href)="\.\./\.\./', page)  # nothing above the site's root


def test_the_page_has_a_print_button_and_its_lessons_scripts(site: Path) -> None:
    page = _print(site)
    assert re.search(r"<p [^>]*data-print hidden><button [^>]*>Print the course", page)
    assert "window.print()" in (site / "static" / "site.js").read_text()
    assert "static/tabs.js" in page  # a lesson it holds has tabs


def test_a_page_loads_tabs_js_only_when_it_has_tabs(site: Path) -> None:
    tabbed = (site / "l" / "no-panels" / "index.html").read_text()
    assert 'class="tabs"' in tabbed and '<script src="../../static/tabs.js" defer>' in tabbed
    for name in ("l/first/index.html", "index.html", "glossary/index.html"):
        page = (site / name).read_text()
        assert 'class="tabs"' not in page and "tabs.js" not in page, name
    assert "cards.js" not in (site / "index.html").read_text()
    assert "static/cards.js" in (site / "l" / "first" / "index.html").read_text()


def test_a_moved_address_leads_into_the_page_or_from_its_folder() -> None:
    held = {"l/one/index.html": "one", "l/two/index.html": "two", "glossary/index.html": "_g"}
    move = Move("l/one/index.html", "print/index.html", held, shift=2)
    authored = {
        "#a": "#one--a",
        "../two/": "#lesson-two",
        "../two/index.html#s": "#two--s",
        "example.py": "../l/one/example.py",
        "../gone/?q=1#x": "../l/gone/?q=1#x",
        "https://jax.dev/a#b": "https://jax.dev/a#b",
        "mailto:a@b.c": "mailto:a@b.c",
        "/abs/path": "/abs/path",
    }
    for given, wanted in authored.items():
        assert move.address(given, authored=True) == wanted, given
    made = {"../l/two/index.html#s": "#two--s", "../glossary/index.html#jit": "#_g--jit"}
    for given, wanted in made.items():
        assert move.address(given, authored=False) == wanted, given
    assert (move.id("a"), move.heading("h2"), move.heading("h5")) == ("one--a", "h4", "h6")


def test_nothing_in_the_renderer_parses_html() -> None:
    """A second output is a second renderer: no HTML parser reads the builder's pages."""
    found = [
        str(path.relative_to(BUILDER))
        for path in sorted((BUILDER / "render").rglob("*.py"))
        if re.search(r"html\.parser|HTMLParser", path.read_text())
    ]
    assert found == []
