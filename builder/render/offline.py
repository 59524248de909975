"""The search index a page opened from disk reads: a bundle's pages as a script
(`offline.js` beside its Pagefind files, builder/render/search.py).

A browser lets a page opened from a file load a script with a `<script>` tag, but not fetch
a file or import a module, which is how Pagefind reads its index. So each bundle also
carries its pages' text as a script that adds them to a global list, as mkdocs-material's
offline plugin keeps its index as `search_index.js`; static/search.js searches it when
Pagefind cannot be loaded. The text is read from the pages' own markup, by the attributes
Pagefind reads (`data-pagefind-body`, `-ignore`, `-weight`, `-meta`), so what the two
indexes hold is decided in one place, the templates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser

GLOBAL = "coursebuilderSearch"  # the list every bundle's script adds its pages to
# Elements whose start or end ends a word: their text is not joined to the next one's.
_BLOCK = re.compile(
    r"p|div|li|ul|ol|h[1-6]|pre|br|td|th|tr|table|dt|dd|dl|figure|figcaption|section|article"
    r"|details|summary|blockquote|hr|nav|aside|header|footer"
)
_VOID = re.compile(r"area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr")
_HEADING = re.compile(r"h[1-6]|dt")  # with an id, it starts a section
_SPACE = re.compile(r"\s+")
# What a script must not hold as it is: the end of its element or a comment's start (were
# it ever inlined), and the line and paragraph separators that end a line in older engines.
_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script(pages: Iterable[tuple[str, bytes]]) -> bytes:
    """The offline index of `pages` (each its file in the site and its bytes) as a script
    that adds them, in that order, to `window.coursebuilderSearch`."""
    data = [page_index(name, html) for name, html in pages]
    return f"(window.{GLOBAL} = window.{GLOBAL} || []).push({in_script(data)});\n".encode()


def in_script(value: object) -> str:
    """`value` as JSON that is the same value in a script, wherever it stands: no `<`, `>`
    or `&` (no `</script>` or `<!--`), no line or paragraph separator."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: _UNSAFE[m[0]], text)


def page_index(name: str, html: bytes) -> dict[str, object]:
    """One page's entry: its file, its title (its first h1, as Pagefind's), the terms it
    teaches, and its sections (the text before its first heading, then one a heading or
    glossary term with an id): [id, heading, text, text of half weight]."""
    reader = _Reader()
    reader.feed(html.decode("utf-8", "replace"))
    reader.close()
    sections = [[s.id, *map(_clean, (s.heading, s.text, s.low))] for s in reader.sections]
    kept = [s for s in sections if s[1] or s[2] or s[3]]
    title = _clean(reader.title)
    return {"url": name, "title": title, "teaches": reader.teaches, "sections": kept}


def _clean(parts: list[str]) -> str:
    return _SPACE.sub(" ", "".join(parts)).strip()


@dataclass
class _Section:
    """A heading's id and words (none for the text above the first), and the text under it."""

    id: str = ""
    heading: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    low: list[str] = field(default_factory=list)  # under a weight below 1


class _Reader(HTMLParser):
    """The text of a page's `data-pagefind-body` elements, in sections, without what
    `data-pagefind-ignore` marks; text under a weight below 1 apart."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.teaches = ""
        self.sections = [_Section()]  # the first: the page's own text, above any heading
        self.stack: list[tuple[str, bool, bool, bool, str]] = []  # tag, body, ignored, low, h
        self.body = self.ignored = self.low = False
        self.heading = ""  # "title" in the first h1, "section" in a heading with an id
        self.seen_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        got = dict(attrs)
        if _BLOCK.fullmatch(tag):
            self._text(" ")
        if _VOID.fullmatch(tag):
            return
        self.stack.append((tag, self.body, self.ignored, self.low, self.heading))
        self.body = self.body or "data-pagefind-body" in got
        self.ignored = self.ignored or "data-pagefind-ignore" in got
        weight = got.get("data-pagefind-weight")
        self.low = self.low or (weight is not None and _number(weight) < 1)
        meta = got.get("data-pagefind-meta") or ""
        if self.body and meta.startswith("teaches:"):
            self.teaches = meta.removeprefix("teaches:")
        if tag == "h1" and not self.seen_h1:
            self.seen_h1, self.heading = True, "title"
        elif _HEADING.fullmatch(tag) and got.get("id") and self.body and not self.ignored:
            self.sections.append(_Section(got["id"] or ""))
            self.heading = "section"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if _BLOCK.fullmatch(tag):
            self._text(" ")

    def handle_endtag(self, tag: str) -> None:
        if _BLOCK.fullmatch(tag):
            self._text(" ")
        while self.stack:  # closes what the page left open inside it, too
            opened, self.body, self.ignored, self.low, self.heading = self.stack.pop()
            if opened == tag:
                break

    def handle_data(self, data: str) -> None:
        self._text(data)

    def _text(self, data: str) -> None:
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
