"""The builder's own HTML read back as tags and text: a lesson's reading time
(builder/render/reading.py) reads its rendered prose.

The markup is the builder's (lesson Markdown allows no raw HTML; every text and attribute
value in it is escaped), so one regular expression splits it: text, start and end tags,
comments and doctypes; the bodies of `<script>` and `<style>` are skipped whole. Unlike
html.parser it keeps no per-character state machine in Python, which made reading the
pages back a visible share of a cold build.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

VOID = frozenset(str.split("area base br col embed hr img input link meta source track wbr"))
# text | a script or style, whole | a code block, whole | a start or end tag: its slash, name
# and attributes | a comment or doctype | a lone `<`: every character of a page is in one.
# No part but a script, a style or a comment reads past the next `<` unless it ends there (a
# code block: past a `<` that does not start or end one), so a page of unclosed tags or
# quotes is read in one pass, as a lone `<` each.
_ATTRIBUTES = r"""((?:[^<>"']|"[^"<]*"|'[^'<]*')*)"""  # a quoted value may hold a `>`
_TOKEN = re.compile(
    rf"([^<]+)|<(script|style)\b{_ATTRIBUTES}>.*?(?:</\2\s*>|\Z)"
    rf"|<pre\b{_ATTRIBUTES}>([^<]*(?:<(?!/?pre\b)[^<]*)*)</pre\s*>"
    rf"|<(/?)([a-zA-Z][^\s/<>]*){_ATTRIBUTES}>|<!--.*?(?:-->|\Z)|<![^<>]*>|(<)",
    re.S | re.I,
)
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?""")


def tokens(page: str) -> Iterator[tuple[str, str, str]]:
    """`page` as ("text", "", the text unescaped), ("start", tag, its attributes' source),
    ("empty", tag, source) for a void element or one closed with `/>`, ("end", tag, ""),
    and ("pre", its attributes' source, what it holds) for a code block, whose highlighting
    is most of a page's tags (a `<pre>` holds no other); tag names in lower case; comments,
    doctypes and what scripts and styles hold left out (each such element is its start and
    its end, with nothing between)."""
    for found in _TOKEN.finditer(page):
        text, raw, raw_rest, pre, inside, slash, tag, rest, lone = found.groups()
        if text is not None:
            yield "text", "", html.unescape(text) if "&" in text else text
        elif raw is not None:
            yield "start", raw.lower(), raw_rest
            yield "end", raw.lower(), ""
        elif pre is not None:
            yield "pre", pre, inside
        elif tag is not None:
            tag = tag.lower()
            if slash:
                yield "end", tag, ""
            elif tag in VOID or rest.endswith("/"):
                yield "empty", tag, rest
            else:
                yield "start", tag, rest
        elif lone:
            yield "text", "", lone


def attributes(source: str) -> dict[str, str]:
    """A start tag's attributes from its source ("" for one without a value), values
    unescaped, names in lower case; of a name given twice, the first counts."""
    found: dict[str, str] = {}
    for name, double, single, bare in _ATTRIBUTE.findall(source):
        value = double or single or bare
        found.setdefault(name.lower(), html.unescape(value) if "&" in value else value)
    return found
