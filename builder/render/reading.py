"""How long a lesson takes to read: the words of its prose, counted in the rendered page
as a reader meets them (code, recorded output, charts and the cards that open on a term
left out), at READING_WPM words a minute, rounded to the nearest minute, a half up (at
least one).
"""

from __future__ import annotations

import re

from .readback import VOID, attributes, tokens

READING_WPM = 200  # words a minute: a common figure for reading technical prose
# What is not read as prose: code and output (in figures and pre), formulas, and what a
# page shows only on demand beside a word (a term's card, a value's note, a heading's #).
_SKIPPED_TAGS = frozenset({"figure", "pre", "math", "script", "style"})
_SKIPPED_CLASSES = frozenset({"term-card", "rv-note", "anchor"})
_WORD = re.compile(r"\w+(?:['’.-]\w+)*")


def prose_words(html: str) -> int:
    """The number of words a reader reads in `html` (a lesson's rendered prose): its text
    outside the elements a reader does not read as prose."""
    skipped: list[bool] = []  # for each open element: is it skipped?
    skipping = 0
    text: list[str] = []
    for kind, tag, rest in tokens(html):  # a code block (kind "pre") is not read
        if kind == "text":
            if not skipping:
                text.append(rest)
        elif kind == "start":
            classes = attributes(rest).get("class", "").split() if "class" in rest else ()
            skip = tag in _SKIPPED_TAGS or not _SKIPPED_CLASSES.isdisjoint(classes)
            skipped.append(skip)
            skipping += skip
        elif kind == "end" and tag not in VOID and skipped:
            skipping -= skipped.pop()
    return len(_WORD.findall(" ".join(text)))


def reading_minutes(words: int) -> int:
    """Minutes to read `words` words at READING_WPM, rounded (a half up), at least one."""
    return max(1, int(words / READING_WPM + 0.5))
