"""Markup from templates: hostile text in every place a lesson's body shows recorded or
written text is escaped (it reads back exactly as given, and adds no element), and no
module of the builder builds HTML by escaping strings into f-strings by hand."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from html.parser import HTMLParser

from builder.course.load import load_course
from builder.course.model import GlossaryTerm
from builder.course.recording import BarPanel, Recording, Series, load
from builder.render import figures, prose
from builder.render.links import Links, Target
from tests.helpers import FIXTURE_COURSE, REFERENCE, ROOT

# Tags, both quotes, an ampersand and an entity (escaped twice, it would read "&amp;amp;")
HOSTILE = "<script>alert('x' & \"y\")</script> &amp;"
WRITTEN = HOSTILE.replace("&amp;", "&")  # as Markdown reads it: an entity is its character
SCRIPT = "<script>alert('x' & \"y\")</script>"
ARG = HOSTILE.replace('"', '\\"')  # inside a mark's double-quoted argument


class Page(HTMLParser):
    """Every element's tag and attributes, and the text inside each tag, decoded."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.texts: dict[str, list[str]] = {}
        self._open: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))
        if tag not in ("img", "source", "br"):
            self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        for tag in set(self._open):
            self.texts.setdefault(tag, []).append(data)

    def attribute(self, tag: str, name: str) -> list[str]:
        return [attrs[name] for t, attrs in self.tags if t == tag and name in attrs]

    def text(self, tag: str) -> str:
        return "".join(self.texts.get(tag, []))


def _hostile_recording() -> Recording:
    reference = load(REFERENCE)
    panels = [
        replace(
            panel,
            title=f"{HOSTILE} {n}",
            ylabel=HOSTILE,
            labels=[HOSTILE, *panel.labels[1:]],
            series=[Series(HOSTILE, s.y) for s in panel.series],
        )
        for n, panel in enumerate(reference.panels, start=1)
    ]
    assert all(isinstance(panel, BarPanel) for panel in panels)
    return replace(
        reference, stdout=f"{HOSTILE}\nsecond\n", data=replace(reference.data, panels=panels)
    )


BODY = f"""\
## Tracing {WRITTEN}

| {SCRIPT} | b |
|---|---|
| {SCRIPT} | 1 |

```x"><script>alert(1)</script>
{HOSTILE}
```

A [[{WRITTEN}|hostile]] and [a link](https://example.com "{ARG}").

{{{{ output }}}}

{{{{ panel 1 }}}}

{{{{ reveal summary="{ARG}" }}}}

{{{{ example lines=1-2 }}}}

It printed {{{{ value line=1 }}}}, {{{{ value panel=2 label="{ARG}" }}}} and
{{{{ value panel=1 label="<script>'&'" }}}}.

{{{{ reveal end }}}}
"""


def _page() -> tuple[str, Page]:
    course = load_course(FIXTURE_COURSE)
    lesson = course.lesson("basics-01")
    assert lesson is not None
    lesson = replace(lesson, body=BODY, source=f"# {HOSTILE}\nprint(2)\n".encode())
    term = GlossaryTerm(id="hostile", term=HOSTILE, definition=HOSTILE, taught_in="basics-01")
    links = Links((Target("basics-01", "first", HOSTILE),), (term,))
    recording = _hostile_recording()
    rendered, errors = prose.render_prose(lesson, links, recording, root="../../")
    assert len(errors) == 1  # the value whose label is not one of the panel's
    html = rendered.html + str(figures.unplaced_panels(recording, rendered.placed_panels, "../../"))
    return html, Page(html)


def test_hostile_text_in_every_place_is_escaped_and_reads_back_as_given() -> None:
    html, page = _page()
    assert "<script" not in html
    allowed = {"a", "code", "data", "details", "div", "figcaption", "figure", "h2", "img"}
    allowed |= {"mark", "p", "picture", "pre", "section", "source", "span", "strong", "summary"}
    allowed |= {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    assert {tag for tag, _ in page.tags} <= allowed
    # the recorded panels: caption, alt text, the table's caption, heads and label
    assert page.text("strong").count(HOSTILE) >= 3  # panels 1 and 2, and the glossary card
    assert all(HOSTILE in alt for alt in page.attribute("img", "alt"))
    assert page.text("caption").count(HOSTILE) == 2
    assert page.text("th").count(HOSTILE) == 4  # a series' head and a row's label, twice
    labels = page.attribute("div", "aria-label")
    assert f"{HOSTILE} 1: the recorded numbers" in labels
    assert f"Table: {SCRIPT}, b" in labels  # a Markdown table's scroll box
    # recorded output, the example's code, a fenced block and its language
    assert page.text("code").count(HOSTILE) == 4  # output, fence, example's lines and whole
    assert 'x"><script>alert(1)</script>' in page.attribute("pre", "data-lang")
    assert 'Code, x"><script>alert(1)</script>' in page.attribute("pre", "aria-label")
    # a recorded value, its note, and a reference that failed
    assert HOSTILE in page.attribute("data", "value") and HOSTILE in page.text("data")
    notes = re.findall(r'<span class="rv-note"[^>]*>(.*?)</span></span>', html)
    assert notes and any(HOSTILE in Page(note).text("span") for note in notes)  # its source
    assert "label=\"<script>'&'\"" in page.text("mark")
    # the glossary card, the reveal's button, the heading's link, a Markdown link's title
    assert f"{WRITTEN}{HOSTILE} {HOSTILE}" in page.text("span")  # term, name, definition
    assert page.text("summary").startswith(f"{HOSTILE}The whole")  # the reveal; the example
    assert f"Link to this section: Tracing {WRITTEN}" in page.attribute("a", "aria-label")
    assert WRITTEN in page.attribute("a", "title")


def test_no_module_builds_html_by_escaping_into_strings() -> None:
    """HTML is made by templates/_macros.html or markupsafe's Markup % value: no builder
    module calls html.escape or writes an f-string that starts an element."""
    found = []
    for path in sorted((ROOT / "builder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and (node.attr, _name(node.value)) == (
                "escape",
                "html",
            ):
                found.append(f"{where} html.escape")
            elif isinstance(node, ast.ImportFrom) and node.module == "html":
                found.append(f"{where} from html import")
            elif isinstance(node, ast.JoinedStr) and _starts_element(node):
                found.append(f"{where} an f-string of HTML")
    assert found == []


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _starts_element(node: ast.JoinedStr) -> bool:
    first = node.values[0] if node.values else None
    text = first.value.lstrip() if isinstance(first, ast.Constant) else ""
    return isinstance(text, str) and text[:1] == "<" and text[1:2].isalpha()


def test_the_scanner_sees_the_old_way() -> None:
    """How a figure's caption was made before: both halves are caught."""
    old = "import html\nx = f'<figcaption>{html.escape(title)}</figcaption>'\n"
    nodes = list(ast.walk(ast.parse(old)))
    assert any(isinstance(n, ast.JoinedStr) and _starts_element(n) for n in nodes)
    assert any(isinstance(n, ast.Attribute) and n.attr == "escape" for n in nodes)
