"""Bar panels as SVG: a pure function of the panel, drawn and laid out by matplotlib.

`sized_svgs(panel)` gives the panel's SVG bytes per size (wide, narrow) and theme,
`bar_svgs(panel, size)` one size's; the same panel gives the same bytes in any process (a
fixed `svg.hashsalt`, no date), and nothing is kept between calls, so a cache can wrap it
from outside (builder/render/lessons.py keeps one drawing per content digest in the
store). matplotlib is imported only when a chart is drawn.

matplotlib lays the figure out: one Axes, `layout="constrained"` (margins from the
measured ticks, labels and legend), its legend placed `outside` the plot (beside it, or
above it in the narrow variant). What is decided here is what to say (builder/render/
chartlabels.py: the scale, ticks, value labels in one precision) and the figure's size,
from the number of lines and characters of its text, so that a page can size its `<img>`
without drawing; constrained layout then fits everything inside that size. The chart is
drawn once, in the light theme: the dark SVG is the light one with the text and grid
colours swapped. The layout measures every text twice and the drawing once more, so the
layout and the drawing share one renderer (matplotlib caches what it measured per
renderer); the x labels and the values are plain texts rather than ticks and annotations;
the narrow chart re-dresses the wide one's figure. `python bench/charts.py` times it
(docs/benchmarks.md).
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..course.recording import BarPanel
from . import chartlabels as text
from .chartlabels import log_scale as log_scale  # the alt text says the scale

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.transforms import Transform

THEMES: tuple[str, ...] = ("light", "dark")
PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#975a16")
COLOURS = MappingProxyType(  # every theme's colours must differ from the palette's (recolour)
    {
        "light": MappingProxyType({"text": "#1a202c", "grid": "#d5dbe3"}),
        "dark": MappingProxyType({"text": "#e2e8f0", "grid": "#3a4556"}),
    }
)
FONTS = ("DejaVu Sans", "Arial", "Helvetica")  # matplotlib measures with the first
LINE = 1.2  # line height, in font sizes
EM = 0.6  # a character's width, in font sizes, at most (DejaVu Sans: digits 0.64, "a" 0.61)
EDGE = 4.0  # points of air inside the figure's edge
TICK = 7.0  # from the axes to its tick labels (no tick marks: the grid shows the values)
AXES = 185.0  # points: the plot's height, whatever text is around it
ROTATION = 30  # long x labels; 90 where slanted ones would overlap
_STYLE = re.compile(rb'style="[^"]*"')
_TEXT, _GRID = COLOURS["light"]["text"], COLOURS["light"]["grid"]


@dataclass(frozen=True)
class Size:
    """A chart's width and type sizes, in points (at 72 dpi a point is a CSS pixel x 3/4)."""

    width: float
    font: float  # ticks and the y-label
    small: float  # value labels and the legend
    stacked: bool  # the legend above the plot, one entry a line, rather than beside it


WIDE = Size(460.8, 9.0, 8.0, stacked=False)  # 6.4 in
# A phone's column (~335 CSS px at 375): drawn at 255 pt = 340 px, its smallest text 9.5 pt
# = 12.7 px, 11 px or more shrunk to a column as narrow as 295 px (a folded lab answer);
# the legend stacked over the plot.
NARROW = Size(255.0, 10.0, 9.5, stacked=True)
SIZES = MappingProxyType({"wide": WIDE, "narrow": NARROW})  # what a page shows
RC = MappingProxyType(  # matplotlib's settings for a chart: determinism, fonts, colours, layout
    {
        "svg.hashsalt": "course-builder",
        "svg.fonttype": "none",  # text stays text: no glyph paths to write
        "text.parse_math": False,  # a `$` in a label is a dollar sign, as in the table
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "text.color": _TEXT,
        "axes.labelcolor": _TEXT,
        "xtick.color": _TEXT,
        "ytick.color": _TEXT,
        "axes.edgecolor": _GRID,
        "grid.color": _GRID,
        "axes.linewidth": 0.8,
        "grid.linewidth": 0.8,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.axisbelow": True,
        "xtick.bottom": False,  # no tick marks (their markers would be <use> elements)
        "ytick.left": False,
        "xtick.major.size": 0.0,  # nor room for them: the labels are TICK from the axes
        "ytick.major.size": 0.0,
        "xtick.major.pad": TICK,
        "ytick.major.pad": TICK,
        "axes.labelpad": 4.0,
        "legend.frameon": False,
        "figure.constrained_layout.h_pad": EDGE / 72,
        "figure.constrained_layout.w_pad": EDGE / 72,
        "path.simplify": False,
    }
)


