"""Bar panels as SVG: a pure function of the panel, drawn with matplotlib's public API.

`bar_svgs(panel)` gives the panel's SVG bytes per theme; the same panel gives the same bytes
in any process (a fixed `svg.hashsalt`, no date), and nothing is kept between calls but
string widths (a pure function of the string), so a cache can wrap it from outside.
matplotlib is imported only when a chart is drawn.

Drawing is kept cheap by: margins computed from the measured text before the figure is made
(no `tight_layout` or `constrained_layout`, which lay out and draw every chart twice); no
Axes: a few figure-level artists placed in points from that layout (one path per series of
bars, one for the grid, one for the spines, a plain `Text` per label, swatches for the
legend), so there are no ticks, autoscaling or legend boxes to make and lay out; text
written as SVG text (`svg.fonttype: none`); the figure printed straight by the SVG canvas;
and one drawing per panel, in the light theme: the dark SVG is the light one with the text
and grid colours swapped. Text is drawn by one artist, `_Labels`, through the renderer's
public `draw_text`, one line at a time at the baseline the layout chose: a `Text` drawing
itself measures every line again with each new renderer (~0.4 ms a label, most of a
panel's time). `python bench/charts.py` times it.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..course.recording import BarPanel, Number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .chartlabels import Labels

Segment = tuple[tuple[float, float], tuple[float, float]]

THEMES: tuple[str, ...] = ("light", "dark")
PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#975a16")
COLOURS = MappingProxyType(  # every theme's colours must differ from the palette's (recolour)
    {
        "light": MappingProxyType({"text": "#1a202c", "grid": "#d5dbe3"}),
        "dark": MappingProxyType({"text": "#e2e8f0", "grid": "#3a4556"}),
    }
)
FONTS = ("DejaVu Sans", "Arial", "Helvetica")  # measured with the first; browsers fall back
FONT, TITLE, SMALL = 9.0, 11.0, 8.0  # points: ticks and y-label, title, values and legend
LINE = 1.2  # line height, in font sizes
WIDTH = 460.8  # points (6.4 in); the height grows from 3.2 in with extra lines of text
EDGE = 4.0  # points of air inside the figure's edge
TICK = 7.0  # from the axes to its tick labels (no tick marks: the grid shows the values)
LABELPAD = 4.0  # between the y tick labels and the y-label
TITLEPAD = 6.0
# a legend as matplotlib's at 8 pt: inset from the plot, swatch, gaps
LEGEND_INSET, HANDLE, HANDLE_HEIGHT, HANDLE_GAP, ENTRY_GAP = 4 + 3.2, 16, 5.6, 6.4, 4
LEGEND_CHROME = LEGEND_INSET + 3.2 + HANDLE + HANDLE_GAP  # beside the longest label
LEGEND_WRAP = 110.0  # points: a longer series label is wrapped
ROTATION = 30
TOP = EDGE + TITLE * LINE + TITLEPAD  # a one-line title
BOTTOM = TICK + FONT * LINE + EDGE  # one-line, unrotated x labels
AXES_HEIGHT = 230.4 - TOP - BOTTOM  # never less than this
LOG_RATIO = (
    100  # one positive value this many times another: a log scale (a bar of 1% shows nothing)
)


@dataclass(frozen=True)
class Size:
    """A chart's width and type sizes, in points (at 72 dpi a point is a CSS pixel x 3/4)."""

    width: float
    font: float  # ticks and the y-label
    small: float  # value labels and the legend
    stacked: bool  # the legend above the plot, one entry a line, rather than beside it


