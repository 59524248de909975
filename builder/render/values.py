"""Inline `{{ value ... }}` marks: a number (or a line) the run produced, read from the
lesson's recording and placed in a sentence, with a note naming where it came from
(builder/render/marks.py places the block marks)."""

from __future__ import annotations

import unicodedata

from markupsafe import Markup

from ..course.recording import BarPanel, ImagePanel, Number, Recording, Series, XYPanel, XYSeries
from .bounded import format_value
from .figures import format_number, provenance
from .marks import Args, PageEnv, search_pattern
from .markup import macro


def value(page: PageEnv, args: Args, text: str) -> str:
    """A recorded value in a sentence, and a note on where it came from: shown while the
    value has the pointer or the focus (it is in the tab order, so a keyboard or a tap reaches
    it), and read out as the value's description."""
    recording = page.recording
    if recording is None:
        page.keep("[not recorded]", spaced=False)
        return Markup('<span class="not-recorded">[not recorded]</span>')
    found = _lookup(page, recording, args, text)
    if found is None:  # failed, and said why: mark the place (`diff` compares marks in order)
        return page.broken(page.errors[-1].problem)
    value, source, line = found
    shown = _format(value, args.get("fmt", [""])[0], page, text)
    page.values += 1
    exact = _exact(value)
    recorded = f"Recorded value {exact}, from" if exact != shown else "From"
    note = page.id(f"value-note-{page.values}")
    panel = int(args["panel"][0]) if "panel" in args else 0
    page.place("value", source, shown, line=line, panel=panel)
    page.keep(shown, spaced=False)  # its note is not read as prose: it opens on the value
    return macro("recorded_value", str(value), shown, note, recorded, source, provenance(recording))


def shown_value(page: PageEnv, args: Args, text: str) -> str | None:
    """The recorded value as the page shows it (None: it cannot be; the page says why)."""
    assert page.recording is not None
    found = _lookup(page, page.recording, args, text)
    return None if found is None else _format(found[0], args.get("fmt", [""])[0], page, text)


