"""An execution turned into a recording: its panels checked (drawable, names distinct in
Unicode), where its declared timings are in stdout, and the recording's fields in schema
order."""

from __future__ import annotations

import bisect
import json
import unicodedata
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import RecordingError
from ..course.model import Lesson
from ..course.recording import Recording
from ..course.rules import MAX_DRAWABLE, drawable
from .execute import (
    Execution,
)

if TYPE_CHECKING:
    pass


def to_recording(
    lesson: Lesson, execution: Execution, content_hash: str, renderer_hash: str
) -> Recording:
    from pydantic import ValidationError

    from ..course.validation import validate_json

    raw = {
        "schemaVersion": 1,
        "lessonId": lesson.id,
        "contentHash": content_hash,
        "rendererHash": renderer_hash,
        "kind": "executed",
        "generatedAt": datetime.now(UTC).isoformat(timespec="microseconds"),
        "provenance": f"recorded_{execution.environment.get('backend', 'unknown')}_computation",
        "environment": execution.environment,
        "stdout": execution.stdout,
        "data": {"kind": "panels", "panels": execution.panels},
    }
    if execution.timings:  # a harness that declares timings (older ones sent none)
        raw["timings"] = declared_timings(
            execution.stdout, execution.timings, len(execution.panels)
        )
    if execution.cells is not None:
        raw["cells"] = _cells(execution.cells, len(execution.stdout))
    try:  # validated as the text recording.dumps will write (strict types read JSON objects)
        return validate_json(Recording, json.dumps(raw, indent=2, ensure_ascii=False))
    except ValidationError as error:
        raise RecordingError(f"the run did not make a valid recording: {error}") from None


def declared_timings(stdout: str, declared: dict[str, Any], panels: int) -> dict[str, Any]:
    """The harness's declared timings as a recording keeps them: each printed timing's
    place in stdout (line, start, end), found as the first occurrence of its text at or
    after the point where it was made, and after the timing made before it when that one
    was found there (two equal texts are two places); one never printed is dropped."""
    lines, starts = stdout.splitlines(), [0]
    for line in stdout.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans, previous = [], 0
    for item in _declared(declared.get("output")):
        text, after = item["text"], min(item["after"], len(stdout))
        found = stdout.find(text, max(after, previous))
        found = found if found >= 0 else stdout.find(text, after)
        if found < 0:
            continue
        previous = found + len(text)
        number = bisect.bisect_right(starts, found)
        column = found - starts[number - 1]
        if column + len(text) <= len(lines[number - 1]):  # not across a line break
            spans.append({"line": number, "start": column, "end": column + len(text)})
    panel_numbers = declared.get("panels")
    numbers = panel_numbers if isinstance(panel_numbers, list) else []
    numbers = sorted({n for n in numbers if type(n) is int and 1 <= n <= panels})
    return {"output": spans, "panels": numbers}


def _cells(ran: list[Any], printed: int) -> list[Any]:
    """The harness's cells, each one's part of stdout kept within stdout and after the one
    before it (writes that bypass sys.stdout are not counted: they fall to a later cell)."""
    kept, start = [], 0
    for cell in ran:
        if not isinstance(cell, dict) or type(cell.get("start")) is not int:
            return ran  # not the harness's: validation names what is wrong
        end = cell.get("end")
        start = min(max(cell["start"], start), printed)
        end = min(max(end, start), printed) if type(end) is int else end
        kept.append(cell | {"start": start, "end": end})
        start = end if type(end) is int else start
    return kept


def _declared(items: object) -> list[dict[str, Any]]:
    """The well-formed entries of the harness's list (an example can reach the list)."""
    if not isinstance(items, list):
        return []
    return [
        x
        for x in items
        if isinstance(x, dict)
        and isinstance(x.get("text"), str)
        and x["text"]
        and type(x.get("after")) is int
        and x["after"] >= 0
    ]


def undrawable(panels: list[dict[str, Any]]) -> str:
    """The first panel value a chart cannot draw (an int of 400 digits passes panels.bar,
    which is part of the harness), named by panel, series and label or x; "" when none."""
    try:
        for number, panel in enumerate(panels, start=1):
            where = f"panel {number} ({panel['title']!r})"
            for at, y in _points(panel):
                if isinstance(y, int | float) and not drawable(y):
                    return (
                        f"{where}, {at}: {_magnitude(y)} is too large to draw (a chart "
                        f"draws numbers up to {MAX_DRAWABLE:g})"
                    )
    except (KeyError, TypeError, AttributeError):
        pass  # not panels at all: to_recording names what is wrong
    return ""


def _points(panel: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every number a panel holds, each with where it is: a bar's series and label, a line
    or scatter panel's x values, its series' y values and fitted lines."""
    if panel["kind"] == "bar":
        return [
            (f"series {series['label']!r}, label {label!r}", y)
            for series in panel["series"]
            for label, y in zip(panel["labels"], series["y"], strict=False)
        ]
    found = [(f"x value {n}", x) for n, x in enumerate(panel["x"], start=1)]
    for series in panel["series"]:
        name = f"series {series['label']!r}"
        found += [(f"{name}, point {n}", y) for n, y in enumerate(series["y"], start=1)]
        fit = series.get("fit") or {}
        found += [(f"{name}, its fit's {key}", fit.get(key)) for key in ("slope", "intercept")]
    return found


def same_names(panels: list[dict[str, Any]]) -> str:
    """Two labels (or two series) of one panel that are the same name in Unicode (NFC and
    NFD spellings of "é"): a reference to either would find the first; "" when none."""
    try:
        for number, panel in enumerate(panels, start=1):
            series = [s["label"] for s in panel["series"]]
            for what, names in (("labels", panel.get("labels", [])), ("series", series)):
                seen: dict[str, str] = {}
                for name in names:
                    key = unicodedata.normalize("NFC", name)
                    if key in seen:
                        other = seen[key]
                        return (
                            f"panel {number} ({panel['title']!r}): {what} {other!r} and "
                            f"{name!r} are the same name (equal in Unicode); give each its own"
                        )
                    seen[key] = name
    except (KeyError, TypeError, AttributeError):
        pass  # not panels at all: to_recording names what is wrong
    return ""


def _magnitude(y: int | float) -> str:
    """A number too large to print whole (str() refuses ints of over 4,300 digits)."""
    return (
        f"a number of about {int(y.bit_length() * 0.30103) + 1} digits"
        if isinstance(y, int)
        else repr(y)
    )