WIDE = Size(WIDTH, FONT, SMALL, stacked=False)
# A phone's column (~335 CSS px at 375): drawn at 255 pt = 340 px, its smallest text 9.5 pt
# = 12.7 px, 11 px or more shrunk to a column as narrow as 295 px (a folded lab answer);
# the legend stacked over the plot.
NARROW = Size(255.0, 10.0, 9.5, stacked=True)
SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))
_STYLE = re.compile(rb'style="[^"]*"')
_TEXT, _GRID = COLOURS["light"]["text"], COLOURS["light"]["grid"]
RC = MappingProxyType(  # matplotlib's settings for a chart: determinism, fonts, colours
    {
        "svg.hashsalt": "course-builder",
        "svg.fonttype": "none",
        "text.parse_math": False,  # a `$` in a label is a dollar sign, as in the table
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "font.size": FONT,
        "text.color": _TEXT,
        "path.simplify": False,
    }
)


def bar_svgs(panel: BarPanel, size: Size = WIDE) -> dict[str, bytes]:
    """The panel as SVG bytes per theme ("light", "dark"), deterministic; `size=NARROW`: the
    variant a phone shows."""
    light = light_svg(panel, size)
    return {theme: recolour(light, theme) for theme in THEMES}


def pixels(panel: BarPanel, size: Size = WIDE) -> tuple[int, int]:
    """The chart's width and height in CSS pixels, for the page's <img> (no layout shift)."""
    layout = _layout(panel, size)
    return round(size.width * 4 / 3), round(layout.height * 4 / 3)


def log_scale(panel: BarPanel) -> bool:
    """Whether the chart is drawn on a log scale: every value positive, and the largest at
    least LOG_RATIO times the smallest, so that a linear scale would flatten the small
    ones to nothing."""
    values = [y for series in panel.series for y in series.y]
    return min(values) > 0 and max(values) >= LOG_RATIO * min(values)


def light_svg(panel: BarPanel, size: Size = WIDE) -> bytes:
    """The panel drawn once, in the light theme."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    layout = _layout(panel, size)
    out = io.BytesIO()
    with _settings():
        canvas: Any = FigureCanvasSVG(_figure(panel, layout))  # print_svg has no stub types
        canvas.print_svg(out, metadata={"Date": None, "Creator": None})  # savefig's detours cost
    return out.getvalue()


@contextlib.contextmanager
def _settings() -> Iterator[None]:
    """matplotlib's settings as RC says while a chart is drawn, and as they were after.
    Only RC's keys are saved and restored: `rc_context` copies all of them, 0.23 ms of a
    chart's ~4 (0.02 ms this way)."""
    from matplotlib import rcParams

    saved = {key: rcParams[key] for key in RC}
    rcParams.update(RC)
    try:
        yield
    finally:
        rcParams.update(saved)


def recolour(svg: bytes, theme: str) -> bytes:
    """The light SVG in another theme: swap the text and grid colours in style attributes.

    Only `style="..."` attributes are touched, so a title that contains a colour string
    keeps it; the bars are the same colours in every theme.
    """
    light, other = COLOURS["light"], COLOURS[theme]
    swaps = [(light[k].encode(), other[k].encode()) for k in ("text", "grid")]

    def swap(match: re.Match[bytes]) -> bytes:
        style = match.group()
        for old, new in swaps:
            style = style.replace(old, new)
        return style

    return svg if theme == "light" else _STYLE.sub(swap, svg)


@dataclass(frozen=True)
class Layout:
    """Where everything goes, in points, computed from the text before drawing."""

    title: str
    ylabel: str
    xlabels: list[str]
    legend: list[str]
    rotated: bool
    values: bool  # value labels on the bars
    pad: float  # x-axis room beside the outer bars, in bar slots
    yticks: list[float]
    ytick_labels: list[str]
    ylim: tuple[float, float]
    left: float
    right: float
    top: float
    bottom: float
    ylabel_offset: float  # from the axes' left edge to the y-label's baseline
    size: Size = WIDE
    log: bool = False  # a log scale: ylim and yticks are values, placed by their log
    value_labels: tuple[tuple[str, ...], ...] = ()  # per series, per label
    legend_top: float = 0.0  # stacked: the legend's room above the plot

    @property
    def height(self) -> float:
        return self.top + AXES_HEIGHT + self.bottom

    @property
    def axes_width(self) -> float:
        return self.size.width - self.left - self.right


