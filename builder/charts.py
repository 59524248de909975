"""Bar panels as SVG: a pure function of the panel, drawn with matplotlib's public API.

`bar_svgs(panel)` gives the panel's SVG bytes per theme; the same panel gives the same bytes
in any process (a fixed `svg.hashsalt`, no date), and nothing is kept between calls, so a
cache can wrap it from outside. matplotlib is imported only when a chart is drawn.

Drawing is kept cheap by: margins computed from the measured text before the figure is made
(no `tight_layout` or `constrained_layout`, which lay out and draw every chart twice); text
written as SVG text (`svg.fonttype: none`); no automatic title placement; and one drawing
per panel, in the light theme: the dark SVG is the light one with the text and grid colours
swapped. The y-label goes where the layout made room for it, so matplotlib need not measure
the tick labels to place it. Each panel gets a new Figure: reusing one is no faster (clearing
an Axes costs what making one does) and would be state kept between calls.
`python bench/charts.py` times it.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from .recording import BarPanel, Number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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
# matplotlib's legend at 8 pt (its rc defaults): borderaxespad + borderpad, handle, gap
LEGEND_CHROME = (4 + 3.2) + 3.2 + 16 + 6.4  # beside the longest label
LEGEND_WRAP = 110.0  # points: a longer series label is wrapped
ROTATION = 30
TOP = EDGE + TITLE * LINE + TITLEPAD  # a one-line title
BOTTOM = TICK + FONT * LINE + EDGE  # one-line, unrotated x labels
AXES_HEIGHT = 230.4 - TOP - BOTTOM  # never less than this
SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))
_STYLE = re.compile(rb'style="[^"]*"')
_TEXT, _GRID = COLOURS["light"]["text"], COLOURS["light"]["grid"]
RC = MappingProxyType(  # matplotlib's settings for a chart: determinism, fonts, light colours
    {
        "svg.hashsalt": "course-builder",
        "svg.fonttype": "none",
        "text.parse_math": False,  # a `$` in a label is a dollar sign, as in the table
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "font.size": FONT,
        "figure.facecolor": "none",
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.transparent": True,
        "axes.titley": 1.0,  # where the title's pad puts it: no search for a free spot
        "axes.titlelocation": "left",
        "axes.titlesize": TITLE,
        "axes.titleweight": "bold",
        "axes.titlepad": TITLEPAD,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "axes.grid.axis": "y",
        "axes.axisbelow": True,  # the grid under the bars
        "xtick.bottom": False,  # no tick marks: the grid lines show the values
        "ytick.left": False,
        "xtick.major.size": 0,  # and the tick labels' pad is from the axes
        "ytick.major.size": 0,
        "xtick.major.pad": TICK,
        "ytick.major.pad": TICK,
        "legend.fontsize": SMALL,
        "legend.frameon": False,
        "text.color": _TEXT,
        "axes.titlecolor": _TEXT,
        "axes.labelcolor": _TEXT,
        "axes.edgecolor": _GRID,
        "axes.linewidth": 0.8,
        "xtick.color": _TEXT,
        "ytick.color": _TEXT,
        "xtick.labelcolor": _TEXT,
        "ytick.labelcolor": _TEXT,
        "grid.color": _GRID,
        "grid.linewidth": 0.8,
        "legend.labelcolor": _TEXT,
        "path.simplify": False,
    }
)


def bar_svgs(panel: BarPanel) -> dict[str, bytes]:
    """The panel as SVG bytes per theme ("light", "dark"), deterministic."""
    light = light_svg(panel)
    return {theme: recolour(light, theme) for theme in THEMES}


def light_svg(panel: BarPanel) -> bytes:
    """The panel drawn once, in the light theme."""
    from matplotlib import rc_context

    layout = _layout(panel)
    out = io.BytesIO()
    with rc_context(dict(RC)):
        figure = _figure(panel, layout)
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return out.getvalue()


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

    @property
    def height(self) -> float:
        return self.top + AXES_HEIGHT + self.bottom

    @property
    def axes_width(self) -> float:
        return WIDTH - self.left - self.right


def _layout(panel: BarPanel) -> Layout:
    text = _Measure()
    values = [y for series in panel.series for y in series.y]
    ylim = _ylim(values)
    yticks = _yticks(ylim, all(isinstance(y, int) for y in values))
    ytick_labels = _tick_labels(yticks)
    ylabel = text.wrap(panel.ylabel, FONT, AXES_HEIGHT)
    ylabel_offset = max(text.width(t, FONT) for t in ytick_labels) + TICK + LABELPAD
    left = EDGE + _lines(ylabel) * FONT * LINE + ylabel_offset
    many = len(panel.series) > 1
    legend = [text.wrap(s.label, SMALL, LEGEND_WRAP) if many else s.label for s in panel.series]
    right = EDGE + (LEGEND_CHROME + max(text.width(t, SMALL) for t in legend) if many else EDGE)
    count = len(panel.labels)
    pad = 0.6 + max(0, 3 - count) / 2  # few groups: narrower, centred bars
    slot = (WIDTH - left - right) / (count - 1 + 2 * pad)
    xlabels = [text.wrap(label, FONT, slot * 0.9) for label in panel.labels]
    rotated = any(_lines(t) > 2 or text.width(t, FONT) > slot * 0.9 for t in xlabels)
    if rotated:
        xlabels = [text.wrap(label, FONT, 140) for label in panel.labels]
        left = max(left, _rotated_overhang(text, xlabels, left, right, pad))
    bottom = TICK + EDGE + max(_extent(text, t, rotated) for t in xlabels)
    title = text.wrap(panel.title, TITLE, WIDTH - left - EDGE, bold=True)
    top = EDGE + _lines(title) * TITLE * LINE + TITLEPAD
    bar = slot * 0.8 / len(panel.series)
    widest = max(text.width(_short(y), SMALL) for y in values)
    show = len(values) <= 24 and widest <= (slot * 0.95 if not many else bar * 1.1)
    return Layout(
        title, ylabel, xlabels, legend, rotated, show, pad, yticks, ytick_labels, ylim,
        left, right, top, max(bottom, BOTTOM), ylabel_offset,
    )  # fmt: skip


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
    text: _Measure, labels: list[str], left: float, right: float, pad: float
) -> float:
    """The left margin that keeps rotated labels (hanging down-left of their tick) inside."""
    for _ in range(2):  # a wider margin narrows the slots a little: settle once more
        slot = (WIDTH - left - right) / (len(labels) - 1 + 2 * pad)
        reach = max(_reach(text, t) - (pad + i) * slot for i, t in enumerate(labels))
        left = max(left, EDGE + reach)
    return left


def _reach(text: _Measure, label: str) -> float:
    angle = math.radians(ROTATION)
    height = _lines(label) * FONT * LINE
    return text.width(label, FONT) * math.cos(angle) + height * math.sin(angle)


def _extent(text: _Measure, label: str, rotated: bool) -> float:
    """How far an x tick label reaches below its tick's pad."""
    height = _lines(label) * FONT * LINE
    if not rotated:
        return height
    angle = math.radians(ROTATION)
    return text.width(label, FONT) * math.sin(angle) + height * math.cos(angle)


