"""Lesson Markdown -> HTML, with the recorded things placed where the prose says.

markdown-it-py (syntax.py: CommonMark, tables, footnotes, callouts.py, `$` math as MathML:
mathml.py, foreign syntax refused: foreign.py; raw HTML off), heading anchors, plus four
marks of our own:

- `{{ example }}`, `{{ output }}`, `{{ panel N }}`, `{{ panels }}` alone in a paragraph, and
  `{{ reveal }}` ... `{{ reveal end }}` around what a reader opens (a lab's solution);
- `{{ value ... }}` inline: a number the run produced, read from the recording;
- `[[term]]` / `[[text|term]]`: a glossary hover card;
- `[text](lesson:slug#anchor)`, `[](api:jax.jit)`: checked links (builder/render/anchors.py).

The recorded marks are resolved by marks.py. As it renders, each rule that gives a reader
text to read keeps it (`PageEnv.read`): the page's reading time counts it (reading.py).
Everything recorded is escaped; a reference to nothing is a RenderError naming the lesson
file and the line. A page fetches nothing from outside the site: an image is a relative path
in it; a link leaves it only by http(s) or mailto.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup
from mdit_py_plugins.anchors import anchors_plugin

from ..core.errors import RenderError
from ..course.model import Course, Lesson
from ..course.recording import Recording
from . import anchors, code_notes, reading, syntax
from .cells import cell_block, unplaced_cells
from .deadline import Overtime, deadline
from .figures import Sizer, chart_size, scrollable, table_scroll_open
from .highlight import Highlighter, code_block
from .links import Links, heading_id
from .marks import BLOCKS, EXAMPLE_FILE, NOTEBOOK_FILE, PageEnv, Placed, parse_args
from .markup import code_spans, macro
from .relocate import Move
from .syntax import MAX_PARAGRAPH as MAX_PARAGRAPH  # tests build a paragraph just over it
from .values import value

_BLOCKS = MappingProxyType({**BLOCKS, "cell": cell_block})
BLOCK_DIRECTIVES = ("example", "output", "panel", "panels", "reveal", "cell")
HEADINGS = ("h2", "h3")  # anchored, linked and listed in the page's contents
SAFE_SCHEMES = ("http:", "https:", "mailto:")
SECONDS = 20.0  # to render one lesson's prose; a real lesson takes well under a second
_BLOCK_LINE = re.compile(r"^\{\{\s*(example|output|panel|panels|reveal|cell)\b(.*?)\}\}\s*$")


@dataclass(frozen=True)
class RenderedProse:
    html: str
    toc: list[tuple[int, str, str]]
    placed_panels: list[int]
    terms: list[str]
    placed: tuple[Placed, ...] = ()  # the recorded things it shows, in order (marks.Placed)
    reveals: bool = False  # it has a {{ reveal }}: a lab, whose example is the answer
    words: int = 0  # the words of its text a reader reads (builder/render/reading.py)
    solution: str = ""  # moved (relocate.Move): what its reveals hold, for an appendix
    scripts: tuple[str, ...] = ()  # the static/ scripts its page needs besides every page's
    tokens: tuple[Token, ...] = ()  # what it was rendered from: the notebook is cut from them


def render_prose(
    lesson: Lesson,
    course: Course | Links,
    recording: Recording | None,
    root: str,
    highlight: Highlighter = code_block,
    size: Sizer = chart_size,
    linked: tuple[tuple[str, tuple[str, ...]], ...] = (),
    pending: bool = False,
    moved: Move | None = None,
) -> tuple[RenderedProse, list[RenderError]]:
    """The lesson's prose as HTML; `course`: what its links and glossary cards lead to;
    `highlight` turns code into HTML (a cached highlight.code_block, when the build has a
    store); `linked`: the ids of the lessons its anchored links lead to (anchors.linked_ids);
    `pending`: its recording (None) is about to be made (PageEnv.pending); `moved`: it is
    rendered into another page (relocate.Move), its reveals apart (`solution`).
    Within SECONDS, as a page's template (builder/render/deadline.py): past them, a
    RenderError naming lesson.md (every rule is meant to be linear; one that is not stops)."""
    try:
        with deadline(SECONDS):
            parts = (lesson, course, recording, root, highlight, size, linked, pending, moved)
            return _render_prose(*parts)
    except Overtime:
        raise RenderError(
            f"rendering its prose ran over {SECONDS:g} s",
            path=lesson.lesson_path,
            hint="split the lesson, and report the text that is this slow (a bug)",
        ) from None


def _render_prose(
    lesson: Lesson,
    course: Course | Links,
    recording: Recording | None,
    root: str,
    highlight: Highlighter,
    size: Sizer,
    linked: tuple[tuple[str, tuple[str, ...]], ...],
    pending: bool,
    moved: Move | None,
) -> tuple[RenderedProse, list[RenderError]]:
    links = course if isinstance(course, Links) else Links.of(course)
    env = PageEnv(lesson, links, recording, root, highlight, size, pending, moved=moved)
    md = parser()
    tokens = md.parse(lesson.body, {"page": env, anchors.LINKED: dict(linked)})
    env.reveals = any(t.type == "recorded_block" and t.info == "reveal" for t in tokens)
    _collect_toc(tokens, env)
    context = {"page": env, "docId": moved.held[moved.page]} if moved else {"page": env}
    body: list[str] = []
    solution: list[str] = []  # what its reveals hold, apart when moved
    for part in _parts(tokens) if moved else [tokens]:
        rendered = md.renderer.render(part, md.options, context)
        (solution if moved and env.revealing else body).append(rendered)
    if env.revealing and not moved:  # a {{ reveal }} runs to the end of the prose
        body.append("</details>\n")
    unplaced_cells(env)
    placed, words = tuple(env.placed), reading.words(env.read)
    made = RenderedProse(
        "".join(body),
        env.toc,
        env.placed_panels,
        env.terms,
        placed,
        env.reveals,
        words,
        "".join(solution),
        _scripts(tokens, env),
        tuple(tokens),
    )
    return made, env.ordered_errors()


def _scripts(tokens: list[Token], page: PageEnv) -> tuple[str, ...]:
    """The scripts of static/ that the prose's widgets need: a page without one loads none."""
    tabbed = any(token.type == "tabs_open" for token in tokens)
    return (*(("cards.js",) if page.terms else ()), *(("tabs.js",) if tabbed else ()))