def bar_svgs(panel: BarPanel, size: Size = WIDE) -> dict[str, bytes]:
    """The panel as SVG bytes per theme ("light", "dark"), deterministic; `size=NARROW`: the
    variant a phone shows."""
    return sized_svgs(panel, {"": size})[""]


def sized_svgs(panel: BarPanel, sizes: Mapping[str, Size] = SIZES) -> dict[str, dict[str, bytes]]:
    """The panel's SVGs per size (by its name in `sizes`) and theme, from one figure: drawn
    at the first size, then re-sized and re-dressed for the next (the axes, bars and y axis
    are the same); each the same bytes as `bar_svgs(panel, size)` gives."""
    return {
        name: {theme: recolour(light, theme) for theme in THEMES}
        for name, light in _light_svgs(panel, sizes).items()
    }


def drawn(panel: BarPanel) -> BarPanel:
    """What of the panel a chart draws: all but the title (the page's caption says it), so
    that panels that differ only in their title share one drawing."""
    return replace(panel, title="")


def drawing(panel: BarPanel) -> str:
    """What the chart draws, as text: the name of its drawing in the store's keys (its
    size, its SVGs) and, digested, in its file's name (figures.chart_file)."""
    return repr(drawn(panel))


def pixels(panel: BarPanel, size: Size = WIDE) -> tuple[int, int]:
    """The chart's width and height in CSS pixels, for the page's <img> (no layout shift):
    known before drawing, which needs no matplotlib."""
    return round(size.width * 4 / 3), round(_plan(panel, size).height * 4 / 3)


def light_svg(panel: BarPanel, size: Size = WIDE) -> bytes:
    """The panel drawn once, in the light theme."""
    return _light_svgs(panel, {"": size})[""]


def _light_svgs(panel: BarPanel, sizes: Mapping[str, Size]) -> dict[str, bytes]:
    """The panel drawn in the light theme at each size, one figure re-dressed for each."""
    drawn: dict[str, bytes] = {}
    with _settings():
        figure = None
        for name, size in sizes.items():
            if figure is None:
                figure = _figure(panel, size)
            else:  # the same axes, bars and y axis: only what depends on the size changes
                _undress(figure)
                _dress(figure, panel, size)
            drawn[name] = _svg(figure)
    return drawn


def _svg(figure: Figure) -> bytes:
    """The figure as SVG: laid out and drawn with one renderer (what `print_svg` does, but
    for its second renderer, made only for the layout), so matplotlib measures each text
    once and its measurements serve the layout and the drawing alike."""
    from matplotlib.backends import backend_svg

    svg: Any = backend_svg  # its renderer has no stub types
    out = io.StringIO()
    width, height = figure.get_size_inches() * 72
    meta = {"Date": None, "Creator": None}
    renderer = svg.RendererSVG(width, height, out, image_dpi=72, metadata=meta)
    canvas: Any = svg.FigureCanvasSVG(figure)
    canvas.get_renderer = lambda: renderer  # what the layout engine measures with
    figure.draw(renderer)  # constrained layout first, then the drawing
    renderer.finalize()
    return out.getvalue().encode()


@contextlib.contextmanager
def _settings() -> Iterator[None]:
    """matplotlib's settings as RC says while a chart is drawn, and as they were after.
    Only RC's keys are saved and restored (`rc_context` copies all of them)."""
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
class Plan:
    """What the chart says and how big it is, before matplotlib lays it out."""

    ylabel: str
    xlabels: list[str]
    legend: list[str]
    rotation: int  # of the x labels, degrees (0: level)
    values: bool  # value labels on the bars
    height: float  # points


