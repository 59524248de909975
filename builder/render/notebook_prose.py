"""A lesson's prose as the notebook's Markdown cells, between its code cells
(builder/render/notebook.py): the reader's notebook is the lesson, not a listing.

The prose is cut from the tokens the page's own parse made of it (prose.py: one parse makes
both), and cut at each `{{ cell NAME }}`
(or, in an example without cells, at its first `{{ example }}` or `{{ output }}`): what
lies between two placements is one Markdown cell, the lesson's own lines, with the builder's
marks made plain Markdown from the tokens the parser made of them: a `{{ value ... }}` its
recorded text, `[[term]]` its text, a `lesson:` or `api:` link the address the page links
to, a callout a quote under its title in bold, a tab its title in bold over its body. The
other recorded blocks (a panel, an output slice, `{{ reveal }}`) are said in a line or
left out: the code cells carry their outputs. Code cells come in example.py's order, so a
notebook run top to bottom runs what the example runs: a cell the prose never places comes
where the file has it, before the next one it places.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from markdown_it.token import Token

from ..core.escape import encoded_address
from ..course.addresses import page_url
from ..course.model import Lesson
from ..course.recording import Recording
from .highlight import code_block
from .links import Links
from .marks import PageEnv, parse_args
from .values import shown_value

# What each placement's words show of a cell, as the tags MyST-NB and Jupyter Book read.
PLACED_TAGS = {"output": "remove-input", "code": "remove-output"}
FOLD_TAGS = {"code": "hide-input", "output": "hide-output", "cell": "hide-cell"}
_INDENT = re.compile(r"^ {1,4}")


@dataclass(frozen=True)
class Piece:
    """One cell of the notebook: Markdown (`text`), a cell of the example by `name` with
    the tags its placement gives it, or (`name` "") the whole of an example without cells."""

    kind: str  # "markdown" or "code"
    text: str = ""
    name: str = ""
    tags: tuple[str, ...] = ()


@dataclass
class _Cut:
    """The pieces so far, and where the prose not yet cut starts."""

    lesson: Lesson
    edited: str  # the body with its marks made plain Markdown (same lines)
    pieces: list[Piece] = field(default_factory=list)
    at: int = 0  # a line of the body
    emitted: set[str] = field(default_factory=set)  # the cells placed so far

    def markdown(self, end: int, lines: list[str]) -> None:
        text = "\n".join(lines[self.at : end]).strip("\n")
        self.at = max(self.at, end)
        if text.strip():
            self.said(text)

    def said(self, text: str) -> None:
        """Markdown after the last piece: one cell with it when that is Markdown too."""
        if self.pieces and self.pieces[-1].kind == "markdown":
            text = f"{self.pieces.pop().text}\n\n{text}"
        self.pieces.append(Piece("markdown", text))

    def cell(self, name: str, tags: tuple[str, ...]) -> None:
        """Cell `name`, after each cell before it in the file not yet in the notebook."""
        if name in self.emitted:
            return
        for cell in self.lesson.cells:
            if cell.name in self.emitted:
                continue
            self.emitted.add(cell.name)
            placed = tags if cell.name == name else ()
            self.pieces.append(Piece("code", name=cell.name, tags=placed))
            if cell.name == name:
                return


@dataclass(frozen=True)
class Prose:
    """What a notebook's Markdown cells are made from: the lesson, the tokens its page's
    parse made of its prose (prose.RenderedProse), what its links and terms lead to, its
    recording (None: not recorded yet) and course.yml's site_url ("": none)."""

    lesson: Lesson
    tokens: tuple[Token, ...]
    links: Links
    recording: Recording | None
    site_url: str = ""

    def pieces(self, escape: Callable[[str], str]) -> list[Piece]:
        parts = (self.lesson, self.tokens, self.links, self.recording, self.site_url)
        return prose_pieces(*parts, escape)


def prose_pieces(
    lesson: Lesson,
    tokens: tuple[Token, ...],
    links: Links,
    recording: Recording | None,
    site_url: str,
    escape: Callable[[str], str],
) -> list[Piece]:
    """The notebook's cells of `lesson`: Markdown and code in the prose's order; `escape`
    makes a recorded text literal Markdown; `site_url`: course.yml's, which makes links to
    other lessons absolute (relative, as on the site, without it)."""
    env = PageEnv(lesson, links, recording, "../../", code_block)
    body = lesson.body.replace("\r\n", "\n")
    cut = _Cut(lesson, _plain(body, tokens, env, site_url, escape))
    lines = _containers(cut.edited.split("\n"), tokens)
    whole = not lesson.cells  # an example without cells: one code cell, placed once
    for token in tokens:
        if token.type != "recorded_block" or token.level or not token.map:
            continue
        cut.markdown(token.map[0], lines)
        cut.at = token.map[1]
        if token.info == "cell":
            name, tags = _placement(token.content, env)
            if name in {c.name for c in lesson.cells}:
                cut.cell(name, tags)
        elif whole and token.info in ("example", "output"):
            whole = False
            cut.pieces.append(Piece("code"))
        elif token.info in ("panel", "panels") and recording and recording.panels:
            cut.said("*The chart is on the lesson's page.*")
    cut.markdown(len(lines), lines)
    for cell in lesson.cells:
        cut.cell(cell.name, ())
    if whole:
        cut.pieces.append(Piece("code"))
    return cut.pieces