def _parts(tokens: list[Token]) -> list[list[Token]]:
    """`tokens` cut before and after each `{{ reveal }}` mark outside a container: each
    part is rendered on its own, so that what a reveal holds can be put apart."""
    parts: list[list[Token]] = [[]]
    for token in tokens:
        if token.type == "recorded_block" and token.info == "reveal" and token.level == 0:
            parts += [[token], []]
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


@cache
def parser() -> MarkdownIt:
    md = syntax.markdown()
    md.use(anchors_plugin, min_level=2, max_level=3, slug_func=heading_id)
    md.use(code_notes.plugin)  # the ordered list after a {{ cell }}: its notes
    md.block.ruler.before("paragraph", "recorded_block", _block_rule)
    md.core.ruler.push("source_lines", _source_lines)
    anchors.install(md)  # after the headings' ids and the lines
    md.inline.ruler.before("link", "glossary_term", _term_rule)
    md.inline.ruler.before("emphasis", "recorded_value", _value_rule)
    for name, rule in (
        ("recorded_block", _render_block),
        ("recorded_value", _render_value),
        ("glossary_term", _render_term),
        ("link_open", _render_link_open),
        ("image", _render_image),
        ("fence", _render_fence),
        ("table_open", _render_table_open),
        ("table_close", _render_table_close),
        ("heading_open", _render_heading_open),
        ("heading_close", _render_heading_close),
    ):
        md.add_render_rule(name, _as_str(rule))
    md.add_render_rule("text", _render_text)  # a str already: the most frequent token
    md.add_render_rule("code_inline", _render_code_inline)
    return md


