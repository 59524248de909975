"""What makes a recording stale, and the message that says which input changed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.cells import Cell
from builder.core.observe import Paths
from builder.course import fingerprint
from builder.course.load import load_course
from builder.course.recording import CellRun, dumps, loads, read
from builder.course.status import State, course_status, incomplete
from builder.run.batch import record_stale
from tests.helpers import canned_run, copy_course, edit


def _hash(paths: Paths, lesson_id: str) -> str:
    lesson = load_course(paths.content).lesson(lesson_id)
    assert lesson is not None
    return fingerprint.content_hash(fingerprint.lesson_inputs(lesson))


def test_prose_edits_keep_the_hash_and_code_edits_change_it(course_copy: Paths) -> None:
    folder = course_copy.content / "lessons" / "basics-01"
    before = _hash(course_copy, "basics-01")
    edit(folder / "lesson.md", "## Tracing", "## Tracing, reworded\n\nMore prose.")
    assert _hash(course_copy, "basics-01") == before
    source = folder / "example.py"
    source.write_bytes(source.read_bytes().replace(b"\n", b"\r\n"))
    assert _hash(course_copy, "basics-01") == before, "CRLF line endings must not matter"
    edit(source, "* 2.0", "* 3.0")
    assert _hash(course_copy, "basics-01") != before


def test_data_files_and_settings_are_inputs(course_copy: Paths) -> None:
    folder = course_copy.content / "lessons" / "speed-01"
    first = _hash(course_copy, "speed-01")
    (folder / "numbers.txt").write_text("1\n2\n")
    second = _hash(course_copy, "speed-01")
    edit(folder / "lesson.md", 'FIXTURE_SCALE: "3"', 'FIXTURE_SCALE: "4"')
    assert len({first, second, _hash(course_copy, "speed-01")}) == 3


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_hashes_can_be_recomputed_from_the_readme_recipe(recorded: Paths) -> None:
    """Another tool following docs/recordings.md gets the same hashes as the builder."""
    builder = Path(fingerprint.__file__).parents[1]
    harness = {
        name.rpartition("/")[2]: _sha((builder / name).read_bytes().replace(b"\r\n", b"\n"))
        for name in ("run/harness.py", "panels.py", "cells.py", "run/figures.py")
    }
    folder = recorded.content / "lessons" / "speed-01"
    inputs = {
        "lessonId": "speed-01",
        "example": _sha((folder / "example.py").read_bytes()),
        "data": {"numbers.txt": _sha((folder / "numbers.txt").read_bytes())},
        "env": {"FIXTURE_SCALE": "3"},
    }
    stored = json.loads((recorded.recordings / "speed-01.json").read_text())
    assert stored["rendererHash"] == _sha(_canonical(harness)) == fingerprint.renderer_hash()
    assert stored["contentHash"] == _sha(_canonical(inputs))


def test_stale_message_names_the_input_that_changed(recorded: Paths) -> None:
    folder = recorded.content / "lessons" / "speed-01"
    (folder / "numbers.txt").write_text("5\n")
    edit(folder / "lesson.md", 'FIXTURE_SCALE: "3"', 'FIXTURE_SCALE: "2"')
    status = {
        s.lesson_id: s for s in course_status(load_course(recorded.content), recorded.recordings)
    }
    assert status["speed-01"].state is State.STALE_CONTENT
    assert status["speed-01"].detail == "data file numbers.txt, setting FIXTURE_SCALE changed"
    assert status["basics-01"].state is State.FRESH


def test_every_state_is_reported(recorded: Paths) -> None:
    rec = recorded.recordings
    (rec / "basics-02.json").unlink()
    (rec / "speed-01.json").write_text((rec / "speed-01.json").read_text()[:50])
    (rec / "gone-01.json").write_text("{}")
    raw = json.loads((rec / "basics-01.json").read_text())
    raw["environment"]["numpy"] = "1.0.0"
    (rec / "basics-01.json").write_text(json.dumps(raw, indent=2))
    states = {s.lesson_id: s for s in course_status(load_course(recorded.content), rec)}
    assert states["basics-02"].state is State.MISSING
    assert states["speed-01"].state is State.INVALID
    assert "is not valid JSON" in states["speed-01"].detail
    assert states["gone-01"].state is State.ORPHAN
    assert states["basics-01"].state is State.STALE_ENVIRONMENT
    assert "numpy 1.0.0 recorded, 2.4.4 installed" in states["basics-01"].detail


def test_a_changed_harness_makes_recordings_stale(recorded: Paths) -> None:
    rec = recorded.recordings / "basics-02.json"
    raw = json.loads(rec.read_text())
    raw["rendererHash"] = "0" * 64
    rec.write_text(json.dumps(raw, indent=2))
    states = {
        s.lesson_id: s for s in course_status(load_course(recorded.content), recorded.recordings)
    }
    assert states["basics-02"].state is State.STALE_HARNESS


def test_a_recording_under_another_lessons_name_is_invalid(recorded: Paths) -> None:
    rec = recorded.recordings
    (rec / "basics-02.json").write_bytes((rec / "basics-01.json").read_bytes())
    states = {s.lesson_id: s for s in course_status(load_course(recorded.content), rec)}
    assert states["basics-02"].state is State.INVALID
    assert "lessonId is 'basics-01'" in states["basics-02"].detail


def test_a_damaged_inputs_sidecar_only_blunts_the_message(recorded: Paths) -> None:
    (recorded.recordings / "_inputs" / "basics-01.json").write_text("<<<<<<< HEAD")
    edit(recorded.content / "lessons" / "basics-01" / "example.py", "* 2.0", "* 4.0")
    states = {
        s.lesson_id: s for s in course_status(load_course(recorded.content), recorded.recordings)
    }
    assert states["basics-01"].state is State.STALE_CONTENT
    assert states["basics-01"].detail == "the example, its data files or its settings changed"
    assert Path(recorded.recordings / "basics-02.json").exists()


def test_a_package_not_installed_is_compared_with_its_pin() -> None:
    """CI's light install has no jax: recordings are compared with requirements.lock."""
    from builder.course.rules import LOCK_FILE, NOT_INSTALLED, expected_versions, lock_pins

    lock = lock_pins(LOCK_FILE)
    installed = {"jax": NOT_INSTALLED, "numpy": "9.9", "matplotlib": NOT_INSTALLED}
    assert expected_versions(installed) == {
        "jax": (lock["jax"], "pinned in requirements.lock"),
        "numpy": ("9.9", "installed"),
        "matplotlib": (lock["matplotlib"], "pinned in requirements.lock"),
    }


