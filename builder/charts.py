"""Bar panels drawn with matplotlib as SVG, deterministically, cached by content.

matplotlib is imported only when a chart is actually drawn, never on a cache hit. Drawing
is made cheap by: margins computed from the measured text (no `tight_layout`, which laid
out and drew every chart twice); everything placed in points from that layout as a few
figure-level artists on one figure per process (no Axes, ticks, autoscaling or legend
boxes: one path per series of bars, one for the grid, one for the spines, reused texts)
and drawn straight to matplotlib's SVG renderer (no savefig); each string measured and
each text laid out once per process; and a panel drawn once, in the light theme: its dark
SVG is the light one with the text and grid colours swapped. `python bench/charts.py`
times it.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from .recording import BarPanel, Number

PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#975a16")
THEMES = {  # every theme's colours must differ from the palette's (see recolour)
    "light": {"text": "#1a202c", "grid": "#d5dbe3"},
    "dark": {"text": "#e2e8f0", "grid": "#3a4556"},
}
FONTS = ["DejaVu Sans", "Arial", "Helvetica"]  # measured with the first; browsers fall back
FONT, TITLE, SMALL = 9.0, 11.0, 8.0  # points: ticks and y-label, title, values and legend
LINE = 1.2  # line height, in font sizes
WIDTH = 460.8  # points (6.4 in); the height grows from 3.2 in with extra lines of text
EDGE = 4.0  # points of air inside the figure's edge
TICK = 7.0  # tick length plus its pad
LABELPAD = 4.0  # between the y tick labels and the y-label
TITLEPAD = 6.0
# matplotlib's legend at 8 pt (its rc defaults): outside and inside pads, handle, gaps
LEGEND_INSET, HANDLE, HANDLE_HEIGHT, HANDLE_GAP, ENTRY_GAP = 4 + 3.2, 16, 5.6, 6.4, 4
LEGEND_CHROME = LEGEND_INSET + 3.2 + HANDLE + HANDLE_GAP  # beside the longest label
ROTATION = 30
TOP = EDGE + TITLE * LINE + TITLEPAD  # a one-line title
BOTTOM = TICK + FONT * LINE + EDGE  # one-line, unrotated x labels
AXES_HEIGHT = 230.4 - TOP - BOTTOM  # never less than this
SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))
_STYLE = re.compile(rb'style="[^"]*"')
TEXT_STYLE = {  # every text property a chart sets (multialignment defaults to ha)
    "ha": "left",
    "va": "baseline",
    "rotation": 0,
    "rotation_mode": "default",
    "fontsize": FONT,
    "fontweight": "normal",
}


def bar_svgs(panel: BarPanel) -> dict[str, bytes]:
    """The panel as SVG bytes per theme: drawn once in the light theme, then recoloured."""
    light = _light_svg(panel)
    return {theme: recolour(light, theme) for theme in THEMES}


def recolour(svg: bytes, theme: str) -> bytes:
    """The light SVG in another theme: swap the text and grid colours in style attributes.

    Only `style="..."` attributes are touched, so a title that contains a colour string
    keeps it; the bars are the same colours in every theme.
    """
    swaps = [(THEMES["light"][k].encode(), THEMES[theme][k].encode()) for k in ("text", "grid")]

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
    values = [y for series in panel.series for y in series.y]
    ylim = _ylim(values)
    yticks = _yticks(ylim, all(isinstance(y, int) for y in values))
    ytick_labels = _tick_labels(yticks)
    ylabel = _wrap(panel.ylabel, FONT, AXES_HEIGHT)
    ylabel_offset = max(_width(t, FONT) for t in ytick_labels) + TICK + LABELPAD
    left = EDGE + _lines(ylabel) * FONT * LINE + ylabel_offset
    many = len(panel.series) > 1
    legend = [_wrap(series.label, SMALL, 110) if many else series.label for series in panel.series]
    right = EDGE + (LEGEND_CHROME + max(_width(t, SMALL) for t in legend) if many else EDGE)
    count = len(panel.labels)
    pad = 0.6 + max(0, 3 - count) / 2  # few groups: narrower, centred bars
    slot = (WIDTH - left - right) / (count - 1 + 2 * pad)
    xlabels = [_wrap(label, FONT, slot * 0.9) for label in panel.labels]
    rotated = any(_lines(t) > 2 or _width(t, FONT) > slot * 0.9 for t in xlabels)
    if rotated:
        xlabels = [_wrap(label, FONT, 140) for label in panel.labels]
        left = max(left, _rotated_overhang(xlabels, left, right, pad))
    bottom = TICK + EDGE + max(_extent(t, rotated) for t in xlabels)
    title = _wrap(panel.title, TITLE, WIDTH - left - EDGE, bold=True)
    top = EDGE + _lines(title) * TITLE * LINE + TITLEPAD
    bar = slot * 0.8 / len(panel.series)
    widest = max(_width(_short(y), SMALL) for y in values)
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
    low, high = ylim
    slack = (high - low) * 1e-9
    ticks = _locator(integer).tick_values(low, high)
    return [float(t) for t in ticks if low - slack <= t <= high + slack]


@cache
def _locator(integer: bool) -> Any:
    """matplotlib's tick chooser (its tick_values depend only on these settings)."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10], integer=integer)


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


