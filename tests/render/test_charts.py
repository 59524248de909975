"""Charts: the same panel gives the same bytes in any process and whatever was drawn before,
the dark SVG is the light one recoloured, text stays (escaped) text, and no chart shape
pushes text off the figure."""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from matplotlib.text import Text

from bench.charts import CASES
from builder.course.recording import BarPanel, Series
from builder.render import chartlabels, charts
from tests.helpers import ROOT


def digests() -> dict[str, str]:
    """Every case's charts, hashed, drawn in this process in the CASES order."""
    return {
        f"{name} {theme}": hashlib.sha256(svg).hexdigest()
        for name, panel in CASES.items()
        for theme, svg in charts.bar_svgs(panel).items()
    }


def test_both_themes() -> None:
    svgs = charts.bar_svgs(CASES["typical"])
    assert tuple(svgs) == charts.THEMES == ("light", "dark")
    assert all(svg.startswith(b"<?xml") for svg in svgs.values())


def test_same_panel_same_bytes_whatever_was_drawn_before() -> None:
    first = {name: charts.bar_svgs(panel) for name, panel in CASES.items()}
    for name, panel in reversed(CASES.items()):
        assert charts.bar_svgs(panel) == first[name], name


def test_same_bytes_in_another_process() -> None:
    script = "import json, tests.render.test_charts as t; print(json.dumps(t.digests()))"
    env = {"PYTHONHASHSEED": "123", "PATH": ""}
    other = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, check=True
    )
    assert json.loads(other.stdout) == digests()


@pytest.mark.parametrize("name", ["three-series", "long-labels", "twelve-labels"])
def test_both_sizes_from_one_figure_are_the_bytes_each_gives_alone(name: str) -> None:
    """The site draws the wide chart, then re-sizes that figure for the narrow one: each
    is what a figure made for its size alone gives (the layout starts from the same place)."""
    both = charts.sized_svgs(CASES[name])
    assert tuple(both) == tuple(charts.SIZES) == ("wide", "narrow")
    for key, size in charts.SIZES.items():
        assert both[key] == charts.bar_svgs(CASES[name], size), key


