"""Every bar's label sits with its own bars and no two labels overlap, as matplotlib draws
them: on every panel of the real course and every bench case, at both sizes.

A label is measured as drawn (its box turned as the text is), its bars by the `bar-S-N`
ids the chart gives them. Under upright bars the label's end nearest the plot lies within
its own group of bars, side to side; where bars lie across (the narrow chart's long
labels) the label lies above its own bars and below the group before.
"""

from __future__ import annotations

import itertools
import math

import pytest
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from bench.charts import CASES
from builder.course.load import load_course
from builder.course.recording import BarPanel, load
from builder.render import charts
from tests.helpers import ROOT


def real_panels() -> dict[str, BarPanel]:
    """Every bar panel of the course's lessons' recordings (not of files other tests leave);
    line and scatter panels have no bar labels (tests/render/test_plots.py reads those)."""
    found = {}
    for lesson in load_course(ROOT / "content").lessons:
        path = ROOT / "recordings" / f"{lesson.id}.json"
        for number, panel in enumerate(load(path).panels if path.exists() else [], 1):
            if isinstance(panel, BarPanel):
                found[f"{lesson.id}-{number}"] = panel
    assert len(found) >= 35
    return found


PANELS = {**real_panels(), **{f"case-{name}": panel for name, panel in CASES.items()}}


def drawn(panel: BarPanel, size: charts.Size) -> tuple[list[Text], list[Bbox], Bbox]:
    """The chart laid out as when printed: its labels, each label's group of bars (one box
    round them) and the plot."""
    with charts._settings():
        figure = charts._figure(panel, size)
        figure.draw_without_rendering()
        axes = figure.axes[0]
        labels = [t for t in axes.texts if (t.get_gid() or "").startswith("label-")]
        bars = {p.get_gid(): p.get_window_extent() for p in axes.patches}
        groups = [
            Bbox.union([bars[f"bar-{s}-{n}"] for s in range(len(panel.series))])
            for n in range(len(panel.labels))
        ]
        return labels, groups, axes.get_window_extent()


def corners(label: Text) -> list[tuple[float, float]]:
    """The label's box as drawn, turned about its anchor as matplotlib turns it."""
    angle = math.radians(label.get_rotation())
    label.set_rotation(0)
    try:
        box = label.get_window_extent()
    finally:
        label.set_rotation(math.degrees(angle))
    ax, ay = label.get_transform().transform(label.get_position())
    cos, sin = math.cos(angle), math.sin(angle)
    return [
        (ax + (x - ax) * cos - (y - ay) * sin, ay + (x - ax) * sin + (y - ay) * cos)
        for x in (box.x0, box.x1)
        for y in (box.y0, box.y1)
    ]


def unturned(label: Text) -> Bbox:
    """The label's box in a frame turned back by its angle: labels at one angle overlap
    there when and only when they overlap as drawn."""
    angle = -math.radians(label.get_rotation())
    cos, sin = math.cos(angle), math.sin(angle)
    points = [(x * cos - y * sin, x * sin + y * cos) for x, y in corners(label)]
    return Bbox.from_extents(
        min(p[0] for p in points),
        min(p[1] for p in points),
        max(p[0] for p in points),
        max(p[1] for p in points),
    )


def assert_with_its_bars(
    label: Text, number: int, groups: list[Bbox], plot: Bbox, across: bool
) -> None:
    points = corners(label)
    where = f"label {number} {label.get_text()!r}"
    if across:  # above its own bars, under the group before (or the plot's top)
        above = groups[number - 1].y0 if number else plot.y1
        low, high = min(y for _, y in points), max(y for _, y in points)
        assert groups[number].y1 <= low + 0.5 and high <= above + 0.5, (where, points)
        assert min(x for x, _ in points) >= plot.x0 - 0.5, (where, points)
        return
    top = max(y for _, y in points)  # the end nearest the plot: under its own group
    xs = [x for x, y in points if y > top - 0.5]
    middle = sum(xs) / len(xs)
    group = groups[number]
    assert group.x0 <= middle <= group.x1, (where, middle, group)
    assert top <= plot.y0, (where, top, plot)


@pytest.mark.parametrize("size", [charts.WIDE, charts.NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("name", list(PANELS))
def test_every_label_is_with_its_own_bars_and_overlaps_no_other(
    name: str, size: charts.Size
) -> None:
    panel = PANELS[name]
    labels, groups, plot = drawn(panel, size)
    assert [t.get_gid() for t in labels] == [f"label-{n}" for n in range(len(panel.labels))]
    across = charts.plan(panel, size).across
    for number, label in enumerate(labels):
        assert_with_its_bars(label, number, groups, plot, across)
    for a, b in itertools.combinations(labels, 2):
        assert not unturned(a).overlaps(unturned(b)), (name, a.get_text(), b.get_text())


def test_the_narrow_chart_lays_long_labels_across_and_keeps_short_ones_upright() -> None:
    """The lesson whose phone charts mislabelled their bars (issue 43): its long labels
    each get a line above their bars; short labels stay under upright bars."""
    for name in ("performance-03-1", "performance-03-2", "performance-03-3"):
        assert charts.plan(PANELS[name], charts.NARROW).across, name
        assert not charts.plan(PANELS[name], charts.WIDE).across, name
    assert not charts.plan(PANELS["case-typical"], charts.NARROW).across


def test_a_label_shifted_off_its_bars_fails() -> None:
    """The measure itself: a label moved half a group sideways is caught."""
    panel = PANELS["case-typical"]
    labels, groups, plot = drawn(panel, charts.WIDE)
    x, y = labels[0].get_position()
    labels[0].set_position((x + 0.5, y))
    with pytest.raises(AssertionError):
        assert_with_its_bars(labels[0], 0, groups, plot, across=False)
