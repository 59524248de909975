"""What every chart shares, whatever its kind: the themes and colours, matplotlib's settings
while a chart is drawn, the figure written as deterministic SVG, and the dark SVG made of the
light one (builder/render/charts.py draws bars, builder/render/plots.py lines and points).
matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .chartplan import EDGE, TICK

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.transforms import Transform

THEMES: tuple[str, ...] = ("light", "dark")
# Eight: a panel of more series than this repeats colours (tpu-02's throughput has seven).
PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#975a16", "#b83280", "#2c7a7b")
COLOURS = MappingProxyType(  # every theme's colours must differ from the palette's (recolour)
    {
        "light": MappingProxyType({"text": "#1a202c", "grid": "#d5dbe3"}),
        "dark": MappingProxyType({"text": "#e2e8f0", "grid": "#3a4556"}),
    }
)
FONTS = ("DejaVu Sans", "Arial", "Helvetica")  # matplotlib measures with the first
_STYLE = re.compile(rb'style="[^"]*"')
_TEXT, _GRID = COLOURS["light"]["text"], COLOURS["light"]["grid"]
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


def svg(figure: Figure) -> bytes:
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
def settings() -> Iterator[None]:
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


def shift(axes: Axes, dx: float, dy: float) -> Transform:
    """A shift by `dx` points right and `dy` up (negative: left, down), whatever the data's
    scale."""
    from matplotlib.transforms import ScaledTranslation

    return ScaledTranslation(dx / 72, dy / 72, axes.figure.dpi_scale_trans)