def test_drawing_leaves_matplotlibs_settings_as_they_were(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chart draws with its own settings whatever the caller's are, then puts the
    caller's back, also when drawing fails."""
    from matplotlib import rc_context, rcParams

    with rc_context({"svg.fonttype": "path", "text.color": "red", "font.family": "serif"}):
        before = dict(rcParams)
        svg = charts.bar_svgs(CASES["typical"])["light"]
        assert dict(rcParams) == before
        assert svg == charts.bar_svgs(CASES["typical"])["light"]  # drawn as usual:
        assert b"<text" in svg and b"DejaVu Sans" in svg and b"red" not in svg  # text, sans
        monkeypatch.setattr(charts, "_figure", lambda *_: 1 / 0)  # fails while drawing
        with pytest.raises(ZeroDivisionError):
            charts.bar_svgs(CASES["typical"])
        assert dict(rcParams) == before


def test_no_date_and_no_version_in_the_svg() -> None:
    svg = charts.bar_svgs(CASES["typical"])["light"]
    assert b"<dc:date>" not in svg and b"Matplotlib v" not in svg


def test_dark_is_the_light_chart_with_dark_text_and_grid() -> None:
    panel = replace(CASES["three-series"], ylabel="fill: #1a202c stays as typed")
    svgs = charts.bar_svgs(panel)
    light, dark = svgs["light"], svgs["dark"]
    assert b"#1a202c" in light and b"#e2e8f0" not in light
    assert b'style="fill: #1a202c' not in dark and b"fill: #e2e8f0" in dark
    assert b"stroke: #3a4556" in dark and b"stroke: #d5dbe3" not in dark
    assert b">fill: #1a202c stays as typed</text>" in dark
    assert dark.replace(b"#e2e8f0", b"#1a202c").replace(b"#3a4556", b"#d5dbe3") == light


def test_text_is_svg_text() -> None:
    svg = charts.bar_svgs(CASES["three-series"])["light"].decode()
    for text in ("python_loop", ">192<", ">64<"):
        assert text in svg
    assert "jaxpr equations (top level)" in svg
    # The title is the page's caption: said once, not drawn again in the chart.
    assert "Top-level equations against trip count" not in svg
    assert "<use" not in svg  # no glyphs drawn as paths


def test_recorded_text_is_escaped_and_taken_literally() -> None:
    hostile = "<script>alert(1)</script> & $x^2$"
    panel = BarPanel(
        kind="bar",
        title=hostile,
        labels=["a < b", "c & d"],
        ylabel="$ per <op>",
        series=[Series(label="x&y", y=[1, 2]), Series(label="</text>", y=[3, 4])],
    )
    for svg in charts.bar_svgs(panel).values():
        texts = [e.text for e in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
        assert {"a < b", "c & d", "$ per <op>", "x&y", "</text>"} <= set(texts)
        assert hostile not in texts  # the title is the caption's (escaped by figures.py)
        assert b"<script>" not in svg


def test_one_series_has_no_legend_several_have_one() -> None:
    assert b'id="legend-0"' not in charts.bar_svgs(CASES["typical"])["light"]
    svg = charts.bar_svgs(CASES["three-series"])["light"]
    assert b'id="legend-2"' in svg and b">fori_loop</text>" in svg


def test_long_x_labels_are_rotated_short_ones_are_not() -> None:
    long, short = (charts.bar_svgs(CASES[c])["light"].decode() for c in ("long-labels", "typical"))
    assert "rotate(-30" in long and "rotate(-30" not in short


@pytest.mark.parametrize("size", [charts.WIDE, charts.NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("name", list(CASES))
def test_nothing_is_clipped_and_the_plot_keeps_its_height(name: str, size: charts.Size) -> None:
    """matplotlib's layout fits every text inside the size the page was told (pixels), no
    text overlaps another, and the plot is not squeezed by text the size did not foresee
    (its height: AXES for upright bars, a line of label and the bars per group across)."""
    panel = CASES[name]
    with charts._settings():
        figure = charts._figure(panel, size)
        figure.draw_without_rendering()  # laid out by matplotlib, as when printed
        box = figure.get_tightbbox()  # inches
        texts = [t for t in figure.findobj(Text) if t.get_visible() and t.get_text()]
        boxes = [t.get_window_extent() for t in texts]
        plot = figure.axes[0].get_window_extent()
    width, height = figure.get_size_inches()
    assert (round(width * 96), round(height * 96)) == charts.pixels(panel, size)
    assert box.x0 >= 0 and box.y0 >= 0, box
    assert box.x1 <= width and box.y1 <= height, (box, width, height)
    for (a, first), (b, second) in itertools.combinations(zip(texts, boxes, strict=True), 2):
        if not (a.get_rotation() and b.get_rotation()):  # slanted boxes overlap as boxes
            assert not first.overlaps(second), (a.get_text(), b.get_text())
    assert plot.height >= 0.85 * charts.plan(panel, size).plot, plot.height


def test_compact_numbers() -> None:
    assert chartlabels.tick_labels([0, 1e9, 2e9, 3e9]) == ["0", "1G", "2G", "3G"]
    assert chartlabels.tick_labels([0, 0.25, 0.5]) == ["0", "0.25", "0.50"]
    assert chartlabels.tick_labels([-20, 0, 20]) == ["−20", "0", "20"]
    assert [chartlabels.short(v) for v in (1479409664, 262144, 1808.2, 7, 0.5)] == [
        "1.48G",
        "262k",
        "1,808",
        "7",
        "0.5",
    ]


def test_tiny_values_are_plain_numbers_counted_in_a_power_of_ten() -> None:
    """Issue 43: a ratio of 4.68e-7 read "468n" (SI's nano is no unit of a ratio): the
    axis counts in 10⁻⁷, said once in its label; on a log scale a tick is 10⁻⁵."""
    ratio = BarPanel("bar", "t", ["a", "b", "c"], "ratio", [Series("s", [4.68e-7, 4.1e-7, 0.0])])
    assert chartlabels.y_axis(ratio)[2] == ["0", "2", "4"]
    assert chartlabels.value_labels(ratio) == (("4.68", "4.10", "0"),)
    svg = charts.bar_svgs(ratio)["light"].decode()
    assert "ratio (×10⁻⁷)" in svg and "n<" not in svg
    spread = BarPanel("bar", "t", ["a", "b"], "ms", [Series("s", [4.68e-5, 2.0])])
    assert chartlabels.y_axis(spread)[2][:2] == ["10⁻⁵", "10⁻⁴"]
    assert chartlabels.value_labels(spread) == (("4.68×10⁻⁵", "2.00"),)


def test_scaled_ticks_reach_the_svg() -> None:
    svg = charts.bar_svgs(CASES["huge-values"])["light"].decode()  # 262k to 2.96G: log
    assert ">1G<" in svg and ">100M<" in svg and ">1.48G<" in svg and ">262k<" in svg
    assert "(log scale)" in svg


def test_a_log_scale_where_one_value_dwarfs_another_and_only_there() -> None:
    def panel(*ys: float) -> BarPanel:
        labels = [f"l{i}" for i in range(len(ys))]
        return BarPanel("bar", "t", labels, "ms", [Series("s", list(ys))])

    assert charts.log_scale(panel(0.0098, 28.0, 26.25))  # 2,850x
    assert not charts.log_scale(panel(58.0, 28.0, 180.0))  # 6x
    assert not charts.log_scale(panel(0.0, 1.0, 500.0))  # a zero has no log
    assert not charts.log_scale(panel(-1.0, 500.0))
    ylim, _, labels = chartlabels.y_axis(panel(0.0098, 28.0, 26.25))
    assert labels[0] == "0.001" and labels[-1] == "100"
    assert ylim[0] < 0.0098 / 2  # the smallest bar still shows


def test_value_labels_share_one_precision() -> None:
    def labels(*ys: float | int) -> tuple[str, ...]:
        panel = BarPanel(
            "bar", "t", [f"l{i}" for i in range(len(ys))], "u", [Series("s", list(ys))]
        )
        return chartlabels.value_labels(panel)[0]

    assert labels(58.0751, 28.0917, 180.0671, 43.1466) == ("58", "28", "180", "43")
    assert labels(4.0, 4.5, 5.5) == ("4.0", "4.5", "5.5")
    assert labels(1.25, 3.5, 2.0) == ("1.25", "3.50", "2.00")
    assert labels(2228224, 2097168, 0, 262144) == ("2.23M", "2.10M", "0", "0.26M")
    assert labels(3, 12, 48) == ("3", "12", "48")
    assert labels(0.0098, 28.0021, 26.2522) == ("0.00980", "28.0", "26.3")  # log: 3 digits
    assert labels(2048.0, 0.5, 64.0) == ("2,048", "0.500", "64.0")  # not 2.05e+03


@pytest.mark.parametrize("name", list(CASES))
def test_the_narrow_chart_reads_at_11_px_in_a_phone_column(name: str) -> None:
    """Drawn for a phone (~335 CSS px column at 375): its smallest text, shrunk to that
    column, is at least 11 CSS px; several series stack their legend above the plot."""
    import re

    svg = charts.bar_svgs(CASES[name], charts.NARROW)["light"].decode()
    width_pt = float(re.search(r'width="([\d.]+)pt"', svg)[1])
    sizes = [float(x) for x in re.findall(r"font-size: ([\d.]+)px", svg)]
    shown_px = min(335.0, width_pt * 4 / 3)  # max-width: 100% of the column
    assert min(sizes) * shown_px / width_pt >= 11, (name, min(sizes))
    if len(CASES[name].series) > 1:  # the legend above the plot, not beside it
        with charts._settings():
            figure = charts._figure(CASES[name], charts.NARROW)
            figure.draw_without_rendering()
        legend, plot = figure.legends[0].get_window_extent(), figure.axes[0].get_window_extent()
        assert legend.y0 >= plot.y1, (legend, plot)


@pytest.mark.parametrize("name", CASES)
def test_the_size_a_page_gives_a_chart_is_that_of_what_it_draws(name: str) -> None:
    """A build measures a chart once per drawing (Renderer.size is kept by `charts.drawn`,
    the panel without its title): the size must not depend on the title either."""
    panel = CASES[name]
    retitled = replace(panel, title="A much longer title " * 12)
    for size in (charts.WIDE, charts.NARROW):
        assert charts.pixels(retitled, size) == charts.pixels(charts.drawn(panel), size)
