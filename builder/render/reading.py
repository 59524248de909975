"""How long a lesson takes to read: the words of its prose, counted in the rendered page
as a reader meets them (code, recorded output, charts and the cards that open on a term
left out), at READING_WPM words a minute, rounded to the nearest minute, a half up (at
least one).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

READING_WPM = 200  # words a minute: a common figure for reading technical prose
# What is not read as prose: code and output (in figures and pre), formulas, and what a
# page shows only on demand beside a word (a term's card, a value's note, a heading's #).
_SKIPPED_TAGS = frozenset({"figure", "pre", "math", "script", "style"})
_SKIPPED_CLASSES = frozenset({"term-card", "rv-note", "anchor"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "source", "track", "wbr"})  # fmt: skip
_WORD = re.compile(r"\w+(?:['’.-]\w+)*")


class _Prose(HTMLParser):
    """The text of an HTML fragment outside the elements a reader does not read as prose."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[bool] = []  # for each open element: is it skipped?
        self.skipping = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = tag in _SKIPPED_TAGS or bool(classes & _SKIPPED_CLASSES)
        self.open.append(skipped)
        self.skipping += skipped

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not self.open:
            return
        self.skipping -= self.open.pop()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.text.append(data)


def prose_words(html: str) -> int:
    """The number of words a reader reads in `html` (a lesson's rendered prose)."""
    parser = _Prose()
    parser.feed(html)
    parser.close()
    return len(_WORD.findall(" ".join(parser.text)))


def reading_minutes(words: int) -> int:
    """Minutes to read `words` words at READING_WPM, rounded (a half up), at least one."""
    return max(1, int(words / READING_WPM + 0.5))