def _exact(value: float | str) -> str:
    """The recorded value in full, as a reader compares it with a rounded one."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _lookup(
    page: PageEnv, recording: Recording, args: Args, text: str
) -> tuple[float | str, str, int] | None:
    """The value, what it reads as the page says it, and the line of the recorded output it
    reads (0: a panel's)."""
    if "panel" in args:
        found = _panel_value(page, recording, args, text)
        return None if found is None else (*found, 0)
    if "output" in args:
        return _output_value(page, args["output"][0], text)
    if "line" in args:
        lines = page.shown_lines()
        number = args["line"][0]
        if number.isdigit() and 1 <= int(number) <= len(lines):
            return lines[int(number) - 1].strip(), f"recorded output, line {number}", int(number)
        page.error(f"{{{{ {text} }}}}: the recorded output has {len(lines)} lines")
        return None
    page.error(f'{{{{ {text} }}}}: say panel=N label=..., output="regex" or line=N')
    return None


def _panel_value(
    page: PageEnv, recording: Recording, args: Args, text: str
) -> tuple[float, str] | None:
    number = args["panel"][0]
    if not number.isdigit() or not 1 <= int(number) <= len(recording.panels):
        page.error(f"{{{{ {text} }}}}: the recording has {len(recording.panels)} panel(s)")
        return None
    panel = recording.panels[int(number) - 1]
    if isinstance(panel, XYPanel):
        return _plot_value(page, panel, number, args, text)
    if isinstance(panel, ImagePanel):
        return _image_value(page, panel, number, args, text)
    labels = [_nfc(label) for label in panel.labels]  # "é" typed one way finds it typed another
    label = _nfc(args.get("label", [""])[0])
    if label not in labels:
        page.error(f"{{{{ {text} }}}}: panel {number} has labels {panel.labels}")
        return None
    if (found := _series(page, panel, args, text)) is None:
        return None
    wanted, series = found
    value = series.y[labels.index(label)]
    unit = f", in {panel.ylabel}" if panel.ylabel else ""
    return value, f"panel {number} “{panel.title}”, {wanted}, {label}{unit}"


def _series(
    page: PageEnv, panel: BarPanel | XYPanel, args: Args, text: str
) -> tuple[str, Series | XYSeries] | None:
    """The series `series=` names (its label as typed, and the series), or the only one."""
    names = [_nfc(series.label) for series in panel.series]
    wanted = _nfc(args.get("series", [names[0] if len(names) == 1 else ""])[0])
    if wanted not in names:
        page.error(f"{{{{ {text} }}}}: give series= one of {[s.label for s in panel.series]}")
        return None
    return wanted, panel.series[names.index(wanted)]


def _plot_value(
    page: PageEnv, panel: XYPanel, number: str, args: Args, text: str
) -> tuple[float, str] | None:
    """A line or scatter panel's value: a series' y at `x=` (or at its `point=`, 1-based,
    where an x value repeats), or its fitted line's `fit=slope` or `fit=intercept`."""
    if (found := _series(page, panel, args, text)) is None:
        return None
    wanted, series = found
    assert isinstance(series, XYSeries)  # a line or scatter panel's
    where = f"panel {number} “{panel.title}”, {wanted}"
    if "fit" in args:
        return _fit_value(page, series, args["fit"][0], where, text)
    index = _point(page, panel, series.xs(panel), number, args, text)
    if index is None:
        return None
    at = format_number(series.xs(panel)[index])
    return series.y[index], f"{where}, at {panel.xlabel} {at}, in {panel.ylabel}"


def _fit_value(
    page: PageEnv, series: XYSeries, which: str, where: str, text: str
) -> tuple[float, str] | None:
    if series.fit is None:
        page.error(f"{{{{ {text} }}}}: series {series.label!r} has no fitted line")
        return None
    if which not in ("slope", "intercept"):
        page.error(f"{{{{ {text} }}}}: say fit=slope or fit=intercept")
        return None
    return getattr(series.fit, which), f"{where}, the linear fit's {which}"


def _image_value(
    page: PageEnv, panel: ImagePanel, number: str, args: Args, text: str
) -> tuple[float, str] | None:
    """An image panel's value at `row=` and `column=` (1-based, as its table numbers them)."""
    rows, columns = len(panel.pixels), len(panel.pixels[0])
    row, column = args.get("row", [""])[0], args.get("column", [""])[0]
    if not (row.isdigit() and column.isdigit()):
        page.error(f"{{{{ {text} }}}}: panel {number} is an image: say row=R column=C")
        return None
    if not (1 <= int(row) <= rows and 1 <= int(column) <= columns):
        page.error(f"{{{{ {text} }}}}: panel {number} has rows 1 to {rows}, columns 1 to {columns}")
        return None
    value = panel.pixels[int(row) - 1][int(column) - 1]
    return value, f"panel {number} “{panel.title}”, row {row} column {column}"


def _point(
    page: PageEnv, panel: XYPanel, xs: list[Number], number: str, args: Args, text: str
) -> int | None:
    """The 0-based index of the point `x=` or `point=` names among `xs` (the series' x
    values), or None having said why."""
    count = len(xs)
    if "point" in args:
        point = args["point"][0]
        if point.isdigit() and 1 <= int(point) <= count:
            return int(point) - 1
        page.error(f"{{{{ {text} }}}}: panel {number} has points 1 to {count}")
        return None
    if "x" not in args:
        page.error(
            f"{{{{ {text} }}}}: panel {number} is a {panel.kind} panel: say x=VALUE (one of "
            f"its x values) or point=N, with series= when it has several, or fit=slope"
        )
        return None
    try:
        x = float(args["x"][0])
    except ValueError:
        x = float("nan")
    found = [k for k, value in enumerate(xs) if value == x]
    if len(found) == 1:
        return found[0]
    if found:
        points = ", ".join(str(k + 1) for k in found)
        page.error(f"{{{{ {text} }}}}: points {points} share that x; say point=N")
        return None
    shown = [format_number(v) for v in xs[:12]] + (["..."] if count > 12 else [])
    page.error(f"{{{{ {text} }}}}: panel {number} has no x {args['x'][0]}; its x values: {shown}")
    return None


def _nfc(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def _output_value(page: PageEnv, pattern_text: str, text: str) -> tuple[str, str, int] | None:
    shown = "".join(page.shown_lines())
    pattern = search_pattern(pattern_text, page, shown)
    match = pattern.search(shown) if pattern else None
    if match is None:
        if pattern:
            page.error(f"{{{{ {text} }}}}: the pattern matches nothing in the recorded output")
        return None
    value = match.group(1) if pattern and pattern.groups else match.group(0)
    line = shown.count("\n", 0, match.start()) + 1
    return value, f"recorded output, line {line}", line


def _format(value: float | str, spec: str, page: PageEnv, text: str) -> str:
    if not spec:
        return value if isinstance(value, str) else format_number(value)
    try:
        return format_value(value, spec)
    except ValueError as error:  # a recorded inf or nan, a bad spec, a width of a gigabyte
        page.error(f"{{{{ {text} }}}}: cannot format {value!r} with {spec!r}: {error}")
        return str(value)


# -- shared text helpers -----------------------------------------------------------------