def _plan(panel: BarPanel, size: Size) -> Plan:
    """The text's lines, and a height that gives the plot AXES points after the text
    around it, counted in lines and (rotated) characters: constrained layout fits it."""
    font, small, width = size.font, size.small, size.width
    ylabel = panel.ylabel + (" (log\0scale)" if log_scale(panel) else "")  # one word
    ylabel = text.wrap(ylabel, 0.9 * AXES / (EM * font)).replace("\0", " ")  # as high as the plot
    many = len(panel.series) > 1
    columns = (width - 2 * EDGE - 30) / (EM * small) if size.stacked else 18
    legend = [text.wrap(s.label, columns) for s in panel.series] if many else []
    beside = 0.0 if size.stacked or not many else 30 + max(map(text.longest, legend)) * EM * small
    count = len(panel.labels)
    pad = _pad(count)
    slot = (width - 60 - beside) / (count - 1 + 2 * pad)  # ~60 pt: ticks and y-label
    xlabels = [text.wrap(label, slot * 0.9 / (EM * font)) for label in panel.labels]
    rotated = any(text.lines(t) > 2 or text.longest(t) * EM * font > slot * 0.9 for t in xlabels)
    below = max(text.lines(t) for t in xlabels) * font * LINE
    rotation = 0
    if rotated:
        xlabels, rotation, below = _slanted(panel.labels, slot, size)
    stacked = sum(text.lines(t) * small * LINE + 4 for t in legend) + 8 if size.stacked else 0.0
    bar = slot * 0.8 / len(panel.series)
    widest = max(len(t) for row in text.value_labels(panel) for t in row) * EM * small
    show = len(text.values(panel)) <= 24 and widest <= (bar * 1.1 if many else slot * 0.95)
    height = EDGE + stacked + small * LINE + AXES + TICK + below + EDGE
    return Plan(ylabel, xlabels, legend, rotation, show, height)


def _pad(count: int) -> float:
    """The x axis's room beside the outer bars, in bar slots: few groups, narrower bars."""
    return 0.6 + max(0, 3 - count) / 2


def _slanted(labels: list[str], slot: float, size: Size) -> tuple[list[str], int, float]:
    """Long x labels turned ROTATION degrees, or upright where slanted ones would overlap
    (in as many lines as a slot holds side by side); and how far below the plot they reach."""
    font = size.font
    xlabels = [text.wrap(label, 140 * size.width / WIDE.width / (EM * font)) for label in labels]
    thick = max(map(text.lines, xlabels)) * font * LINE  # across the slanted lines
    rotation = ROTATION if slot * math.sin(math.radians(ROTATION)) >= thick else 90
    if rotation == 90:
        across = max(1, math.floor(slot * 0.9 / (font * LINE)))  # lines side by side
        xlabels = [text.wrap(label, math.ceil(len(label) / across)) for label in labels]
    angle = math.radians(rotation)
    below = max(
        text.longest(t) * EM * font * math.sin(angle)
        + text.lines(t) * font * LINE * math.cos(angle)
        for t in xlabels
    )
    return xlabels, rotation, below


def _figure(panel: BarPanel, size: Size) -> Figure:
    """The chart as a matplotlib figure, laid out by its constrained layout engine when drawn."""
    figure = _base(panel)
    _dress(figure, panel, size)
    return figure