def test_a_recording_of_a_lesson_in_cells_without_its_cells_is_not_fresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What `record --dask` once wrote: every hash right, the `cells` gone. check names what
    is missing (render then failed on it), and `record` makes it again."""
    paths = copy_course(tmp_path, broken=False, cells=True)
    course = load_course(paths.content)
    record_stale(course, course_status(course, paths.recordings), paths, 1, runner=canned_run)
    path = paths.recordings / "basics-03.json"
    whole = path.read_bytes()
    without = {k: v for k, v in json.loads(whole).items() if k != "cells"}
    path.write_bytes(dumps(loads(json.dumps(without).encode(), path)))
    where = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    assert main(["check", *where, "--cache", str(paths.cache)]) == 1
    row = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("basics-03"))
    assert "invalid" in row and "has no `cells`" in row and "(setup, show-squares, too-big)" in row
    statuses = course_status(course, paths.recordings)
    assert record_stale(course, statuses, paths, 1, runner=canned_run) == ("basics-03",)
    assert json.loads(path.read_bytes())["cells"] == json.loads(whole)["cells"]


def test_a_recording_that_lists_other_cells_names_the_missing_ones(recorded: Paths) -> None:
    course = load_course(recorded.content)
    lesson = course.lesson("basics-01")
    assert lesson is not None
    cells = (Cell("a", 1, ""), Cell("b", 2, ""), Cell("c", 3, "", show=True))
    path = recorded.recordings / "basics-01.json"
    recording = read(path.read_bytes(), path)[0]
    ran = [CellRun("b", 0, 0)]
    assert incomplete(replace(lesson, cells=cells), replace(recording, cells=ran)) == (
        "lists the cells b, not a, b (missing: a): a run of it records each cell"
    )
    assert incomplete(lesson, replace(recording, cells=ran)).startswith("lists cells, and")
    assert incomplete(lesson, recording) == ""
