"""Charts: the same panel gives the same bytes whatever was drawn before, the dark SVG is
the light one recoloured, text stays text, no chart shape pushes text off the figure, and
the legend is where matplotlib's own legend would put it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from bench.charts import CASES
from builder import charts
from builder.recording import BarPanel


def fresh(panel: BarPanel, theme: str) -> bytes:
    return charts.bar_svgs(panel)[theme]


def test_same_panel_same_bytes_whatever_was_drawn_before() -> None:
    first = {name: fresh(panel, "light") for name, panel in CASES.items()}
    for name, panel in reversed(CASES.items()):
        assert fresh(panel, "light") == first[name], name


def test_dark_is_the_light_chart_with_dark_text_and_grid() -> None:
    panel = replace(CASES["three-series"], title="fill: #1a202c stays as typed")
    light, dark = fresh(panel, "light"), fresh(panel, "dark")
    assert b"#1a202c" in light and b"#e2e8f0" not in light
    assert b'style="fill: #1a202c' not in dark and b"fill: #e2e8f0" in dark
    assert b"stroke: #3a4556" in dark and b"stroke: #d5dbe3" not in dark
    assert b">fill: #1a202c stays as typed</text>" in dark
    assert dark.replace(b"#e2e8f0", b"#1a202c").replace(b"#3a4556", b"#d5dbe3") == light


def test_text_is_svg_text() -> None:
    svg = fresh(CASES["three-series"], "light").decode()
    for text in ("Top-level equations against trip count", "python_loop", ">192<", ">64<"):
        assert text in svg
    assert "jaxpr equations (top level)" in svg


@pytest.mark.parametrize("name", list(CASES))
def test_nothing_is_clipped(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.backends.backend_agg import RendererAgg

    render = charts._render
    boxes: list[Any] = []

    def measure(figure: Any, height: float) -> bytes:
        width, tall = figure.get_size_inches() * figure.dpi
        assert tall == pytest.approx(height)
        box = figure.get_tightbbox(RendererAgg(int(width), int(tall), figure.dpi))
        boxes.append((box, figure.get_size_inches()))
        return render(figure, height)

    monkeypatch.setattr(charts, "_render", measure)
    fresh(CASES[name], "light")
    ((box, (width, height)),) = boxes
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


def test_legend_is_where_matplotlib_puts_it() -> None:
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import IdentityTransform

    wrapped = charts._wrap(
        "a series label long enough to wrap onto three legend lines", charts.SMALL, 110
    )
    assert wrapped.count("\n") == 2
    labels = ["python_loop", "fori_loop", wrapped, "qy", "two\nlines"]
    left, top, height = 380.0, 200.0, 230.4
    with charts._rc_set(charts._rc(charts.THEMES["light"])):
        canvas = charts._canvas()
        canvas.start(height)
        charts._legend(canvas, labels, left, top)
        canvas.finish()
        ours = drawn(charts._render(canvas.figure, height))
        figure = Figure(figsize=(charts.WIDTH / 72, height / 72), dpi=72)
        handles = [Rectangle((0, 0), 1, 1, fc=color) for color in charts.PALETTE]
        figure.legend(
            handles[: len(labels)], labels, frameon=False, fontsize=charts.SMALL,
            loc="upper left", bbox_to_anchor=(left, top), bbox_transform=IdentityTransform(),
        )  # fmt: skip
        theirs = drawn(charts._render(figure, height))
    assert len(ours) == len(labels) + 8 + 1  # swatches, lines of text, the background
    assert ours == theirs


def drawn(svg: bytes) -> list[str]:
    """The SVG's paths and texts, where they are, in a stable order."""
    text = svg.decode()
    paths = re.findall(r'<path d="([^"]*)"[^>]*style="([^"]*)"', text)
    texts = re.findall(r'<text style="([^"]*)" x="([^"]*)" y="([^"]*)"[^>]*>([^<]*)</text>', text)
    moved = re.findall(r'<text style="([^"]*)" transform="([^"]*)">([^<]*)</text>', text)
    return sorted(" ".join(parts) for parts in [*paths, *texts, *moved])
