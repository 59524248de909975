"""A recorded panel as a page shows it, and the markup every page shares for recorded things.

A panel is a `<figure>`: its chart in each theme (files in the site's charts/ folder, named
by what they draw and shared by every page that shows it, `chart_file`; builder/render/
charts.py draws them), alt text that reads out every value, and the numbers as a table;
its caption names the instrument (`provenance`). Code, output and tables scroll sideways in
their own keyboard-reachable box, so nothing widens the page. The markup is
templates/_macros.html (builder/render/markup.py); these are pure functions of their
arguments and the templates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from markupsafe import Markup

from ..course.recording import ImagePanel, Panel, Recording, XYPanel
from .markup import macro
from .relocate import Move


def scrollable(pre: str, label: str) -> Markup:
    """A `<pre>` (HTML) that scrolls sideways, reachable by keyboard and named for screen
    readers (axe: scrollable-region-focusable): long lines scroll inside it, never the page."""
    assert pre.startswith("<pre ")
    return Markup('<pre tabindex="0" role="region" aria-label="%s" %s') % (label, Markup(pre[5:]))


def table_scroll_open(label: str) -> Markup:
    """The opening of a table's own sideways scroll container (closed by `</div>`), so a
    wide table never widens the page (a panel's table: the `panel_table` macro)."""
    return Markup('<div class="table-scroll" tabindex="0" role="region" aria-label="%s">') % label


def chart_size(panel: Panel, narrow: bool) -> tuple[int, int]:
    """The chart's size in CSS pixels (charts.pixels: matplotlib lays it out); a build
    hands pages a cached one (builder.render.renderer.Renderer.size), so that a page whose
    charts did not change imports no matplotlib."""
    from . import charts

    return charts.pixels(panel, charts.NARROW if narrow else charts.WIDE)


Sizer = Callable[[Panel, bool], tuple[int, int]]


def unplaced_panels(
    recording: Recording | None,
    placed: list[int],
    root: str,
    size: Sizer = chart_size,
    moved: Move | None = None,
) -> Markup:
    """The panels the prose does not place, in a closing section: every panel is shown
    (`root`: the page's way up to the site's root, where the charts are; `moved`: see
    figure_html)."""
    count = len(recording.panels) if recording else 0
    unplaced = [n for n in range(1, count + 1) if n not in placed]
    if recording is None or not unplaced:
        return Markup()
    heading = moved.heading("h2") if moved else "h2"
    figures = [figure_html(recording, n, root, size, moved) for n in unplaced]
    return macro("more_panels", figures, heading)


# The chart drawn for a phone's column wherever a column is narrower than the wide chart
# (614 px; a lab's folded answer is 19 px narrower than the page's column, 41 px narrower
# than the window up to 800 px), so that no chart is shrunk below its 11 px text.
NARROW_MEDIA = "(max-width: 680px)"


CHARTS = "charts/"  # the site's folder of chart files, one set per drawing, shared by pages


def chart_file(panel: Panel, theme: str, narrow: bool = False) -> str:
    """A chart's file from the site's root, named by what it draws (charts.drawn: not the
    title) so that every page showing the same drawing shares it, and a changed drawing is
    a new file: charts/<digest>.svg, charts/<digest>-dark.svg for dark mode, and
    charts/<digest>-narrow.svg / -dark-narrow.svg, drawn for a phone's column. The page
    and the chart artifact (builder.render.lessons) both name it here."""
    from .charts import drawing

    digest = hashlib.sha256(drawing(panel).encode()).hexdigest()[:16]
    name = digest if theme == "light" else f"{digest}-{theme}"
    return f"{CHARTS}{name}-narrow.svg" if narrow else f"{CHARTS}{name}.svg"


def figure_html(
    recording: Recording,
    number: int,
    root: str,
    size: Sizer = chart_size,
    moved: Move | None = None,
) -> Markup:
    """Panel `number` as a figure on a page `root` below the site's root ("../../");
    `moved`: the lesson's prose is rendered into another page (relocate.Move)."""
    panel = recording.panels[number - 1]
    pictures = [
        (theme, root + chart_file(panel, theme), root + chart_file(panel, theme, True))
        for theme in ("light", "dark")
    ]
    anchor, name = f"panel-{number}", panel.title
    if moved is not None:
        anchor, name = moved.id(anchor), f"{name}, {moved.label}"
    return macro(
        "panel_figure",
        anchor,
        moved is None,  # a lazy image may not be loaded when a moved page is printed
        panel.title,
        provenance(recording),
        chart_alt(panel),
        NARROW_MEDIA,
        pictures,
        size(panel, False),
        size(panel, True),
        panel_table(panel, name),
    )


def chart_alt(panel: Panel) -> str:
    """The chart read out: every value (a line or scatter panel with many points: each
    series' first, last, lowest and highest, the table below holding them all)."""
    from .charts import log_scale

    if isinstance(panel, XYPanel):
        return _plot_alt(panel)
    if isinstance(panel, ImagePanel):
        return _image_alt(panel)
    parts = [
        f"{series.label}: "
        + ", ".join(
            f"{label} {format_number(y)}" for label, y in zip(panel.labels, series.y, strict=False)
        )
        for series in panel.series
    ]
    scale = " on a log scale" if log_scale(panel) else ""
    return f"Bar chart, {panel.title}, in {panel.ylabel}{scale}. " + "; ".join(parts)


ALT_POINTS = 12  # a series with more points is summarised in the alt text


def _plot_alt(panel: XYPanel) -> str:
    from .plots import equation

    kind = "Line chart" if panel.kind == "line" else "Scatter plot"
    head = f"{kind}, {panel.title}: {panel.ylabel} against {panel.xlabel}, as (x, y). "
    parts = []
    for series in panel.series:
        points = list(zip(series.xs(panel), series.y, strict=True))
        if len(points) <= ALT_POINTS:
            said = ", ".join(f"({_n(x)}, {_n(y)})" for x, y in points)
        else:
            low = min(points, key=lambda p: p[1])
            high = max(points, key=lambda p: p[1])
            said = (
                f"{len(points)} points, from {_n(points[0][1])} at {_n(points[0][0])} to "
                f"{_n(points[-1][1])} at {_n(points[-1][0])}, lowest {_n(low[1])} at "
                f"{_n(low[0])}, highest {_n(high[1])} at {_n(high[0])}"
            )
        fit = f"; linear fit {equation(series.fit)}" if series.fit else ""
        parts.append(f"{series.label}: {said}{fit}")
    said = "".join(f"{note} " for note in notes(panel))
    return head + "; ".join(parts) + ". " + said + "The table lists every value."


def _image_alt(panel: ImagePanel) -> str:
    flat = [v for row in panel.pixels for v in row]
    return (
        f"Image, {panel.title}: {len(panel.pixels)} rows of {len(panel.pixels[0])} values, "
        f"{panel.ylabel} down, {panel.xlabel} across, from {_n(min(flat))} to {_n(max(flat))}. "
        + "".join(f"{note} " for note in notes(panel))
        + "The table lists every value."
    )


def notes(panel: Panel) -> list[str]:
    """What a page says of a chart beyond its numbers: a series that lies on another, and of
    a captured figure what was sampled and its reference lines."""
    said = []
    if isinstance(panel, ImagePanel) and [len(panel.pixels), len(panel.pixels[0])] != panel.shape:
        rows, columns = panel.shape
        said.append(
            f"Sampled evenly to {len(panel.pixels)} x {len(panel.pixels[0])} of the "
            f"{rows} x {columns} values drawn."
        )
    if isinstance(panel, XYPanel):
        said += _twins(panel)
    for series in panel.series if isinstance(panel, XYPanel) else ():
        if series.of:
            said.append(f"{series.label}: {len(series.y):,} of the {series.of:,} points drawn.")
    for reference in panel.axes.references if panel.axes else ():
        name = f" ({reference.label})" if reference.label else ""
        said.append(f"A reference line at {reference.axis} = {_n(reference.at)}{name}.")
    return said


def _twins(panel: XYPanel) -> list[str]:
    """Each series drawn exactly over an earlier one, said: the chart shows one line."""
    from .plots import twins

    named = [(panel.series[k].label, panel.series[of].label) for k, of in twins(panel).items()]
    return [f"{a} has the same values as {b}; its dashed line lies on that one." for a, b in named]


def _n(value: float) -> str:
    return format_number(value)


def panel_table(panel: Panel, name: str = "") -> Markup:
    """The panel's numbers as a table, in its own sideways scroll container, left out of
    the search index: a row per label (bars) or x value (lines and points), a column per
    series, and a line or scatter panel's fitted lines in its caption."""
    caption = "; ".join([panel.ylabel, *notes(panel)])
    if isinstance(panel, ImagePanel):
        columns = [str(n) for n in range(1, len(panel.pixels[0]) + 1)]
        return macro("panel_table", name, caption, columns, panel_rows(panel), "row")
    series = [s.label for s in panel.series]
    if not isinstance(panel, XYPanel):
        return macro("panel_table", name, caption, series, panel_rows(panel))
    from .plots import equation

    fits = [f"{s.label}: linear fit {equation(s.fit)}" for s in panel.series if s.fit]
    caption = "; ".join([caption, *fits])
    if panel.axes is not None:  # a row a point: the series may have x values of their own
        series = ["series", panel.ylabel] + ["low", "high"] * any(s.bounds() for s in panel.series)
    return macro("panel_table", name, caption, series, panel_rows(panel), panel.xlabel)


def panel_rows(panel: Panel) -> list[tuple[str, list[str]]]:
    """The rows of a panel's table: each label (or x value) and its value in each series,
    as shown."""
    if isinstance(panel, ImagePanel):
        return [(str(r), [format_number(v) for v in row]) for r, row in enumerate(panel.pixels, 1)]
    if isinstance(panel, XYPanel) and panel.axes is not None:
        return _point_rows(panel)
    labels = panel.labels if not isinstance(panel, XYPanel) else map(format_number, panel.x)
    return [
        (label, [format_number(s.y[i]) for s in panel.series]) for i, label in enumerate(labels)
    ]


def _point_rows(panel: XYPanel) -> list[tuple[str, list[str]]]:
    """A captured figure's table: a row a point, its series, y, and its band's or error
    bars' ends where the panel has them."""
    bounded = any(s.bounds() for s in panel.series)
    rows = []
    for s in panel.series:
        ends = list(zip(s.low or s.y, s.high or s.y, strict=True))
        for x, y, (low, high) in zip(s.xs(panel), s.y, ends, strict=True):
            more = [format_number(low), format_number(high)] if bounded else []
            rows.append((format_number(x), [s.label, format_number(y), *more]))
    return rows


def panel_shown(panel: Panel) -> str:
    """A panel's table as one line of text: each row's cells, rows joined with ' / '."""
    return " / ".join(" ".join([label, *cells]) for label, cells in panel_rows(panel))


def format_number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}" if abs(value) >= 10000 else str(int(value))
    return f"{value:.4g}"


def provenance(recording: Recording) -> str:
    """'Recorded CPU computation · jax 0.9.2 · 1 device · 2026-10-20', the device's kind
    after the count where the recording names it ('1 device · TPU v5 lite')."""
    return (
        f"Recorded {recording.device} computation · jax {recording.environment.jax} · "
        f"{recording.devices} · {recording.generatedAt[:10]}"
    )
