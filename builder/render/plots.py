"""Line and scatter panels as SVG: a pure function of the panel, drawn by matplotlib as bars
are (builder/render/charts.py), in the same themes, sizes and settings.

Both axes span the data (chartlabels.data_axis), each on a log scale when its values are
all positive and far apart. A line joins its points left to right, with markers while
there are few; a scatter panel draws each point, and each fitted line the recording holds
dashed across the data's x range with its equation in the legend: straight where both
axes are linear, a curve of FIT_SAMPLES points where one is log, always inside the axes.
The height is counted before drawing, so a page sizes its `<img>` without matplotlib. The
series carry ids (`series-S`, `fit-S`) for tests. A panel captured from a figure (its `axes`)
keeps the figure's scales, spans at least its limits, draws its reference lines, each series
at its own x values in the order drawn, as points, a band or a line with error bars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..course.recording import Fit, Number, XYPanel, XYSeries
from . import chartlabels as text
from .chartplan import AXES, EDGE, EM, LINE, SIZES, TICK, WIDE, Size
from .chartsvg import COLOURS, PALETTE, settings, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MARKERS = 40  # a line with at most this many points marks each one
# Each series' marker its own, as its colour is: told apart in print and without colour.
SHAPES = ("o", "s", "^", "D", "v", "P", "X", "*")
TWIN_DASHES = (0, (4, 3))  # a twin's line (Look)
FIT_SAMPLES = 64  # points along a fitted line that a log axis bends


@dataclass(frozen=True)
class XYPlan:
    """What the chart says and how big it is, before matplotlib lays it out."""

    xlabel: str
    ylabel: str
    legend: list[str]
    bins: int  # how many ticks an axis has at most, less one
    height: float  # points


def plan(panel: XYPanel, size: Size) -> XYPlan:
    """The text's lines and a height that gives the plot AXES points after the text around
    it: the legend above the plot (narrow) or beside it, the x ticks and the x label."""
    font, small, width = size.font, size.small, size.width
    entries = legend_entries(panel)
    columns = (width - 2 * EDGE - 30) / (EM * small) if size.stacked else 18
    legend = [text.wrap(entry, columns) for entry in entries] if len(entries) > 1 else []
    stacked = sum(text.lines(t) * small * LINE + 4 for t in legend) + 8 if size.stacked else 0.0
    xs, ys = x_values(panel), y_values(panel)
    xlabel = panel.xlabel + text.factor_of(xs) + (" (log scale)" if is_log(panel, "x") else "")
    ylabel = panel.ylabel + text.factor_of(ys) + (" (log scale)" if is_log(panel, "y") else "")
    xlabel = text.wrap(xlabel, (width - 2 * EDGE - 40) / (EM * font))
    ylabel = text.wrap(ylabel, 0.9 * AXES / (EM * font))
    below = TICK + font * LINE + 4 + text.lines(xlabel) * font * LINE  # ticks, labelpad, label
    height = EDGE + stacked + small * LINE + AXES + below + EDGE
    return XYPlan(xlabel, ylabel, legend if legend else [], 4 if size.stacked else 6, height)


def legend_entries(panel: XYPanel) -> list[str]:
    """Each series' label (a twin's says which series it equals), and after it its fitted
    line's equation, if it has one."""
    entries, same = [], twins(panel)
    for index, series in enumerate(panel.series):
        twin = f" (same values as {panel.series[same[index]].label})" if index in same else ""
        entries.append(series.label + twin)
        if series.fit is not None:
            entries.append(f"{series.label}, linear fit: {equation(series.fit)}")
    return entries


def twins(panel: XYPanel) -> dict[int, int]:
    """Each series whose points are exactly an earlier series' (same x, same y), by index:
    the earlier one's index. Drawn alone, it would hide the other (xla-03's flops panel)."""
    seen: dict[tuple[tuple[float, ...], tuple[float, ...]], int] = {}
    found = {}
    for index, series in enumerate(panel.series):
        points = (tuple(map(float, series.xs(panel))), tuple(map(float, series.y)))
        if points in seen:
            found[index] = seen[points]
        seen.setdefault(points, index)
    return found


def equation(fit: Fit) -> str:
    """'y = 1.25x − 0.333': the fitted line, three significant digits a coefficient, its
    spaces unbreakable (a legend wraps it whole)."""
    sign = "−" if fit.intercept < 0 else "+"
    said = f"y = {text.significant(fit.slope)}x {sign} {text.significant(abs(fit.intercept))}"
    return said.replace(" ", "\u00a0")


def x_values(panel: XYPanel) -> list[float]:
    """Every x the chart spans: the points', and a captured figure's limits and references."""
    xs: list[float] = [x for series in panel.series for x in series.xs(panel)]
    return xs + _captured(panel, "x")


def _captured(panel: XYPanel, axis: str) -> list[float]:
    if panel.axes is None:
        return []
    limits = panel.axes.xlim if axis == "x" else panel.axes.ylim
    return [*limits, *(r.at for r in panel.axes.references if r.axis == axis)]


def is_log(panel: XYPanel, axis: str) -> bool:
    """The axis is drawn on a log scale: as the captured figure set it, else where its
    values are all positive and far apart."""
    if panel.axes is not None:
        return bool((panel.axes.xscale if axis == "x" else panel.axes.yscale) == "log")
    return text.is_log(x_values(panel) if axis == "x" else y_values(panel))


def y_values(panel: XYPanel) -> list[float]:
    """Every y the chart shows: the points, bands and error bars, a captured figure's limits
    and references, and each fitted line at its ends (a straight line's lowest and highest)."""
    ys: list[float] = [y for series in panel.series for y in series.y]
    ys += [v for series in panel.series for b in series.bounds().values() for v in b]
    ys += _captured(panel, "y")
    for series in panel.series:
        if series.fit is not None:
            ys += fit_line(series.fit, panel.x, bends=False)[1]
    return ys


