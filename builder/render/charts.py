"""Bar panels as SVG: a pure function of the panel, drawn and laid out by matplotlib.

`sized_svgs(panel)` gives the SVG bytes per size (wide, narrow) and theme, the same bytes in
any process (a fixed `svg.hashsalt`, no date) and nothing kept between calls, so a cache can
wrap it from outside. matplotlib is imported only when a chart is drawn.

What to say (chartlabels.py) and the figure's size (chartplan.py) are decided before
drawing, so a page can size its `<img>` without matplotlib; constrained layout then fits the
text inside that size. Labels and bars carry ids (`label-N`, `bar-S-N`) for tests. The chart
is drawn once, light: the dark SVG swaps its colours. The layout and the drawing share one
renderer (matplotlib caches its text measurements per renderer), and the narrow chart
re-dresses the wide one's figure when its bars stand upright in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any

from ..course.recording import BarPanel, ImagePanel, Panel, XYPanel
from . import chartlabels as text
from . import images, plots
from .chartlabels import log_scale as log_scale  # the alt text says the scale
from .chartplan import BAR, LIFT, TICK, Plan, pad, plan
from .chartplan import NARROW as NARROW
from .chartplan import SIZES as SIZES
from .chartplan import WIDE as WIDE
from .chartplan import Size as Size
from .chartsvg import PALETTE, recolour, shift, svg
from .chartsvg import THEMES as THEMES
from .chartsvg import settings as _settings  # tests lay a chart out under its settings

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def bar_svgs(panel: BarPanel, size: Size = WIDE) -> dict[str, bytes]:
    """The panel as SVG bytes per theme ("light", "dark"), deterministic; `size=NARROW`: the
    variant a phone shows."""
    return sized_svgs(panel, {"": size})[""]


def sized_svgs(panel: Panel, sizes: Mapping[str, Size] = SIZES) -> dict[str, dict[str, bytes]]:
    """The panel's SVGs per size (by its name in `sizes`) and theme. Bars: from one figure,
    drawn at the first size, then re-sized and re-dressed for the next (the axes, bars and
    y axis are the same); each the same bytes as `bar_svgs(panel, size)` gives. Lines and
    points: builder/render/plots.py; images: builder/render/images.py."""
    if isinstance(panel, XYPanel):
        light = plots.light_svgs(panel, sizes)
    elif isinstance(panel, ImagePanel):
        light = images.light_svgs(panel, sizes)
    else:
        light = _light_svgs(panel, sizes)
    return {name: {theme: recolour(svg, theme) for theme in THEMES} for name, svg in light.items()}


def drawn(panel: Panel) -> Panel:
    """What of the panel a chart draws: all but the title (the page's caption says it), so
    that panels that differ only in their title share one drawing."""
    return replace(panel, title="")


def drawing(panel: Panel) -> str:
    """What the chart draws, as text: the name of its drawing in the store's keys (its
    size, its SVGs) and, digested, in its file's name (figures.chart_file). The fields
    added for captured figures are left out where absent, so that a chart of a panel made
    before them keeps its name (and its cached drawing)."""
    return _described(drawn(panel))


ADDED = frozenset({"axes", "x", "mark", "low", "high", "of"})  # optional, since figures


def _described(value: object) -> str:
    """repr(value), without the ADDED fields that are None."""
    if isinstance(value, list):
        return "[" + ", ".join(map(_described, value)) + "]"
    if not is_dataclass(value):
        return repr(value)
    shown = [(f.name, getattr(value, f.name)) for f in fields(value)]
    said = [f"{k}={_described(v)}" for k, v in shown if v is not None or k not in ADDED]
    return f"{type(value).__name__}({', '.join(said)})"


def pixels(panel: Panel, size: Size = WIDE) -> tuple[int, int]:
    """The chart's width and height in CSS pixels, for the page's <img> (no layout shift):
    known before drawing, which needs no matplotlib."""
    if isinstance(panel, XYPanel):
        return plots.pixels(panel, size)
    if isinstance(panel, ImagePanel):
        return images.pixels(panel, size)
    return round(size.width * 4 / 3), round(plan(panel, size).height * 4 / 3)


def _light_svgs(panel: BarPanel, sizes: Mapping[str, Size]) -> dict[str, bytes]:
    """The panel drawn in the light theme at each size, one figure re-dressed for the next
    while the bars stand upright in both (bars that lie across are a figure of their own)."""
    drawn: dict[str, bytes] = {}
    with _settings():
        figure, across = None, False
        for name, size in sizes.items():
            planned = plan(panel, size)
            if figure is None or across or planned.across:
                figure = _figure(panel, size, planned)
            else:  # the same axes, bars and y axis: only what depends on the size changes
                _undress(figure)
                _dress(figure, panel, size, planned)
            drawn[name], across = svg(figure), planned.across
    return drawn


def _figure(panel: BarPanel, size: Size, planned: Plan | None = None) -> Figure:
    """The chart as a matplotlib figure, laid out by its constrained layout engine when drawn."""
    planned = planned or plan(panel, size)
    figure = _base(panel, planned)
    _dress(figure, panel, size, planned)
    return figure


def _base(panel: BarPanel, planned: Plan) -> Figure:
    """What every size with upright bars shares: the axes, the bars, the limits and the
    value ticks and grid (bars that lie across: where the plan puts them)."""
    from matplotlib.figure import Figure

    figure = Figure(dpi=72, layout="constrained")
    figure.patch.set_visible(False)
    axes = figure.add_subplot()
    axes.patch.set_visible(False)
    across = planned.across
    if log_scale(panel):
        axes.set_xscale("log") if across else axes.set_yscale("log")
    for index, series in enumerate(panel.series):
        colour = PALETTE[index % len(PALETTE)]
        where, thick = _bars(panel, planned, index)
        draw = axes.barh if across else axes.bar
        bars = draw(where, series.y, thick, color=colour, linewidth=0)
        for number, patch in enumerate(bars.patches):
            patch.set_gid(f"bar-{index}-{number}")  # what tests find a label's bars by
    limits, ticks, labels = text.y_axis(panel)
    count = len(panel.labels)
    if across:  # the first group on top
        axes.set(xlim=limits, ylim=(count, 0), yticks=[])
        axes.set_xticks(ticks, labels)
    else:
        axes.set(ylim=limits, xlim=(-pad(count), count - 1 + pad(count)), xticks=[])
        axes.set_yticks(ticks, labels)
    axes.minorticks_off()  # the labels are texts (`_dress`), not ticks
    axes.grid(axis="x" if across else "y")
    return figure


def _bars(panel: BarPanel, planned: Plan, index: int) -> tuple[list[float], float]:
    """Where series `index`'s bars stand, and how thick they are: side by side in each
    group, 0.8 wide in all, or across: group k from k down (the first on top), under its
    label."""
    if not planned.across:
        width = 0.8 / len(panel.series)
        return [x - 0.4 + width * (index + 0.5) for x in range(len(panel.labels))], width
    top = 1 - BAR * len(panel.series) / planned.slot  # where a group's first bar starts
    step = BAR / planned.slot
    return [k + top + step * (index + 0.5) for k in range(len(panel.labels))], step * 0.9


def _dress(figure: Figure, panel: BarPanel, size: Size, planned: Plan) -> None:
    """The figure at `size`: its height, the text's sizes, the labels, the values and the
    legend as the plan says."""
    figure.set_size_inches(size.width / 72, planned.height / 72)
    axes = figure.axes[0]
    axes.tick_params(axis="x" if planned.across else "y", labelsize=size.font)
    if planned.across:
        axes.set_xlabel(planned.ylabel, fontsize=size.font)
    else:
        axes.set_ylabel(planned.ylabel, fontsize=size.font)
    _values(axes, panel, planned, size)
    _labels(axes, panel, planned, size)
    if planned.legend:
        where = "outside upper left" if size.stacked else "outside right upper"
        bars: Any = axes.containers  # one BarContainer a series: legend handles
        style = {"loc": where, "fontsize": size.small, "handlelength": 1.6}
        legend = figure.legend(bars, planned.legend, **style)
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


def _values(axes: Axes, panel: BarPanel, planned: Plan, size: Size) -> None:
    """Each bar's value LIFT points beyond its end, if the plan shows values: plain texts
    (bar_label's annotations cost more)."""
    up: dict[str, Any]
    down: dict[str, Any]
    style: dict[str, Any]
    if planned.across:
        up = {"transform": axes.transData + shift(axes, LIFT, 0), "ha": "left"}
        down = {"transform": axes.transData + shift(axes, -LIFT, 0), "ha": "right"}
        style = {"va": "center_baseline", "fontsize": size.small, "clip_on": False}
    else:
        up = {"transform": axes.transData + shift(axes, 0, LIFT), "va": "bottom"}
        down = {"transform": axes.transData + shift(axes, 0, -LIFT), "va": "top"}
        style = {"ha": "center", "fontsize": size.small, "clip_on": False}
    for index, shown in enumerate(text.value_labels(panel) if planned.values else ()):
        where = _bars(panel, planned, index)[0]
        for at, y, value in zip(where, panel.series[index].y, shown, strict=True):
            end = up if y >= 0 else down
            x, y = (y, at) if planned.across else (at, y)
            axes.text(x, y, value, **style, **end)


def _labels(axes: Axes, panel: BarPanel, planned: Plan, size: Size) -> None:
    """The bars' labels: plain texts TICK points under the axes, where ticks would put them
    (a tick is five artists, measured again by every pass of the layout), slanted if long;
    or, where bars lie across, each LIFT points above its group's first bar, from the
    plot's left edge."""
    from matplotlib.transforms import blended_transform_factory

    style: dict[str, Any] = {"ha": "center", "va": "top", "fontsize": size.font}
    if planned.across:
        style |= {"ha": "left", "va": "bottom"}
        blend = blended_transform_factory(axes.transAxes, axes.transData)
        place = blend + shift(axes, 0, LIFT)
        tops = [k + 1 - BAR * len(panel.series) / planned.slot for k in range(len(panel.labels))]
        spots = [(0.0, top) for top in tops]
    else:
        place = axes.get_xaxis_transform() + shift(axes, 0, -TICK)
        spots = [(float(x), 0.0) for x in range(len(panel.labels))]
    if planned.rotation:  # hanging down-left of their place: matplotlib makes room for them
        style |= {"ha": "right", "rotation": planned.rotation, "rotation_mode": "anchor"}
    if planned.rotation == 90:  # upright: the lines side by side, centred on the bars
        style |= {"va": "center"}
    for index, ((x, y), label) in enumerate(zip(spots, planned.xlabels, strict=True)):
        axes.text(x, y, label, transform=place, clip_on=False, gid=f"label-{index}", **style)