def _layout(panel: BarPanel, size: Size = WIDE) -> Layout:
    """Where everything goes. The title is not drawn: the page's caption says it."""
    font, small, width = size.font, size.small, size.width
    values = [y for series in panel.series for y in series.y]
    log = log_scale(panel)
    if log:
        ylim, yticks = _log_ylim(values)
        ytick_labels = [_short(t) for t in yticks]
    else:
        ylim = _ylim(values)
        yticks = _yticks(ylim, all(isinstance(y, int) for y in values))
        ytick_labels = _tick_labels(yticks)
    ylabel = _wrap(panel.ylabel + (" (log scale)" if log else ""), font, AXES_HEIGHT)
    ylabel_offset = max(_width(t, font) for t in ytick_labels) + TICK + LABELPAD
    left = EDGE + _lines(ylabel) * font * LINE + ylabel_offset
    many = len(panel.series) > 1
    legend_top = 0.0
    if many and size.stacked:  # one entry a line over the plot, as wide as the chart
        room = width - 2 * EDGE - HANDLE - HANDLE_GAP - LEGEND_INSET
        legend = [_wrap(s.label, small, room) for s in panel.series]
        legend_top = sum(_lines(t) * small * LINE + ENTRY_GAP for t in legend) + LEGEND_INSET
        right = EDGE
    else:
        legend = [_wrap(s.label, small, LEGEND_WRAP) if many else s.label for s in panel.series]
        right = EDGE + (LEGEND_CHROME + max(_width(t, small) for t in legend) if many else EDGE)
    count = len(panel.labels)
    pad = 0.6 + max(0, 3 - count) / 2  # few groups: narrower, centred bars
    slot = (width - left - right) / (count - 1 + 2 * pad)
    xlabels = [_wrap(label, font, slot * 0.9) for label in panel.labels]
    rotated = any(_lines(t) > 2 or _width(t, font) > slot * 0.9 for t in xlabels)
    if rotated:
        xlabels = [_wrap(label, font, 140 * width / WIDTH) for label in panel.labels]
        left = max(left, _rotated_overhang(xlabels, left, right, pad, size))
    bottom = TICK + EDGE + max(_extent(t, rotated, font) for t in xlabels)
    top = EDGE + small * LINE + legend_top  # room for the tallest bar's value label
    bar = slot * 0.8 / len(panel.series)
    labels = _value_labels(panel, log)
    widest = max(_width(t, small) for row in labels for t in row)
    show = len(values) <= 24 and widest <= (slot * 0.95 if not many else bar * 1.1)
    return Layout(
        panel.title, ylabel, xlabels, legend, rotated, show, pad, yticks, ytick_labels, ylim,
        left, right, top, max(bottom, TICK + font * LINE + EDGE), ylabel_offset, size, log,
        labels, legend_top,
    )  # fmt: skip


def _log_ylim(values: list[Number]) -> tuple[tuple[float, float], list[float]]:
    """From the decade at or below the smallest value to the one at or above the largest
    (and air for its label), with a tick at each decade."""
    low = 10.0 ** math.floor(math.log10(min(values) / 2))  # the smallest bar still shows
    high = 10.0 ** math.ceil(math.log10(max(values)) + 0.08)
    ticks = [10.0**k for k in range(round(math.log10(low)), round(math.log10(high)) + 1)]
    return (low, high), ticks


