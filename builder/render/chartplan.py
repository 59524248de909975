"""A chart's plan: its sizes, what its text says where, and how tall it is, before
matplotlib lays it out (builder/render/charts.py draws what the plan says).

Two shapes. Upright bars with their labels under them, level, or slanted where level ones
would not fit; or, in the narrow chart when its labels would not fit level, bars lying
across the column with each label on its own line above its bars (`Plan.across`): a
phone's column is too narrow for long labels side by side, and labels turned upright
there are long to read and crowd each other. The height is counted from the lines and
characters of the text, so that a page can size its `<img>` without drawing; the layout
then fits everything inside it. Pure functions of the panel, with no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

from ..course.recording import BarPanel
from . import chartlabels as text
from .chartlabels import log_scale

LINE = 1.2  # line height, in font sizes
EM = 0.6  # a character's width, in font sizes, at most (DejaVu Sans: digits 0.64, "a" 0.61)
EDGE = 4.0  # points of air inside the figure's edge
TICK = 7.0  # from the axes to its tick labels (no tick marks: the grid shows the values)
AXES = 185.0  # points: the plot's height, whatever text is around it
ROTATION = 30  # long x labels; 90 where slanted ones would overlap
BAR = 12.0  # points: a bar's thickness per series where bars lie across (`Plan.across`)
GAP = 7.0  # points: above a label where bars lie across, from the bars before it
LIFT = 2.0  # points: from a bar to its label above it, or its value beyond its end


@dataclass(frozen=True)
class Size:
    """A chart's width and type sizes, in points (at 72 dpi a point is a CSS pixel x 3/4)."""

    width: float
    font: float  # ticks and the y-label
    small: float  # value labels and the legend
    stacked: bool  # the legend above the plot, one entry a line, rather than beside it


# Shown at its own size (614 CSS px) wherever a page uses it (figures.NARROW_MEDIA: columns
# of 614 px and more, a lab's folded answer too), its smallest text 8.5 pt = 11.3 px.
WIDE = Size(460.8, 9.0, 8.5, stacked=False)  # 6.4 in
# A phone's column (~335 CSS px at 375): drawn at 255 pt = 340 px, its smallest text 11 pt,
# 11 px or more shrunk to a column as narrow as 260 px (a lab's folded answer at 320); the
# legend stacked over the plot.
NARROW = Size(255.0, 11.5, 11.0, stacked=True)
SIZES = MappingProxyType({"wide": WIDE, "narrow": NARROW})  # what a page shows


@dataclass(frozen=True)
class Plan:
    """What the chart says and how big it is, before matplotlib lays it out."""

    ylabel: str  # the value axis' label: beside upright bars, under bars that lie across
    xlabels: list[str]
    legend: list[str]
    rotation: int  # of the x labels, degrees (0: level)
    values: bool  # value labels on the bars
    height: float  # points
    plot: float  # the plot's height, points
    across: bool = False  # the bars lie across the chart, each label above its bars
    slot: float = 0.0  # across: points from one label's group of bars to the next


def plan(panel: BarPanel, size: Size) -> Plan:
    """The text's lines, and a height that gives the plot its room after the text around
    it, counted in lines and (rotated) characters: constrained layout fits it."""
    font, small, width = size.font, size.small, size.width
    many = len(panel.series) > 1
    columns = (width - 2 * EDGE - 30) / (EM * small) if size.stacked else 18
    legend = [text.wrap(s.label, columns) for s in panel.series] if many else []
    beside = 0.0 if size.stacked or not many else 30 + max(map(text.longest, legend)) * EM * small
    count = len(panel.labels)
    slot = (width - 60 - beside) / (count - 1 + 2 * pad(count))  # ~60 pt: ticks and y-label
    room = slot * (0.8 if size.stacked else 0.9)  # a phone's labels: air for wide glyphs (=, m)
    xlabels = [text.wrap(label, room / (EM * font)) for label in panel.labels]
    rotated = any(text.lines(t) > 2 or text.longest(t) * EM * font > room for t in xlabels)
    stacked = sum(text.lines(t) * small * LINE + 4 for t in legend) + 8 if size.stacked else 0.0
    if rotated and size.stacked:
        return _across(panel, size, legend, stacked)
    below = max(text.lines(t) for t in xlabels) * font * LINE
    rotation = 0
    if rotated:
        xlabels, rotation, below = _slanted(panel.labels, slot, size)
    ylabel = panel.ylabel + text.factor(panel) + (" (log\0scale)" if log_scale(panel) else "")
    ylabel = text.wrap(ylabel, 0.9 * AXES / (EM * font)).replace("\0", " ")  # as high as the plot
    bar = slot * 0.8 / len(panel.series)
    show = len(text.values(panel)) <= 24 and _widest(panel, small) <= (
        bar * 1.1 if many else slot * 0.95
    )
    height = EDGE + stacked + small * LINE + AXES + TICK + below + EDGE
    return Plan(ylabel, xlabels, legend, rotation, show, height, AXES)


def _across(panel: BarPanel, size: Size, legend: list[str], stacked: float) -> Plan:
    """Bars lying across the chart, each label above its bars as wide as the plot, the
    values beyond the bars' ends and the value axis under them, its label under that."""
    font, small, width = size.font, size.small, size.width
    columns = (width - 2 * EDGE) * 0.95 / (EM * font)
    xlabels = [text.wrap(label, columns) for label in panel.labels]
    label = max(map(text.lines, xlabels)) * font * LINE
    slot = GAP + label + LIFT + BAR * len(panel.series)
    plot = slot * len(panel.labels)
    ylabel = panel.ylabel + text.factor(panel) + (" (log scale)" if log_scale(panel) else "")
    ylabel = text.wrap(ylabel, columns)
    show = _widest(panel, small) <= 0.15 * (width - 2 * EDGE)  # the axis' air beyond the bars
    under = TICK + font * LINE + 4 + text.lines(ylabel) * font * LINE  # ticks, 4: labelpad
    height = EDGE + stacked + plot + under + EDGE
    return Plan(ylabel, xlabels, legend, 0, show, height, plot, across=True, slot=slot)


def _widest(panel: BarPanel, small: float) -> float:
    """The widest value label, in points."""
    return max(len(t) for row in text.value_labels(panel) for t in row) * EM * small


def pad(count: int) -> float:
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
