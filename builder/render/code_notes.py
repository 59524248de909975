"""Code notes: a line of a cell that ends with `# <N>` (1-99) gets the Nth item of the ordered
list after that cell's `{{ cell NAME }}`, as mkdocs-material's code annotations and Quarto's
code-annotation do (docs/authoring.md, Cells).

The page shows the line without the comment and with a badge linking to the note
(`#cell-NAME.note-N`), and each note links back to its line, in HTML and CSS alone (it reads
without JavaScript and on paper). example.py keeps its comments (the download, the notebook,
the content hash). A marker is a comment token, so `"# <1>"` in a string is text. A marker
without a note, a note without a marker, a number given twice, one outside 1-99 and a marker
in a cell the page does not show are errors naming example.py's or lesson.md's line.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

from ..cells import Cell
from ..core.errors import RenderError
from .marks import Marked, PageEnv
from .markup import macro

MARKER = re.compile(r"#\s*<(\d+)>\s*")  # a whole comment: `# <3>`
LOOKS = re.compile(r"#\s*<\d+>")  # a line that may hold one (tokenize only those cells)
MOST = 99


def read(code: str) -> Marked:
    """`code` without its markers: each comment that is exactly `# <N>` is removed with the
    spaces before it. Only comment tokens count, never text in a string."""
    if not LOOKS.search(code):
        return Marked(code)
    lines = io.StringIO(code).readlines()  # the lines tokenize counts: "\n" ends one
    marks: list[tuple[int, int]] = []
    problems: list[tuple[int, str]] = []
    seen: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            match = MARKER.fullmatch(token.string) if token.type == tokenize.COMMENT else None
            if match is None:
                continue
            at, column = token.start[0] - 1, token.start[1]
            number, line = match[1], lines[at]
            lines[at] = line[:column].rstrip() + line[len(line.rstrip("\r\n")) :]
            if not (re.fullmatch("[1-9][0-9]?", number) and int(number) <= MOST):
                written = number if len(number) < 12 else number[:8] + "..."
                problems.append((at, f"note marker `# <{written}>`: number notes 1 to {MOST}"))
            elif int(number) in seen:
                problems.append((at, f"note marker `# <{number}>` is used twice in this cell"))
            else:
                seen.add(int(number))
                marks.append((at, int(number)))
    except (tokenize.TokenError, SyntaxError) as error:  # IndentationError is a SyntaxError
        return Marked(code, unreadable=str(error))
    return Marked("".join(lines), tuple(marks), tuple(problems))


def marked(page: PageEnv, cell: Cell) -> Marked:
    """The cell's shown code without its markers, read once a page."""
    if cell.name not in page.notes.marked:
        page.notes.marked[cell.name] = read(cell.shown)
    return page.notes.marked[cell.name]


def badges(page: PageEnv, cell: Cell, html: str, kept: slice) -> str:
    """The highlighted lines `kept` of the cell (`html`: one line of code a line of HTML, as
    Pygments closes its spans at each line's end), each marked line ending in its badge; the
    placement is remembered for the notes list that follows it."""
    found = marked(page, cell)
    shown = {at: n for at, n in found.marks if kept.start <= at < kept.stop}
    page.notes.last = (
        cell.name,
        page.line,
        {n: cell.shown_first + at for at, n in shown.items()},
    )
    if not shown:
        return html
    rows = html.split("\n")
    for at, number in shown.items():
        if not 0 <= at - kept.start < len(rows) - 1:  # a line that ends in "\v" or U+2028
            continue
        anchor = f"cell-{cell.name}.mark-{number}"
        given = anchor not in page.notes.badges
        page.notes.badges.add(anchor)
        note = _note_id(cell.name, number)
        badge = macro("code_note_badge", page.id(anchor) if given else "", page.id(note), number)
        rows[at - kept.start] = Markup(rows[at - kept.start]) + badge
    return Markup("\n").join(Markup(row) for row in rows)


def _note_id(cell: str, number: int) -> str:
    return f"cell-{cell}.note-{number}"


# -- the notes list ----------------------------------------------------------------------


def plugin(md: MarkdownIt) -> None:
    """The ordered list right after a `{{ cell NAME }}` line may be that cell's notes: it
    is, when the cell's lines shown there have markers (otherwise it is an ordinary list)."""
    md.core.ruler.after("block", "code_notes", _mark_lists)
    for name, rule in (
        ("ordered_list_open", _list_open),
        ("ordered_list_close", _list_close),
        ("list_item_open", _item_open),
    ):
        md.add_render_rule(name, rule)


