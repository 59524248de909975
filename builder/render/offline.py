"""A search bundle's pages as a script (`offline.js`, builder/render/search.py), and a page's
`Searched` made of the text its renderer kept.

A page opened from a file may load a script with a `<script>` tag, but not fetch a file or
import a module. So each bundle is a script that adds its pages to a global list (as
mkdocs-material's offline plugin keeps `search_index.js`), which static/search.js searches,
served or opened from disk. Code and output weigh as much as prose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from ..core.artifact import Searched

GLOBAL = "coursebuilderSearch"  # the list every bundle's script adds its pages to
# What a script must not hold as it is: the end of its element or a comment's start (were
# it ever inlined), and the line and paragraph separators that end a line in older engines.
_UNSAFE = re.compile("[<>&\u2028\u2029]")
Found = Sequence[tuple[str, Sequence[str], Sequence[str]]]  # marks.PageEnv.found


def script(pages: Iterable[tuple[str, Searched]]) -> bytes:
    """The pages (each its file in the site and what a search finds there) as a script that
    adds them, in that order, to `window.coursebuilderSearch`."""
    entries = [
        {"url": url, "title": s.title, "teaches": s.teaches, "sections": [*map(list, s.sections)]}
        for url, s in pages
    ]
    return f"(window.{GLOBAL} = window.{GLOBAL} || []).push({in_script(entries)});\n".encode()


def in_script(value: object) -> str:
    """`value` as JSON that is the same value in a script, wherever it stands: no `<`, `>`
    or `&` (no `</script>` or `<!--`), no line or paragraph separator."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def sections(found: Found, before: str = "", after: str = "") -> tuple[tuple[str, str, str], ...]:
    """The sections of text a renderer kept (`found`: each anchored heading's id, its text's
    pieces and those of the text under it), `before` its first and `after` its last, each
    one's whitespace made single spaces; a section with neither heading nor text is left out."""
    last = len(found) - 1
    made = (
        (
            anchor,
            _spaced(heading),
            _spaced([f"{before} "] * (n == 0) + [*text] + [f" {after}"] * (n == last)),
        )
        for n, (anchor, heading, text) in enumerate(found)
    )
    return tuple(s for s in made if s[1] or s[2])


def _spaced(pieces: Iterable[str]) -> str:
    return " ".join("".join(pieces).split())