def _value_labels(panel: BarPanel, log: bool) -> tuple[tuple[str, ...], ...]:
    """Every bar's label in one precision: on a log scale three significant digits each;
    else one scale (k, M, ...) from the largest value, and the decimals that give it three
    significant digits, fewer if every value is exact with fewer."""
    values = [y for series in panel.series for y in series.y]
    top = max(abs(v) for v in values)
    if all(float(v).is_integer() for v in values) and top < 1e4:  # counts: exact
        return tuple(tuple(f"{int(y):,}".replace("-", "−") for y in s.y) for s in panel.series)
    if log:
        return tuple(tuple(_significant(y) for y in s.y) for s in panel.series)
    scale, suffix = _scale(top)
    scaled = [v / scale for v in values]
    biggest = max(abs(v) for v in scaled) or 1.0
    decimals = min(3, max(0, 2 - math.floor(math.log10(biggest))))
    while decimals and all(abs(round(v, decimals - 1) - v) < 1e-9 * max(1, abs(v)) for v in scaled):
        decimals -= 1

    def text(y: Number) -> str:
        shown = "0" if y == 0 else f"{y / scale:,.{decimals}f}" + suffix
        return shown.replace("-", "−")

    return tuple(tuple(text(y) for y in s.y) for s in panel.series)


def _significant(value: Number) -> str:
    """Three significant digits, trailing zeros kept (0.00980, 28.0, 1.24k)."""
    scale, suffix = _scale(abs(value))
    shown = f"{value / scale:#.3g}".rstrip(".") + suffix
    return shown.replace("-", "−")


def _ylim(values: list[Number]) -> tuple[float, float]:
    """From zero to the data, with 15% of air for the value labels on the far side."""
    low, high = min(0, *values), max(0, *values)
    span = (high - low) or 1.0
    return (
        low - 0.15 * span if low < 0 else 0.0,
        high + 0.15 * span if high > 0 or low == 0 else 0.0,
    )


def _yticks(ylim: tuple[float, float], integer: bool) -> list[float]:
    """matplotlib's tick chooser, kept to the ticks inside the limits."""
    from matplotlib.ticker import MaxNLocator

    low, high = ylim
    slack = (high - low) * 1e-9
    locator = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], integer=integer)
    return [float(t) for t in locator.tick_values(low, high) if low - slack <= t <= high + slack]


def _tick_labels(ticks: list[float]) -> list[str]:
    """Short labels in one scale and one precision: 1.5G, 256k, 0.25, 470n."""
    top = max(abs(t) for t in ticks)
    scale, suffix = _scale(top)
    scaled = [t / scale for t in ticks]
    decimals = next(
        (d for d in range(4) if all(abs(round(s, d) - s) < 1e-9 * max(1, abs(s)) for s in scaled)),
        3,
    )
    return ["0" if s == 0 else f"{s:,.{decimals}f}".replace("-", "−") + suffix for s in scaled]


def _short(value: Number) -> str:
    """A value label: exact when short, else three significant digits with a suffix."""
    scale, suffix = _scale(abs(value))
    if scale == 1 and float(value).is_integer():
        text = f"{int(value):,}"
    elif scale == 1:
        text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    else:
        text = f"{value / scale:.3g}{suffix}"
    return text.replace("-", "−")


def _scale(magnitude: float) -> tuple[float, str]:
    if magnitude == 0 or 1e-3 <= magnitude < 1e4:
        return 1.0, ""
    return next(((s, x) for s, x in SCALES if magnitude >= s), SCALES[-1])


def _rotated_overhang(
    labels: list[str], left: float, right: float, pad: float, size: Size = WIDE
) -> float:
    """The left margin that keeps rotated labels (hanging down-left of their tick) inside."""
    for _ in range(2):  # a wider margin narrows the slots a little: settle once more
        slot = (size.width - left - right) / (len(labels) - 1 + 2 * pad)
        reach = max(_reach(t, size.font) - (pad + i) * slot for i, t in enumerate(labels))
        left = max(left, EDGE + reach)
    return left


def _reach(label: str, font: float = FONT) -> float:
    angle = math.radians(ROTATION)
    height = _lines(label) * font * LINE
    return _width(label, font) * math.cos(angle) + height * math.sin(angle)


def _extent(label: str, rotated: bool, font: float = FONT) -> float:
    """How far an x tick label reaches below its tick's pad."""
    height = _lines(label) * font * LINE
    if not rotated:
        return height
    angle = math.radians(ROTATION)
    return _width(label, font) * math.sin(angle) + height * math.cos(angle)


