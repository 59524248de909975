"""The printable course (print/index.html, builder/render/printed.py), built from the
fixture course: every lesson in course order with its body, charts and recorded output,
ids unique, every in-page link leading to an id of the page and every other address to a
file of the site; a hostile lesson text stays text."""

from __future__ import annotations

import posixpath
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.pipeline.build import build
from builder.render.nav import site_nav

HOSTILE = "Shh </div></article><script>window.bad = 1</script> <h2 id='main'>x</h2> & done."


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.addresses: list[str] = []
        self.lessons: list[str] = []  # the titles of the lessons' sections, in order
        self.contents: list[str] = []  # where the contents list leads, in order
        self.scripts = 0
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        got = {k: v or "" for k, v in attrs}
        self.ids += [got["id"]] if "id" in got else []
        self.addresses += [got[k] for k in ("href", "src") if k in got]
        self.addresses += [x.split()[0] for x in got.get("srcset", "").split(",") if x.strip()]
        self.scripts += tag == "script" and "src" not in got
        if tag == "h3" and got.get("id", "").startswith("lesson-"):
            self._in.append("lesson")
            self.lessons.append("")
        if tag == "a" and "print-contents" in str(self._in):
            self.contents.append(got["href"])
        if tag == "nav" and "print-contents" in got.get("class", ""):
            self._in.append("print-contents")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h3", "nav") and self._in:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "lesson":
            self.lessons[-1] += data


def _built(recorded: Paths) -> tuple[str, _Page]:
    lesson = recorded.content / "lessons" / "basics-01" / "lesson.md"
    lesson.write_text(
        lesson.read_text("utf-8").replace("## Tracing\n", f"## Tracing\n\n{HOSTILE}\n", 1)
    )
    build(recorded, execute=False, jobs=1)
    html = (recorded.out / "print" / "index.html").read_text("utf-8")
    page = _Page()
    page.feed(html)
    return html, page


def test_every_lesson_in_course_order_with_unique_ids_and_links_that_resolve(
    recorded: Paths,
) -> None:
    html, page = _built(recorded)
    nav = site_nav(load_course(recorded.content))
    assert page.lessons == [f"{x.number} {x.title}" for arc in nav.arcs for x in arc.lessons]
    wanted = [
        at
        for arc in nav.arcs
        for at in (f"#arc-{arc.id}", *(f"#lesson-{x.url.split('/')[1]}" for x in arc.lessons))
    ]
    assert page.contents == [*wanted, "#glossary"]  # no lab: no Solutions
    twice = [i for i, n in Counter(page.ids).items() if n > 1]
    assert not twice, f"ids used twice: {twice}"
    ids, out = set(page.ids), recorded.out
    broken = [a for a in page.addresses if a.startswith("#") and a[1:] not in ids]
    assert not broken, f"in-page links to no id: {broken}"
    for address in (a for a in page.addresses if not a.startswith(("#", "http", "mailto:"))):
        path = posixpath.normpath(posixpath.join("print", address.split("#")[0].split("?")[0]))
        assert (out / path).is_file(), f"{address} is no file of the site"
    # each lesson's body: its figures, charts and recorded output came with it
    assert html.count('<figure class="output"') >= 2
    charts = [a for a in page.addresses if a.startswith("../charts/") and a.endswith(".svg")]
    assert charts and all((out / a.removeprefix("../")).is_file() for a in charts)
    assert 'loading="lazy"' not in html
    # "See the next lesson" in basics-01 leads to that lesson's place in the page
    assert 'href="#lesson-no-panels"' in html


def test_a_hostile_lesson_text_stays_text(recorded: Paths) -> None:
    html, page = _built(recorded)
    assert "Shh &lt;/div&gt;&lt;/article&gt;&lt;script&gt;window.bad = 1&lt;/script&gt;" in html
    assert page.scripts == 0, "an inline script in the printable course"
    assert page.ids.count("main") == 1


def test_the_home_page_links_the_printable_course(recorded: Paths) -> None:
    build(recorded, execute=False, jobs=1)
    home = (recorded.out / "index.html").read_text("utf-8")
    assert 'href="print/index.html">Print the whole course</a>' in home
    assert Path(recorded.out / "print" / "index.html").is_file()


def test_without_print_page_there_is_no_printable_course_and_a_later_build_removes_it(
    recorded: Paths,
) -> None:
    """Off unless course.yml asks for it; turned off, the next build deletes the page and
    the home page's link to it."""
    build(recorded, execute=False, jobs=1)
    assert (recorded.out / "print" / "index.html").is_file()
    course_yml = recorded.content / "course.yml"
    text = course_yml.read_text("utf-8")
    course_yml.write_text(text.replace("print_page: true", "print_page: false"), "utf-8")
    build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "print" / "index.html").exists()
    assert "Print the whole course" not in (recorded.out / "index.html").read_text("utf-8")
