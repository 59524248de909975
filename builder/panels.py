"""The tiny API an example uses to emit chart data and to say which numbers are timings.

    from builder import panels
    panels.bar("Compiler memory estimate", labels=["plain", "remat"],
               ylabel="estimated temporary bytes", series={"temporaries": [256, 256]})
    print(f"first call: {panels.timing(first_ms, '9.2f')} ms")   # a timing, declared
    panels.bar("Wall clock", ..., timing=True)                   # a panel of timings

`timing` formats a measured time (or a number derived from times only, such as a ratio)
and returns the text to print; under the harness the text is also declared, with how much
had been printed when it was made, so the builder finds it in stdout and `diff` folds
exactly the declared timings (builder/review/changes.py).

Each call is validated where it is made, so a mistake raises in the example at the
line that made it. Run by hand (`python example.py`) the panels are checked and
dropped; under the recording harness they become the recording's `data.panels`.
This module is part of the recording harness (it is hashed into rendererHash):
standard library only, and keep it small.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

MAX_BARS = 240
MAX_TEXT = 200

emitted: list[dict[str, Any]] = []
timings: list[dict[str, Any]] = []  # {"text": what timing() returned, "after": printed()}
timing_panels: list[int] = []  # 1-based numbers of the panels emitted with timing=True


def printed() -> int:
    """Characters printed to sys.stdout so far: the harness replaces it (by hand, 0)."""
    return 0


class PanelError(ValueError):
    """A panel the example tried to emit is not valid."""


def bar(
    title: str,
    *,
    labels: Sequence[str],
    ylabel: str,
    series: Mapping[str, Sequence[Any]],
    timing: bool = False,
) -> None:
    """Emit one bar panel: one bar group per label, one bar per series. `timing=True`
    declares its values timings (measured times, or numbers derived from times only)."""
    labels = [_text(label, "label") for label in labels]
    if not labels:
        raise PanelError("a bar panel needs at least one label")
    if not series:
        raise PanelError("a bar panel needs at least one series")
    if len(labels) * len(series) > MAX_BARS:
        raise PanelError(f"{len(labels) * len(series)} bars is more than {MAX_BARS} in one panel")
    emitted.append(
        {
            "kind": "bar",
            "title": _text(title, "title"),
            "labels": labels,
            "ylabel": _text(ylabel, "ylabel"),
            "series": [_series(name, ys, len(labels)) for name, ys in series.items()],
        }
    )
    if timing is True:
        timing_panels.append(len(emitted))


def timing(value: Any, spec: str = ".2f") -> str:
    """`value` formatted with the format spec (as f"{value:9.2f}" would), declared a timing:
    print the text it returns. Use it for every number a clock made, and for numbers made
    from such numbers only (a ratio of two times); print the unit beside it."""
    text = format(_number(value, "timing"), spec)
    if "\n" in text or not text.strip():
        raise PanelError(f"timing {value!r} formatted with {spec!r} is {text!r}: not one word")
    timings.append({"text": text, "after": printed()})
    return text


def _series(name: str, ys: Sequence[Any], n_labels: int) -> dict[str, Any]:
    values = [_number(y, f"series {name!r}") for y in ys]
    if len(values) != n_labels:
        raise PanelError(f"series {name!r} has {len(values)} values for {n_labels} labels")
    return {"label": _text(name, "series label"), "y": values}


def _number(value: Any, where: str) -> int | float:
    if isinstance(value, bool | str | bytes):
        kind = "a bool" if isinstance(value, bool) else "text"
        raise PanelError(f"{where}: {value!r} is {kind}, not a number")
    try:
        return operator.index(value)
    except TypeError:
        pass
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PanelError(f"{where}: {value!r} is not a number") from None
    if not math.isfinite(number):
        raise PanelError(f"{where}: {number} is not finite")
    return number


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PanelError(f"{what} must be a non-empty string, got {value!r}")
    if len(value) > MAX_TEXT:
        raise PanelError(f"{what} is longer than {MAX_TEXT} characters")
    return value