def _mark_lists(state: StateCore) -> None:
    tokens = state.tokens
    for index, token in enumerate(tokens[:-1]):
        after = tokens[index + 1]
        if not (token.type == "recorded_block" and token.info == "cell" and token.map):
            continue
        if after.type != "ordered_list_open" or after.level != token.level:
            continue
        after.meta["notes_after"] = token.map[0]
        for item in tokens[index + 2 :]:
            if item.type == "list_item_open" and item.level == after.level + 1:
                item.meta["notes_after"] = token.map[0]
            if item.type == "ordered_list_close" and item.level == after.level:
                item.meta["notes_after"] = token.map[0]
                break


def _page(env: Any) -> PageEnv:
    page: PageEnv = env["page"]
    return page


def _list_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    last = page.notes.last
    if "notes_after" not in token.meta or not last or last[1] != token.meta["notes_after"]:
        return str(self.renderToken(tokens, idx, options, env))
    name, _, lines = last
    if not lines:
        return str(self.renderToken(tokens, idx, options, env))
    page.notes.listing = (name, lines)
    page.notes.last = None
    return str(macro("code_notes_open", f"Notes on cell {name}"))


def _list_close(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page = _page(env)
    if "notes_after" in tokens[idx].meta and page.notes.listing:
        page.notes.listing = None
        return "</ol>\n"
    return str(self.renderToken(tokens, idx, options, env))


def _item_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    page, token = _page(env), tokens[idx]
    if "notes_after" not in token.meta or not page.notes.listing:
        return str(self.renderToken(tokens, idx, options, env))
    name, lines = page.notes.listing
    number = int(token.info) if token.info.isdigit() else 0
    page.line = token.map[0] if token.map else page.line
    noted = page.notes.noted.setdefault(name, set())
    if number not in lines:
        marks = ", ".join(f"# <{n}>" for n in sorted(lines))
        page.error(
            f"note {token.info}: cell {name!r} has no marker `# <{token.info}>` on the lines "
            f"shown above (its markers there: {marks})"
        )
        return "<li>"
    if number in noted:
        page.error(f"note {number} of cell {name!r} is given twice")
        return "<li>"
    noted.add(number)
    where = f"line {lines[number]}"
    back = page.href(f"#cell-{name}.mark-{number}")
    page.findable(str(number))
    return str(macro("code_note_open", page.id(_note_id(name, number)), number, back, where))


# -- the page's end ----------------------------------------------------------------------


def check(page: PageEnv) -> None:
    """Every marker of the example has a note on the page, in a cell the page shows."""
    lesson = page.lesson
    if not lesson.cells:
        found = read(lesson.source.decode("utf-8-sig", "replace"))
        for at in sorted({at for at, _ in found.marks} | {at for at, _ in found.problems}):
            _example_error(
                page,
                at + 1,
                "a note marker `# <N>` works in a cell: mark the example's cells with "
                "`# %% name` and place them with {{ cell NAME }}",
            )
        return
    for cell in lesson.cells:
        found = marked(page, cell)
        if found.unreadable:
            _example_error(
                page,
                cell.shown_first,
                f"cell {cell.name!r} does not tokenize ({found.unreadable}), so its `# <N>` "
                "note markers cannot be read",
            )
        for at, problem in found.problems:
            _example_error(page, cell.shown_first + at, f"cell {cell.name!r}: {problem}")
        for at, number in found.marks:
            _unexplained(page, cell, cell.shown_first + at, number)


def _unexplained(page: PageEnv, cell: Cell, line: int, number: int) -> None:
    marker = f"note marker `# <{number}>`"
    if cell.hide:
        _example_error(
            page, line, f"cell {cell.name!r} is `hide`: its {marker} would be shown nowhere"
        )
    elif number not in page.notes.noted.get(cell.name, ()):
        _example_error(
            page,
            line,
            f"cell {cell.name!r}: {marker} has no note: write `{number}. ...` in the numbered "
            f"list right after {{{{ cell {cell.name} }}}} in lesson.md",
        )


def _example_error(page: PageEnv, line: int, message: str) -> None:
    page.errors.append(RenderError(message, path=page.lesson.example_path, line=line))
