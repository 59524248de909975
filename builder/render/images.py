"""Image panels as SVG (a figure's imshow or matshow, captured by builder/run/figures.py):
the recorded values drawn by matplotlib as lines and bars are (builder/render/plots.py), in
the same themes, sizes and settings, with a colour bar that reads the values. The colour
map is the same in both themes; the text and grid colours swap as every chart's do. The
height is counted before drawing, so a page sizes its `<img>` without matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..course.recording import ImagePanel
from . import chartlabels as text
from .chartplan import AXES, EDGE, LINE, SIZES, TICK, WIDE, Size
from .chartsvg import settings, svg

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLOUR_MAP = "viridis"  # ordered light to dark, readable in either theme


def height(panel: ImagePanel, size: Size) -> float:
    """Points: the plot, its x ticks and label, and air."""
    xlabel = text.wrap(panel.xlabel, (size.width - 2 * EDGE - 40) / (0.6 * size.font))
    below = TICK + size.font * LINE + 4 + text.lines(xlabel) * size.font * LINE
    return EDGE + size.small * LINE + AXES + below + EDGE


def pixels(panel: ImagePanel, size: Size = WIDE) -> tuple[int, int]:
    """The chart's width and height in CSS pixels, known before drawing."""
    return round(size.width * 4 / 3), round(height(panel, size) * 4 / 3)


def light_svgs(panel: ImagePanel, sizes: Mapping[str, Size] = SIZES) -> dict[str, bytes]:
    """The panel drawn in the light theme at each size."""
    with settings():
        return {name: svg(figure(panel, size)) for name, size in sizes.items()}


def figure(panel: ImagePanel, size: Size) -> Figure:
    """The image, its row and column as the figure drew them (extent: the run's indices,
    row 0 on top), and a colour bar."""
    from matplotlib.figure import Figure

    drawn = Figure(dpi=72, layout="constrained")
    drawn.set_size_inches(size.width / 72, height(panel, size) / 72)
    drawn.patch.set_visible(False)
    axes = drawn.add_subplot()
    rows, columns = panel.shape
    extent = (-0.5, columns - 0.5, rows - 0.5, -0.5)
    image = axes.imshow(panel.pixels, cmap=COLOUR_MAP, aspect="auto", extent=extent,
                        interpolation="nearest")  # fmt: skip
    image.set_gid("image")
    bar = drawn.colorbar(image, ax=axes)
    bar.outline.set_visible(False)  # type: ignore[operator]
    bar.ax.tick_params(labelsize=size.small)
    axes.tick_params(labelsize=size.font)
    axes.set_xlabel(text.wrap(panel.xlabel, 60), fontsize=size.font)
    axes.set_ylabel(text.wrap(panel.ylabel, 30), fontsize=size.font)
    return drawn