def _base(panel: BarPanel) -> Figure:
    """What every size shares: the axes, the bars, the limits and the y ticks and grid."""
    from matplotlib.figure import Figure

    figure = Figure(dpi=72, layout="constrained")
    figure.patch.set_visible(False)
    axes = figure.add_subplot()
    axes.patch.set_visible(False)
    if log_scale(panel):
        axes.set_yscale("log")
    for index, series in enumerate(panel.series):
        colour = PALETTE[index % len(PALETTE)]
        axes.bar(_xs(panel, index), series.y, 0.8 / len(panel.series), color=colour, linewidth=0)
    ylim, ticks, labels = text.y_axis(panel)
    axes.set_ylim(*ylim)
    axes.set_yticks(ticks, labels)
    axes.minorticks_off()
    pad = _pad(len(panel.labels))
    axes.set_xlim(-pad, len(panel.labels) - 1 + pad)
    axes.set_xticks([])  # the x labels are texts (`_dress`)
    axes.grid(axis="y")
    return figure


def _dress(figure: Figure, panel: BarPanel, size: Size) -> None:
    """The figure at `size`: its height, the text's sizes, the x labels, the values and the
    legend as the plan says."""
    plan = _plan(panel, size)
    figure.set_size_inches(size.width / 72, plan.height / 72)
    axes = figure.axes[0]
    axes.tick_params(axis="y", labelsize=size.font)
    axes.set_ylabel(plan.ylabel, fontsize=size.font)
    _values(axes, panel, plan, size)
    _xlabels(axes, plan, size)
    if plan.legend:
        where = "outside upper left" if size.stacked else "outside right upper"
        bars: Any = axes.containers  # one BarContainer a series: legend handles
        style = {"loc": where, "fontsize": size.small, "handlelength": 1.6}
        legend = figure.legend(bars, plan.legend, **style)
        for index, handle in enumerate(legend.legend_handles):
            assert handle is not None
            handle.set_gid(f"legend-{index}")


def _undress(figure: Figure) -> None:
    """What `_dress` added removed: the axes' texts (x labels, values) and the legend; and
    the axes where a new figure's start, as the layout's result depends a little on where
    it starts from (the same bytes as a chart drawn alone)."""
    axes = figure.axes[0]
    for artist in [*axes.texts, *figure.legends]:
        artist.remove()
    spec = axes.get_subplotspec()
    assert spec is not None
    axes.set_position(spec.get_position(figure))
    axes.set_in_layout(True)  # set_position takes the axes out of the layout


def _xs(panel: BarPanel, index: int) -> list[float]:
    """Where series `index`'s bars stand: side by side in each group, 0.8 wide in all."""
    width = 0.8 / len(panel.series)
    return [x - 0.4 + width * (index + 0.5) for x in range(len(panel.labels))]


def _values(axes: Axes, panel: BarPanel, plan: Plan, size: Size) -> None:
    """Each bar's value 2 points beyond its end, if the plan shows values: plain texts
    (bar_label's annotations cost more)."""
    up = {"transform": axes.transData + _points(axes, 2.0), "va": "bottom"}
    down = {"transform": axes.transData + _points(axes, -2.0), "va": "top"}
    for index, shown in enumerate(text.value_labels(panel) if plan.values else ()):
        for x, y, value in zip(_xs(panel, index), panel.series[index].y, shown, strict=True):
            end: dict[str, Any] = up if y >= 0 else down
            axes.text(x, y, value, ha="center", fontsize=size.small, clip_on=False, **end)


def _xlabels(axes: Axes, plan: Plan, size: Size) -> None:
    """The x labels: plain texts TICK points under the axes, where ticks would put them (a
    tick is five artists, measured again by every pass of the layout), slanted if long."""
    style: dict[str, Any] = {"ha": "center", "fontsize": size.font}
    if plan.rotation:  # hanging down-left of their place: matplotlib makes room for them
        style |= {"ha": "right", "rotation": plan.rotation, "rotation_mode": "anchor"}
    under = axes.get_xaxis_transform() + _points(axes, -TICK)
    for x, label in enumerate(plan.xlabels):
        axes.text(x, 0, label, transform=under, va="top", clip_on=False, **style)


def _points(axes: Axes, dy: float) -> Transform:
    """A shift by `dy` points up (down if negative), whatever the data's scale."""
    from matplotlib.transforms import ScaledTranslation

    return ScaledTranslation(0, dy / 72, axes.figure.dpi_scale_trans)
