"""A chart's text, drawn by one artist: every line at the baseline the chart's layout chose.

A `Text` that draws itself lays out its lines again with each new renderer (it measures
every line, and "lp" for the line height, through FreeType): ~0.4 ms a label, most of a
chart's time. `Labels` places each line once, from the font's ascent and descent, as a
single-line `Text` anchored at its baseline, and draws it through the renderer's public
`draw_text` with that `Text` as `mtext`, so the SVG keeps `text-anchor` (a browser that
substitutes a wider font still centres and right-aligns the labels). Lines are spaced as
matplotlib spaces them: descent + 1.2 x ascent of "lp".

Imported only when a chart is drawn: it imports matplotlib.
"""

from __future__ import annotations

import math
from functools import lru_cache

from matplotlib.artist import Artist
from matplotlib.backend_bases import RendererBase
from matplotlib.font_manager import FontProperties
from matplotlib.text import Text
from matplotlib.textpath import text_to_path
from matplotlib.transforms import Bbox, IdentityTransform

FAMILY = "DejaVu Sans"  # the font the layout measures with (charts.FONTS[0])
LINESPACING = 1.2  # matplotlib's default


@lru_cache(maxsize=16)
def metrics(points: float, bold: bool) -> tuple[float, float]:
    """Ascent and descent of "lp" at this size, in points, as matplotlib measures them."""
    font = FontProperties(family=FAMILY, size=points, weight="bold" if bold else "normal")
    _, height, descent = text_to_path.get_text_width_height_descent("lp", font, ismath=False)
    return height - descent, descent


def baselines(lines: int, va: str, points: float, bold: bool) -> list[float]:
    """Each line's baseline, as a distance below the anchor along the text's own "down"."""
    ascent, descent = metrics(points, bold)
    pitch = descent + LINESPACING * ascent
    first = {
        "top": ascent,
        "center_baseline": ascent / 2,
        "baseline": -(lines - 1) * pitch,
        "bottom": -(lines - 1) * pitch - descent,
    }[va]
    return [first + index * pitch for index in range(lines)]


class Labels(Artist):
    """All of a chart's text; add() places it, draw() writes each line once."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[Text] = []
        self.set_zorder(Text.zorder)  # over the bars, as a Text would be

    def add(
        self,
        at: tuple[float, float],
        text: str,
        *,
        size: float,
        bold: bool = False,
        ha: str = "left",
        va: str = "baseline",
        rotation: float = 0.0,
    ) -> None:
        """`text` (lines split at "\\n") aligned to `at` (points) as matplotlib's `ha`, `va`
        and rotation in "anchor" mode would align it."""
        parts = text.split("\n")
        angle = math.radians(rotation)
        down = (math.sin(angle), -math.cos(angle))
        for line, offset in zip(parts, baselines(len(parts), va, size, bold), strict=True):
            x, y = at[0] + offset * down[0], at[1] + offset * down[1]
            self.lines.append(
                Text(
                    x,
                    y,
                    line,
                    transform=IdentityTransform(),
                    fontsize=size,
                    fontweight="bold" if bold else "normal",
                    ha=ha,
                    va="baseline",
                    rotation=rotation,
                    rotation_mode="anchor",
                )
            )

    def draw(self, renderer: RendererBase) -> None:
        _, height = renderer.get_canvas_width_height()
        gc = renderer.new_gc()
        for text in self.lines:
            x, y = text.get_position()
            gc.set_foreground(text.get_color())
            prop, angle = text.get_fontproperties(), text.get_rotation()
            y = height - y if renderer.flipy() else y
            renderer.draw_text(gc, x, y, text.get_text(), prop, angle, mtext=text)
        gc.restore()

    def get_window_extent(self, renderer: RendererBase | None = None) -> Bbox:
        """Where the lines are, as matplotlib measures them (for tight boxes and tests)."""
        figure = self.get_figure()
        assert figure is not None, "add the labels to a figure first"
        for text in self.lines:
            text.set_figure(figure)
        return Bbox.union([text.get_window_extent(renderer) for text in self.lines])
