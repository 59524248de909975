"""The Markdown a lesson is written in, as markdown-it-py parses it: CommonMark without raw
HTML (an HTML comment is a comment: comments.py), tables, strikethrough, footnotes,
callouts (callouts.py), content tabs (tabs.py), `$` math (mathml.py), the MyST and Sphinx
constructs it refuses (foreign.py), and no paragraph over MAX_PARAGRAPH.

builder/render/prose.py adds the builder's own marks to `markdown()` for the site;
`foreign_syntax` parses a text with it alone, so that `coursebuilder import`
(builder/scaffold/cells.py) notes the foreign syntax that `site` would refuse, by the same rules.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from mdit_py_plugins.footnote import footnote_plugin

from . import callouts, comments, foreign, tabs
from .mathml import math_plugin

MAX_PARAGRAPH = 64 * 1024  # characters; see _bounded_paragraphs


def markdown() -> MarkdownIt:
    """A new parser of a lesson's Markdown, without the builder's marks."""
    md = MarkdownIt("commonmark", {"html": False})
    md.enable(["table", "strikethrough"])
    md.use(footnote_plugin).use(callouts.plugin).use(foreign.plugin).use(math_plugin)
    md.use(tabs.plugin).use(comments.plugin)
    md.core.ruler.before("inline", "bounded_paragraphs", _bounded_paragraphs)
    return md


@cache
def _plain() -> MarkdownIt:
    return markdown()


def foreign_syntax(text: str) -> list[foreign.Refusal]:
    """What `site` refuses in `text` as foreign syntax, in the text's order (lines 0-based)."""
    env: dict[str, Any] = {}
    _plain().parse(text, env)
    found: list[foreign.Refusal] = env.get(foreign.FOUND, [])
    return found


def _bounded_paragraphs(state: StateCore) -> None:
    """Refuse a paragraph (a heading, a table cell) over MAX_PARAGRAPH characters.

    markdown-it-py adds punctuation no rule takes to its pending text one character at a
    time, copying the text each time: quadratic in the length of a run (one long line of
    `}}`, say). Bounded runs keep a lesson's rendering linear in its size.
    """
    page = state.env.get("page")
    for token in state.tokens:
        if token.type == "inline" and len(token.content) > MAX_PARAGRAPH:
            if page is not None:
                page.line = token.map[0] if token.map else 0
                page.error(
                    f"a paragraph of {len(token.content) // 1024} KiB is over the "
                    f"{MAX_PARAGRAPH // 1024} KiB limit: break it up with blank lines"
                )
            token.content = ""
