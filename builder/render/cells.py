"""`{{ cell NAME }}`: one of the example's cells (builder/cells.py) where the prose places
it, its code numbered with the file's lines and, directly under it, what that cell alone
recorded: its stdout, then the repr of its last expression or the exception it was to
raise, then the charts of the matplotlib figures it drew (as Jupyter shows them).
`{{ cell NAME code }}` places the code alone; `{{ output cell=NAME ... }}`
(marks.py) quotes the cell's stdout with the filters `{{ output }}` takes.

The first cell a page places carries the page's one caption: the file, its download link
and the instrument its outputs were recorded on; every output names that instrument to a
screen reader. A cell that is not `hide` must be placed, unless `{{ example }}` shows the
whole file (`unplaced_cells`); a `hide` cell cannot be.
"""

from __future__ import annotations

from markupsafe import Markup

from ..cells import Cell
from ..core.errors import RenderError
from . import code_notes
from .figures import provenance, scrollable
from .marks import EXAMPLE_FILE, Args, PageEnv, cell_run, line_range, panel_figures, python_code
from .markup import macro
from .terminal import clean_output, terminal_lines

FOLDS = ("code", "output", "cell")  # fold=: what the reader opens to see


def cell_block(page: PageEnv, args: Args) -> str:
    words = args.get("", [])
    shown = words[1:] if words[1:] in ([], ["code"], ["output"]) else None
    fold = args.get("fold", [""])[0]
    if not words or shown is None or set(args) - {"", "lines", "fold"}:
        return page.fail(
            "write {{ cell NAME }}, {{ cell NAME code }} for its code alone, or "
            "{{ cell NAME output }} for its output alone"
        )
    if "lines" in args and shown != ["code"]:
        return page.fail("lines= shows part of a cell's code: write {{ cell NAME code lines=A-B }}")
    if fold and (fold not in FOLDS or (shown and fold != shown[0])):
        said = shown[0] if shown else "code, output or cell"
        return page.fail(f"fold={fold[:40]!r}: fold the part the placement shows ({said})")
    cell = next((c for c in page.lesson.cells if c.name == words[0]), None)
    if cell is None:
        return page.fail(_no_such_cell(page, words[0]))
    if cell.hide:
        return page.fail(
            f"cell {cell.name!r} is `hide`: it runs but is not shown; drop `hide` to place it"
        )
    return _figure(page, cell, shown[0] if shown else "", fold, args.get("lines", [""])[0])


def _figure(page: PageEnv, cell: Cell, only: str, fold: str, part: str) -> str:
    """The cell's figure: its code and outputs (`only` one of them), `fold` folded."""
    first = cell.name not in page.placed_cells
    page.placed_cells.append(cell.name)
    code = _code(page, cell, part) if only != "output" else Markup()
    if code is None:
        return ""
    out = Markup() if only == "code" else _outputs(page, cell)
    if fold in ("code", "cell"):
        code = macro("cell_fold", "code", code)
    if fold in ("output", "cell") and out:
        out = macro("cell_fold", "output", out)
    caption = _caption(page) if not page.cell_caption_shown else Markup()
    page.cell_caption_shown = True
    anchor = page.id(f"cell-{cell.name}") if first else ""
    return macro("cell_figure", anchor, cell.name, caption, code, out)


def _no_such_cell(page: PageEnv, name: str) -> str:
    names = ", ".join(c.name for c in page.lesson.cells if not c.hide)
    if not page.lesson.cells:
        return f"cell {name!r}: {EXAMPLE_FILE} has no cells (mark them with `# %% name`)"
    return f"cell {name!r}: {EXAMPLE_FILE} has no such cell (placeable: {names or 'none'})"


def _code(page: PageEnv, cell: Cell, part: str) -> Markup | None:
    """The cell's code (`part`: lines A-B of it, counted within the cell), numbered with the
    file's lines."""
    shown, first = code_notes.marked(page, cell).code, cell.shown_first
    lines = shown.splitlines(keepends=True)
    whole = slice(0, len(lines))
    kept = line_range(part, len(lines), page, f"cell {cell.name} code") if part else whole
    if kept is None:
        return None
    shown, first = "".join(lines[kept]), first + kept.start
    page.findable(shown)
    numbers = "\n".join(str(n) for n in range(first, first + shown.count("\n")))
    html = code_notes.badges(page, cell, python_code(page, shown), kept)
    code = scrollable(html, page.region(f"cell {cell.name}, {EXAMPLE_FILE} line {first}"))
    return macro("cell_code", numbers, code)


def _caption(page: PageEnv) -> Markup:
    """The page's one caption for its cells: the file, its download (none in a lab's
    exercise: the file holds the answer) and the instrument of every output under them."""
    hidden = page.reveals and not page.revealing
    recorded = provenance(page.recording) if page.recording else "not recorded yet"
    download = "" if hidden else page.href(EXAMPLE_FILE, authored=True)
    return macro("cell_caption", EXAMPLE_FILE, download, recorded)


def _outputs(page: PageEnv, cell: Cell) -> Markup:
    if cell.show:
        return macro("cell_not_run")
    if page.recording is None:
        return macro("not_recorded", "Output")
    run = cell_run(page.recording, cell.name)
    if run is None:
        page.error(
            f"cell {cell.name!r} has no recorded output: the run ended before it (sys.exit in "
            "an earlier cell?), or the recording is older than the cell: re-record"
        )
        return Markup()
    said = page.region(f"of cell {cell.name} · {provenance(page.recording)}")
    printed = clean_output("".join(terminal_lines(page.recording.stdout[run.start : run.end])))
    value = clean_output(run.value or "")
    raised = (run.raised.type, clean_output(run.raised.message)) if run.raised else None
    page.place("output", f"cell {cell.name}", _shown(printed, value, raised), f"cell-{cell.name}")
    for said_text in (printed, value, *(raised or ())):
        page.findable(said_text)
    drawn = Markup(panel_figures(page, run.panels or []))  # its figures, under its output
    return macro("cell_outputs", said, printed, value, raised) + drawn


def _shown(printed: str, value: str, raised: tuple[str, str] | None) -> str:
    parts = [printed.rstrip("\n")] if printed else []
    parts += [f"Out: {value}"] if value else []
    parts += [f"{raised[0]}: {raised[1]}"] if raised else []
    return "\n".join(parts)


def unplaced_cells(page: PageEnv) -> None:
    """Each cell that is not `hide` nor placed is an error (unless the page showed the
    whole file): nothing the example runs for readers goes unshown; nor is a code note's
    marker left without its note (code_notes.check)."""
    code_notes.check(page)
    if page.whole_example_shown:
        return
    for cell in page.lesson.cells:
        if not cell.hide and cell.name not in page.placed_cells:
            message = (
                f"line {cell.line}: cell {cell.name!r} is not placed in lesson.md: write "
                f"{{{{ cell {cell.name} }}}} where the prose discusses it, or mark it `hide`"
            )
            page.errors.append(RenderError(message, path=page.lesson.example_path))