def _rotated_overhang(labels: list[str], left: float, right: float, pad: float) -> float:
    """The left margin that keeps rotated labels (hanging down-left of their tick) inside."""
    for _ in range(2):  # a wider margin narrows the slots a little: settle once more
        slot = (WIDTH - left - right) / (len(labels) - 1 + 2 * pad)
        reach = max(_reach(t) - (pad + i) * slot for i, t in enumerate(labels))
        left = max(left, EDGE + reach)
    return left


def _reach(text: str) -> float:
    angle = math.radians(ROTATION)
    height = _lines(text) * FONT * LINE
    return _width(text, FONT) * math.cos(angle) + height * math.sin(angle)


def _extent(text: str, rotated: bool) -> float:
    """How far an x tick label reaches below its tick's pad."""
    height = _lines(text) * FONT * LINE
    if not rotated:
        return height
    angle = math.radians(ROTATION)
    return _width(text, FONT) * math.sin(angle) + height * math.cos(angle)


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


def _lines(text: str) -> int:
    return text.count("\n") + 1


def _width(text: str, points: float) -> float:
    return max(_line_width(line, points, False) for line in text.split("\n"))


def _line_width(line: str, points: float, bold: bool) -> float:
    return _text_metrics(line, points, bold)[0]


@lru_cache(maxsize=4096)
def _text_metrics(line: str, points: float, bold: bool) -> tuple[float, float, float]:
    """Width, height and descent of a line in points, as the SVG renderer measures it.

    Measuring is most of the cost of a new string (FreeType lays out every glyph), so the
    layout and the renderer share these (see _renderer_class).
    """
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(family=FONTS[0], size=points, weight="bold" if bold else "normal")
    width, height, descent = text_to_path.get_text_width_height_descent(line, prop, ismath=False)
    return float(width), float(height), float(descent)


def _light_svg(panel: BarPanel) -> bytes:
    layout = _layout(panel)
    with _rc_set(_rc(THEMES["light"])):
        try:
            return _render(_figure(panel, layout), layout.height)
        except BaseException:
            _canvas.cache_clear()  # a half-drawn chart must not leak into the next one
            raise


@contextmanager
def _rc_set(values: dict[str, Any]) -> Iterator[None]:
    """`matplotlib.rc_context` for a few keys (it copies and restores all ~300 of them)."""
    params = _matplotlib().rcParams
    saved = {key: params[key] for key in values}
    params.update(values)
    try:
        yield
    finally:
        params.update(saved)


