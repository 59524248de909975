"""Cells as an author writes them and as a recording keeps them (issue 40): an example.py in
the percent format is read when the course loads, and a mistake in a marker is an error
naming example.py and its line; a recording's optional `cells` key is validated, written
back byte for byte, and the reference recording (made before cells) still round-trips.

Nothing here executes an example: tests/run/test_cells.py runs cells for real."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from builder.cells import MAX_VALUE
from builder.core.errors import RecordingError
from builder.course.load import load_course
from builder.course.model import Lesson
from builder.course.recording import dumps, loads, read
from tests.helpers import REFERENCE, load_errors, make_paths, write_course

SHARED_REFERENCE = Path("/work/shared/reference/performance-05.recording.json")


def loaded(tmp_path: Path, source: str) -> Lesson:
    write_course(tmp_path, {"calm-01": source})
    return load_course(tmp_path / "content").lessons[0]


def refused(tmp_path: Path, source: str) -> str:
    """What loading a course whose one example is `source` says (it must fail)."""
    write_course(tmp_path, {"calm-01": source})
    return load_errors(make_paths(tmp_path))


def example_at(tmp_path: Path, line: int) -> str:
    return f"{tmp_path / 'content' / 'lessons' / 'calm-01' / 'example.py'}: line {line}:"


# -- the format as an author writes it --------------------------------------------------------


def test_cells_are_read_with_their_names_options_lines_and_code(tmp_path: Path) -> None:
    lesson = loaded(
        tmp_path,
        """\
        #!/usr/bin/env python
        # A comment and blank lines may come before the first cell.

        # %% setup hide
        import math

        # %%  trace\t
        print(math.pi)
        math.tau


        # %% boom raises=ZeroDivisionError
        1 / 0
        # %% any raises
        # %% qualified raises=json.decoder.JSONDecodeError
        # %% speed timeit
        # %% hidden-timing hide timeit
        # %% aside show
        import antigravity
        """,
    )
    cells = lesson.cells
    assert [c.name for c in cells] == [
        "setup",
        "trace",
        "boom",
        "any",
        "qualified",
        "speed",
        "hidden-timing",
        "aside",
    ]
    setup, trace, boom, anything, qualified, speed, hidden_timing, aside = cells
    assert (setup.line, setup.hide, setup.code) == (4, True, "import math\n\n")
    assert trace.line == 7 and not (trace.hide or trace.show or trace.timeit)
    assert trace.raises is None
    # the page shows the code without the blank lines after it, from the file's line 8
    assert trace.shown == "print(math.pi)\nmath.tau\n"
    assert trace.shown_first == 8
    assert (boom.raises, anything.raises, qualified.raises) == (
        "ZeroDivisionError",
        "",
        "json.decoder.JSONDecodeError",
    )
    assert speed.timeit and hidden_timing.timeit and hidden_timing.hide
    assert aside.show and aside.code == "import antigravity\n"
    assert anything.code == "" and anything.shown == ""


def test_a_file_without_a_marker_is_one_example_as_before(tmp_path: Path) -> None:
    lesson = loaded(tmp_path, "print('one example')\n    # %% indented is a comment\n")
    assert lesson.cells == ()


def test_a_marker_with_no_space_after_the_percent_signs_is_still_a_marker(tmp_path: Path) -> None:
    """`# %%name` at column 0 opens a cell: code above it is then code before the first
    cell, named at its line rather than run as one example with a stray comment."""
    lesson = loaded(tmp_path, "# %%first\nprint(1)\n")
    assert [c.name for c in lesson.cells] == ["first"]
    lesson = loaded(tmp_path / "b", "print('one example')\n# %%stray\n")
    assert [(c.name, c.hide) for c in lesson.cells] == [("preamble", True), ("stray", False)]


def test_code_before_the_first_marker_is_the_hidden_cell_preamble(tmp_path: Path) -> None:
    """As Jupytext and VS Code read such a file: the imports on top run, unshown, and keep
    their line numbers (no marker above them shifts the file)."""
    lesson = loaded(tmp_path, '"""Doc."""\nimport math\n\n# %% a\nprint(math.pi)\n')
    preamble, a = lesson.cells
    assert (preamble.name, preamble.hide, preamble.first, a.first) == ("preamble", True, 1, 5)
    assert loaded(tmp_path / "c", "# just a comment\n# %% a\nx = 1\n").cells[0].name == "a"


def test_an_indented_marker_stays_in_its_cells_code(tmp_path: Path) -> None:
    lesson = loaded(tmp_path, "# %% a\ndef f():\n    # %% b\n    return 1\n")
    assert [c.name for c in lesson.cells] == ["a"]
    assert "# %% b" in lesson.cells[0].code


def test_a_byte_order_mark_does_not_hide_the_first_marker(tmp_path: Path) -> None:
    """Windows editors save UTF-8 with a BOM: the first line is still the first marker."""
    write_course(tmp_path, {"calm-01": "# %% first\nprint(1)\n"})
    example = tmp_path / "content" / "lessons" / "calm-01" / "example.py"
    example.write_bytes(b"\xef\xbb\xbf" + example.read_bytes())
    assert [c.name for c in load_course(tmp_path / "content").lessons[0].cells] == ["first"]


@pytest.mark.parametrize(
    ("source", "line", "said"),
    [
        # the code before the first marker is the cell `preamble`: once
        ("x = 1\n# %% preamble\n", 2, "a second cell named 'preamble' (the code before"),
        # a Jupytext markdown (or raw) cell: prose goes in lesson.md
        ("# %% a\nx = 1\n# %% [markdown]\n# Some prose\n", 3, "prose goes in lesson.md"),
        ("# %% [md]\n", 1, "prose goes in lesson.md"),
        # a marker without a name
        ("# %% a\n# %%\n", 2, "a cell without a name"),
        ("# %%   \n", 1, "a cell without a name"),
        # options repeated or contradictory
        ("# %% a hide hide\n", 1, "cell 'a' gives 'hide' twice"),
        ("# %% a raises raises=KeyError\n", 1, "cell 'a' gives 'raises' twice"),
        ("# %% a raises=KeyError raises=ValueError\n", 1, "gives 'raises' twice"),
        ("# %% a hide show\n", 1, "cell 'a' cannot be both hide and show"),
        ("# %% a show raises\n", 1, "cell 'a' cannot be both show and raises"),
        ("# %% a timeit show\n", 1, "cell 'a' cannot be both show and timeit"),
        ("# %% a timeit raises=KeyError\n", 1, "cell 'a' cannot be both timeit and raises"),
        # options that are not options
        ("# %% a HIDE\n", 1, "'HIDE' is not an option"),
        ("# %% a hide=yes\n", 1, "'hide=yes' is not an option"),
        ("# %% a raises=\n", 1, "'raises=' is not an option"),
        ("# %% a raises=1Error\n", 1, "'raises=1Error' is not an option"),
        ("# %% a raises=a..b\n", 1, "'raises=a..b' is not an option"),
        ("# %% a raises=KeyError()\n", 1, "'raises=KeyError()' is not an option"),
        ('# %% a tags=["hide"]\n', 1, "is not an option"),
    ],
)
def test_a_bad_marker_names_example_py_and_its_line(
    tmp_path: Path, source: str, line: int, said: str
) -> None:
    message = refused(tmp_path, source)
    assert example_at(tmp_path, line) in message
    assert said in message


HOSTILE_NAMES = [
    "../x",
    "x/../../etc",
    "<script>",
    'a"onmouseover="x',
    "Setup",
    "SETUP",
    "-leading-dash",
    "_leading_underscore",
    "a" * 49,
    "caf\u00e9",
    "\u0455etup",  # Cyrillic dze, looks like "setup"
    "\uff53etup",  # fullwidth s
    "setup\u200b",  # a zero-width space after it
    "\u0661\u0662",  # Arabic-Indic digits
    "a.b",
    "a:b",
    "\x1b[31mred",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_cell_name_is_refused_at_its_line(tmp_path: Path, name: str) -> None:
    message = refused(tmp_path, f"# %% fine\nprint(1)\n# %% {name}\nprint(2)\n")
    assert example_at(tmp_path, 3) in message
    assert "cell name" in message and "use 1-48 of a-z, 0-9, - and _" in message
    assert "\x1b" not in message  # the name is quoted, its control characters escaped


@pytest.mark.parametrize("name", ["a" * 48, "0", "9-lives", "a_b-c", "cell-x", "x"])
def test_a_name_of_1_to_48_allowed_characters_is_taken(tmp_path: Path, name: str) -> None:
    assert [c.name for c in loaded(tmp_path, f"# %% {name}\nprint(1)\n").cells] == [name]


def test_a_second_cell_of_the_same_name_is_refused_at_its_line(tmp_path: Path) -> None:
    message = refused(tmp_path, "# %% a\nprint(1)\n\n# %% b\n# %% a\n")
    assert example_at(tmp_path, 5) in message
    assert "a second cell named 'a'" in message


def test_a_very_long_hostile_marker_is_quoted_short(tmp_path: Path) -> None:
    message = refused(tmp_path, "# %% " + "X" * 100_000 + "\n")
    assert example_at(tmp_path, 1) in message
    assert len(message) < 1000


def test_ten_thousand_cells_load_in_bounded_time(tmp_path: Path) -> None:
    source = "".join(f"# %% c{n}\nprint({n})\n\n" for n in range(10_000))
    write_course(tmp_path, {"calm-01": source})
    started = time.perf_counter()
    lesson = load_course(tmp_path / "content").lessons[0]
    seconds = time.perf_counter() - started
    assert len(lesson.cells) == 10_000
    assert lesson.cells[-1].name == "c9999" and lesson.cells[-1].line == 3 * 9999 + 1
    assert seconds < 5, f"loading 10,000 cells took {seconds:.1f} s"


def test_ten_thousand_cells_with_a_duplicate_at_the_end_is_refused_in_bounded_time(
    tmp_path: Path,
) -> None:
    source = "".join(f"# %% c{n}\n" for n in range(10_000)) + "# %% c0\n"
    started = time.perf_counter()
    message = refused(tmp_path, source)
    assert time.perf_counter() - started < 5
    assert example_at(tmp_path, 10_001) in message


# -- the recording's optional `cells` ---------------------------------------------------------


def _reference() -> dict[str, object]:
    raw: dict[str, object] = json.loads(REFERENCE.read_bytes())
    return raw


def _with_cells(cells: object, *, before: str | None = None) -> bytes:
    """The reference recording with `cells` as a key (last, or before the key `before`),
    written as the builder writes recordings."""
    raw: dict[str, object] = {}
    for key, value in _reference().items():
        if key == before:
            raw["cells"] = cells
        raw[key] = value
    if before is None:
        raw["cells"] = cells
    return json.dumps(raw, indent=2, ensure_ascii=False).encode()


def _stdout_length() -> int:
    stdout = _reference()["stdout"]
    assert isinstance(stdout, str)
    return len(stdout)


def test_a_recording_with_cells_round_trips_byte_for_byte() -> None:
    n = _stdout_length()
    cells = [
        {"name": "setup", "start": 0, "end": 0},
        {"name": "trace", "start": 0, "end": 40, "value": "Array([0., 1.], dtype=float32)"},
        {
            "name": "bool-error",
            "start": 40,
            "end": 40,
            "raised": {"type": "jax.errors.TracerBoolConversionError", "message": "<é 😀>"},
        },
        {"name": "speed", "start": 40, "end": n},
    ]
    data = _with_cells(cells)
    recording, line = read(data, "r.json")
    assert line == 0  # canonical: what the builder writes
    assert dumps(recording) == data
    assert [c.name for c in recording.cells or ()] == ["setup", "trace", "bool-error", "speed"]
    assert recording.cells is not None and recording.cells[2].raised is not None
    assert recording.cells[2].raised.message == "<é 😀>"


@pytest.mark.parametrize("reference", [REFERENCE, SHARED_REFERENCE], ids=["tests", "shared"])
def test_the_reference_recording_without_cells_still_round_trips(reference: Path) -> None:
    if not reference.exists():
        pytest.skip(f"{reference} is not on this machine")
    data = reference.read_bytes()
    recording, line = read(data, reference)
    assert line == 0 and recording.cells is None
    assert dumps(recording) == data
    assert b'"cells"' not in dumps(recording)


def test_validate_says_a_recording_with_cells_is_valid(tmp_path: Path) -> None:
    from builder.course.schemas import validate_files

    path = tmp_path / "calm-01.json"
    path.write_bytes(_with_cells([{"name": "a", "start": 0, "end": 3, "value": "1"}]))
    said = io.StringIO()
    assert validate_files([path], said)
    assert said.getvalue() == f"{path}: valid\n"


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        (None, "field cells: Value error, is null"),
        ({}, "field cells: Input should be a valid array"),
        ([{"name": "a", "start": None, "end": 1}], "field cells.0.start"),
        ([{"name": "a", "start": 0, "end": None}], "field cells.0.end"),
        ([{"name": "a", "start": -1, "end": 1}], "field cells.0.start"),
        ([{"name": "a", "start": 0, "end": -5}], "field cells.0.end"),
        ([{"name": "a", "start": True, "end": 1}], "field cells.0.start"),
        ([{"name": "a", "start": 0.0, "end": 1}], "field cells.0.start"),
        ([{"name": "a", "start": "0", "end": 1}], "field cells.0.start"),
        ([{"name": "a", "start": 0, "end": 1, "stderr": ""}], "field cells.0.stderr: Extra"),
        ([{"name": "a", "start": 0, "end": 1, "value": None}], "field cells.0.value"),
        ([{"name": "a", "start": 0, "end": 1, "raised": None}], "field cells.0.raised"),
        (
            [{"name": "a", "start": 0, "end": 1, "raised": {"type": "E", "message": "m", "x": 1}}],
            "field cells.0.raised.x",
        ),
        (
            [{"name": "a", "start": 0, "end": 1, "raised": {"type": "", "message": "m"}}],
            "field cells.0.raised.type",
        ),
        ([{"name": "a", "start": 0, "end": 1, "raised": {"type": "E"}}], "cells.0.raised"),
        (
            [{"name": "a", "start": 0, "end": 1, "value": "x" * (MAX_VALUE + 1)}],
            "field cells.0.value: String should have at most 65536 characters",
        ),
        ([{"name": "../x", "start": 0, "end": 1}], "field cells.0.name"),
        ([{"name": "<script>", "start": 0, "end": 1}], "field cells.0.name"),
        ([{"start": 0, "end": 1}], "field cells.0.name"),
    ],
    ids=lambda x: "" if isinstance(x, str) else json.dumps(x)[:60],
)
def test_a_malformed_cells_key_is_refused_naming_the_field(cells: object, said: str) -> None:
    with pytest.raises(RecordingError) as caught:
        loads(_with_cells(cells), "recordings/calm-01.json")
    assert "recordings/calm-01.json" in str(caught.value)
    assert said in str(caught.value)


BAD_OFFSETS = [
    pytest.param(
        [{"name": "a", "start": 0, "end": 10}, {"name": "b", "start": 5, "end": 12}],
        id="overlapping",
    ),
    pytest.param(
        [{"name": "a", "start": 10, "end": 5}],
        id="end before start",
    ),
    pytest.param(
        "past end",
        id="past the end of stdout",
    ),
    pytest.param(
        [{"name": "a", "start": 0, "end": 1}, {"name": "a", "start": 1, "end": 2}],
        id="a name twice",
    ),
    pytest.param(
        [{"name": "a", "start": 0, "end": 1, "value": "1", "raised": {"type": "E", "message": ""}}],
        id="value and raised",
    ),
]


@pytest.mark.parametrize("cells", BAD_OFFSETS)
def test_cells_no_run_can_make_are_refused_or_not_canonical(cells: object) -> None:
    """Validate refuses them, or reading them says they are not what saving writes (so that
    `check` reports the lesson): never accepted as a fresh, canonical recording."""
    if cells == "past end":
        cells = [{"name": "a", "start": 0, "end": _stdout_length() + 100}]
    try:
        _, line = read(_with_cells(cells), "recordings/calm-01.json")
    except RecordingError:
        return
    assert line != 0, "accepted as valid and canonical"


def test_cells_written_in_another_key_order_are_not_canonical() -> None:
    _, line = read(_with_cells([{"name": "a", "start": 0, "end": 1}], before="data"), "r")
    assert line > 0
    swapped = [{"end": 1, "start": 0, "name": "a"}]
    _, line = read(_with_cells(swapped), "r")
    assert line > 0


def test_check_calls_a_recording_with_cells_its_example_does_not_run_invalid(
    tmp_path: Path,
) -> None:
    """Through `check` on a recorded course: a hand-written cells key (its keys out of order,
    for a cell the example does not run) is reported as invalid, naming the cells: a
    recording is complete only with the cells its example runs, whoever wrote it."""
    import shutil

    from builder.pipeline.build import build
    from builder.pipeline.build import check as check_course
    from tests.helpers import canned_as, copy_course

    paths = copy_course(tmp_path, broken=False)
    build(
        paths, execute=True, jobs=1, runner=lambda lesson, limits: canned_as(lesson.id, lesson.id)
    )
    path = paths.recordings / "basics-01.json"
    raw = json.loads(path.read_bytes())
    raw["cells"] = [{"end": 0, "start": 0, "name": "a"}]
    path.write_bytes(json.dumps(raw, indent=2, ensure_ascii=False).encode())
    [status] = [s for s in check_course(paths).statuses if s.lesson_id == "basics-01"]
    assert status.state.value == "invalid" and "cells" in status.detail
    shutil.rmtree(paths.out, ignore_errors=True)
