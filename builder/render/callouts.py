"""Callouts: `!!! warning "Title"` (mdit-py-plugins' admonition syntax, as mkdocs-material
writes it) with its text indented by four spaces, rendered as a box with its type's colour
and icon; `??? warning "Title"` folds it into a `<details>` the reader opens, and `???+`
folds it open.

The types are the five that mkdocs-material, MyST and Quarto share: note, tip, important,
warning, danger. Another type is an error naming the lesson file and the line, the types
there are, and the one meant when it is another tool's name for one of them (`caution`:
warning). A callout always has a title: without one (`!!! tip`, `!!! tip ""`) it is the
type's name, and a title that does not start with that name is read out after it
("Warning: ..."), so the type never rests on colour or icon alone. The icons are inline
SVG drawn in the text's colour: nothing is fetched.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup
from mdit_py_plugins.admon import admon_plugin

from ..course.rules import control_problem
from .marks import PageEnv


@dataclass(frozen=True)
class Kind:
    label: str  # as a reader sees (or hears) it
    icon: str  # SVG shapes in a 24 x 24 box, stroked in the title's colour


KINDS = MappingProxyType(
    {
        "note": Kind("Note", '<circle cx="12" cy="12" r="9"/><path d="M12 11v6M12 7.5v.01"/>'),
        "tip": Kind(
            "Tip",
            '<path d="M9 18h6M10 21h4M12 3a6 6 0 0 0-3.5 10.9c.6.5 1 1.2 1 2.1h5c0-.9.4-1.6'
            ' 1-2.1A6 6 0 0 0 12 3z"/>',
        ),
        "important": Kind(
            "Important", '<path d="M5 4h14v12H10l-5 4z"/><path d="M12 7v4.5M12 13.5v.01"/>'
        ),
        "warning": Kind("Warning", '<path d="M12 3 2.5 20h19z"/><path d="M12 9.5v5M12 17.2v.01"/>'),
        "danger": Kind(
            "Danger",
            '<path d="M8.3 3h7.4L21 8.3v7.4L15.7 21H8.3L3 15.7V8.3z"/><path d="m9 9 6 6m0-6-6 6"/>',
        ),
    }
)
# Other tools' names for these types: said in the error, never accepted silently.
ALIASES = MappingProxyType(
    {
        "caution": "warning",
        "attention": "warning",
        "error": "danger",
        "failure": "danger",
        "bug": "danger",
        "hint": "tip",
        "success": "tip",
        "info": "note",
        "seealso": "note",
        "abstract": "note",
        "summary": "note",
        "example": "note",
        "question": "note",
        "quote": "note",
    }
)


def plugin(md: MarkdownIt) -> None:
    """The admonition syntax, rendered as typed callouts."""
    admon_plugin(md)
    md.add_render_rule("admonition_open", _open)
    md.add_render_rule("admonition_title_open", _title_open)
    md.add_render_rule("admonition_title_close", _title_close)
    md.add_render_rule("admonition_close", _close)


def _open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token, page = tokens[idx], env["page"]
    page.line = token.map[0] if token.map else 0
    kind, problem = _kind(token, page)
    folded = token.markup.startswith("?")
    opened = Markup('<details class="admonition %s"%s>\n') % (
        kind,
        Markup(" open") if token.markup == "???+" else "",
    )
    if not folded:
        opened = Markup('<div class="admonition %s" role="note">\n') % kind
    if tokens[idx + 1].type != "admonition_title_open":  # `!!! tip ""`: the type names it
        opened += _title(page, kind, folded, KINDS[kind].label) + KINDS[kind].label
        page.keep(KINDS[kind].label)
        opened += Markup("</summary>\n" if folded else "</p>\n")
    return str(opened + problem)


def _kind(token: Token, page: PageEnv) -> tuple[str, Markup]:
    """The callout's type, and the broken mark that says why it is not one (note: the
    type it falls back to, so that the page still renders)."""
    words = _words(token)
    if len(words) == 1 and words[0] in KINDS:
        return words[0], Markup()
    unknown = next((word for word in words if word not in KINDS), words[-1])
    known = ", ".join(KINDS)
    message = f"{token.markup} {' '.join(words)}: "
    if len(words) > 1 and unknown in KINDS:
        message += f"a callout has one type, one of {known}"
    else:
        meant = f" (for {unknown}, write {ALIASES[unknown]})" if unknown in ALIASES else ""
        message += f"{unknown!r} is not a callout type; the types are {known}{meant}"
    page.error(message)
    return "note", Markup('<mark class="broken">%s</mark>\n') % message


def _title(page: PageEnv, kind: str, folded: bool, title: str) -> Markup:
    """The opening of a callout's title, with its icon, and its type read out when the
    title does not say it (a word the page's reading time counts)."""
    icon = Markup(
        '<svg class="admonition-icon" viewBox="0 0 24 24" width="20" height="20"'
        ' aria-hidden="true">%s</svg>'
    ) % Markup(KINDS[kind].icon)
    label = KINDS[kind].label
    if not title.lower().startswith(label.lower()):
        icon += Markup('<span class="visually-hidden">%s: </span>') % label
        page.keep(label)
    tag = "summary" if folded else "p"
    return Markup('<%s class="admonition-title">%s') % (Markup(tag), icon)


def _title_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    opening = tokens[idx - 1]  # admonition_open, then its title
    kind = _rendered_kind(opening)
    title = tokens[idx + 1].content
    if problem := control_problem(title):
        env["page"].error(f"callout title {problem}")
    return str(_title(env["page"], kind, opening.markup.startswith("?"), title))


def _title_close(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    folded = tokens[idx - 3].markup.startswith("?")  # admonition_open, title_open, inline
    return "</summary>\n" if folded else "</p>\n"


def _close(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    return "</details>\n" if tokens[idx].markup.startswith("?") else "</div>\n"


def _rendered_kind(opening: Token) -> str:
    """The type `_open` rendered `opening` as (it said why, if it is not one)."""
    words = _words(opening)
    return words[0] if len(words) == 1 and words[0] in KINDS else "note"


def _words(opening: Token) -> list[str]:
    """The types `opening` names: the plugin's classes but its first and its own."""
    classes = str(opening.attrGet("class") or "").split()[1:]
    words = [word for word in classes if not word.startswith(("is-collapsible", "collapsible-"))]
    return words or [""]
