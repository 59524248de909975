"""Line and scatter panels drawn as bars are: SVG text, both themes from one drawing, both
sizes inside the size the page was told, nothing clipped or overlapping; their alt text,
table and recorded values as a page shows them; and what `diff` says when one changes."""

from __future__ import annotations

import argparse
import itertools
import re

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from bench.charts import XY_CASES, case_names
from builder.course.load import load_course
from builder.course.recording import Fit, XYPanel, XYSeries, load
from builder.render import chartlabels, charts, figures, plots
from builder.review.changes import panel_changes
from tests.helpers import ROOT

STEPS = list(range(0, 21))
LOSS = XYPanel(
    "line",
    "Loss",
    "step",
    "loss",
    STEPS,
    [
        XYSeries("learning rate 0.1", [18 * 0.64**k for k in STEPS]),
        XYSeries("learning rate 0.01", [18 * 0.96**k for k in STEPS]),
    ],
)
FITTED = XYPanel(
    "scatter",
    "Fit",
    "input",
    "output",
    [0.0, 1.0, 2.0, 3.0],
    [XYSeries("measured", [1.1, 2.9, 5.2, 6.9], Fit("linear", 1.95, 1.07))],
)
TINY = XYPanel("line", "Tiny", "size", "ratio", [1, 2, 4], [XYSeries("r", [4.68e-7, 9e-7, 2e-6])])
LONG = XYPanel(
    "line",
    "Long",
    "a rather long label for the x axis that has to wrap on a phone",
    "and a long one for the y axis that wraps too, as high as the plot",
    list(range(300)),
    [
        XYSeries(f"series number {n} with a long name", [n + k % 7 for k in range(300)])
        for n in (1, 2, 3)
    ],
)


def real_panels() -> dict[str, XYPanel]:
    """Every line and scatter panel of the course's recordings, drawn as readers see them."""
    found = {}
    for lesson in load_course(ROOT / "content").lessons:
        path = ROOT / "recordings" / f"{lesson.id}.json"
        for number, panel in enumerate(load(path).panels if path.exists() else [], 1):
            if isinstance(panel, XYPanel):
                found[f"{lesson.id}-{number}"] = panel
    assert found, "the course has a line panel (xla-03's first)"
    return found


