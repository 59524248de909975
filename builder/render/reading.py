"""How long a lesson takes to read: the words of the text its prose renderer gives a reader
to read (builder/render/prose.py and its plugins keep it in `PageEnv.read` as they render:
the prose, inline code, link text, table cells, headings, callouts and their titles, tab
titles, a term's text and a value as shown; never code blocks, recorded output, figures,
formulas, a term's card nor a value's note), at READING_WPM words a minute, rounded to the
nearest minute, a half up (at least one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

READING_WPM = 200  # words a minute: a common figure for reading technical prose
_WORD = re.compile(r"\w+(?:['’.-]\w+)*")


def words(texts: Iterable[str]) -> int:
    """The number of words in `texts`, each piece read apart (no word runs from one into
    the next): "it's a well-known jax.jit call" is five."""
    return len(_WORD.findall(" ".join(texts)))


def reading_minutes(words: int) -> int:
    """Minutes to read `words` words at READING_WPM, rounded (a half up), at least one."""
    return max(1, int(words / READING_WPM + 0.5))
