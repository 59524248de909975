"""The recording model: the reference round-trips byte for byte; bad files are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import RecordingError
from builder.course import recording
from tests.helpers import HERE, REFERENCE


def test_reference_recording_round_trips_byte_for_byte() -> None:
    data = REFERENCE.read_bytes()
    loaded = recording.loads(data, REFERENCE)
    assert recording.dumps(loaded) == data
    assert loaded.panels[1].series[0].y == [256, 256]
    assert isinstance(loaded.panels[0].series[0].y[0], int)


def _mutated(tmp_path: Path, change: str) -> Path:
    raw = json.loads(REFERENCE.read_text())
    exec(change, {"r": raw})
    path = tmp_path / "performance-05.json"
    path.write_text(json.dumps(raw, indent=2))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("r['schemaVersion'] = 2", "schemaVersion 2 is not supported"),
        ("del r['contentHash']", "field contentHash: Field required"),
        ("r['environment']['deviceCount'] = 'one'", "field environment.deviceCount"),
        ("r['data']['panels'][0]['series'][0]['y'][1] = 'six'", "field data.panels.0.series.0.y.1"),
        ("r['data']['panels'][0]['series'][0]['y'].append(3)", "has 3 values for 2 labels"),
        ("r['data']['panels'][0]['labels'] = []", "field data.panels.0.labels"),
        ("r['generatedAt'] = '2026-10-20T10:46:02'", "field generatedAt"),
        ("r['extra'] = 1", "field extra: Extra inputs are not permitted"),
        ("r['contentHash'] = 'abc'", "field contentHash"),
        ("r['data']['panels'][0]['series'][0]['y'][0] = True", "Input should be a valid number"),
    ],
)
def test_a_bad_field_is_rejected_naming_file_and_field(
    tmp_path: Path, change: str, message: str
) -> None:
    path = _mutated(tmp_path, change)
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schemaVersion": 1, "stdout": "', "is not valid JSON"),
        ("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n", "merge-conflict markers"),
        ('{"x": NaN}', "NaN is not a finite number"),
        ('{"x": Infinity}', "Infinity is not a finite number"),
        ("[1, 2]", "(top level)"),
    ],
)
def test_unreadable_recordings_say_why(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(RecordingError, match=None) as caught:
        recording.load(path)
    assert message in str(caught.value)


def test_non_utf8_recording_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(b'{"stdout": "\xff"}')
    with pytest.raises(RecordingError, match="is not UTF-8"):
        recording.load(path)


def test_validate_cli_reports_each_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _mutated(tmp_path, "r['provenance'] = 7")
    assert main(["validate", str(REFERENCE)]) == 0
    assert main(["validate", str(REFERENCE), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        f"{REFERENCE}: valid",
        f"{bad}: field provenance: Input should be a valid string",
    ]


def test_validate_skips_the_inputs_sidecar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "_inputs").mkdir()
    sidecar = tmp_path / "_inputs" / "basics-01.json"
    sidecar.write_text("{}")
    assert main(["validate", str(sidecar), str(REFERENCE)]) == 0
    assert "skipped: an inputs sidecar" in capsys.readouterr().out


def test_committed_json_schema_is_current(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    committed = HERE.parent / "builder" / "course" / "schema" / "recording.schema.json"
    assert out.read_text() == committed.read_text(), (
        "run: python -m builder schema --out builder/course/schema/recording.schema.json"
    )
    schema = json.loads(out.read_text())
    assert list(schema["properties"]) == [*json.loads(REFERENCE.read_text()), "timings", "cells"]
    assert schema["required"] == list(json.loads(REFERENCE.read_text()))


def test_a_recording_that_names_its_device_kind_validates_and_round_trips() -> None:
    """environment.deviceKind (issue 58) is optional: written when a run names it, absent
    (never null) when not, and the schema says so as pydantic does."""
    import fastjsonschema

    text = REFERENCE.read_text()
    raw = json.loads(text)
    raw["environment"]["deviceKind"] = "TPU v5 lite"
    data = json.dumps(raw, indent=2, ensure_ascii=False).encode()
    loaded = recording.loads(data, "tpu.json")
    assert loaded.environment.deviceKind == "TPU v5 lite"
    assert recording.dumps(loaded) == data
    assert loaded.devices == "1 device · TPU v5 lite"
    assert recording.loads(REFERENCE.read_bytes(), REFERENCE).environment.deviceKind is None
    schema = json.loads((HERE.parent / "builder/course/schema/recording.schema.json").read_text())
    fastjsonschema.compile(schema)(raw)
    for bad in (None, "", "x" * 201):
        raw["environment"]["deviceKind"] = bad
        with pytest.raises(RecordingError, match=r"environment\.deviceKind"):
            recording.loads(json.dumps(raw).encode(), "tpu.json")
        with pytest.raises(fastjsonschema.JsonSchemaException):
            fastjsonschema.compile(schema)(raw)
