"""Content tabs: `=== "Title"` and its body indented by four spaces (pymdownx.tabbed's syntax,
as mkdocs-material writes it); consecutive tabs are one group, `===! "Title"` starts a new
one (docs/authoring.md, Placing recorded things in prose).

The HTML holds every panel in turn under its title, so the page reads whole without
JavaScript and on paper; static/tabs.js makes each group an ARIA tabs widget. Ids are
numbered by group on the page (`tabs-2-1`), so groups that share titles never share an id.
A tab without a body, an unquoted or unclosed title and a title said twice in one group are
errors naming the lesson file and line; titles are escaped text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from markupsafe import Markup

from ..course.rules import control_problem
from .marks import PageEnv

# a tab's first line, its indent removed; the title ends at its last character but a blank
# (greedy: a lazy `.*?` before `[ \t]*$` retried a run of blanks at every step, issue 56)
_HEAD = re.compile(r"===(!?)[ \t]+(\S(?:.*[^ \t])?)[ \t]*$")
GROUPS = "tab_groups"  # in the parse's env: groups numbered so far on the page


@dataclass(frozen=True)
class _Tab:
    title: str
    line: int  # the `===` line
    body: tuple[int, int]  # its body's lines, [start, end)
    problem: str  # "" when it is well formed


def plugin(md: MarkdownIt) -> None:
    """Content tabs, parsed before a paragraph could take their lines."""
    md.block.ruler.before(
        "fence", "tabbed", _tabbed, {"alt": ["paragraph", "reference", "blockquote", "list"]}
    )
    md.add_render_rule("tabs_open", _render_tabs_open)
    md.add_render_rule("tab_open", _render_tab_open)
    md.add_render_rule("tab_close", lambda *_: "</div>\n")
    md.add_render_rule("tabs_close", lambda *_: "</div>\n")


def _head(state: StateBlock, line: int, end: int) -> tuple[bool, str, str] | None:
    """The `===` line's (new group, title, problem); None when `line` opens no tab."""
    if line >= end or state.sCount[line] - state.blkIndent >= 4:
        return None
    text = state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
    match = _HEAD.match(text)
    if not match:
        return None
    said = match[2]
    if len(said) < 2 or not said.startswith('"') or not said.endswith('"'):
        unclosed = said.startswith('"')
        why = "is not closed by a quote" if unclosed else "is not in double quotes"
        title = unescapeAll(said[1:] if unclosed else said)
        return bool(match[1]), title, f'tab title {said} {why}: write === "{title}"'
    title = unescapeAll(said[1:-1])  # `\"` is a quote in it, as in a link's title
    problem = "" if title.strip() else 'a tab needs a title: === "Title"'
    if control := control_problem(title):
        problem = f"tab title {control}"
    return bool(match[1]), title, problem


def _body_end(state: StateBlock, start: int, end: int, indent: int) -> int:
    """Where the body that starts at `start` ends: before the first line indented less than
    `indent` that is not blank (or at `end`, where its container ends), its trailing blank
    lines left out."""
    line = last = start
    while line < end:
        if not state.isEmpty(line):
            if state.sCount[line] < indent:
                break
            last = line + 1
        line += 1
    return last


def _group(state: StateBlock, start: int, last: int) -> list[_Tab]:
    """The tabs of the group that starts at `start`, up to `last` (its container's end)."""
    tabs: list[_Tab] = []
    titles: set[str] = set()
    indent = state.sCount[start] + 4
    line = start
    while (head := _head(state, line, last)) is not None and not (tabs and head[0]):
        _, title, problem = head
        end = _body_end(state, line + 1, last, indent)
        if not problem and end == line + 1:
            problem = f"tab {title!r} has no body: indent its text by four spaces under it"
        if not problem and title in titles:
            problem = f"tab {title!r} is said twice in one group of tabs: give each its own title"
        tabs.append(_Tab(title, line, (line + 1, end), problem))
        titles.add(title)
        line = state.skipEmptyLines(end)
    return tabs


def _tabbed(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    if _head(state, start, end) is None:
        return False
    if silent:
        return True
    tabs = _group(state, start, end)
    group = state.env[GROUPS] = state.env.get(GROUPS, 0) + 1
    opened = state.push("tabs_open", "div", 1)
    opened.block, opened.map = True, [start, tabs[-1].body[1]]
    opened.meta = {"group": group, "problems": [(t.line, t.problem) for t in tabs if t.problem]}
    kept = state.parentType, state.lineMax, state.blkIndent
    for number, tab in enumerate(tabs, 1):
        token = state.push("tab_open", "div", 1)
        token.block, token.info, token.map = True, tab.title, [tab.line, tab.body[1]]
        token.meta = {"group": group, "number": number}
        state.parentType, state.lineMax = "tabbed", tab.body[1]
        state.blkIndent = state.sCount[start] + 4
        state.md.block.tokenize(state, tab.body[0], tab.body[1])
        state.parentType, state.lineMax, state.blkIndent = kept
        state.push("tab_close", "div", -1).block = True
    state.push("tabs_close", "div", -1).block = True
    state.line = tabs[-1].body[1]
    return True


def _render_tabs_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page: PageEnv = env["page"]
    opened = Markup('<div class="tabs" data-tabs="%s">\n') % tokens[idx].meta["group"]
    for line, problem in tokens[idx].meta["problems"]:
        page.line = line
        page.error(problem)
        opened += page.broken(problem) + Markup("\n")
    return str(opened)


def _render_tab_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    page: PageEnv = env["page"]
    panel = page.id(f"tabs-{token.meta['group']}-{token.meta['number']}")
    page.keep(token.info)
    return str(
        Markup('<div class="tab-panel" id="%s"><p class="tab-title" id="%s-title">%s</p>\n')
        % (panel, panel, token.info)
    )