def _lines(text: str) -> int:
    return text.count("\n") + 1


@lru_cache(maxsize=4096)
def _line_width(line: str, points: float, bold: bool = False) -> float:
    """A line's width in points as matplotlib's SVG backend measures it (FreeType lays out
    every glyph: most of a string's cost, so each string is measured once per process)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(family=FONTS[0], size=points, weight="bold" if bold else "normal")
    with warnings.catch_warnings():  # a glyph the font lacks (a tab, an emoji) measures as
        warnings.filterwarnings("ignore", "Glyph ", UserWarning)  # a blank:
        width, _, _ = text_to_path.get_text_width_height_descent(line, font, ismath=False)
    return float(width)  # the browser draws it in a font that has it


def _width(text: str, points: float) -> float:
    """The widest line's."""
    return max(_line_width(line, points) for line in text.split("\n"))


def _wrap(text: str, points: float, width: float, bold: bool = False) -> str:
    """Break `text` at spaces into lines no wider than `width` (a long word stays whole)."""
    if _line_width(text, points, bold) <= width:
        return text
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and _line_width(joined, points, bold) <= width:
            lines[-1] = joined
        else:
            lines.append(word)
    return "\n".join(lines)


class _Frame:
    """Data to figure points: the plot area's box, as the layout placed it."""

    def __init__(self, layout: Layout, count: int) -> None:
        self.left, self.bottom = layout.left, layout.bottom
        self.right, self.top = layout.left + layout.axes_width, layout.bottom + AXES_HEIGHT
        self.x0, self.xscale = -layout.pad, layout.axes_width / (count - 1 + 2 * layout.pad)
        low, high = layout.ylim
        self.log = layout.log
        if self.log:
            low, high = math.log10(low), math.log10(high)
        self.y0, self.yscale = low, AXES_HEIGHT / (high - low)
        self.base = self.bottom if self.log else self.y(0)  # where bars start

    def x(self, x: float) -> float:
        return self.left + (x - self.x0) * self.xscale

    def y(self, y: float) -> float:
        value = math.log10(y) if self.log else y
        return self.bottom + (value - self.y0) * self.yscale


def _figure(panel: BarPanel, layout: Layout) -> Figure:
    """A new figure of a few figure-level artists placed in points (at 72 dpi a point is a
    pixel): no Axes, so no ticks, autoscaling or legend boxes to make and lay out."""
    from matplotlib.figure import Figure

    from .chartlabels import Labels

    figure = Figure(figsize=(layout.size.width / 72, layout.height / 72), dpi=72)
    figure.patch.set_visible(False)
    frame = _Frame(layout, len(panel.labels))
    text = Labels()
    _grid(figure, layout, frame)
    _bars(figure, text, panel, layout, frame)
    _ticks(text, layout, frame)
    _titles(text, layout, frame)
    if len(layout.legend) > 1 and layout.size.stacked:
        top = layout.height - EDGE
        _legend(figure, text, layout.legend, EDGE - LEGEND_INSET, top, layout.size.small)
    elif len(layout.legend) > 1:
        _legend(figure, text, layout.legend, frame.right, frame.top, layout.size.small)
    figure.add_artist(text)
    return figure