class _Frame:
    """Data to figure points: the plot area's box, as the layout placed it."""

    def __init__(self, layout: Layout, count: int) -> None:
        self.left, self.bottom = layout.left, layout.bottom
        self.right, self.top = layout.left + layout.axes_width, layout.bottom + AXES_HEIGHT
        self.x0, self.xscale = -layout.pad, layout.axes_width / (count - 1 + 2 * layout.pad)
        low, high = layout.ylim
        self.y0, self.yscale = low, AXES_HEIGHT / (high - low)

    def x(self, x: float) -> float:
        return self.left + (x - self.x0) * self.xscale

    def y(self, y: float) -> float:
        return self.bottom + (y - self.y0) * self.yscale


def _figure(panel: BarPanel, layout: Layout) -> Any:
    """The panel as figure-level artists placed in points (no Axes: nothing to lay out)."""
    from matplotlib.transforms import Bbox

    canvas = _canvas()
    canvas.start(layout.height)
    frame = _Frame(layout, len(panel.labels))
    clip = Bbox.from_extents(frame.left, frame.bottom, frame.right, frame.top)
    _grid(canvas, layout, frame, clip)
    _bars(canvas, panel, layout, frame, clip)
    _ticks(canvas, layout, frame)
    _texts(canvas, layout, frame)
    canvas.finish()
    return canvas.figure


class _Canvas:
    """The one figure a process draws on: its texts are reused, its other artists replaced.

    A chart sets every property of the texts it uses (TEXT_STYLE fills in the rest) and
    hides the others, so what was drawn before never shows through.
    """

    def __init__(self) -> None:
        from matplotlib.figure import Figure

        self.figure = Figure(dpi=72)
        self.labels: list[Any] = []
        self.used = 0
        self.added: list[Any] = []

    def start(self, height: float) -> None:
        for artist in self.added:
            artist.remove()
        self.added, self.used = [], 0
        self.figure.set_size_inches(WIDTH / 72, height / 72)

    def add(self, artist: Any) -> Any:
        self.figure.add_artist(artist)
        self.added.append(artist)
        return artist

    def text(self, at: tuple[float, float], text: str, **style: Any) -> None:
        from matplotlib.transforms import IdentityTransform

        style = {**TEXT_STYLE, "multialignment": style.get("ha", "left"), **style}
        if self.used == len(self.labels):
            label = _label_class()(0, 0, "", transform=IdentityTransform())
            self.figure.add_artist(label)
            self.labels.append(label)
        label = self.labels[self.used]
        self.used += 1
        label.set(x=at[0], y=at[1], text=text, visible=True, **style)
        label.layout_key = (text, *sorted(style.items()))

    def finish(self) -> None:
        for label in self.labels[self.used :]:
            label.set_visible(False)


@cache
def _canvas() -> _Canvas:
    return _Canvas()


def _render(figure: Any, height: float) -> bytes:
    """The figure through matplotlib's SVG renderer (what savefig does, minus its detours)."""
    out = io.StringIO()
    metadata = {"Date": None, "Creator": None}
    renderer = _renderer_class()(WIDTH, height, out, image_dpi=72, metadata=metadata)
    figure.draw(renderer)
    renderer.finalize()
    return out.getvalue().encode()


@cache
def _renderer_class() -> Any:
    """matplotlib's SVG renderer, measuring our text once per process, not once per chart."""
    from matplotlib.backends import backend_svg

    svg: Any = backend_svg  # untyped

    class Renderer(svg.RendererSVG):  # type: ignore[misc]
        def get_text_width_height_descent(
            self, s: str, prop: Any, ismath: Any
        ) -> tuple[float, float, float]:
            family, size, weight = prop.get_family(), prop.get_size_in_points(), prop.get_weight()
            plain = (prop.get_style(), prop.get_variant(), prop.get_stretch()) == ("normal",) * 3
            if ismath or family != ["sans-serif"] or weight not in ("normal", "bold") or not plain:
                return super().get_text_width_height_descent(s, prop, ismath)  # type: ignore[no-any-return]
            return _text_metrics(s, size, weight == "bold")  # sans-serif is FONTS[0] (see _rc)

    return Renderer