def _lines(text: str) -> int:
    return text.count("\n") + 1


class _Measure:
    """Text widths in points as matplotlib's SVG backend measures them for layout, each
    string measured once per chart (FreeType lays out every glyph: most of a string's cost).
    """

    def __init__(self) -> None:
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import TextToPath

        self.measure = TextToPath().get_text_width_height_descent
        self.fonts = {
            (size, bold): FontProperties(family=FONTS[0], size=size, weight=weight)
            for size in (FONT, TITLE, SMALL)
            for bold, weight in ((False, "normal"), (True, "bold"))
        }
        self.widths: dict[tuple[str, float, bool], float] = {}

    def line(self, line: str, points: float, bold: bool = False) -> float:
        key = (line, points, bold)
        if key not in self.widths:
            width, _, _ = self.measure(line, self.fonts[points, bold], ismath=False)
            self.widths[key] = float(width)
        return self.widths[key]

    def width(self, text: str, points: float) -> float:
        """The widest line's."""
        return max(self.line(line, points) for line in text.split("\n"))

    def wrap(self, text: str, points: float, width: float, bold: bool = False) -> str:
        """Break `text` at spaces into lines no wider than `width` (a long word stays whole)."""
        if self.line(text, points, bold) <= width:
            return text
        lines: list[str] = []
        for word in text.split(" "):
            joined = f"{lines[-1]} {word}" if lines else word
            if lines and self.line(joined, points, bold) <= width:
                lines[-1] = joined
            else:
                lines.append(word)
        return "\n".join(lines)


def _figure(panel: BarPanel, layout: Layout) -> Figure:
    """A new figure with one Axes placed where the layout put it (nothing left to lay out)."""
    from matplotlib.figure import Figure

    height = layout.height
    figure = Figure(figsize=(WIDTH / 72, height / 72), dpi=72)
    figure.patch.set_visible(False)
    axes = figure.add_axes(
        (
            layout.left / WIDTH,
            layout.bottom / height,
            layout.axes_width / WIDTH,
            AXES_HEIGHT / height,
        )
    )
    axes.patch.set_visible(False)
    _axis_labels(axes, panel, layout)
    _bars(axes, panel, layout)
    if len(panel.series) > 1:
        axes.legend(loc="upper left", bbox_to_anchor=(1, 1))
    return figure


def _axis_labels(axes: Axes, panel: BarPanel, layout: Layout) -> None:
    """Limits, tick labels and title; the y-label where the layout measured room for it (so
    matplotlib need not measure the tick labels to place it)."""
    axes.set_xlim(-layout.pad, len(panel.labels) - 1 + layout.pad)
    axes.set_ylim(*layout.ylim)
    axes.set_yticks(layout.yticks, layout.ytick_labels)
    if layout.rotated:  # hanging down-left from the tick, its end under it
        axes.set_xticks(
            range(len(panel.labels)), layout.xlabels,
            rotation=ROTATION, ha="right", rotation_mode="anchor",
        )  # fmt: skip
    else:
        axes.set_xticks(range(len(panel.labels)), layout.xlabels)
    axes.set_title(layout.title)
    axes.set_ylabel(layout.ylabel)
    axes.yaxis.set_label_coords(-layout.ylabel_offset / layout.axes_width, 0.5)
    axes.xaxis.set_label_coords(0.5, 0)  # no x-label: nothing to place


def _bars(axes: Axes, panel: BarPanel, layout: Layout) -> None:
    """The bars, series side by side in each slot, and their values above (or below) them."""
    width = 0.8 / len(panel.series)
    low, high = layout.ylim
    gap = 2 * (high - low) / AXES_HEIGHT  # 2 points, in data units
    for index, (series, label) in enumerate(zip(panel.series, layout.legend, strict=True)):
        xs = [x - 0.4 + width * (index + 0.5) for x in range(len(panel.labels))]
        color = PALETTE[index % len(PALETTE)]
        axes.bar(xs, series.y, width, color=color, linewidth=0, label=label)
        if layout.values:
            for x, y in zip(xs, series.y, strict=True):
                up = y >= 0
                at = y + gap if up else y - gap
                va = "bottom" if up else "top"
                axes.text(x, at, _short(y), fontsize=SMALL, ha="center", va=va)
