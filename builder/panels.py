"""The tiny API an example uses to emit chart data and to say which numbers are timings.

    from builder import panels
    panels.bar("Compiler memory estimate", labels=["plain", "remat"],
               ylabel="estimated temporary bytes", series={"temporaries": [256, 256]})
    print(f"first call: {panels.timing(first_ms, '9.2f')} ms")   # a timing, declared
    panels.bar("Wall clock", ..., timing=True)                   # a panel of timings
    panels.line("Loss", x=steps, xlabel="step", ylabel="loss", series={"adam": losses})
    panels.scatter("Fit", x=xs, xlabel="x", ylabel="y", series={"data": ys}, fit="linear")

`timing` formats a measured time (or a number derived from times only, such as a ratio)
and returns the text to print; under the harness the text is also declared, with how much
had been printed when it was made, so the builder finds it in stdout and `diff` folds
exactly the declared timings (builder/review/changes.py).

A line or scatter panel has one list of x values that every series shares. `fit="linear"`
fits a least-squares line to each series of a scatter panel here, in the run, and records
its slope and intercept beside the points: the page draws the line that was recorded.

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
MAX_POINTS = 1000  # x values times series, in one line or scatter panel
MAX_TEXT = 200
MAX_IMAGE = 64  # rows and columns of an image panel (a figure's imshow, sampled evenly)
FITS = ("linear",)

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
    panel = {
        "kind": "bar",
        "title": _text(title, "title"),
        "labels": labels,
        "ylabel": _text(ylabel, "ylabel"),
        "series": [_series(name, ys, len(labels)) for name, ys in series.items()],
    }
    _emit(panel, timing)


def line(
    title: str,
    *,
    x: Sequence[Any],
    xlabel: str,
    ylabel: str,
    series: Mapping[str, Sequence[Any]],
    timing: bool = False,
) -> None:
    """Emit one line panel: each series a line through its y values at the shared x values.
    `timing=True` declares its y values timings."""
    _emit(_xy("line", title, x, xlabel, ylabel, series), timing)


def scatter(
    title: str,
    *,
    x: Sequence[Any],
    xlabel: str,
    ylabel: str,
    series: Mapping[str, Sequence[Any]],
    fit: str | None = None,
    timing: bool = False,
) -> None:
    """Emit one scatter panel: each series a point per x value. `fit="linear"` also records
    each series' least-squares line (its slope and intercept), which the chart draws."""
    panel = _xy("scatter", title, x, xlabel, ylabel, series)
    if fit is not None:
        if fit not in FITS:
            raise PanelError(f"fit={fit!r}: say one of {list(FITS)} or leave it out")
        for one in panel["series"]:
            one["fit"] = _linear(panel["x"], one["y"], one["label"])
    _emit(panel, timing)


def _xy(
    kind: str,
    title: str,
    x: Sequence[Any],
    xlabel: str,
    ylabel: str,
    series: Mapping[str, Sequence[Any]],
) -> dict[str, Any]:
    xs = _numbers(x, "x")
    if not xs:
        raise PanelError(f"a {kind} panel needs at least one x value")
    if not isinstance(series, Mapping) or not series:
        raise PanelError(f"a {kind} panel needs at least one series, as {{label: [y, ...]}}")
    if len(xs) * len(series) > MAX_POINTS:
        raise PanelError(
            f"{len(xs)} x values x {len(series)} series is {len(xs) * len(series)} points, "
            f"more than {MAX_POINTS} in one panel"
        )
    return {
        "kind": kind,
        "title": _text(title, "title"),
        "xlabel": _text(xlabel, "xlabel"),
        "ylabel": _text(ylabel, "ylabel"),
        "x": xs,
        "series": [_series(name, ys, len(xs), "x values") for name, ys in series.items()],
    }


def _linear(xs: list[Any], ys: list[Any], name: str) -> dict[str, Any]:
    """The least-squares line through the series' points, as the recording holds it."""
    import statistics

    try:
        slope, intercept = statistics.linear_regression([float(v) for v in xs], ys)
    except (statistics.StatisticsError, OverflowError) as error:
        raise PanelError(f"series {name!r}: no line fits its points: {error}") from None
    values = [_number(v, f"series {name!r}'s fit") for v in (slope, intercept)]
    return {"kind": "linear", "slope": values[0], "intercept": values[1]}


def _emit(panel: dict[str, Any], timing: bool) -> None:
    emitted.append(panel)
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


def _series(name: str, ys: Sequence[Any], count: int, of: str = "labels") -> dict[str, Any]:
    values = _numbers(ys, f"series {name!r}")
    if len(values) != count:
        raise PanelError(f"series {name!r} has {len(values)} values for {count} {of}")
    return {"label": _text(name, "series label"), "y": values}


def _numbers(values: Any, where: str) -> list[int | float]:
    """A list, tuple or array of numbers (not text, which iterates by character)."""
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise PanelError(f"{where} must be a list of numbers, got {type(values).__name__}")
    return [_number(value, where) for value in values]


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