def fit_line(fit: Fit, xs: Sequence[Number], bends: bool) -> tuple[list[float], list[float]]:
    """Where a fitted line is drawn: from the smallest x to the largest (not beyond, where
    nothing was measured); its two ends, or where a log axis `bends` it, FIT_SAMPLES points
    evenly spaced as the x axis draws them (in the logarithm on a log axis)."""
    low, high = float(min(xs)), float(max(xs))
    last = FIT_SAMPLES - 1 if bends else 1
    if text.is_log(list(xs)):
        fx = [low * (high / low) ** (k / last) for k in range(last)]
    else:
        fx = [low + (high - low) * k / last for k in range(last)]
    fx.append(high)  # the last point exactly at the data's end
    return fx, [fit.slope * x + fit.intercept for x in fx]


def pixels(panel: XYPanel, size: Size = WIDE) -> tuple[int, int]:
    """The chart's width and height in CSS pixels, known before drawing."""
    return round(size.width * 4 / 3), round(plan(panel, size).height * 4 / 3)


def light_svgs(panel: XYPanel, sizes: Mapping[str, Size] = SIZES) -> dict[str, bytes]:
    """The panel drawn in the light theme at each size."""
    with settings():
        return {name: svg(figure(panel, size)) for name, size in sizes.items()}


def figure(panel: XYPanel, size: Size) -> Figure:
    """The chart as a matplotlib figure, laid out by its constrained layout engine when drawn."""
    from matplotlib.figure import Figure

    planned = plan(panel, size)
    drawn = Figure(dpi=72, layout="constrained", figsize=(size.width / 72, planned.height / 72))
    drawn.patch.set_visible(False)
    axes = drawn.add_subplot()
    axes.patch.set_visible(False)
    xlog, ylog = (is_log(panel, a) if panel.axes else None for a in "xy")
    xlim, xticks, xlabels, xlog = text.data_axis(x_values(panel), planned.bins, xlog)
    ylim, yticks, ylabels, ylog = text.data_axis(y_values(panel), planned.bins, ylog)
    if xlog:
        axes.set_xscale("log")
    if ylog:
        axes.set_yscale("log")
    handles: list[Any] = []
    same = twins(panel)
    for index, series in enumerate(panel.series):
        colour = PALETTE[index % len(PALETTE)]
        look = Look(colour, SHAPES[index % len(SHAPES)], index in same)
        shown = _series(axes, panel, series, look, size)
        shown.set_gid(f"series-{index}")
        handles.append(shown)
        if series.fit is not None:
            fx, fy = fit_line(series.fit, panel.x, bends=xlog or ylog)
            (fitted,) = axes.plot(fx, fy, color=colour, linewidth=1.4, linestyle=(0, (5, 3)))
            fitted.set_gid(f"fit-{index}")
            handles.append(fitted)
    for reference in panel.axes.references if panel.axes else ():
        across = axes.axhline if reference.axis == "y" else axes.axvline
        across(reference.at, color=COLOURS["light"]["text"], linewidth=1.0, linestyle=":")
    axes.set(xlim=xlim, ylim=ylim)
    axes.set_xticks(xticks, xlabels)
    axes.set_yticks(yticks, ylabels)
    axes.minorticks_off()
    axes.tick_params(labelsize=size.font)
    axes.set_xlabel(planned.xlabel, fontsize=size.font)
    axes.set_ylabel(planned.ylabel, fontsize=size.font)
    axes.grid(True)
    if planned.legend:
        where = "outside upper left" if size.stacked else "outside right upper"
        style = {"loc": where, "fontsize": size.small, "handlelength": 1.6}
        legend = drawn.legend(handles, planned.legend, **style)
        for index, handle in enumerate(legend.legend_handles):
            assert handle is not None
            handle.set_gid(f"legend-{index}")
    return drawn


@dataclass(frozen=True)
class Look:
    """How one series is told from the others: its colour and its markers' shape; a twin
    (drawn exactly over an earlier series) is dashed with hollow markers, so both show."""

    colour: str
    shape: str
    twin: bool


def _series(axes: Any, panel: XYPanel, series: XYSeries, look: Look, size: Size) -> Any:
    """One series drawn as its mark says (a line panel's: a line; a scatter panel's: points),
    a line's error bars from `low` to `high`; what the legend shows for it."""
    colour = look.colour
    xs = [float(x) for x in series.xs(panel)]
    mark = series.mark or ("line" if panel.kind == "line" else "points")
    if mark == "band" and series.low is not None:
        return axes.fill_between(xs, series.low, series.y, color=colour, alpha=0.3, linewidth=0)
    if series.low is not None and series.high is not None:
        axes.vlines(xs, series.low, series.high, color=colour, linewidth=1.2)
    if mark == "points":
        return axes.scatter(
            xs, series.y, s=size.small * 3, color=colour, marker=look.shape, linewidths=0
        )
    order = list(range(len(xs)))  # a captured line as drawn; a panels.line left to right
    if panel.axes is None:
        order = sorted(order, key=xs.__getitem__)
    marker = look.shape if len(xs) <= MARKERS else ""
    (shown,) = axes.plot(
        [xs[k] for k in order],
        [series.y[k] for k in order],
        color=colour,
        linewidth=1.8,
        linestyle=TWIN_DASHES if look.twin else "-",
        fillstyle="none" if look.twin else "full",
        marker=marker,
        markersize=4,
    )
    return shown
