"""The matplotlib figures a cell drew, as panels: runs inside the example's process (the
harness calls it at the end of each cell), and is hashed into every recording's rendererHash.

Only where the example imported matplotlib itself (it is in sys.modules): a lesson without
it costs nothing. At the end of a cell every figure pyplot holds, and any figure the cell's
last expression returned (a Figure, Axes, artist, or a list or tuple of them), becomes
panels, one per axes: lines (plot, semilogy, loglog, step, errorbar, fill_between as a
band), points (scatter), bars (bar, barh, hist), an image (imshow, matshow: at most
panels.MAX_IMAGE values a side, sampled evenly beyond it) and reference lines (axhline,
axvline), with the axes' title, labels, scales, limits, legend labels and place in its
figure's grid. Then every figure is closed, so the next cell starts with none. What a chart
cannot redraw (3D or polar axes, contours, text annotations, patches drawn by hand, RGB
images) is a FigureError naming the cell, the artist and the way out: never a silent drop.
A series of more than its share of panels.MAX_POINTS points is sampled evenly and says how
many the run drew (`of`). A cell marked `nofigure` has its figures closed unrecorded.
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from typing import Any

from builder import panels

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # `<Foo object at 0x7fed...>`: different each run
OUT = "write the chart with builder.panels (bar, line, scatter), or mark the cell `nofigure`"


class FigureError(Exception):
    """A figure the recording cannot hold as panels."""


def plain(text: str) -> str:
    """A repr without the memory addresses that differ on every run: `<Foo object>`."""
    return ADDRESS.sub("", text)


def is_figure(value: Any) -> bool:
    """The value is matplotlib's (a Figure, Axes, artist or container), or a non-empty list,
    tuple or array of such values: its figure is what the cell shows."""
    if isinstance(value, list | tuple) or type(value).__name__ == "ndarray":
        items = list(value.flat) if hasattr(value, "flat") else list(value)
        return bool(items) and all(is_figure(item) for item in items)
    return type(value).__module__.partition(".")[0] == "matplotlib"


def capture(cell: str, value: Any, keep: bool, lesson: str) -> list[int]:
    """Record the figures open at the end of cell `cell` (and the one `value` belongs to) as
    panels, close them all, and return the panels' 1-based numbers; none when `keep` is
    False (a `nofigure` cell)."""
    if "matplotlib" not in sys.modules:
        return []
    found = _open_figures()
    for figure in _returned(value):
        if all(figure is not f for f in found):
            found.append(figure)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
    numbers: list[int] = []
    for figure in found if keep else ():
        made = _figure_panels(figure, _Where(lesson, cell), _figures_so_far() + 1)
        panels.emitted.extend(made)
        numbers += range(len(panels.emitted) - len(made) + 1, len(panels.emitted) + 1)
    return numbers


class _Where:
    def __init__(self, lesson: str, cell: str) -> None:
        self.lesson, self.cell = lesson, cell

    def error(self, what: str, out: str = OUT) -> FigureError:
        return FigureError(
            f"{self.lesson}: cell {self.cell!r}: {what} cannot be recorded as a chart; {out} "
            f"(`# %% {self.cell} nofigure` keeps its figures off the page)"
        )


def _figures_so_far() -> int:
    return len({p["axes"]["figure"] for p in panels.emitted if "axes" in p})


def _open_figures() -> list[Any]:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None:
        return []
    managers = sorted(helpers.Gcf.get_all_fig_managers(), key=lambda m: m.num)
    return [manager.canvas.figure for manager in managers]


def _returned(value: Any) -> list[Any]:
    """The figures a returned value belongs to, in order."""
    if not is_figure(value):
        return []
    items = list(value.flat) if hasattr(value, "flat") else value
    if isinstance(items, list | tuple):
        return [f for item in items for f in _returned(item)]
    figure = value if hasattr(value, "get_axes") else getattr(value, "figure", None)
    while figure is not None and getattr(figure, "figure", figure) is not figure:
        figure = figure.figure  # a SubFigure's figure
    return [figure] if figure is not None else []


def _figure_panels(figure: Any, where: _Where, number: int) -> list[dict[str, Any]]:
    title = figure._suptitle.get_text() if figure._suptitle else ""
    others = [t for t in figure.texts if t is not figure._suptitle and t.get_text()]
    if others:
        raise where.error(f"the figure text {others[0].get_text()[:60]!r}", "give it as a title")
    drawn = [ax for ax in figure.axes if not hasattr(ax, "_colorbar") and _has_artists(ax)]
    return [_axes_panel(ax, where, number, title) for ax in drawn]


def _has_artists(ax: Any) -> bool:
    return bool(ax.lines or ax.collections or ax.patches or ax.images or ax.texts or ax.artists)


def _axes_panel(ax: Any, where: _Where, number: int, suptitle: str) -> dict[str, Any]:
    if ax.name != "rectilinear":
        raise where.error(f"a {ax.name} axes ({type(ax).__name__})")
    for extra in (*ax.texts, *ax.artists, *ax.tables):
        raise where.error(f"the {type(extra).__name__} {_said(extra)}", "say it in the prose")
    scales = (ax.get_xscale(), ax.get_yscale())
    if any(scale not in ("linear", "log") for scale in scales):
        raise where.error(f"a {'/'.join(scales)} scale", "use a linear or log scale, or " + OUT)
    title = _text(ax.get_title() or ax.get_title("left") or suptitle, f"Figure {number}")
    panel: dict[str, Any] = {"kind": "", "title": title}
    if ax.images:
        panel |= _image(ax, where)
    elif ax.containers and any(type(c).__name__ == "BarContainer" for c in ax.containers):
        panel |= _bars(ax, where)
    else:
        panel |= _xy(ax, where)
    panel["axes"] = _axes(ax, number)
    return panel


def _axes(ax: Any, number: int) -> dict[str, Any]:
    spec = ax.get_subplotspec()
    rows, columns, start, _ = spec.get_geometry() if spec else (1, 1, 0, 0)
    return {
        "figure": number,
        "rows": int(rows),
        "columns": int(columns),
        "row": int(start) // int(columns),
        "column": int(start) % int(columns),
        "xscale": ax.get_xscale(),
        "yscale": ax.get_yscale(),
        "xlim": [_finite(v) for v in ax.get_xlim()],
        "ylim": [_finite(v) for v in ax.get_ylim()],
        "references": [_reference(line) for line in ax.lines if _reference_axis(ax, line)],
    }


def _reference_axis(ax: Any, line: Any) -> str:
    """'y' for an axhline, 'x' for an axvline, '' for a line of data."""
    x_data, y_data = line.get_transform().contains_branch_seperately(ax.transData)
    return "" if x_data == y_data else ("y" if y_data else "x")


def _reference(line: Any) -> dict[str, Any]:
    axis = _reference_axis(line.axes, line)
    values = line.get_ydata() if axis == "y" else line.get_xdata()
    found = {"axis": axis, "at": _finite(values[0])}
    label = line.get_label()
    if label and not label.startswith("_"):
        found["label"] = _text(label, "reference")
    return found


def _xy(ax: Any, where: _Where) -> dict[str, Any]:
    for patch in ax.patches:  # drawn by hand: a chart cannot say what it means
        raise where.error(f"the {type(patch).__name__} {_said(patch)}")
    used: set[int] = set()
    series = [s for c in ax.containers for s in _errorbar(c, where, used)]
    for line in ax.lines:
        if id(line) not in used and not _reference_axis(ax, line):
            series.append(_line(line))
    for collection in ax.collections:
        if id(collection) not in used:
            series.append(_collection(collection, where))
    if not series:
        raise where.error("an axes with reference lines alone", OUT)
    kind = "scatter" if all(s.get("mark") == "points" for s in series) else "line"
    for s in series:
        if kind == "scatter" or s.get("mark") == "line":
            s.pop("mark", None)
    _bound(series, where)
    _distinct(series)
    first = series[0]["x"]
    for s in series:
        if s["x"] == first:
            del s["x"]
    xlabel = _text(ax.get_xlabel(), "x")
    return {"kind": kind, "xlabel": xlabel, "ylabel": _text(ax.get_ylabel(), "y"), "x": first,
            "series": [_ordered(s) for s in series]}  # fmt: skip


ORDER = ("label", "y", "x", "mark", "low", "high", "of")


def _ordered(series: dict[str, Any]) -> dict[str, Any]:
    return {key: series[key] for key in ORDER if key in series}


def _errorbar(container: Any, where: _Where, used: set[int]) -> list[dict[str, Any]]:
    if type(container).__name__ != "ErrorbarContainer":
        return []
    data, caps, bars = container.lines
    if container.has_xerr or data is None:
        raise where.error("horizontal error bars (xerr) or bars without their line", OUT)
    used.update(map(id, (data, *caps, *bars)))
    found = _line(data) | {"label": container.get_label()}
    ends = [[float(v) for _, v in segment] for segment in bars[-1].get_segments()]
    if len(ends) != len(found["y"]):
        raise where.error("error bars on points that are not all drawn (a NaN?)", OUT)
    found["low"], found["high"] = [min(e) for e in ends], [max(e) for e in ends]
    return [found]


def _line(line: Any) -> dict[str, Any]:
    import numpy

    x, y = (numpy.asarray(v, dtype=float) for v in (line.get_xdata(), line.get_ydata()))
    style = line.get_drawstyle()
    if style.startswith("steps"):
        from matplotlib.cbook import STEP_LOOKUP_MAP

        x, y = STEP_LOOKUP_MAP[style](x, y)
    mark = "points" if line.get_linestyle() in ("None", "", " ") else "line"
    return _points(line.get_label(), x, y, mark)


def _points(label: str, x: Any, y: Any, mark: str, low: Any = None) -> dict[str, Any]:
    import numpy

    kept = numpy.isfinite(x) & numpy.isfinite(y)  # a NaN is a gap matplotlib draws nothing at
    if low is not None:
        kept &= numpy.isfinite(low)
    found = {"label": label, "x": x[kept].tolist(), "y": y[kept].tolist(), "mark": mark}
    if low is not None:
        found["low"] = low[kept].tolist()
    return found


def _collection(collection: Any, where: _Where) -> dict[str, Any]:
    kind = type(collection).__name__
    if kind == "PathCollection":  # scatter
        offsets = collection.get_offsets()
        return _points(collection.get_label(), offsets[:, 0], offsets[:, 1], "points")
    if kind == "FillBetweenPolyCollection" and len(collection.get_paths()) == 1:
        import numpy

        vertices = collection.get_paths()[0].vertices
        n = (len(vertices) - 3) // 2
        x, low, high = (
            vertices[1 : n + 1, 0],
            vertices[1 : n + 1, 1],
            vertices[n + 2 : 2 * n + 2, 1],
        )
        return _points(collection.get_label(), x, numpy.asarray(high[::-1]), "band", low)
    raise where.error(f"the {kind} {_said(collection)}")


def _bound(series: list[dict[str, Any]], where: _Where) -> None:
    """Each series at most its share of MAX_POINTS points, sampled evenly (its last point
    kept), saying how many the run drew."""
    share = panels.MAX_POINTS // len(series)
    if share < 2:
        raise where.error(f"{len(series)} lines in one axes", "draw fewer, or " + OUT)
    for s in series:
        count = len(s["y"])
        if count > share:
            picked = [round(k * (count - 1) / (share - 1)) for k in range(share)]
            for key in ("x", "y", "low", "high"):
                if key in s:
                    s[key] = [s[key][k] for k in picked]
            s["of"] = count
        if not s["y"]:
            raise where.error(f"the series {s['label']!r} with no finite point", OUT)


def _distinct(series: list[dict[str, Any]], kind: str = "series") -> None:
    """Each series a label of its own: its legend label, or `series N`."""
    seen: set[str] = set()
    for number, s in enumerate(series, 1):
        label = s["label"] if isinstance(s["label"], str) else ""
        label = _text("" if label.startswith("_") else label, f"{kind} {number}")
        while unicodedata.normalize("NFC", label) in seen:
            label = _text(f"{label} ({number})", f"{kind} {number}")
        seen.add(unicodedata.normalize("NFC", label))
        s["label"] = label


def _bars(ax: Any, where: _Where) -> dict[str, Any]:
    containers = [c for c in ax.containers if type(c).__name__ == "BarContainer"]
    drawn = {id(p) for c in containers for p in c.patches}
    for artist in (*ax.patches, *ax.lines, *ax.collections):
        if id(artist) not in drawn and not (artist in ax.lines and _reference_axis(ax, artist)):
            raise where.error(f"the {type(artist).__name__} beside bars", OUT)
    across = containers[0].orientation == "horizontal"
    places: dict[float, str] = {}
    series = []
    for container in containers:
        found = {}
        for patch in container.patches:
            start, size = (
                (patch.get_y(), patch.get_height())
                if across
                else (patch.get_x(), patch.get_width())
            )
            centre = round(start + size / 2, 12)
            places.setdefault(centre, _bar_label(ax, start, size, across))
            found[centre] = _finite(patch.get_width() if across else patch.get_height())
        series.append({"label": container.get_label(), "y": found})
    if len(places) * len(series) > panels.MAX_BARS:
        raise where.error(f"{len(places) * len(series)} bars (more than {panels.MAX_BARS})",
                          "draw fewer bars (hist: bins=), or " + OUT)  # fmt: skip
    order = sorted(places)
    for s in series:
        s["y"] = [s["y"].get(at, 0) for at in order]
    _distinct(series, "bars")
    value_axis, other = (
        (ax.get_xlabel(), ax.get_ylabel()) if across else (ax.get_ylabel(), ax.get_xlabel())
    )
    labels = _labels([places[at] for at in order])
    return {
        "kind": "bar",
        "labels": labels,
        "ylabel": _text(value_axis or other, "value"),
        "series": series,
    }


def _bar_label(ax: Any, start: float, size: float, across: bool) -> str:
    """A bar's label: its category, or where it stands (a histogram's bin: `a–b`)."""
    axis = ax.yaxis if across else ax.xaxis
    units = axis.get_units()
    centre = start + size / 2
    mapping = getattr(units, "_mapping", None)
    if mapping:
        names = {float(v): k for k, v in mapping.items()}
        if round(centre, 9) in names:
            return str(names[round(centre, 9)])
    if abs(size) < 0.8 or not float(centre).is_integer():
        return f"{start:.4g}–{start + size:.4g}"
    return f"{centre:g}"


def _labels(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        text = _text(label, "bar")
        seen[text] = seen.get(text, 0) + 1
        out.append(text if seen[text] == 1 else f"{text} ({seen[text]})")
    return out


def _image(ax: Any, where: _Where) -> dict[str, Any]:
    import numpy

    if len(ax.images) > 1 or ax.lines or ax.collections or ax.patches:
        raise where.error("an image drawn with other artists in one axes", OUT)
    image = ax.images[0]
    array: Any = numpy.ma.filled(numpy.ma.asarray(image.get_array(), dtype=float), numpy.nan)
    if array.ndim != 2:
        raise where.error(
            f"an image of shape {list(array.shape)} (RGB?)", "imshow a 2-D array, or " + OUT
        )
    if not numpy.isfinite(array).all():
        raise where.error("an image with NaN or infinite values", OUT)
    rows, columns = array.shape
    picked = [_even(count, panels.MAX_IMAGE) for count in array.shape]
    sample = array[numpy.ix_(*picked)]
    return {"kind": "image", "xlabel": _text(ax.get_xlabel(), "column"),
            "ylabel": _text(ax.get_ylabel(), "row"), "pixels": sample.tolist(),
            "shape": [int(rows), int(columns)]}  # fmt: skip


def _even(count: int, most: int) -> list[int]:
    """Up to `most` indices of `count`, evenly spread, first and last included."""
    if count <= most:
        return list(range(count))
    return [round(k * (count - 1) / (most - 1)) for k in range(most)]


def _said(artist: Any) -> str:
    text = artist.get_text() if type(artist).__name__ in ("Text", "Annotation") else ""
    label = artist.get_label() if hasattr(artist, "get_label") else ""
    name = text or ("" if not label or label.startswith("_") else label)
    return repr(_text(name, "")[:60]) if name else "(unlabelled)"


def _text(value: Any, default: str) -> str:
    """A label as a panel holds it: control characters as spaces, at most MAX_TEXT
    characters, `default` when blank."""
    text = "".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in str(value))
    text = " ".join(text.split())
    if len(text) > panels.MAX_TEXT:
        text = text[: panels.MAX_TEXT - 1] + "…"
    return text or default


def _finite(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise FigureError(f"{number} is not a number a chart can draw")
    return number
