"""MyST and Sphinx syntax pasted into a lesson, which the builder does not read: a role
({func}`jax.jit`), a target (`(label)=`), a directive fence (```{note}) and a colon fence
(:::{note} ... :::) are each an error naming the lesson file and line and saying what to
write instead, never literal text on the page (docs/authoring.md, Placing recorded things
in prose).

Code spans and ordinary fenced code keep them as typed: a role is found only in text the
inline parser left as text, and a fence only by its info string; `\\{func}` escapes a role.
Each refusal is also collected in the parse's env (`FOUND`), so that `coursebuilder import`
notes what the site refuses by the same rules (builder/render/syntax.py's `foreign_syntax`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import MappingProxyType

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.myst_blocks.index import target

from .callouts import ALIASES, KINDS
from .marks import PageEnv

ROLE_NAME = re.compile(r"\{([A-Za-z0-9_+:.-]+)\}")
ROLE = re.compile(ROLE_NAME.pattern + r"`([^`]*)`")  # in plain text: a role and its body
FOUND = "foreign"  # the parse env's key: the refusals, in the page's order
DIRECTIVE = re.compile(r"\{([^{}\s]*)\}\s*(.*)")
LABELLED = re.compile(r"(.*?)(?<!\s)\s*<[^<>]*>")  # a blank run is tried from its start only
CODE_ROLES = frozenset(
    [
        "func",
        "meth",
        "class",
        "mod",
        "attr",
        "obj",
        "data",
        "exc",
        "const",
        "any",
        "code",
        "literal",
        "samp",
        "file",
        "command",
        "program",
        "envvar",
        "option",
        "kbd",
    ]
)
LINK_ROLES = frozenset(["ref", "numref", "doc", "eq", "download"])
CALLOUT = 'a callout (!!! note "Title", its text indented by four spaces)'
CELL = "write a cell of example.py (# %% NAME), placed with {{ cell NAME }}"
FENCE = "write an ordinary fence (```python)"
FIGURE = "write ![alt text](file.png), with the file listed in the lesson's data:"
DIRECTIVES = MappingProxyType(
    {
        "admonition": 'write !!! note "Title", its text indented by four spaces',
        "dropdown": 'write ??? note "Title" (a folded callout), its text indented by four spaces',
        "code": FENCE,
        "code-block": FENCE,
        "sourcecode": FENCE,
        "code-cell": CELL,
        "python": CELL,
        "ipython": CELL,
        "jupyter-execute": CELL,
        "math": "write the TeX between two lines of $$ (display math)",
        "figure": FIGURE,
        "image": FIGURE,
        "toctree": "delete it: the site makes its own navigation",
        "contents": "delete it: the page lists its own contents",
        "literalinclude": "write {{ example }} or {{ cell NAME }}",
    }
)


def plugin(md: MarkdownIt) -> None:
    """Parse the foreign constructs that are not plain text already, and refuse them all."""
    md.use(colon_fence_plugin)
    alt = ["paragraph", "reference", "blockquote", "list", "footnote_def"]
    md.block.ruler.before("hr", "myst_target", target, {"alt": alt})
    md.core.ruler.after("inline", "foreign_syntax", _refuse)
    md.add_render_rule("foreign", _render)


@dataclass(frozen=True)
class Refusal:
    """A foreign construct at `line` (0-based, of the parsed text): what it is, and what to
    write instead."""

    line: int
    what: str
    instead: str

    @property
    def message(self) -> str:
        return f"{self.what}, which this builder does not read: {self.instead}"


def _refuse(state: StateCore) -> None:
    """Collect each refusal (and tell the page, when there is one), and render its token as
    the broken mark that says it."""
    page: PageEnv | None = state.env.get("page")
    found: list[Refusal] = state.env.setdefault(FOUND, [])
    for token, refusal in _refusals(state.tokens):
        found.append(refusal)
        if page is not None:
            page.line = refusal.line
            page.error(refusal.message)
        token.type, token.content, token.children = "foreign", refusal.message, None


def _refusals(tokens: list[Token]) -> Iterator[tuple[Token, Refusal]]:
    for token in tokens:
        if token.type == "inline":
            yield from _roles(token)
            continue
        line = token.map[0] if token.map else 0
        if token.type == "myst_target":
            what = f"({token.content})= is a MyST target"
            yield token, Refusal(line, what, "delete it: a heading is its own anchor (#its-id)")
        elif token.type == "colon_fence" or (
            token.type == "fence" and DIRECTIVE.fullmatch(token.info.strip())
        ):
            name, arg = _directive(token)
            what = f"{token.markup}{token.info.strip()} is a MyST directive"
            yield token, Refusal(line, _short(what), _instead(name, arg))


def _directive(token: Token) -> tuple[str, str]:
    """A fence's directive and its argument: `{name} argument` (MyST), `{.callout-name}`
    (Quarto) or, after `:::`, a bare `name`; ("", "") if its info string is none of these."""
    info = token.info.strip()
    found = DIRECTIVE.fullmatch(info)
    if found is None:
        name, _, arg = info.partition(" ")
        return name.lower(), arg.strip()
    return found[1].lower().lstrip(".").removeprefix("callout-"), found[2]


def _instead(name: str, arg: str) -> str:
    kind = name if name in KINDS else ALIASES.get(name, "")
    if kind:
        return f'write !!! {kind} "{arg or KINDS[kind].label}", its text indented by four spaces'
    return DIRECTIVES.get(name, f"write it as prose, or as {CALLOUT}")


def _roles(inline: Token) -> Iterator[tuple[Token, Refusal]]:
    """Each `{name}` text right before a code span: a role, its `{name}` cut from the text.
    The text left as the parser made it (an escaped `\\{` is a token of its own until
    text_join), so a code span's content is never searched."""
    children, breaks = inline.children or [], 0
    for index, child in enumerate(children):
        breaks += child.type in ("softbreak", "hardbreak")
        if child.type != "code_inline" or index == 0 or children[index - 1].type != "text":
            continue
        text = children[index - 1]
        start = text.content.rfind("{")
        role = ROLE_NAME.fullmatch(text.content, start) if start >= 0 else None
        if role is None:
            continue
        text.content = text.content[:start]
        name, body = role[1], child.content
        line = (inline.map[0] if inline.map else 0) + breaks
        what = f"{{{name}}}`{_short(body)}` is a Sphinx role"
        yield child, Refusal(line, what, _role_instead(name.lower(), body))


