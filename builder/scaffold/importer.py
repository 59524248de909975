"""`coursebuilder import PAGE --id ID`: a Jupyter notebook (.ipynb) or a MyST Markdown
notebook (.md, as the JAX docs are written) turned into a new lesson folder,
content/lessons/ID/ with lesson.md and example.py in the cell format
(docs/authoring.md, "Importing a notebook").

Jupytext reads the page (imported here only, so other commands do not pay for it);
builder/scaffold/cells.py makes the lesson of its cells. What could not be carried over is
listed on stderr as `PAGE:LINE: what — what to do`, the line being the page's own (found
again in its text: Jupytext keeps no positions). Everything is read and checked first;
then the folder is claimed (made, never reused: an existing one is refused) and both files
are renamed into it through fsutil.Staging with `refuse_links`, or none is and the folder
is removed again.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import BuildError, ContentError
from ..course.files import input_folder, read_text, shallow_json, yaml_without_aliases
from ..course.rules import EXAMPLE_FILE, LESSON_FILE, LESSON_ID_PATTERN, SLUG_PATTERN
from .cells import Converted, Note, convert
from .rewrite import Context

if TYPE_CHECKING:
    from ..course.model import Course

MAX_PAGE_BYTES = 32 * 1024 * 1024  # a notebook with its outputs; far beyond any tutorial
FORMATS = MappingProxyType(
    {".ipynb": "ipynb", ".md": "md", ".myst": "md:myst", ".mystnb": "md:myst"}
)


@dataclass(frozen=True)
class Imported:
    folder: Path
    converted: Converted
    notes: tuple[str, ...]  # PAGE:LINE: what — what to do


def import_page(
    page: Path,
    content: Path,
    lesson_id: str,
    *,
    slug: str | None = None,
    arc: str | None = None,
    order: int | None = None,
) -> Imported:
    """Read `page`, check everything, then write content/lessons/`lesson_id`/."""
    if not re.match(LESSON_ID_PATTERN, lesson_id) or len(lesson_id) > 64:
        raise BuildError(
            f"--id {lesson_id!r} is not a lesson id",
            hint="lowercase letters and digits in parts joined by single hyphens, starting "
            "with a letter, at most 64 characters (such as jit-01)",
        )
    lessons = input_folder(content / "lessons")
    folder = lessons / lesson_id
    if os.path.lexists(folder):
        raise BuildError(
            "already exists; import writes a new lesson folder and replaces nothing",
            path=folder,
            hint="choose another --id, or remove that folder first",
        )
    fmt = FORMATS.get(page.suffix.lower())
    if fmt is None:
        raise ContentError(
            "is neither a Jupyter notebook (.ipynb) nor a MyST Markdown page (.md)",
            path=page,
        )
    text = read_text(page, MAX_PAGE_BYTES, hint="split the notebook into several pages")
    cells = _cells(page, text, fmt)
    from ..course.load import load_course

    course = load_course(content)
    converted = convert(cells, page.name, page.stem, _context(course))
    if not converted.parts:
        raise ContentError("has no code cell; a lesson needs an example to run", path=page)
    front = _front_matter(course, content, page, lesson_id, slug, arc, order, converted)
    files = {LESSON_FILE: f"---\n{front}---\n\n{converted.body}", EXAMPLE_FILE: converted.example}
    _check_sizes(page, files)
    notes = _located(page, text, fmt, cells, converted.notes)
    _write(lessons, lesson_id, files)
    return Imported(folder, converted, notes)


def _cells(page: Path, text: str, fmt: str) -> list[Mapping[str, Any]]:
    """The page's cells as Jupytext reads them (a .md page in the MyST format when it says
    so in its header, or holds a {code-cell})."""
    import jupytext

    if fmt == "ipynb":
        shallow_json(text.encode("utf-8"), page)
    elif fmt == "md":
        guessed, _ = jupytext.guess_format(text, ".md")
        fmt = "md:myst" if guessed == "myst" or "{code-cell}" in text else "md"
    try:
        with yaml_without_aliases(page):  # Jupytext reads YAML: its header, cell options
            notebook = jupytext.reads(text, fmt=fmt)
    except BuildError:
        raise
    except Exception as error:  # a third party's parser of any text: its every failure
        raise ContentError(
            f"cannot be read as a notebook ({type(error).__name__}: {str(error)[:200]})",
            path=page,
            hint="open it in Jupyter or `jupytext --to ipynb` to see what is wrong",
        ) from None
    cells = notebook.get("cells") if isinstance(notebook, Mapping) else None
    return [cell for cell in cells or () if isinstance(cell, Mapping)]


def _context(course: Course) -> Context:
    """What the course has that the page's MyST may lead to: api_links' prefixes, the
    glossary's terms, its lessons by id, slug and alias (a page's file name, made a slug,
    finds the lesson imported from it)."""

    def lesson(key: str) -> str | None:
        found = course.lesson(key)
        return found.slug if found else None

    return Context(
        api=frozenset(course.meta.api_links),
        has_term=lambda term: course.term(term) is not None,
        lesson=lesson,
    )


def _front_matter(
    course: Course,
    content: Path,
    page: Path,
    lesson_id: str,
    slug: str | None,
    arc: str | None,
    order: int | None,
    converted: Converted,
) -> str:
    """The lesson's front matter, validated as the course loader validates it, with an arc
    of course.yml, a slug no lesson has, and by default the next order in the arc."""
    import yaml

    from ..course.model import FrontMatter
    from ..course.validation import problems, validate

    arcs = [a.id for a in course.meta.arcs]
    if arc not in arcs:
        said = "needs --arc" if arc is None else f"--arc {arc!r} is not an arc of course.yml"
        raise BuildError(f"{said}: one of {', '.join(arcs)}", path=content / "course.yml")
    taken = {name: x.id for x in course.lessons for name in (x.id, x.slug, *x.meta.aliases)}
    if lesson_id in taken:
        raise BuildError(f"--id {lesson_id!r} is the slug or an alias of lesson {taken[lesson_id]}")
    if slug is None:
        slug = re.sub(r"[^a-z0-9]+", "-", page.stem.lower()).strip("-")[:64].strip("-")
        slug = slug if re.match(SLUG_PATTERN, slug) and slug not in taken else lesson_id
    if slug in taken:
        raise BuildError(
            f"--slug {slug!r} is taken by lesson {taken[slug]}", hint="pass another --slug"
        )
    if order is None:
        order = 1 + max((x.meta.order for x in course.lessons if x.meta.arc == arc), default=0)
    fields = {
        "id": lesson_id,
        "slug": slug,
        "title": converted.title,
        "arc": arc,
        "order": order,
        "summary": converted.summary,
    }
    from pydantic import ValidationError

    try:
        validate(FrontMatter, fields)
    except ValidationError as error:
        found = "; ".join(f"{where}: {msg}" for where, msg in problems(error))
        raise BuildError(f"the imported front matter is not valid ({found})", path=page) from None
    dumped: str = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, width=10**6)
    return dumped


def _check_sizes(page: Path, files: dict[str, str]) -> None:
    from ..course.files import MAX_SOURCE_BYTES
    from ..course.rules import MAX_LESSON_BYTES

    for name, limit in ((LESSON_FILE, MAX_LESSON_BYTES), (EXAMPLE_FILE, MAX_SOURCE_BYTES)):
        size = len(files[name].encode("utf-8"))
        if size > limit:
            raise ContentError(
                f"would make a {name} of {size // 1024} KiB, over the course's "
                f"{limit // 1024} KiB limit",
                path=page,
                hint="split the page and import each part as its own lesson",
            )


def _located(
    page: Path, text: str, fmt: str, cells: list[Mapping[str, Any]], notes: tuple[Note, ...]
) -> tuple[str, ...]:
    """Each note as `PAGE:LINE: what — what to do`, in the page's order. Jupytext keeps no
    positions, so each line is found again in the page's text: each cell's first line from
    where the cell before it was found, then the note's line from there on; a line starts
    the page's line (a notebook's JSON holds each line of a cell escaped, in quotes)."""
    text = "\n" + text  # a line of the page is a newline and its text
    starts = [m.start() for m in re.finditer("\n", text)]
    forms: list[Callable[[str], str]] = [lambda s: "\n" + s, lambda s: s]
    if fmt == "ipynb":
        forms = [lambda s: '"' + _json(s, False), lambda s: '"' + _json(s, True), _json]

    def find(line: str, after: int) -> int:
        found = (text.find(form(line), after) for form in forms if line.strip())
        return next((at for at in found if at >= 0), -1)

    by_cell: dict[int, list[Note]] = {}
    for note in notes:
        by_cell.setdefault(note.cell, []).append(note)
    located = [(1, note) for note in by_cell.pop(-1, [])]
    cursor = 0
    for index, cell in enumerate(cells):
        source = str(cell.get("source", ""))
        first = next((line for line in source.split("\n") if line.strip()), "")
        cursor = at if (at := find(first, cursor)) >= 0 else cursor
        within = cursor
        for note in sorted(by_cell.get(index, ()), key=lambda n: n.line):
            within = at if (at := find(note.text, within)) >= 0 else within
            located.append((bisect.bisect_right(starts, within), note))
    return tuple(
        f"{page}:{line}: {n.what}" + (f" — {n.todo}" if n.todo else "")
        for line, n in sorted(located, key=lambda x: x[0])
    )


def _json(line: str, ascii_only: bool = False) -> str:
    return json.dumps(line, ensure_ascii=ascii_only)[1:-1]


def _write(lessons: Path, lesson_id: str, files: dict[str, str]) -> None:
    """Claim the folder (made here: an existing one, made since the check, is refused),
    then rename both files into it at once; on any failure the folder is removed again."""
    from ..core.fsutil import Staging, cannot_write

    folder = lessons / lesson_id
    try:
        os.mkdir(folder)
    except FileExistsError:
        raise BuildError("already exists", path=folder, hint="choose another --id") from None
    except OSError as error:
        raise cannot_write(error, "nothing was written") from None
    try:
        with Staging(lessons, durable=True, refuse_links=True) as staging:
            staging.add({f"{lesson_id}/{name}": data.encode() for name, data in files.items()})
            staging.commit()
    except BaseException as error:
        for name in files:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
        with contextlib.suppress(OSError):
            os.rmdir(folder)
        if isinstance(error, OSError):
            raise cannot_write(error, "nothing was written") from None
        raise


def run(args: Any, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The command: what was imported on stdout, what was not on stderr."""
    out, err = out or sys.stdout, err or sys.stderr
    done = import_page(
        args.page, args.content, args.id, slug=args.slug, arc=args.arc, order=args.order
    )
    for line in done.notes:
        print(line, file=err)
    parts = done.converted.parts
    hidden = sum("hide" in p.options for p in parts)
    timed = sum("timeit" in p.options for p in parts)
    raising = sum(any(o.startswith("raises") for o in p.options) for p in parts)
    print(
        f"Imported {args.page} into {done.folder}/: {LESSON_FILE} and {EXAMPLE_FILE}, "
        f"{len(parts)} cell(s) ({hidden} hidden, {timed} timed, {raising} raising); "
        f"{len(done.notes)} thing(s) not carried over" + (", listed above." if done.notes else "."),
        file=out,
    )
    print(f"Next: read {done.folder / LESSON_FILE}, fix what is listed, then make site.", file=out)
    return 0