BENCH = {f"bench-{name}": panel for name, panel in XY_CASES.items()}
CASES = {"loss": LOSS, "fitted": FITTED, "tiny": TINY, "long": LONG, **BENCH, **real_panels()}
# Log axes: points on whole decades, data that ends just past one, and fits that a log axis bends.
LOG = {
    "decades": XYPanel(
        "line", "Decades", "n", "time", [1, 10, 100, 1000], [XYSeries("t", [1e3, 1e2, 10.0, 1.0])]
    ),
    "lopsided": XYPanel(
        "line", "Lopsided", "n", "time", [1.5, 20, 300, 1100], [XYSeries("t", [2, 30, 400, 1200])]
    ),
    "log-y-fit": XYPanel(
        "scatter",
        "Growth",
        "step",
        "size",
        list(range(1, 11)),
        [XYSeries("size", [3.0**k for k in range(10)], Fit("linear", 2000.0, 1.0))],
    ),
    "log-x-fit": XYPanel(
        "scatter",
        "Cost",
        "n",
        "seconds",
        [1, 10, 100, 1000],
        [XYSeries("cost", [3.0, 25.0, 210.0, 1900.0], Fit("linear", 1.9, 3.0))],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_both_themes_and_sizes_from_one_drawing(name: str) -> None:
    svgs = charts.sized_svgs(CASES[name])
    assert set(svgs) == {"wide", "narrow"}
    for size in svgs.values():
        light, dark = size["light"], size["dark"]
        assert dark.replace(b"#e2e8f0", b"#1a202c").replace(b"#3a4556", b"#d5dbe3") == light
        assert b"#ffffff" not in light and b"fill: white" not in light  # no white box in dark
    assert charts.sized_svgs(CASES[name]) == svgs  # the same bytes again


def test_series_and_fits_carry_ids_and_text_stays_text() -> None:
    svg = charts.sized_svgs(FITTED)["wide"]["light"].decode()
    assert 'id="series-0"' in svg and 'id="fit-0"' in svg
    assert ">input<" in svg and ">output<" in svg
    assert "measured, linear" in svg and "1.95x" in svg  # the fit in the legend
    assert "Fit<" not in svg  # the title is the page's caption, not drawn again


@pytest.mark.parametrize("size", [charts.WIDE, charts.NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("name", CASES)
def test_nothing_is_clipped_and_nothing_overlaps(name: str, size: charts.Size) -> None:
    panel = CASES[name]
    with charts._settings():
        figure = plots.figure(panel, size)
        figure.draw_without_rendering()
        box = figure.get_tightbbox()
        texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
        boxes = [t.get_window_extent() for t in texts]
        plot = figure.axes[0].get_window_extent()
    width, height = figure.get_size_inches()
    assert (round(width * 96), round(height * 96)) == charts.pixels(panel, size)
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, box
    for (a, first), (b, second) in itertools.combinations(zip(texts, boxes, strict=True), 2):
        if not (a.get_rotation() and b.get_rotation()):
            assert not first.overlaps(second), (a.get_text(), b.get_text())
    assert plot.height >= 0.85 * 185, plot.height
    if size.stacked and figure.legends:
        assert figure.legends[0].get_window_extent().y0 >= plot.y1  # above the plot


def drawn(figure: Figure) -> dict[str, np.ndarray]:
    """Every series' and fit's points where the chart draws them, in points from its corner."""
    axes = figure.axes[0]
    found = {line.get_gid(): line.get_xydata() for line in axes.lines}
    found |= {dots.get_gid(): dots.get_offsets() for dots in axes.collections}
    return {gid: axes.transData.transform(points) for gid, points in found.items()}


@pytest.mark.parametrize("size", [charts.WIDE, charts.NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("name", [*LOG, *CASES])
def test_every_point_and_fit_lies_inside_the_axes_with_even_air(
    name: str, size: charts.Size
) -> None:
    """A point on the axes' edge loses half its marker, and a decade of empty plot above
    data that ends just past one squeezes the data: 5% of the span each side, as drawn."""
    panel = {**LOG, **CASES}[name]
    with charts._settings():
        figure = plots.figure(panel, size)
        figure.draw_without_rendering()
        box = figure.axes[0].get_window_extent()
        points = np.concatenate(list(drawn(figure).values()))
    low, high = points.min(axis=0), points.max(axis=0)
    air = {"left": low[0] - box.x0, "right": box.x1 - high[0]}
    air |= {"bottom": low[1] - box.y0, "top": box.y1 - high[1]}
    assert min(air.values()) >= 4, air  # a whole marker inside
    assert abs(air["left"] - air["right"]) < 1 and abs(air["bottom"] - air["top"]) < 1, air


@pytest.mark.parametrize("name", ["log-y-fit", "log-x-fit", "fitted"])
def test_a_fitted_line_passes_through_the_fit_between_its_ends(name: str) -> None:
    """On a log axis a straight fit is a curve: drawn from two ends it would miss the fit's
    value everywhere between them."""
    panel = LOG.get(name, FITTED)
    fit = panel.series[0].fit
    assert fit is not None
    with charts._settings():
        figure = plots.figure(panel, charts.WIDE)
        line = drawn(figure)["fit-0"]
        transform = figure.axes[0].transData
        for x in np.geomspace(min(panel.x) or 0.1, max(panel.x), 7)[1:-1]:
            want = transform.transform((x, fit.slope * x + fit.intercept))
            assert abs(np.interp(want[0], line[:, 0], line[:, 1]) - want[1]) < 0.5, x


@pytest.mark.parametrize("name", CASES)
def test_the_narrow_chart_reads_at_11_px_in_a_phone_column(name: str) -> None:
    svg = charts.sized_svgs(CASES[name])["narrow"]["light"].decode()
    width_pt = float(re.search(r'width="([\d.]+)pt"', svg)[1])  # type: ignore[index]
    sizes = [float(x) for x in re.findall(r"font-size: ([\d.]+)px", svg)]
    assert min(sizes) * min(335.0, width_pt * 4 / 3) / width_pt >= 11


def test_no_tick_takes_an_si_prefix_below_one() -> None:
    """Issue 43's "468n" on every kind of chart: tiny values count in a power of ten said
    on the axis' label; no tick or value ends in n, µ or m."""
    svg = charts.sized_svgs(TINY)["wide"]["light"].decode()
    ticks = re.findall(r">([^<>]*\d[^<>]*)</text>", svg)
    assert ticks and not [t for t in ticks if re.search(r"\d\s*[pnuµm]$", t)], ticks
    assert "ratio (×10⁻⁶)" in svg
    assert chartlabels.data_axis([4.68e-7, 9e-7, 2e-6])[2][-1] in ("2", "2.0")
    for ys in ([1e-9, 5e-9], [0.0002, 0.0004], [3e-5, 7e-5]):
        for label in chartlabels.data_axis(ys)[2]:
            assert not re.search(r"[pnuµm]$", label), (ys, label)


def test_an_axis_spans_its_data_and_goes_log_where_values_are_far_apart() -> None:
    limits, _, labels, log = chartlabels.data_axis([100.0, 101.0, 102.0])
    assert not log and 99 < limits[0] < 100 and 102 < limits[1] < 103  # not from zero
    assert len(set(labels)) == len(labels)
    assert chartlabels.data_axis([1.0001, 1.0002, 1.0003])[2] == sorted(
        set(chartlabels.data_axis([1.0001, 1.0002, 1.0003])[2])
    )
    assert chartlabels.data_axis([18.0, 0.002])[3]  # a loss falling 9,000x: log
    svg = charts.sized_svgs(LOSS)["wide"]["light"].decode()
    assert "loss (log scale)" in svg


def test_alt_text_reads_every_point_or_summarises_many() -> None:
    alt = figures.chart_alt(FITTED)
    assert alt.startswith("Scatter plot, Fit: output against input")
    assert "(0, 1.1), (1, 2.9), (2, 5.2), (3, 6.9)" in alt
    assert "linear fit y\u00a0=\u00a01.95x\u00a0+\u00a01.07" in alt
    long = figures.chart_alt(LOSS)
    assert long.startswith("Line chart, Loss: loss against step")
    assert "21 points, from 18 at 0 to" in long and "The table lists every value" in long


def test_the_table_has_a_row_per_x_and_names_the_x_axis() -> None:
    table = str(figures.panel_table(FITTED))
    assert '<th scope="col">input</th><th scope="col">measured</th>' in table
    assert '<tr><th scope="row">2</th><td>5.2</td></tr>' in table
    assert "<caption>output; measured: linear fit y" in table
    assert figures.panel_rows(LOSS)[0] == ("0", ["18", "18"])


def test_diff_names_the_points_and_the_fit_that_changed() -> None:
    moved = XYPanel(
        "scatter",
        "Fit",
        "input",
        "output",
        [0.0, 1.0, 2.0, 3.0],
        [XYSeries("measured", [1.1, 2.9, 5.9, 6.9], Fit("linear", 2.1, 1.0))],
    )
    [change] = panel_changes([FITTED], [moved])
    where = {(v.series, v.label) for v in change.values}
    assert where == {
        ("measured", "x=2"),
        ("measured", "fit slope"),
        ("measured", "fit intercept"),
    }


def test_the_bench_runs_the_cases_named_and_refuses_others() -> None:
    assert case_names("xy") == ["line", "line-log", "scatter-fit"]
    assert case_names(" line-log, xy ,typical,") == ["line-log", "line", "scatter-fit", "typical"]
    assert len(case_names("all")) == len(set(case_names("bars,xy,all")))
    for wrong, said in (("nope", "no case 'nope'; the cases: bars, xy"), (" , ", "name a case")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(said)):
            case_names(wrong)


@pytest.mark.parametrize("name", real_panels())
def test_each_series_of_a_course_panel_has_a_colour_of_its_own(name: str) -> None:
    """tpu-02's throughput draws seven lines, two of them the datasheet's peaks: a colour
    used twice would read one peak as the bf16 line."""
    from builder.render.chartsvg import PALETTE

    panel = real_panels()[name]
    svg = charts.sized_svgs(panel)["wide"]["light"].decode()
    assert len(panel.series) <= len(PALETTE), name
    assert sum(colour in svg for colour in PALETTE) == len(panel.series), name


@pytest.mark.parametrize("kind", ["line", "scatter"])
def test_a_series_equal_to_another_is_told_apart_and_said(kind: str) -> None:
    """xla-03's flops panel: the compiler's count and the hand count are the same numbers,
    and the second line drawn hid the first (the legend showed two, the plot one). The
    second is dashed and hollow, each series has a marker of its own, and the legend, the
    alt text and the table's caption say the two are equal; a series that differs is not."""
    x, y = [1, 2, 4], [3.0, 5.0, 9.0]
    same = XYPanel(
        kind,  # type: ignore[arg-type]
        "Twins",
        "n",
        "count",
        x,
        [XYSeries("estimate", y), XYSeries("hand", list(y)), XYSeries("other", [3.0, 5.0, 9.5])],
    )
    assert plots.twins(same) == {1: 0}
    assert plots.legend_entries(same)[1] == "hand (same values as estimate)"
    said = "hand has the same values as estimate; its dashed line lies on that one."
    assert said in figures.chart_alt(same) and said in figures.notes(same)
    axes = plots.figure(same, charts.WIDE).axes[0]
    if kind == "line":
        drawn = {line.get_gid(): line for line in axes.get_lines()}
        assert (
            drawn["series-1"].get_linestyle() == "--" and drawn["series-0"].get_linestyle() == "-"
        )
        assert drawn["series-1"].get_fillstyle() == "none"
        shapes = {drawn[f"series-{k}"].get_marker() for k in range(3)}
    else:
        shapes = {c.get_paths()[0].vertices.tobytes() for c in axes.collections}
    assert len(shapes) == 3, "each series has a marker of its own"
    assert plots.twins(LOSS) == {} and "same values" not in figures.chart_alt(LOSS)
