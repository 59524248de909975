"""A lesson's example as named cells, in the percent format of Jupytext, VS Code and Spyder:

    # %% setup hide
    import jax
    # %% trace
    jax.make_jaxpr(f)(x)
    # %% bool-error raises=TracerBoolConversionError
    # %% speed timeit
    # %% aside show

A marker line starts `# %%` at the first column and gives the cell's name, then its options:
`hide` (runs, not shown), `show` (shown, never run), `timeit` (timed as IPython's %timeit),
`raises` or `raises=Name` (it must raise that exception) and `nofigure` (the matplotlib
figures it draws are not recorded). A cell is the lines after its
marker up to the next one; code before the first marker is the cell `preamble`, run and
not shown (imports, setup), as Jupytext and VS Code take it. A file without a marker is one
example, as it always was.

The builder reads the cells when it loads a lesson (a mistake is an error naming the line)
and the harness reads them again to run them: this module runs inside the example's process
and is hashed into every recording's rendererHash. Standard library only; keep it small.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = "# %%"
PREAMBLE = "preamble"  # the code before the first marker: a `hide` cell
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,47}")
EXCEPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
FLAGS = ("hide", "show", "timeit", "nofigure")
# What `raises` cannot catch: not an Exception, it stops the run (sys.exit, Ctrl-C).
UNCAUGHT = ("BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit")
MAX_VALUE = 64 * 1024  # characters of a cell's value or exception message a recording keeps
CLASHES = (("hide", "show"), ("show", "raises"), ("show", "timeit"), ("timeit", "raises"))


class CellError(ValueError):
    """A marker, or the lines before the first one, that the builder cannot take; `line`
    is 1-based in the example."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Cell:
    name: str
    line: int  # the marker's line, 1-based; the code starts on the next one
    code: str  # the lines after the marker, up to the next one, as written
    hide: bool = False
    show: bool = False
    timeit: bool = False
    raises: str | None = None  # an exception's name; "" for any Exception
    nofigure: bool = False  # the matplotlib figures it draws are closed, not recorded

    @property
    def first(self) -> int:
        """The code's first line in the file."""
        return self.line + 1

    @property
    def shown(self) -> str:
        """The code as a page shows it: without the blank lines at either end."""
        return self.code.strip("\n").rstrip() + "\n" if self.code.strip() else ""

    @property
    def shown_first(self) -> int:
        """The line of the file the shown code starts on."""
        return self.first + len(self.code) - len(self.code.lstrip("\n"))


def parse(source: str) -> tuple[Cell, ...]:
    """The cells of `source` in order; () when it has no marker. CellError when a marker or
    the lines before the first one are not what the format allows."""
    lines = source.splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if line.startswith(MARKER)]
    if not starts:
        return ()
    cells, names = [], set()
    before = "".join(lines[: starts[0]])
    if any(line.strip() and not line.lstrip().startswith("#") for line in lines[: starts[0]]):
        cells.append(Cell(PREAMBLE, 0, before, hide=True))  # as Jupytext reads the file
        names.add(PREAMBLE)
    for at, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        cell = _cell(lines[at], at + 1, "".join(lines[at + 1 : end]))
        if cell.name in names:
            also = " (the code before the first marker is that cell)" * (cell.name == PREAMBLE)
            raise CellError(
                at + 1, f"a second cell named {cell.name!r}{also}: give each its own name"
            )
        names.add(cell.name)
        cells.append(cell)
    return tuple(cells)


def _cell(marker: str, line: int, code: str) -> Cell:
    words = marker[len(MARKER) :].split()
    if not words:
        raise CellError(line, "a cell without a name: write `# %% name` (a-z, 0-9, - and _)")
    name, options = words[0], words[1:]
    if name.startswith("["):
        raise CellError(line, f"a {name} cell: prose goes in lesson.md, code cells only here")
    if not NAME.fullmatch(name):
        raise CellError(
            line,
            f"cell name {name[:60]!r}: use 1-48 of a-z, 0-9, - and _, starting with a letter "
            "or digit",
        )
    found: dict[str, str | bool] = {}
    for option in options:
        key, eq, value = option.partition("=")
        if key in found:
            raise CellError(line, f"cell {name!r} gives {key!r} twice")
        if key == "raises" and value.rpartition(".")[2] in UNCAUGHT:
            raise CellError(
                line, f"cell {name!r}: raises={value} cannot be declared: it ends the run itself"
            )
        if key == "raises" and (not eq or EXCEPTION.fullmatch(value)):
            found[key] = value
        elif key in FLAGS and not eq:
            found[key] = True
        else:
            raise CellError(
                line,
                f"cell {name!r}: {option[:60]!r} is not an option (hide, show, timeit, nofigure, "
                "raises, raises=ExceptionName)",
            )
    for a, b in CLASHES:
        if a in found and b in found:
            raise CellError(line, f"cell {name!r} cannot be both {a} and {b}")
    return Cell(name, line, code, **found)  # type: ignore[arg-type]
