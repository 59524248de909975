"""Charts: the same panel gives the same bytes in any process and whatever was drawn before,
the dark SVG is the light one recoloured, text stays (escaped) text, and no chart shape
pushes text off the figure."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from bench.charts import CASES
from builder.course.recording import BarPanel, Series
from builder.render import charts
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
    script = "import json, tests.test_charts as t; print(json.dumps(t.digests()))"
    env = {"PYTHONHASHSEED": "123", "PATH": ""}
    other = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, check=True
    )
    assert json.loads(other.stdout) == digests()


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
    panel = replace(CASES["three-series"], title="fill: #1a202c stays as typed")
    svgs = charts.bar_svgs(panel)
    light, dark = svgs["light"], svgs["dark"]
    assert b"#1a202c" in light and b"#e2e8f0" not in light
    assert b'style="fill: #1a202c' not in dark and b"fill: #e2e8f0" in dark
    assert b"stroke: #3a4556" in dark and b"stroke: #d5dbe3" not in dark
    assert b">fill: #1a202c stays as typed</text>" in dark
    assert dark.replace(b"#e2e8f0", b"#1a202c").replace(b"#3a4556", b"#d5dbe3") == light


def test_text_is_svg_text() -> None:
    svg = charts.bar_svgs(CASES["three-series"])["light"].decode()
    for text in ("Top-level equations against trip count", "python_loop", ">192<", ">64<"):
        assert text in svg
    assert "jaxpr equations (top level)" in svg
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
        assert {hostile, "a < b", "c & d", "$ per <op>", "x&y", "</text>"} <= set(texts)
        assert b"<script>" not in svg


def test_one_series_has_no_legend_several_have_one() -> None:
    assert b'id="legend-0"' not in charts.bar_svgs(CASES["typical"])["light"]
    svg = charts.bar_svgs(CASES["three-series"])["light"]
    assert b'id="legend-2"' in svg and b">fori_loop</text>" in svg


def test_long_x_labels_are_rotated_short_ones_are_not() -> None:
    long, short = (charts.bar_svgs(CASES[c])["light"].decode() for c in ("long-labels", "typical"))
    assert "rotate(-30" in long and "rotate(-30" not in short


@pytest.mark.parametrize("name", list(CASES))
def test_nothing_is_clipped(name: str) -> None:
    from matplotlib import rc_context

    panel = CASES[name]
    layout = charts._layout(panel)
    with rc_context(dict(charts.RC)):
        figure = charts._figure(panel, layout)
        box = figure.get_tightbbox()  # inches
    width, height = figure.get_size_inches()
    assert height * 72 == pytest.approx(layout.height)
    assert box.x0 >= 0 and box.y0 >= 0, box
    assert box.x1 <= width and box.y1 <= height, (box, width, height)


def test_compact_numbers() -> None:
    assert charts._tick_labels([0, 1e9, 2e9, 3e9]) == ["0", "1G", "2G", "3G"]
    assert charts._tick_labels([0, 0.25, 0.5]) == ["0", "0.25", "0.50"]
    assert charts._tick_labels([-20, 0, 20]) == ["−20", "0", "20"]
    assert charts._tick_labels([0, 2e-7, 4e-7]) == ["0", "200n", "400n"]
    assert [charts._short(v) for v in (1479409664, 262144, 1808.2, 7, 0.5)] == [
        "1.48G",
        "262k",
        "1,808",
        "7",
        "0.5",
    ]


def test_scaled_ticks_reach_the_svg() -> None:
    svg = charts.bar_svgs(CASES["huge-values"])["light"].decode()
    assert ">3G<" in svg and ">1.48G<" in svg