def _placement(content: str, env: PageEnv) -> tuple[str, tuple[str, ...]]:
    """The cell a `{{ cell ... }}` names, and the tags its words give it."""
    args = parse_args(content, env) or {}
    words = args.get("", [""])
    shown = [PLACED_TAGS[w] for w in words[1:] if w in PLACED_TAGS]
    fold = args.get("fold", [""])[0]
    return words[0], (*shown, *([FOLD_TAGS[fold]] if fold in FOLD_TAGS else []))


# -- the marks, made plain ---------------------------------------------------------------------


def _plain(
    body: str, tokens: tuple[Token, ...], env: PageEnv, site_url: str, escape: Callable[[str], str]
) -> str:
    """`body` with each inline mark made plain Markdown, found in order from where its
    block starts (a code span's text is passed over, not changed)."""
    starts = [0]
    for line in body.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    edits: list[tuple[int, int, str]] = []
    for token in tokens:
        if token.type == "inline" and token.map and token.children:
            at = starts[token.map[0]]
            for child in _marks(token.children):
                at = _edit(body, at, child, env, site_url, escape, edits)
    made: list[str] = []
    last = 0
    for start, end, text in sorted(edits):
        if start >= last and "\n" not in body[start:end]:
            made += [body[last:start], text]
            last = end
    return "".join([*made, body[last:]])


def _marks(children: list[Token]) -> list[tuple[Token, Token | None]]:
    """Each child that is a mark or a code span, with the child after it."""
    wanted = ("code_inline", "recorded_value", "glossary_term", "link_open")
    return [
        (c, children[n + 1] if n + 1 < len(children) else None)
        for n, c in enumerate(children)
        if c.type in wanted
    ]


def _edit(
    body: str,
    at: int,
    child: tuple[Token, Token | None],
    env: PageEnv,
    site_url: str,
    escape: Callable[[str], str],
    edits: list[tuple[int, int, str]],
) -> int:
    """Where the next mark is looked for, once `child`'s edit (if any) is noted."""
    token, after = child
    if token.type == "code_inline":
        spanned = body.find(token.content, at)
        return spanned + len(token.content) if spanned >= 0 else at
    if token.type == "recorded_value":
        words = r"\s+".join(map(re.escape, token.content.split()))
        pattern, text = r"\{\{\s*" + words + r"\s*\}\}", _value(token.content, env, escape)
    elif token.type == "glossary_term":
        pattern, text = r"\[\[[^\]\n]*\]\]", escape(token.content)
    else:
        typed = str(token.meta.get("typed", ""))
        if not typed:
            return at
        href = _address(str(token.attrs.get("href", "")), env, site_url)
        shown = _filled(after)
        pattern = r"\[\]\(" if shown else r"\("
        pattern, text = pattern + re.escape(typed), (f"[{shown}](" if shown else "(") + href
    found = re.compile(pattern).search(body, at)
    if found is None:
        return at
    edits.append((found.start(), found.end(), text))
    return found.end()


def _value(content: str, env: PageEnv, escape: Callable[[str], str]) -> str:
    """A `{{ value ... }}` as its recorded text ("[not recorded]" before a recording)."""
    args = parse_args(content, env)
    if env.recording is None or args is None:
        return "\\[not recorded\\]"
    shown = shown_value(env, args, content)
    return escape(shown) if shown is not None else ""


def _filled(after: Token | None) -> str:
    """The text anchors.py put in an empty `lesson:` or `api:` link (a title, a name)."""
    if after is None or not after.meta.get("filled"):
        return ""
    return f"`{after.content}`" if after.type == "code_inline" else after.content


def _address(href: str, env: PageEnv, site_url: str) -> str:
    """A link the page makes relative (`../../l/SLUG/index.html#x`) as the notebook's:
    absolute under course.yml's site_url, else as on the site (beside the page); encoded
    for a Markdown link (a site_url or api: address holding `)![x](...)` made an image)."""
    if not site_url or not href.startswith("../../"):
        return encoded_address(href)
    path, hashed, anchor = href.removeprefix("../../").partition("#")
    return encoded_address(page_url(site_url, path) + hashed + anchor)


# -- callouts and tabs --------------------------------------------------------------------------


def _containers(lines: list[str], tokens: tuple[Token, ...]) -> list[str]:
    """`lines` with each callout a quote under its title in bold, and each tab its title in
    bold over its body (no indent: Markdown has neither)."""
    lines = list(lines)
    for n, token in enumerate(tokens):
        if not token.map or token.type not in ("admonition_open", "tab_open"):
            continue
        first, end = token.map
        quote = "> " if token.type == "admonition_open" else ""
        title = token.info if token.type == "tab_open" else _title(tokens, n)
        lines[first] = f"{quote}**{title}**" + ("\n>" if quote else "")
        end = min(end, len(lines))
        while end > first + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines after it are the prose's
        for k in range(first + 1, end):
            lines[k] = quote + _INDENT.sub("", lines[k]) if lines[k].strip() else quote.strip()
    return lines


def _title(tokens: tuple[Token, ...], n: int) -> str:
    """A callout's title, or its type's name when it has none."""
    if n + 2 < len(tokens) and tokens[n + 1].type == "admonition_title_open":
        return tokens[n + 2].content
    classes = str(tokens[n].attrGet("class") or "").split()[1:2]
    return (classes[0] if classes else "note").capitalize()
