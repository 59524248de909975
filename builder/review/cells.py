"""Which cells a re-record changed (builder/cells.py): the cells whose printed lines changed
beyond timings, found by where each changed line stands in stdout, and each cell whose
value or declared exception changed, old -> new. Pure; builder/review/changes.py asks."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from ..course.recording import CellRun, Recording


def cells_of_lines(recording: Recording, lines: Iterable[int]) -> list[str]:
    """The cells (by name, in file order) that printed the 0-based `lines` of stdout."""
    if not recording.cells:
        return []
    starts = [0]
    for text in recording.stdout.splitlines(keepends=True):
        starts.append(starts[-1] + len(text))
    found: set[int] = set()
    ends = [cell.end for cell in recording.cells]
    for number in lines:
        at = starts[min(number, len(starts) - 1)]
        index = bisect.bisect_right(ends, at)
        if index < len(recording.cells) and recording.cells[index].start <= at:
            found.add(index)
    return [recording.cells[i].name for i in sorted(found)]


def value_changes(a: Recording, b: Recording) -> list[tuple[str, str, str]]:
    """(what, old, new) for each cell whose value or exception differs, or that ran on one
    side only: "cell trace value", "cell branch raised", "cell new-one"."""
    if a.cells is None or b.cells is None:
        return []  # one side not in cells (made before, or after, the example was): its
        # output is compared line by line, as any
    old = {cell.name: cell for cell in a.cells}
    new = {cell.name: cell for cell in b.cells}
    changes = []
    for name in [*old, *(n for n in new if n not in old)]:
        x, y = old.get(name), new.get(name)
        if x is None or y is None:
            changes.append(
                (f"cell {name}", "ran" if x else "did not run", "ran" if y else "did not run")
            )
            continue
        if x.value != y.value:
            changes.append((f"cell {name} value", x.value or "(none)", y.value or "(none)"))
        if _raised(x) != _raised(y):
            changes.append((f"cell {name} raised", _raised(x), _raised(y)))
    return changes


def _ran(cell: CellRun | None) -> str:
    return "ran" if cell else "did not run"


def _raised(cell: CellRun) -> str:
    return f"{cell.raised.type}: {cell.raised.message}" if cell.raised else "(nothing)"