def _grid(canvas: _Canvas, layout: Layout, frame: _Frame, clip: Any) -> None:
    """Grid lines at the y ticks under the bars, the left and bottom spines over them."""
    grid = THEMES["light"]["grid"]
    lines = [((frame.left, frame.y(t)), (frame.right, frame.y(t))) for t in layout.yticks]
    _segments(canvas, lines, edgecolor=grid, zorder=0.5, capstyle="butt").set_clip_box(clip)
    left = ((frame.left, frame.bottom), (frame.left, frame.top))
    bottom = ((frame.left, frame.bottom), (frame.right, frame.bottom))
    _segments(canvas, [left, bottom], edgecolor=grid, zorder=2.5, capstyle="projecting")


def _segments(canvas: _Canvas, lines: list[Any], **style: Any) -> Any:
    """Straight 0.8 pt lines as one path (one SVG element), in figure points."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath
    from matplotlib.transforms import IdentityTransform

    codes = [MplPath.MOVETO, MplPath.LINETO] * len(lines)
    path = MplPath([point for line in lines for point in line], codes)
    return canvas.add(
        PathPatch(path, fill=False, linewidth=0.8, transform=IdentityTransform(), **style)
    )


def _bars(canvas: _Canvas, panel: BarPanel, layout: Layout, frame: _Frame, clip: Any) -> None:
    """The bars, one path per series, and their values above (or below) them."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath
    from matplotlib.transforms import IdentityTransform

    count = len(panel.series)
    width = 0.8 / count
    base = frame.y(0)
    codes = [MplPath.MOVETO, MplPath.LINETO, MplPath.LINETO, MplPath.LINETO, MplPath.CLOSEPOLY]
    for index, series in enumerate(panel.series):
        offsets = [x - 0.4 + width * (index + 0.5) for x in range(len(panel.labels))]
        color = PALETTE[index % len(PALETTE)]
        vertices: list[tuple[float, float]] = []
        for x, y in zip(offsets, series.y, strict=True):
            x0, x1, top = frame.x(x - width / 2), frame.x(x + width / 2), frame.y(y)
            vertices += [(x0, base), (x1, base), (x1, top), (x0, top), (x0, base)]
        path = MplPath(vertices, codes * len(offsets))
        bars = PathPatch(path, fc=color, ec="none", zorder=1, transform=IdentityTransform())
        canvas.add(bars).set_clip_box(clip)
        if layout.values:
            for x, y in zip(offsets, series.y, strict=True):
                up = y >= 0
                at = (frame.x(x), frame.y(y) + (2 if up else -2))
                canvas.text(at, _short(y), fontsize=SMALL, ha="center", va=("top", "bottom")[up])


def _ticks(canvas: _Canvas, layout: Layout, frame: _Frame) -> None:
    """Tick labels, where matplotlib's ticks would put them (a Tick is 5 artists)."""
    x = frame.left - TICK
    for y, label in zip(layout.yticks, layout.ytick_labels, strict=True):
        canvas.text((x, frame.y(y)), label, ha="right", va="center_baseline")
    y = frame.bottom - TICK
    style = (
        {"ha": "right", "va": "top", "rotation": ROTATION, "rotation_mode": "anchor"}
        if layout.rotated
        else {"ha": "center", "va": "top", "multialignment": "center"}
    )
    for x, label in enumerate(layout.xlabels):
        canvas.text((frame.x(x), y), label, **style)


