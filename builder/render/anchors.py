"""Links that cannot dangle: the `#anchor` of a `lesson:slug#anchor` or an in-page `(#x)`
link names an id its page has, `[](lesson:slug)` reads the lesson's title, and
`[](api:jax.jit)` is a link to the documentation address course.yml's `api_links` give
for its first name (`jax`), reading `jax.jit` in code font.

The ids a page has are its h2 and h3 headings' (links.heading_id, made unique as
markdown-it's anchors make them) and those it gives its figures: `panel-N` for each
recorded panel, `cell-NAME` for each cell it places, `run-it-yourself`. Another lesson's
are found from its body alone (`page_ids`: the block parse, and the inline parse of its
headings only), never by rendering it; a page is made from the ids of exactly the lessons
its anchored links lead to (`linked_ids`), so that renaming a heading re-renders the pages
that link to it, and a prose edit elsewhere none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.anchors.index import unique_slug

from ..course.model import Course, Lesson
from ..course.rules import MAX_PANELS
from ..course.status import LessonStatus
from .links import heading_id

RUN_IT = "run-it-yourself"
LINKED = "linked_ids"  # the markdown-it env's key: {lesson id: its page's ids}
# Where a lesson: link names an anchor; a spelling this misses is refused (`_lesson_link`).
_ANCHORED = re.compile(r"lesson:([^\s()<>\[\]#\"'`\\:]+)#")  # no ":": one scan a "lesson:"
_CELL_LINE = re.compile(r"\{\{\s*cell\s+(\S+)")
_API_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SHOWN = 12  # existing anchors an error lists


def linked_keys(body: str) -> tuple[str, ...]:
    """The lesson keys (ids or slugs) the body's anchored `lesson:` links name, found by
    their spelling: cheap for every lesson of every build."""
    return tuple(dict.fromkeys(_ANCHORED.findall(body))) if "lesson:" in body else ()


def page_ids(md: MarkdownIt, lesson: Lesson) -> tuple[str, ...]:
    """The ids `lesson`'s page gives its headings and placed cells, from its body: the
    block parse, and the inline parse of each h2 and h3 alone, as prose renders them."""
    env: dict[str, Any] = {}
    tokens: list[Token] = []
    md.block.parse(lesson.body.replace("\r\n", "\n").replace("\0", "\ufffd"), md, env, tokens)
    slugs: set[str] = set()
    headings: list[str] = []
    for at, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            children: list[Token] = []
            content = tokens[at + 1].content
            if len(content) <= 64 * 1024:  # syntax.MAX_PARAGRAPH: a longer one is refused
                md.inline.parse(content, md, env, children)
            title = "".join(c.content for c in children if c.type in _TITLE_PARTS)
            headings.append(unique_slug(heading_id(title), slugs))
    return tuple(h for h in headings if h) + _placed_cells(tokens, lesson)


def _placed_cells(tokens: list[Token], lesson: Lesson) -> tuple[str, ...]:
    """The ids of the cells the page places, in order, each once (where first placed)."""
    cells = {cell.name for cell in lesson.cells if not cell.hide}
    placed = (
        f"cell-{m[1]}"
        for t in tokens
        if t.type == "recorded_block" and t.info == "cell"
        if (m := _CELL_LINE.match(f"{{{{ cell {t.content}"))
        if m[1] in cells
    )
    return tuple(dict.fromkeys(placed))


_TITLE_PARTS = ("text", "text_special", "code_inline")  # what markdown-it's anchors read


def figure_ids(panels: int | None) -> tuple[str, ...]:
    """The ids of a page's figures beside its cells: each recorded panel's (None: its
    recording is about to be made, and may have as many as a lesson may emit), and the
    "Run it yourself" section's."""
    count = MAX_PANELS if panels is None else panels
    return (*(f"panel-{n}" for n in range(1, count + 1)), RUN_IT)


def linked_ids(
    course: Course,
    statuses: Sequence[LessonStatus],
    ids: Callable[[Lesson], tuple[str, ...]],
    pending: Collection[str] = (),
    lessons: Iterable[Lesson] | None = None,
) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    """For each lesson in course order (of `lessons`, when given), the ids of the other
    lessons its anchored links lead to, by lesson id (`ids`: page_ids, cached by the
    build): what its page checks those anchors against, and so one of what its page is
    made from. The lessons in `pending` (by id) are about to be recorded: their panels are
    not known yet."""
    status = {s.lesson_id: s for s in statuses}
    made: dict[str, tuple[str, ...]] = {}
    column: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
    for lesson in course.lessons if lessons is None else lessons:
        found: dict[str, tuple[str, ...]] = {}
        for key in linked_keys(lesson.body):
            other = course.lesson(key)
            if other is None or other.id == lesson.id or other.id in found:
                continue
            if other.id not in made:
                count = None if other.id in pending else _panels(status.get(other.id))
                made[other.id] = ids(other) + figure_ids(count)
            found[other.id] = made[other.id]
        column.append(tuple(sorted(found.items())))
    return column


