"""The search index a page opened from disk reads: a bundle's pages as a script
(`offline.js` beside its Pagefind files, builder/render/search.py).

A browser lets a page opened from a file load a script with a `<script>` tag, but not fetch
a file or import a module, which is how Pagefind reads its index. So each bundle also
carries its pages' text as a script that adds them to a global list, as mkdocs-material's
offline plugin keeps its index as `search_index.js`; static/search.js searches it when
Pagefind cannot be loaded. The text is read from the pages' own markup, by the attributes
Pagefind reads (`data-pagefind-body`, `-ignore`, `-weight`, `-meta`), so what the two
indexes hold is decided in one place, the templates (read back by builder/render/readback.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .readback import attributes, text_of, tokens

GLOBAL = "coursebuilderSearch"  # the list every bundle's script adds its pages to
# Elements whose start or end ends a word: their text is not joined to the next one's.
_BLOCK = frozenset(
    str.split(
        "p div li ul ol h1 h2 h3 h4 h5 h6 pre br td th tr table dt dd dl figure figcaption section "
        "article details summary blockquote hr nav aside header footer"
    )
)
_HEADING = ("h1", "h2", "h3", "h4", "h5", "h6", "dt")  # with an id, it starts a section
_SPACE = re.compile(r"\s+")
# What a script must not hold as it is: the end of its element or a comment's start (were
# it ever inlined), and the line and paragraph separators that end a line in older engines.
_UNSAFE = re.compile("[<>&\u2028\u2029]")


def script(pages: Iterable[tuple[str, bytes]]) -> bytes:
    """The offline index of `pages` (each its file in the site and its bytes) as a script
    that adds them, in that order, to `window.coursebuilderSearch`."""
    data = [page_index(name, html) for name, html in pages]
    return f"(window.{GLOBAL} = window.{GLOBAL} || []).push({in_script(data)});\n".encode()


def in_script(value: object) -> str:
    """`value` as JSON that is the same value in a script, wherever it stands: no `<`, `>`
    or `&` (no `</script>` or `<!--`), no line or paragraph separator."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def page_index(name: str, html: bytes) -> dict[str, object]:
    """One page's entry: its file, its title (its first h1, as Pagefind's), the terms it
    teaches, and its sections (the text before its first heading, then one a heading or
    glossary term with an id): [id, heading, text, text of half weight]."""
    reader = _Reader()
    reader.read(html.decode("utf-8", "replace"))
    sections = [[s.id, *map(_clean, (s.heading, s.text, s.low))] for s in reader.sections]
    kept = [s for s in sections if s[1] or s[2] or s[3]]
    return {"url": name, "title": _clean(reader.title), "teaches": reader.teaches, "sections": kept}


def _clean(parts: list[str]) -> str:
    return _SPACE.sub(" ", "".join(parts)).strip()


@dataclass
class _Section:
    """A heading's id and words (none for the text above the first), and the text under it."""

    id: str = ""
    heading: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    low: list[str] = field(default_factory=list)  # under a weight below 1


class _Reader:
    """The text of a page's `data-pagefind-body` elements, in sections, without what
    `data-pagefind-ignore` marks; text under a weight below 1 apart."""

    def __init__(self) -> None:
        self.title: list[str] = []
        self.teaches = ""
        self.sections = [_Section()]  # the first: the page's own text, above any heading
        self.stack: list[tuple[str, bool, bool, bool, str]] = []  # tag, body, ignored, low, h
        self.body = self.ignored = self.low = False
        self.heading = ""  # "title" in the first h1, "section" in a heading with an id
        self.seen_h1 = False

    def read(self, page: str) -> None:
        for kind, tag, rest in tokens(page):
            if kind == "text":
                self.text(rest)
            elif kind == "end":
                self.end(tag)
            elif kind == "pre":  # `tag`: its attributes, `rest`: what it holds
                self.start("pre", tag, False)
                if "data-pagefind" in rest:  # a code note's badge, which search leaves out
                    self.read(rest)
                else:
                    self.text(text_of(rest))
                self.end("pre")
            else:
                self.start(tag, rest, kind == "empty")

    def start(self, tag: str, rest: str, empty: bool) -> None:
        if tag in _BLOCK:
            self.text(" ")
        if empty:
            return
        self.stack.append((tag, self.body, self.ignored, self.low, self.heading))
        got = attributes(rest) if "data-pagefind" in rest or "id" in rest else {}
        self.body = self.body or "data-pagefind-body" in got
        self.ignored = self.ignored or "data-pagefind-ignore" in got
        weight = got.get("data-pagefind-weight")
        self.low = self.low or (weight is not None and _number(weight) < 1)
        meta = got.get("data-pagefind-meta", "")
        if self.body and meta.startswith("teaches:"):
            self.teaches = meta.removeprefix("teaches:")
        if tag == "h1" and not self.seen_h1:
            self.seen_h1, self.heading = True, "title"
        elif tag in _HEADING and got.get("id") and self.body and not self.ignored:
            self.sections.append(_Section(got["id"]))
            self.heading = "section"

    def end(self, tag: str) -> None:
        if tag in _BLOCK:
            self.text(" ")
        while self.stack:  # closes what the page left open inside it, too
            opened, self.body, self.ignored, self.low, self.heading = self.stack.pop()
            if opened == tag:
                break

    def text(self, data: str) -> None:
        if self.heading == "title":
            self.title.append(data)
        if not self.body or self.ignored:
            return
        section = self.sections[-1]
        if self.heading == "section":
            section.heading.append(data)
        else:
            (section.low if self.low else section.text).append(data)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 1.0