def _texts(canvas: _Canvas, layout: Layout, frame: _Frame) -> None:
    """Title, y-label and legend where the layout put them (no bounding-box search)."""
    at = (frame.left, frame.top + TITLEPAD)
    canvas.text(at, layout.title, fontsize=TITLE, fontweight="bold", ha="left", va="baseline")
    at = (frame.left - layout.ylabel_offset, (frame.bottom + frame.top) / 2)
    style = {"rotation": 90, "rotation_mode": "anchor", "ha": "center", "va": "bottom"}
    canvas.text(at, layout.ylabel, **style)
    if len(layout.legend) > 1:
        _legend(canvas, layout.legend, frame.right, frame.top)


def _legend(canvas: _Canvas, labels: list[str], left: float, top: float) -> None:
    """Series swatches and labels where matplotlib's `legend(loc="upper left",
    bbox_to_anchor=(1, 1), frameon=False)` puts them (its offset boxes cost as much as the
    rest of the chart); test_charts checks the two agree.
    """
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import IdentityTransform

    x, y = left + LEGEND_INSET, top - LEGEND_INSET  # y: the top of the next entry
    for index, label in enumerate(labels):
        below, above, shift = _legend_entry(label)
        baseline = y - max(HANDLE_HEIGHT, above)  # the swatch sits on the label's baseline
        color = PALETTE[index % len(PALETTE)]
        swatch = Rectangle((x, baseline), HANDLE, HANDLE_HEIGHT, fc=color, ec="none", zorder=5)
        canvas.add(swatch).set_transform(IdentityTransform())
        canvas.text((x + HANDLE + HANDLE_GAP, baseline + shift), label, fontsize=SMALL)
        y = baseline - max(0, below) - ENTRY_GAP


def _legend_entry(label: str) -> tuple[float, float, float]:
    """How far a legend label reaches below and above its entry's baseline, and how far its
    last line's baseline sits above that (a label of several lines is centred on it)."""
    _, lp_height, lp_descent = _text_metrics("lp", SMALL, False)
    top = 0.0  # matplotlib's Text layout: the baseline of each line, from the top
    for index, line in enumerate(label.split("\n")):
        _, height, descent = _text_metrics(line, SMALL, False) if line else (0, 0, 0)
        height, descent = max(height, lp_height), max(descent, lp_descent)
        if index == 0:
            top = -(height - descent)
        else:
            top -= max(lp_height - lp_descent, height - descent) * 1.2  # Text's linespacing
        last, top = top, top - descent
    extent = descent - last  # the whole text's height
    if "\n" not in label:  # matplotlib's TextArea: at least as tall as "lp"
        return descent, max(lp_height - lp_descent, extent - descent), 0.0
    below = 0.5 * extent - 0.5 * (lp_height - lp_descent)
    return below, extent - below, descent - below


@cache
def _label_class() -> Any:
    """matplotlib's Text, laying each (text, style) out once per process.

    Text lays itself out (line metrics, alignment offsets) on every draw; the result depends
    only on the text and its style (the font, rc and dpi are fixed here), not on where it
    is. Other renderers (a tight-bbox check with Agg) get matplotlib's own layout.
    """
    from matplotlib import text

    base: Any = text.Text  # typed without its _get_layout
    renderer_class = _renderer_class()
    layouts: dict[tuple[Any, ...], Any] = {}

    class Label(base):  # type: ignore[misc]
        layout_key: tuple[Any, ...]

        def _get_layout(self, renderer: Any) -> Any:
            if type(renderer) is not renderer_class:
                return super()._get_layout(renderer)
            layout = layouts.get(self.layout_key)
            if layout is None:
                if len(layouts) >= 4096:
                    layouts.clear()
                layout = layouts[self.layout_key] = super()._get_layout(renderer)
            return layout

    return Label


def _rc(colors: dict[str, str]) -> dict[str, Any]:
    text = colors["text"]
    return {
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
        "text.color": text,
        "axes.labelcolor": text,
        "axes.edgecolor": colors["grid"],
        "xtick.color": text,
        "ytick.color": text,
        "grid.color": colors["grid"],
        "path.simplify": False,
    }


@cache
def _matplotlib() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib
