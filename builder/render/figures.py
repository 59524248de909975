"""A recorded panel as a page shows it, and the markup every page shares for recorded things.

A panel is a `<figure>`: its chart in each theme (files beside the page, builder/render/charts.py
draws them), alt text that reads out every value, and the numbers as a table; its caption
names the instrument (`provenance`). Code, output and tables scroll sideways in their own
keyboard-reachable box, so nothing widens the page. Pure functions of their arguments,
used by builder/render/marks.py (placed panels), builder/render/lessons.py (chart files, panels the
prose does not place) and builder/review/diff.py.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from ..course.recording import BarPanel, Recording


def scrollable(pre: str, label: str) -> str:
    """A `<pre>` that scrolls sideways, reachable by keyboard and named for screen readers
    (axe: scrollable-region-focusable): long lines scroll inside it, never the page."""
    assert pre.startswith("<pre ")
    return f'<pre tabindex="0" role="region" aria-label="{html.escape(label)}" ' + pre[5:]


def table_scroll(table: str, label: str, searched: bool = True) -> str:
    """A table in its own sideways scroll container, so a wide table never widens the page;
    `searched=False`: left out of the search index."""
    ignore = "" if searched else " data-pagefind-ignore"
    return (
        f'<div class="table-scroll" tabindex="0" role="region" aria-label="{html.escape(label)}"'
        f"{ignore}>{table}</div>"
    )


def chart_size(panel: BarPanel, narrow: bool) -> tuple[int, int]:
    """The chart's size in CSS pixels (charts.pixels: matplotlib lays it out); a build
    hands pages a memoized one (builder.render.lessons.Renderer.size), so that a page whose
    charts did not change imports no matplotlib."""
    from . import charts

    return charts.pixels(panel, charts.NARROW if narrow else charts.WIDE)


Sizer = Callable[[BarPanel, bool], tuple[int, int]]


def unplaced_panels(
    recording: Recording | None, placed: list[int], size: Sizer = chart_size
) -> str:
    """The panels the prose does not place, in a closing section: every panel is shown."""
    count = len(recording.panels) if recording else 0
    unplaced = [n for n in range(1, count + 1) if n not in placed]
    if recording is None or not unplaced:
        return ""
    return (
        '<section class="more-panels"><h2>Recorded panels</h2>'
        + "".join(figure_html(recording, n, size) for n in unplaced)
        + "</section>"
    )


NARROW_MEDIA = "(max-width: 560px)"  # a phone: the chart drawn for its column


def panel_file(number: int, theme: str, narrow: bool = False) -> str:
    """The chart's file beside the page: panel-1.svg, panel-1-dark.svg for dark mode, and
    panel-1-narrow.svg / panel-1-dark-narrow.svg, drawn for a phone's column."""
    name = f"panel-{number}" if theme == "light" else f"panel-{number}-{theme}"
    return f"{name}-narrow.svg" if narrow else f"{name}.svg"


def figure_html(recording: Recording, number: int, size: Sizer = chart_size) -> str:
    panel = recording.panels[number - 1]
    title = html.escape(panel.title)
    alt = html.escape(chart_alt(panel))
    (w, h), (nw, nh) = size(panel, False), size(panel, True)
    images = "".join(
        f'<picture><source media="{NARROW_MEDIA}" srcset="{panel_file(number, theme, True)}" '
        f'width="{nw}" height="{nh}">'
        f'<img class="chart-{theme}" src="{panel_file(number, theme)}" alt="{alt}" '
        f'width="{w}" height="{h}" loading="lazy"></picture>'
        for theme in ("light", "dark")
    )
    return (
        f'<figure class="panel" id="panel-{number}">'
        f"<figcaption><strong>{title}</strong> <span data-pagefind-ignore>· "
        f"{html.escape(provenance(recording))}</span></figcaption>{images}"
        f"{panel_table(panel)}</figure>\n"
    )


def chart_alt(panel: BarPanel) -> str:
    parts = [
        f"{series.label}: "
        + ", ".join(
            f"{label} {format_number(y)}" for label, y in zip(panel.labels, series.y, strict=False)
        )
        for series in panel.series
    ]
    from .charts import log_scale

    scale = " on a log scale" if log_scale(panel) else ""
    return f"Bar chart, {panel.title}, in {panel.ylabel}{scale}. " + "; ".join(parts)


def panel_table(panel: BarPanel) -> str:
    head = "".join(f'<th scope="col">{html.escape(s.label)}</th>' for s in panel.series)
    rows = "".join(
        f'<tr><th scope="row">{html.escape(label)}</th>'
        + "".join(f"<td>{format_number(s.y[i])}</td>" for s in panel.series)
        + "</tr>"
        for i, label in enumerate(panel.labels)
    )
    table = (  # the corner cell is a <td>: an empty header names nothing (axe)
        f'<table class="panel-data"><caption>{html.escape(panel.ylabel)}</caption>'
        f"<thead><tr><td></td>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )
    return table_scroll(table, f"{panel.title}: the recorded numbers", searched=False)


def format_number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}" if abs(value) >= 10000 else str(int(value))
    return f"{value:.4g}"


def provenance(recording: Recording) -> str:
    """'Recorded CPU computation · jax 0.9.2 · 1 device · 2026-10-20'."""
    env = recording.environment
    devices = f"{env.deviceCount} device" + ("s" if env.deviceCount != 1 else "")
    return (
        f"Recorded {recording.device} computation · jax {env.jax} · {devices} · "
        f"{recording.generatedAt[:10]}"
    )