def role_shown(body: str) -> str:
    """What a role shows of its body: `the guide` of `the guide <label>`, `jit` of
    `~jax.jit`, else the body."""
    if labelled := LABELLED.fullmatch(body):
        return labelled[1]
    return body.lstrip("~").rsplit(".", 1)[-1] if body.startswith("~") else body


def _role_instead(name: str, body: str) -> str:
    labelled = LABELLED.fullmatch(body)
    shown = role_shown(body)
    if name == "term":
        return (
            f"write [[{shown}|{body[len(shown) :].strip(' <>')}]]"
            if labelled
            else f"write [[{body}]]"
        )
    if name.split(":")[-1] in CODE_ROLES | {"function"}:
        return f"write `{shown}` (a code span), or a link to its documentation: [`{shown}`](https://...)"
    if name in LINK_ROLES:
        return f"write a link: [{shown}](#heading-id), or [{shown}](lesson:SLUG#heading-id)"
    if name.startswith("glue"):
        return "write {{ value ... }}: a number the run produced, read from the recording"
    if name == "math":
        return "write the TeX between dollars: $TeX$ (math)"
    return f"write {shown!r} as plain text, a code span or a link"


def _render(self: object, tokens: list[Token], idx: int, options: object, env: object) -> str:
    block = tokens[idx].block
    mark = Markup('<mark class="broken">%s</mark>') % tokens[idx].content
    return str(Markup("<p>%s</p>\n") % mark if block else mark)


def _short(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 60 else line[:57] + "..."
