"""A recording's line and scatter panels: schemaVersion 1 still, bars unchanged (the
reference recording round-trips byte for byte), and a hand-made or damaged panel refused
with the file and the field named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from builder.core.errors import RecordingError
from builder.course import recording
from builder.course.recording import XYPanel, dumps, loads
from tests.helpers import REFERENCE

SCHEMA = Path(recording.__file__).parent / "schema" / "recording.schema.json"
LINE = {
    "kind": "line",
    "title": "Loss",
    "xlabel": "step",
    "ylabel": "loss",
    "x": [0, 1, 2],
    "series": [{"label": "adam", "y": [1.5, 0.75, 0.5]}],
}
FIT = {"kind": "linear", "slope": 2.0, "intercept": 1.0}
SCATTER = {**LINE, "kind": "scatter", "series": [{"label": "d", "y": [1, 3, 5], "fit": FIT}]}


def _with(*panels: dict[str, Any]) -> dict[str, Any]:
    raw = json.loads(REFERENCE.read_text())
    raw["data"]["panels"] += [copy.deepcopy(p) for p in panels]
    return raw


def _bytes(raw: dict[str, Any]) -> bytes:
    return json.dumps(raw, indent=2, ensure_ascii=False).encode()


def test_line_and_scatter_panels_round_trip_beside_bars() -> None:
    data = _bytes(_with(LINE, SCATTER))
    loaded = loads(data, "x.json")
    assert [p.kind for p in loaded.panels] == ["bar", "bar", "line", "scatter"]
    assert isinstance(loaded.panels[3], XYPanel)
    assert loaded.panels[3].series[0].fit is not None
    assert dumps(loaded) == data
    assert '"fit"' not in dumps(loads(_bytes(_with(LINE)), "x.json")).decode()


def test_the_reference_recording_still_round_trips_byte_for_byte() -> None:
    data = REFERENCE.read_bytes()
    assert dumps(loads(data, REFERENCE)) == data


@pytest.mark.parametrize(
    ("panel", "message"),
    [
        (
            {**LINE, "kind": "pie"},
            "does not match any of the expected tags: 'bar', 'line', 'scatter'",
        ),
        ({**LINE, "series": [{"label": "a", "y": [1]}]}, "series 'a' has 1 values for 3 x values"),
        ({**LINE, "x": []}, "field data.panels.2.x"),
        ({**LINE, "labels": ["a"]}, "field data.panels.2.labels: Extra inputs"),
        ({**LINE, "series": [{"label": "a", "y": [1, 2, 3], "fit": FIT}]}, "only a scatter"),
        ({**SCATTER, "series": [{"label": "a", "y": [1, 2, 3], "fit": None}]}, "is null"),
        (
            {
                **SCATTER,
                "series": [{"label": "a", "y": [1, 2, 3], "fit": {**FIT, "kind": "cubic"}}],
            },
            "field data.panels.2.series.0.fit.kind",
        ),
        ({**LINE, "x": [0, 1, "2"]}, "field data.panels.2.x.2"),
        ({**LINE, "x": [0, 1, 1e301]}, "must be at most 1e+300 in size"),
        (
            {**LINE, "x": list(range(1001)), "series": [{"label": "a", "y": [0] * 1001}]},
            "1001 points is more than 1000 in one panel",
        ),
        ({**LINE, "title": "t" * 201}, "field data.panels.2.title"),
        (
            {k: v for k, v in LINE.items() if k != "xlabel"},
            "field data.panels.2.xlabel: Field required",
        ),
    ],
)
def test_a_bad_line_or_scatter_panel_is_refused_naming_file_and_field(
    tmp_path: Path, panel: dict[str, Any], message: str
) -> None:
    path = tmp_path / "performance-05.json"
    path.write_bytes(_bytes(_with(panel)))
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_a_bar_panel_with_line_fields_is_refused(tmp_path: Path) -> None:
    raw = _with()
    raw["data"]["panels"][0]["x"] = [1, 2]
    path = tmp_path / "mixed.json"
    path.write_bytes(_bytes(raw))
    with pytest.raises(RecordingError, match=r"mixed.json: field data.panels.0.x: Extra inputs"):
        recording.load(path)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_point_is_refused(tmp_path: Path, constant: str) -> None:
    path = tmp_path / "nan.json"
    path.write_bytes(_bytes(_with(LINE)).replace(b"0.75", constant.encode()))
    with pytest.raises(RecordingError, match=f"nan.json: {constant} is not a finite number"):
        recording.load(path)


def test_the_committed_json_schema_takes_the_new_kinds_and_refuses_others() -> None:
    """What a reader of the schema (another tool) validates, not only what pydantic does."""
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema).validate(_with(LINE, SCATTER))
    jsonschema.Draft202012Validator(schema).validate(json.loads(REFERENCE.read_text()))
    for bad in ({**LINE, "kind": "pie"}, {**LINE, "labels": ["a"]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate(_with(bad))