RenderRule = Callable[[Any, list[Token], int, Any, Any], str]


def _as_str(rule: RenderRule) -> RenderRule:
    """`rule`, handing markdown-it a plain str: its renderer appends each rule's HTML to a
    str, and a Markup appended there would escape all the HTML before it (`__radd__`)."""

    def plain(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return str(rule(self, tokens, idx, options, env))

    return plain


# -- parsing rules -----------------------------------------------------------------------


def _block_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    begin = state.bMarks[start] + state.tShift[start]
    line = state.src[begin : state.eMarks[start]]
    match = _BLOCK_LINE.match(line)
    if not match or state.sCount[start] - state.blkIndent >= 4:
        return False
    if not silent:
        token = state.push("recorded_block", "", 0)
        token.info, token.content, token.map = match[1], match[2], [start, start + 1]
        token.block = True
    state.line = start + 1
    return True


def _value_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("{{", state.pos):
        return False
    end = _find(state, "}}", state.pos + 2)
    if end < 0:
        return False
    if not silent:
        token = state.push("recorded_value", "", 0)
        token.content = state.src[state.pos + 2 : end].strip()
    state.pos = end + 2
    return True


def _term_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    start = state.pos + 2
    end = _find(state, "]]", start)
    if (
        end < 0
        or start <= _find(state, "[", start) < end
        or start <= _find(state, "\n", start) < end
    ):
        return False
    inner = state.src[start:end]
    if not inner.strip():
        return False
    if not silent:
        text, _, key = inner.partition("|")
        token = state.push("glossary_term", "", 0)
        token.content, token.info = text.strip(), (key or text).strip()
    state.pos = end + 2
    return True


def _find(state: StateInline, needle: str, start: int) -> int:
    """Where `needle` next occurs at or after `start` within what this rule may read (-1:
    nowhere), remembered per inline block: a line of n unclosed `{{` or `[[` asked
    `str.find` to scan to its end n times, quadratic in the line. The answer for any
    later start up to the occurrence found is that same occurrence, so a run of marks asks
    the string once, and parsing stays linear in the lesson's size."""
    memo: dict[str, tuple[int, int]] = state.__dict__.setdefault("recorded_find", {})
    since, found = memo.get(needle, (-1, -1))
    if not (0 <= since <= start and (found < 0 or start <= found)):
        found = state.src.find(needle, start)
        memo[needle] = (start, found)
    return found if found + len(needle) <= state.posMax else -1


def _source_lines(state: Any) -> None:
    """Give inline tokens their block's line, so an error can say where it is."""
    for token in state.tokens:
        for child in token.children or ():
            child.meta["line"] = token.map[0] if token.map else 0


def _collect_toc(tokens: list[Token], env: PageEnv) -> None:
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in HEADINGS:
            text = plain_text(tokens[index + 1])
            env.toc.append((int(token.tag[1]), str(token.attrs.get("id", "")), text))


def plain_text(inline: Token) -> str:
    """A heading as a reader sees it, without its Markdown: "What `jax.jit` does" reads
    "What jax.jit does" (in the contents and the heading's link)."""
    return "".join(
        child.content
        for child in inline.children or ()
        if child.type in ("text", "code_inline", "glossary_term")
    ).strip()


# -- rendering rules ---------------------------------------------------------------------

_MARKUP = re.compile(r"[`*_]")


def _render_text(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    """Text, kept as read for the page's reading time (as is inline code): the prose, a
    link's, a heading's, a table cell's, a callout's. An image's alt text and the text of
    code blocks, recorded output and formulas are rendered by their own rules."""
    text: str = tokens[idx].content
    env["page"].read.append(text)
    return escapeHtml(text)


def _render_code_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    env["page"].read.append(tokens[idx].content)
    rendered: str = self.code_inline(tokens, idx, options, env)
    return rendered


def _render_table_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    heads = []
    for token in tokens[idx + 1 :]:
        if token.type == "thead_close":
            break
        if token.type == "inline" and token.content.strip():
            heads.append(_MARKUP.sub("", token.content.strip()))
    label = _page(env).region("Table: " + ", ".join(heads) if heads else "Table")
    opened: str = self.renderToken(tokens, idx, options, env)
    return table_scroll_open(label) + Markup(opened)


def _render_table_close(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    closed: str = self.renderToken(tokens, idx, options, env)
    return Markup("%s</div>\n") % Markup(closed.rstrip("\n"))


def _render_heading_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    anchored = token.tag in HEADINGS and token.attrs.get("id")
    if page.moved:  # its id the page's, its level under the page's headings
        if anchored:
            token.attrs["id"] = page.id(str(token.attrs["id"]))
        token.tag = tokens[idx + 2].tag = page.moved.heading(token.tag)
        token.meta["anchored"] = anchored
    opened: str = self.renderToken(tokens, idx, options, env)
    if anchored:
        page.section = (plain_text(tokens[idx + 1]), str(token.attrs["id"]))
        return Markup('<div class="heading">') + Markup(opened)
    return opened


def _render_heading_close(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    """An anchored heading is followed by its link (`#`), outside the heading so that the
    heading reads as its text alone; the link is named for screen readers."""
    closed: str = self.renderToken(tokens, idx, options, env)
    opening = tokens[idx - 2]  # heading_open, inline, heading_close
    anchor = str(opening.attrs.get("id", ""))
    if not opening.meta.get("anchored", opening.tag in HEADINGS) or not anchor:
        return closed
    label = f"Link to this section: {plain_text(tokens[idx - 1])}"
    return Markup(
        '%s<a class="anchor" href="#%s" aria-label="%s" title="Link to this section" '
        "data-pagefind-ignore>#</a></div>\n"
    ) % (Markup(closed.rstrip("\n")), anchor, label)


def _page(env: Any) -> PageEnv:
    page: PageEnv = env["page"]
    return page


def _render_block(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    page.line = token.map[0] if token.map else 0
    args = parse_args(token.content, page)
    if args is None:
        return ""
    return _BLOCKS[token.info](page, args)


def _render_fence(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    info = unescapeAll(token.info).strip() if token.info else ""
    name = info.split()[0] if info else ""
    block = _page(env).highlight(token.content, name)
    return scrollable(block, _page(env).region(f"Code, {name}" if name else "Code")) + "\n"


def _render_value(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, text = _page(env), tokens[idx].content
    page.line = tokens[idx].meta.get("line", 0)
    parts = parse_args(text, page)
    if parts is None:
        return ""
    name = parts.pop("", ["value"])[0]
    if name != "value":
        hint = " must stand alone in its paragraph" if name in BLOCK_DIRECTIVES else " is unknown"
        return page.fail(f"{{{{ {text} }}}}: {name!r}{hint}")
    return value(page, parts, text)


def _render_term(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    page.line = token.meta.get("line", 0)
    term = page.links.term(token.info)
    if term is None:
        return page.fail(f"[[{token.info}]] is not a glossary term (see content/glossary.yml)")
    teacher = page.links.lesson(term.taught_in)
    assert teacher is not None  # checked when the course was loaded
    page.terms.append(term.id)
    page.read.append(token.content)  # its card is not read as prose: it opens on the term
    return macro(
        "term_card",
        token.content,
        page.href(f"{page.root}glossary/index.html#{term.id}"),
        page.id(f"card-{term.id}-{len(page.terms)}"),
        term.term,
        code_spans(term.definition),
        "" if teacher.id == page.lesson.id else page.href(f"{page.root}{teacher.url}index.html"),
        teacher.title,
    )


def _render_link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    page.line = token.meta.get("line", 0)
    href = str(token.attrs.get("href", ""))  # lesson: and api: made relative or https: (anchors)
    if _scheme(href) and not href.lower().startswith(SAFE_SCHEMES):
        page.error(f"link {href!r}: only http, https, mailto and relative links are allowed")
        href = "#"
    elif not _scheme(href) and (problem := _outside(href, page.root)):
        page.error(f"link {href!r}: {problem}: use a relative path, lesson:slug or https://")
        href = "#"
    elif not (_scheme(href) or token.meta.get("checked")) and (problem := _dangling(href, page)):
        page.error(f"link {href!r}: {problem}")
        href = "#"
    token.attrs["href"] = page.href(href, authored=not token.meta.get("checked"))
    rendered: str = self.renderToken(tokens, idx, options, env)
    return rendered


def _render_image(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    """An image is a file of the site, named by a relative path: a page fetches nothing
    from outside the site (no http:, //host, /path or data: source)."""
    page, token = _page(env), tokens[idx]
    page.line = token.meta.get("line", 0)
    src = str(token.attrs.get("src", ""))
    problem = "it is not a file of the site" if _scheme(src) else _outside(src, page.root)
    if problem:
        return page.fail(
            f"image {src!r}: {problem}, and a page fetches nothing from outside the site: "
            "list the image in the lesson's data: files and name it by its file name"
        )
    token.attrs["src"] = page.href(src, authored=True)
    rendered: str = self.image(tokens, idx, options, env)
    return rendered


# Where a relative link may lead: the lesson's own files beside its page, another lesson's
# page (l/SLUG/), or a page of the site's own that is no source file of another tool.
_PAGE_SOURCES = (".md", ".ipynb", ".rst", ".myst")


def _dangling(url: str, page: PageEnv) -> str:
    """Why the relative `url` (not `#x`, nor made from lesson: or api:) leads to nothing of
    the course; "" when it is one of the lesson's files, or a lesson's page."""
    path = unquote(re.split(r"[?#]", url, maxsplit=1)[0])
    if not path:
        return ""
    if "/" not in path:
        files = (EXAMPLE_FILE, NOTEBOOK_FILE, *page.lesson.meta.data)
        if path in files:
            return ""
        return (
            f"neither a lesson nor a file of this lesson ({', '.join(files)}): write "
            "[text](lesson:SLUG) or [text](lesson:SLUG#anchor) for a lesson, list a file in "
            "the lesson's data:, or write a full https:// address"
        )
    resolved = ["l", page.lesson.slug]  # where a lesson's page is, as its links are written
    for part in (p for p in path.split("/") if p not in (".", "")):
        resolved = resolved[:-1] if part == ".." else [*resolved, part]
    if resolved[:1] == ["l"] and len(resolved) > 1 and page.links.lesson(resolved[1]) is None:
        return f"no lesson has the slug {resolved[1]!r}: write [text](lesson:SLUG)"
    if path.lower().endswith(_PAGE_SOURCES):
        return "a source page of another site, not a page of this course: write [text](lesson:SLUG)"
    return ""


def _scheme(url: str) -> bool:
    """`url` starts with a scheme (`https:`, `data:`, ...): a colon before any / ? #."""
    return ":" in re.split(r"[/?#]", url, maxsplit=1)[0]


def _outside(url: str, root: str) -> str:
    """Why the relative `url`, on a page `root` (`../../`) below the site's root, leads
    outside the site; "" if it stays inside. Browsers read `%2e%2e` as `..`."""
    if url.startswith(("/", "\\")):
        where = "another host" if url[1:2] in ("/", "\\") else "the root of the disk or host"
        return f"it leads to {where}"
    depth = root.count("../")
    for part in re.split(r"[/\\]", re.split(r"[?#]", url, maxsplit=1)[0]):
        step = unquote(part)
        depth += -1 if step == ".." else 0 if step in ("", ".") else 1
        if depth < 0:
            return "it climbs out of the site's folder"
    return ""
