"""HTML comments in a lesson's Markdown are comments: `<!-- ... -->`, on lines of their own
(a block, over any number of lines) or inside a paragraph, shows nothing on the page, in
search or in print (docs/authoring.md). Other raw HTML is still not passed through: it is
shown escaped, as typed. Inside code spans and code blocks a comment is code."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline

OPEN, CLOSE = "<!--", "-->"


def plugin(md: MarkdownIt) -> None:
    md.block.ruler.before(
        "paragraph", "html_comment", _block, {"alt": ["paragraph", "reference", "blockquote"]}
    )
    md.inline.ruler.before("text", "html_comment", _inline)


def _block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A comment that starts a line (indented less than a code block) up to the line its
    `-->` closes, when nothing follows that: no token, so nothing rendered."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start] + state.tShift[start]
    if not state.src.startswith(OPEN, begin):
        return False
    close = state.src.find(CLOSE, begin + len(OPEN))
    if close < 0:
        return False
    after = close + len(CLOSE)
    line = start
    while line < end and state.eMarks[line] < after:
        line += 1
    if line >= end or state.src[after : state.eMarks[line]].strip():
        return False  # text after it on its line: a paragraph, whose inline rule drops it
    if not silent:
        state.line = line + 1
    return True


def _inline(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith(OPEN, state.pos):
        return False
    close = state.src.find(CLOSE, state.pos + len(OPEN))
    if close < 0 or close + len(CLOSE) > state.posMax:
        return False
    state.pos = close + len(CLOSE)
    return True