def _segments(figure: Figure, lines: list[Segment], zorder: float, capstyle: str) -> None:
    """Straight grid-coloured 0.8 pt lines as one path (one SVG element), in points."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path
    from matplotlib.transforms import IdentityTransform

    path = Path([p for line in lines for p in line], [Path.MOVETO, Path.LINETO] * len(lines))
    style = {"fill": False, "edgecolor": _GRID, "linewidth": 0.8, "capstyle": capstyle}
    figure.add_artist(PathPatch(path, transform=IdentityTransform(), zorder=zorder, **style))


def _grid(figure: Figure, layout: Layout, frame: _Frame) -> None:
    """Grid lines at the y ticks under the bars, the left and bottom spines over them."""
    lines = [((frame.left, frame.y(t)), (frame.right, frame.y(t))) for t in layout.yticks]
    _segments(figure, lines, zorder=0.5, capstyle="butt")
    left = ((frame.left, frame.bottom), (frame.left, frame.top))
    bottom = ((frame.left, frame.bottom), (frame.right, frame.bottom))
    _segments(figure, [left, bottom], zorder=2.5, capstyle="projecting")


def _bars(figure: Figure, text: Labels, panel: BarPanel, layout: Layout, frame: _Frame) -> None:
    """The bars, one path per series, and their values above (or below) them."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path
    from matplotlib.transforms import IdentityTransform

    width = 0.8 / len(panel.series)
    base = frame.base
    codes = [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]
    for index, series in enumerate(panel.series):
        xs = [x - 0.4 + width * (index + 0.5) for x in range(len(panel.labels))]
        corners: list[tuple[float, float]] = []
        for x, y in zip(xs, series.y, strict=True):
            x0, x1, top = frame.x(x - width / 2), frame.x(x + width / 2), frame.y(y)
            corners += [(x0, base), (x1, base), (x1, top), (x0, top), (x0, base)]
        color = PALETTE[index % len(PALETTE)]
        bars = Path(corners, codes * len(xs))
        figure.add_artist(PathPatch(bars, fc=color, ec="none", transform=IdentityTransform()))
        if layout.values:
            shown = layout.value_labels[index]
            for x, y, label in zip(xs, series.y, shown, strict=True):
                up = y >= 0
                at = (frame.x(x), frame.y(y) + (2 if up else -2))
                text.add(at, label, size=layout.size.small, ha="center", va=_VA[up])


_VA = MappingProxyType({True: "bottom", False: "top"})  # a value label above or below its bar


def _ticks(text: Labels, layout: Layout, frame: _Frame) -> None:
    """Tick labels where matplotlib's ticks would put them (no Tick: five artists each)."""
    x = frame.left - TICK
    for y, label in zip(layout.yticks, layout.ytick_labels, strict=True):
        text.add((x, frame.y(y)), label, size=layout.size.font, ha="right", va="center_baseline")
    y = frame.bottom - TICK
    style: dict[str, Any] = (
        {"ha": "right", "rotation": ROTATION} if layout.rotated else {"ha": "center"}
    )
    for x, label in enumerate(layout.xlabels):
        text.add((frame.x(x), y), label, size=layout.size.font, va="top", **style)


def _titles(text: Labels, layout: Layout, frame: _Frame) -> None:
    """The y-label beside the tick labels. The title is the page's: its caption says it
    above the chart, once."""
    at = (frame.left - layout.ylabel_offset, (frame.bottom + frame.top) / 2)
    text.add(at, layout.ylabel, size=layout.size.font, ha="center", va="bottom", rotation=90)


def _legend(
    figure: Figure, text: Labels, labels: list[str], left: float, top: float, small: float = SMALL
) -> None:
    """A swatch and a label per series, top-aligned beside the plot (matplotlib's legend
    lays out offset boxes: as costly as the rest of the chart)."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import IdentityTransform

    x, y = left + LEGEND_INSET, top - LEGEND_INSET  # y: the top of the next entry
    for index, label in enumerate(labels):
        middle = y - small * LINE / 2  # of the label's first line
        color = PALETTE[index % len(PALETTE)]
        corner = (x, middle - HANDLE_HEIGHT / 2)
        swatch = Rectangle(corner, HANDLE, HANDLE_HEIGHT, fc=color, ec="none")
        swatch.set_gid(f"legend-{index}")
        figure.add_artist(swatch).set_transform(IdentityTransform())
        text.add((x + HANDLE + HANDLE_GAP, y), label, size=small, va="top")
        y -= _lines(label) * small * LINE + ENTRY_GAP
