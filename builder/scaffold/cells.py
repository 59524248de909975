"""A notebook's cells as a lesson: prose for lesson.md and named cells for example.py, in the
cell format (docs/authoring.md, "Importing a notebook"), with a Note for everything that
could not be carried over. Pure: the cells come in as Jupytext read them
(builder/scaffold/importer.py), text comes out; nothing here reads or writes a file.

A code cell is copied verbatim, with two exceptions that keep example.py Python: an IPython
magic or shell line is commented out (and noted), and a line that would start a cell
(`# %%`) is rewritten. A cell that is `%timeit STMT` or `%%timeit` becomes a `timeit` cell
of STMT; a `%timeit` line among other code splits the cell there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ..render.foreign import Refusal
from ..render.syntax import foreign_syntax
from . import myst, rewrite
from .rewrite import Context

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")
EXCEPTION = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# How MyST-NB shows a cell's code and its output, by tag: folded, or removed.
FOLD_TAGS = MappingProxyType({"hide-input": "code", "hide-output": "output", "hide-cell": "cell"})
REMOVE_TAGS = MappingProxyType(
    {"remove-input": "code", "remove-output": "output", "remove-cell": "cell"}
)
SHOW_TAGS = frozenset({"skip-execution"})  # shown, never run
RAISES_TAG = "raises-exception"

MAGIC = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*=\s*)?([%!])")
TIMEIT_OPTIONS = re.compile(r"(?:\s*-(?:[nrp]\s*\S+|[a-z]+)(?=\s|$))*")  # -n 10 -r3 -q ...
MARKER = re.compile(r"^# %%")


@dataclass(frozen=True)
class Note:
    """Something not carried over: in cell `cell` (-1: the page), its line `line` (0-based,
    of the cell's source), whose text is `text` (to find it in the page)."""

    cell: int
    line: int
    text: str
    what: str
    todo: str


@dataclass
class Part:
    """One cell of example.py: a code cell, or a piece of one that `%timeit` split."""

    code: str
    options: list[str]
    placement: str = ""  # what follows NAME in {{ cell NAME ... }}; "-": hidden, never placed
    wanted: str = ""  # a name the notebook gave it
    name: str = ""


@dataclass(frozen=True)
class Converted:
    title: str
    summary: str
    body: str  # lesson.md after the front matter
    example: str  # example.py
    parts: tuple[Part, ...]
    notes: tuple[Note, ...]


@dataclass
class _Page:
    notes: list[Note] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    pieces: list[str | Part] = field(default_factory=list)  # lesson.md, in order
    title: str = ""
    summary: str = ""

    def note(self, cell: int, line: int, text: str, what: str, todo: str) -> None:
        self.notes.append(Note(cell, line, text, what, todo))


def convert(
    cells: list[Mapping[str, Any]], page: str, stem: str, context: Context | None = None
) -> Converted:
    """The lesson made of `cells` (nbformat cells), read from the file named `page`, its
    MyST rewritten to lead to what `context` says the course has."""
    state = _Page()
    prose = [_text(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown"]
    context = replace(context or Context(), labels=rewrite.labels(prose, _anchors()))
    for index, cell in enumerate(cells):
        source = _text(cell.get("source", ""))
        kind = cell.get("cell_type")
        if kind == "markdown":
            _markdown(state, index, source, context)
        elif kind == "code":
            _code(state, index, cell, source)
        elif source.strip():
            what = f"a {kind} cell, left out"
            state.note(index, 0, source.split("\n")[0], what, "copy what it holds by hand")
    if not state.title:
        state.title = stem
        state.note(-1, 0, "", "no heading: the title is the file's name", "write title:")
    if not state.summary:
        state.summary = f"Imported from {page}."
        state.note(-1, 0, "", "no paragraph to summarise", "write summary:")
    _name(state.parts)
    body = "\n\n".join(x.strip("\n") if isinstance(x, str) else _placement(x) for x in state.pieces)
    example = f"# Imported from {page} by `coursebuilder import`.\n" + "".join(
        f"\n# %% {' '.join([p.name, *p.options])}\n{p.code}\n" for p in state.parts
    )
    return Converted(
        state.title,
        state.summary,
        body.strip("\n") + "\n",
        example,
        tuple(state.parts),
        tuple(state.notes),
    )


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _placement(part: Part) -> str:
    return f"{{{{ cell {' '.join([part.name, *part.placement.split()])} }}}}"


def _anchors() -> Callable[[str], str]:
    """A heading's anchor, as the lesson's page will make it: the id of its text as
    markdown-it reads it (code spans' contents included), unique in the page's order."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.anchors.index import unique_slug

    from ..render.links import heading_id

    md, taken = MarkdownIt("commonmark"), set[str]()

    def anchor(text: str) -> str:
        children = md.parseInline(text)[0].children or []
        words = "".join(c.content for c in children if c.type in ("text", "code_inline"))
        return unique_slug(heading_id(words), taken)

    return anchor


# -- prose -------------------------------------------------------------------------------


def _markdown(state: _Page, index: int, source: str, context: Context) -> None:
    """A markdown cell: its text, rewritten where that is mechanical (rewrite.py), into
    lesson.md (the first heading becomes the title), and a note for each thing the
    builder's Markdown does not have: what a rewrite lost, the foreign syntax the site
    refuses, found by its own rules, and what else myst.line_notes finds."""
    source, lost = rewrite.rewrite(source, context)
    for number, text, what, todo in lost:
        state.note(index, number, text, what, todo)
    lines = source.split("\n")
    refused: dict[int, list[Refusal]] = {}
    for refusal in foreign_syntax(source):
        refused.setdefault(refusal.line, []).append(refusal)
    fence = ""  # the open code fence's marker
    math = False
    title = len(lines)  # the line that became the title, taken out
    for number, line in enumerate(lines):
        if not (fence or math or state.title) and (heading := myst.heading(line)) is not None:
            state.title = myst.plain(heading)[: myst.MAX_SUMMARY] or "Untitled"
            title = number
            continue
        for refusal in refused.get(number, ()):
            state.note(index, number, line, f"{refusal.what}, left as written", refusal.instead)
        if fence:
            closing = line.strip()
            fence = "" if closing.startswith(fence) and not closing.strip(fence[0]) else fence
            continue
        if math:
            math = "$$" not in line
            continue
        if opened := myst.FENCE.match(line):
            fence = opened.group(1)
            continue
        found, math = myst.line_notes(line)
        for what, todo in found:
            state.note(index, number, line, what, todo)
    if not state.summary:
        state.summary = myst.summary(lines)
    state.pieces.append("\n".join(lines[:title] + lines[title + 1 :]))


# -- code --------------------------------------------------------------------------------


def _code(state: _Page, index: int, cell: Mapping[str, Any], source: str) -> None:
    """A code cell: one Part (or several, split at `%timeit` lines) with the options its
    tags ask for, placed in lesson.md where the cell stood (unless hidden)."""
    metadata = cell.get("metadata") or {}
    tags = [str(t) for t in metadata.get("tags") or () if isinstance(t, str | int)]
    options: list[str] = []
    folded, removed = set(), set()
    for tag in tags:
        if tag in FOLD_TAGS:
            folded.add(FOLD_TAGS[tag])
        elif tag in REMOVE_TAGS:
            removed.add(REMOVE_TAGS[tag])
        elif tag in SHOW_TAGS:
            options.append("show")
        elif tag != RAISES_TAG:
            what = f"cell tag {tag!r}, which has no equivalent, dropped"
            state.note(index, 0, _first(source), what, "place or write the cell by hand")
    placement = _shown(folded, removed)
    if placement == "-":
        options.insert(0, "hide")
    options = sorted(set(options), key=options.index)
    if "hide" in options and "show" in options:
        options.remove("show")
        what = "a cell both hidden and never run, kept hidden (run)"
        state.note(index, 0, _first(source), what, "delete the cell if it must not run")
    raises = _raises(tags, cell)
    parts = list(_split(state, index, source))
    if not parts:
        return
    if raises:
        last = parts[-1]
        if "timeit" in last.options or "show" in options:
            what = "raises-exception on a cell that is timed or never run, dropped"
            state.note(index, 0, _first(source), what, "split the cell by hand")
        else:
            last.options.append(raises)
    wanted = str(metadata.get("name") or "")
    for number, part in enumerate(parts):
        if "show" in options and "timeit" in part.options:
            part.options.remove("timeit")
            what = "a %timeit in a cell that is never run, kept as code"
            state.note(index, 0, _first(source), what, "")
        part.options[:0] = options
        part.placement = placement
        part.wanted = wanted if number == 0 else ""
        state.parts.append(part)
        if placement != "-":
            state.pieces.append(part)


def _shown(folded: set[str], removed: set[str]) -> str:
    """The words of a cell's placement that show what MyST-NB shows of it: `output` (its
    code removed), `code` (its output removed), `fold=code|output|cell`; "-" when nothing
    is shown (a `hide` cell, which runs)."""
    if "cell" in removed or removed >= {"code", "output"}:
        return "-"
    for gone, kept in (("code", "output"), ("output", "code")):
        if gone in removed:
            return kept + f" fold={kept}" * bool(folded & {kept, "cell"})
    if "cell" in folded or folded >= {"code", "output"}:
        return "fold=cell"
    return " ".join(f"fold={x}" for x in sorted(folded))


def _first(source: str) -> str:
    return next((line for line in source.split("\n") if line.strip()), "")


def _raises(tags: list[str], cell: Mapping[str, Any]) -> str:
    """`raises=Name` when the notebook says the cell raises (its tag, or an error output
    whose ename is a dotted name), bare `raises` when only the tag says so; else ""."""
    errors = [
        str(out.get("ename", ""))
        for out in cell.get("outputs") or ()
        if isinstance(out, Mapping) and out.get("output_type") == "error"
    ]
    names = [name for name in errors if EXCEPTION.fullmatch(name)]
    if names:
        return f"raises={names[0]}"
    return "raises" if RAISES_TAG in tags or errors else ""


def _split(state: _Page, index: int, source: str) -> Iterator[Part]:
    """The cell's code as Parts: a `%%timeit` cell is one timed Part, a `%timeit STMT` line
    at the top level a timed Part of STMT between the code before and after it; other magic
    and shell lines are commented out and noted."""
    lines = source.rstrip().split("\n")
    if not source.strip():
        return
    if lines[0].startswith("%%"):
        magic, _, args = lines[0][2:].partition(" ")
        body = "\n".join(lines[1:]).strip("\n")
        if magic == "timeit" and body:
            _timeit_options(state, index, 0, lines[0], args)
            yield Part(body, ["timeit"])
            return
        what = f"cell magic %%{magic}: the whole cell is commented out"
        state.note(index, 0, lines[0], what, "rewrite it in Python, or delete it")
        yield Part("\n".join(f"# {line}" if line else "#" for line in lines), [])
        return
    magics = not _parses(source)
    chunk: list[str] = []
    for number, line in enumerate(lines):
        if MARKER.match(line):
            what = "a comment that would start a cell, rewritten as # (%%)"
            state.note(index, number, line, what, "")
            line = "# (%%)" + line[4:]
        elif magics and line.startswith("%timeit ") and line[8:].strip():
            if "\n".join(chunk).strip():
                yield Part("\n".join(chunk).strip("\n"), [])
            chunk = []
            yield Part(_timeit_options(state, index, number, line, line[8:]), ["timeit"])
            continue
        elif magics and (found := MAGIC.match(line)):
            shell = found.group(1) == "!"
            what = f"{'shell command' if shell else 'IPython magic'} {line.strip()}, commented out"
            todo = "put the package in requirements.lock" if shell else "do it in Python"
            state.note(index, number, line, what, todo + ", or delete it")
            indent = line[: len(line) - len(line.lstrip())]
            line = f"{indent}# {line.lstrip()}"
        chunk.append(line)
    if "\n".join(chunk).strip():
        code = "\n".join(chunk).strip("\n")
        if not _parses(code):
            what = "a code cell that does not parse as Python, copied as it is"
            state.note(index, 0, _first(code), what, "fix it: the lesson's example must run")
        yield Part(code, [])


def _timeit_options(state: _Page, index: int, number: int, line: str, args: str) -> str:
    """The statement of `%timeit [options] STMT` (or a `%%timeit` line's setup, which must be
    empty); options are noted as dropped: a timeit cell always autoranges, 7 runs."""
    dropped = TIMEIT_OPTIONS.match(args)
    statement = args[dropped.end() if dropped else 0 :].strip()
    if dropped and dropped.group(0).strip():
        what = f"%timeit options {dropped.group(0).strip()}, dropped"
        todo = "a timeit cell autoranges to 0.2 s, 7 runs, as IPython does by default"
        state.note(index, number, line, what, todo)
    if line.startswith("%%") and statement:
        what = f"%%timeit setup {statement!r}, dropped"
        state.note(index, 0, line, what, "put it in a cell before the timed one")
    return statement


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _name(parts: list[Part]) -> None:
    """Each Part's name: the one the notebook gave it when that is a valid, unused cell name,
    else `cell-N` (N counting the cells, a number already taken skipped)."""
    taken: set[str] = set()
    for part in parts:
        wanted = part.wanted.strip().lower()
        if NAME.fullmatch(wanted) and wanted not in taken:
            part.name = wanted
            taken.add(wanted)
    number = 0
    for part in parts:
        if part.name:
            continue
        number += 1
        while f"cell-{number}" in taken:
            number += 1
        part.name = f"cell-{number}"
        taken.add(part.name)