def _panels(status: LessonStatus | None) -> int:
    """How many panels a lesson's recording has (0: none recorded)."""
    recording = status.recording if status is not None else None
    return len(recording.panels) if recording is not None else 0


def install(md: MarkdownIt) -> None:
    """Check and complete the page's links once its headings have their ids."""
    md.core.ruler.push("checked_links", _checked_links)


def _checked_links(state: StateCore) -> None:
    page = state.env["page"]
    own = None
    for token in state.tokens:
        children, at = token.children or [], 0
        while at < len(children):  # _check may put a link's text after it
            if children[at].type == "link_open":
                own = own or _own_ids(state.tokens, page)
                page.line = children[at].meta.get("line", 0)
                _check(children, at, page, own, state.env.get(LINKED, {}))
            at += 1


def _own_ids(tokens: list[Token], page: Any) -> tuple[str, ...]:
    """The ids this page has, as `page_ids` and `figure_ids` find another's."""
    headings = [str(t.attrs["id"]) for t in tokens if t.type == "heading_open" if t.attrs.get("id")]
    recording = page.recording
    figures = figure_ids(None if page.pending else len(recording.panels) if recording else 0)
    return (*headings, *_placed_cells(tokens, page.lesson), *figures)


def _check(
    children: list[Token],
    at: int,
    page: Any,
    own: tuple[str, ...],
    linked: Mapping[str, tuple[str, ...]],
) -> None:
    token = children[at]
    href = str(token.attrs.get("href", ""))
    text, kind = "", "text"  # what an empty link reads
    token.meta["checked"] = href.startswith(("lesson:", "api:"))  # prose: made, not typed
    token.meta["typed"] = href if token.meta["checked"] else ""  # what the notebook finds
    if href.startswith("lesson:"):
        token.attrs["href"], text = _lesson_link(href, page, own, linked)
    elif href.startswith("api:"):
        token.attrs["href"], text = _api_link(href.removeprefix("api:"), page)
        kind = "code_inline"
    elif href.startswith("#") and len(href) > 1:
        _anchor(href[1:], own, "this page", href, page)
    if not (at + 1 < len(children) and children[at + 1].type == "link_close"):
        return
    if text:
        filler = Token(kind, "code" if kind == "code_inline" else "", 0, content=text)
        filler.meta["filled"] = True
        children.insert(at + 1, filler)
    elif not href.startswith(("lesson:", "api:")):  # those have said what is wrong
        page.error(f"link {href!r} has no text: write what it reads, [text]({href})")


def _lesson_link(
    href: str, page: Any, own: tuple[str, ...], linked: Mapping[str, tuple[str, ...]]
) -> tuple[str, str]:
    """The relative address of the lesson `href` leads to and its title, having checked
    its anchor, if any; ("#", "") with an error when no lesson has that key."""
    key, _, anchor = href.removeprefix("lesson:").partition("#")
    target = page.links.lesson(key)
    if target is None:
        page.error(f"link to lesson {key!r}: no lesson has that slug or id")
        return "#", ""
    if anchor:
        ids = own if target.id == page.lesson.id else linked.get(target.id)
        if ids is None:
            page.error(
                f"link {href!r}: write it as lesson:{key}#{anchor}, plainly, so that the "
                "build can check that anchor"
            )
        else:
            _anchor(anchor, ids, f"lesson {key!r}", href, page)
    address = f"{page.root}{target.url}index.html" + (f"#{anchor}" if anchor else "")
    return address, str(target.title)


def _anchor(anchor: str, ids: Sequence[str], where: str, href: str, page: Any) -> None:
    name = unquote(anchor)  # markdown-it percent-encodes what is not ASCII
    if name in ids:
        return
    more = len(ids) - _SHOWN
    listed = ", ".join(ids[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
    page.error(f"link {href!r}: {where} has no anchor {name!r} (its anchors: {listed})")


def _api_link(name: str, page: Any) -> tuple[str, str]:
    """The address course.yml's api_links give `name` ("jax.jit": jax's pattern), and the
    text a link to it reads; ("#", "") with an error when there is none."""
    patterns: Mapping[str, str] = page.links.api
    prefix = name.partition(".")[0]
    defined = ", ".join(sorted(patterns)) or "none"
    if not _API_NAME.fullmatch(name):
        page.error(f"api link {name!r}: write a dotted name, such as api:jax.numpy.sum")
    elif prefix not in patterns:
        page.error(
            f"api link {name!r}: course.yml's api_links has no {prefix!r} (it defines: {defined})"
        )
    else:
        return patterns[prefix].replace("{name}", name), name
    return "#", ""
