"""The search index (offline.js, builder/render/offline.py) is made from data the build
already has, what rendering each page kept, with no parse of the pages; on the fixture
course it holds what a parse of every page by its search markers finds (the reader below,
html.parser, as offline.js was made before 7edbc9a, and as Pagefind read the pages until
issue 60): the same titles, taught terms, sections (id and heading) and words, page by page."""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser

from builder.core.observe import Paths
from builder.course.load import load_course
from tests.helpers import build_cli

BLOCK = frozenset(
    str.split(
        "p div li ul ol h1 h2 h3 h4 h5 h6 pre br td th tr table dt dd dl figure figcaption "
        "section article details summary blockquote hr nav aside header footer"
    )
)
HEADING = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "dt"))
VOID = frozenset(str.split("area base br col embed hr img input link meta source track wbr"))


class _Reader(HTMLParser):
    """A page's text where `data-pagefind-body` marks it and `-ignore` does not, in sections
    (the text above the first heading, then one a heading or term with an id)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.teaches = ""
        self.sections: list[tuple[str, list[str], list[str]]] = [("", [], [])]
        self.stack: list[tuple[str, bool, bool, str]] = []
        self.body = self.ignored = self.seen_h1 = False
        self.heading = ""  # "title" in the first h1, "section" in a heading with an id
        self.raw = 0  # inside a script or style
        self.note = 0  # the depth of the code note's number being read, if one is

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        got = {k: v or "" for k, v in attrs}
        self.raw += tag in ("script", "style")
        if tag in BLOCK:
            self.handle_data(" ")
        if tag in VOID or tag in ("script", "style"):
            return
        self.stack.append((tag, self.body, self.ignored, self.heading))
        self.body = self.body or "data-pagefind-body" in got
        self.ignored = self.ignored or "data-pagefind-ignore" in got
        if self.body and got.get("data-pagefind-meta", "").startswith("teaches:"):
            self.teaches = got["data-pagefind-meta"].removeprefix("teaches:")
        if tag == "a" and "code-note" in got.get("class", "").split():
            self.note = len(self.stack)  # a code note's number: a word of its own
        if tag == "h1" and not self.seen_h1:
            self.seen_h1, self.heading = True, "title"
        elif tag in HEADING and got.get("id") and self.body and not self.ignored:
            self.sections.append((got["id"], [], []))
            self.heading = "section"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.raw -= 1
            return
        if tag in BLOCK:
            self.handle_data(" ")
        while self.stack:  # closes what the page left open inside it, too
            opened, self.body, self.ignored, self.heading = self.stack.pop()
            if opened == tag:
                break
        if tag == "a" and len(self.stack) + 1 == self.note:
            self.handle_data(" ")
            self.note = 0

    def handle_data(self, data: str) -> None:
        if self.raw:
            return
        if self.heading == "title":
            self.title.append(data)
        if self.body and not self.ignored:
            _, heading, text = self.sections[-1]
            (heading if self.heading == "section" else text).append(data)


def _clean(parts: list[str]) -> str:
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _parsed(html: str) -> tuple[str, str, list[tuple[str, str]], Counter[str]]:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    sections = [(i, _clean(h), _clean(t)) for i, h, t in reader.sections]
    kept = [s for s in sections if s[1] or s[2]]
    words = Counter(w for s in kept for w in _words(f"{s[1]} {s[2]}"))
    return _clean(reader.title), reader.teaches, [(i, h) for i, h, _ in kept], words


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _indexed(entry: dict) -> tuple[str, str, list[tuple[str, str]], Counter[str]]:
    sections = entry["sections"]
    words = Counter(w for _, h, t in sections for w in _words(f"{h} {t}"))
    return entry["title"], entry["teaches"], [(i, h) for i, h, _ in sections], words


MORE = """

## Every kind of text

The `jit`s and **bold**ed words, a line
broken here, $\\alpha x^2 + \\mathrm{relu}(y)$ inline and

$$
z = \\sum_i w_i
$$

=== "First tab"
    tab text

!!! tip "A titled tip"
    callout text

| Name | Value |
|------|-------|
| `a`s | 1     |

```python
print("fenced")
```
"""


def test_the_offline_index_holds_what_a_parse_of_each_page_finds(recorded: Paths) -> None:
    lesson = recorded.content / "lessons" / "basics-01" / "lesson.md"
    lesson.write_text(lesson.read_text() + MORE)
    code, said = build_cli(recorded.content.parent)
    assert code == 0, said
    site, seen, words = recorded.out, 0, Counter[str]()
    for script in sorted(site.glob("**/offline.js")):
        text = script.read_text()
        for entry in json.loads(text[text.index("push(") + 5 : text.rindex(");")]):
            page = (site / entry["url"]).read_text()
            assert _indexed(entry) == _parsed(page), entry["url"]
            words += _indexed(entry)[3]
            seen += 1
    assert seen == len(load_course(recorded.content).lessons) + 1  # and the glossary
    assert {"jits", "bolded", "relu", "tab", "titled", "callout", "as", "fenced"} <= set(words)
