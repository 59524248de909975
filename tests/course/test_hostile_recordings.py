"""Recordings that are damaged, conflicted, foreign or huge; and the round-trip property.

test_recording.py covers single bad fields; here: damage a real recording the ways git and
people damage files, go through the CLI, and check the damaged file is never rewritten.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.__main__ import main
from builder.core.errors import RecordingError
from builder.course import recording
from builder.course.rules import MAX_PANELS
from tests.helpers import REFERENCE, ROOT, cli, snapshot, write_course

LESSON = "calm-01"


def course_with_recording(root: Path, data: bytes) -> Path:
    write_course(root, {LESSON: "print(1)\n"})
    recordings = root / "recordings"
    recordings.mkdir()
    path = recordings / f"{LESSON}.json"
    path.write_bytes(data)
    return path


def reference_as(lesson_id: str) -> bytes:
    raw = json.loads(REFERENCE.read_bytes())
    raw["lessonId"] = lesson_id
    return json.dumps(raw, indent=2).encode()


def conflicted() -> bytes:
    lines = REFERENCE.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"stdout"' in line)
    theirs = lines[at].replace("Total", "All")
    return "".join(
        [
            *lines[:at],
            *("<<<<<<< HEAD\n", lines[at], "=======\n", theirs, ">>>>>>> main\n"),
            *lines[at + 1 :],
        ]
    ).encode()


def huge() -> bytes:
    raw = json.loads(reference_as(LESSON))
    raw["stdout"] = "x" * (50 * 2**20)
    return json.dumps(raw, indent=2).encode()


NESTED = b"[" * 100_000 + b"]" * 100_000
CASES = {
    "truncated": (REFERENCE.read_bytes()[:700], "is not valid JSON: Unterminated string"),
    "truncated at a key": (REFERENCE.read_bytes()[:200], "is not valid JSON"),
    "empty file": (b"", "line 1: is not valid JSON: Expecting value (column 1)"),
    "merge conflict": (conflicted(), "contains git merge-conflict markers"),
    "wrong type": (
        reference_as(LESSON).replace(b'"deviceCount": 1', b'"deviceCount": "1"'),
        "field environment.deviceCount: Input should be a valid integer",
    ),
    "schema version 2": (
        reference_as(LESSON).replace(b'"schemaVersion": 1', b'"schemaVersion": 2'),
        "schemaVersion 2 is not supported (this builder reads 1)",
    ),
    "schema version as text": (
        reference_as(LESSON).replace(b'"schemaVersion": 1', b'"schemaVersion": "1"'),
        "schemaVersion '1' is not supported",
    ),
    "schema version as true": (  # true == 1 in Python: it used to load, and save as 1
        reference_as(LESSON).replace(b'"schemaVersion": 1', b'"schemaVersion": true'),
        "schemaVersion True is not supported",
    ),
    "schema version as 1.0": (
        reference_as(LESSON).replace(b'"schemaVersion": 1', b'"schemaVersion": 1.0'),
        "schemaVersion 1.0 is not supported",
    ),
    "nested extra field": (
        reference_as(LESSON).replace(b'"deviceCount": 1', b'"deviceCount": 1, "gpu": "none"'),
        "field environment.gpu: Extra inputs are not permitted",
    ),
    "another lesson's recording": (reference_as("calm-02"), "its lessonId is 'calm-02'"),
    "50 MB": (huge(), "is 50.0 MiB, over the 20 MiB limit"),
    "100,000 nested arrays": (  # Python's json.loads raised RecursionError
        b"[" * 100_000 + b"]" * 100_000,
        "nests arrays and objects 100000 deep, over the 64 limit",
    ),
    "nested arrays in a field": (
        reference_as(LESSON).replace(b'"deviceCount": 1', b'"deviceCount": ' + NESTED),
        "nests arrays and objects 100002 deep, over the 64 limit",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_recording_is_named_never_rewritten_and_the_site_still_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    data, message = CASES[case]
    path = course_with_recording(tmp_path, data)
    assert main(cli(tmp_path, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert f"{LESSON}  invalid" in out and message in out
    assert "Run `make record`" in out
    assert main(cli(tmp_path, "render")[3:]) == 0, "a bad recording only marks its page"
    page = (tmp_path / "site" / "l" / "s1" / "index.html").read_text()
    assert "recording is invalid" in page
    assert path.read_bytes() == data


def test_validate_names_the_file_and_the_fix_for_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "performance-05.json"
    path.write_bytes(conflicted())
    with pytest.raises(RecordingError) as caught:
        recording.load(path)
    assert str(caught.value) == (
        f"{path}: contains git merge-conflict markers (<<<<<<< / ======= / >>>>>>>)\n"
        "  -> do not merge recordings by hand: take either side, then re-record with "
        "`make record`"
    )


def test_an_orphan_recording_is_reported_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course_with_recording(tmp_path, b"{}")  # invalid: no charts to draw, a faster render
    orphan = tmp_path / "recordings" / "gone-07.json"
    orphan.write_bytes(reference_as("gone-07"))
    before = snapshot(tmp_path / "recordings")
    assert main(cli(tmp_path, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert "gone-07  orphan" in out and "no lesson has this id" in out
    assert "orphans: delete the file or restore its lesson" in out
    assert main(cli(tmp_path, "render")[3:]) == 0
    assert snapshot(tmp_path / "recordings") == before


# -- the round trip, for any valid recording -----------------------------------------------

text = st.text(min_size=1, max_size=30)
number = st.integers(-(2**53), 2**53) | st.floats(-1e300, 1e300)  # what a chart can draw


@st.composite
def panels(draw: st.DrawFn) -> dict[str, Any]:
    labels = draw(st.lists(text, min_size=1, max_size=4))
    series = draw(
        st.lists(
            st.builds(
                lambda label, ys: {"label": label, "y": ys},
                text,
                st.lists(number, min_size=len(labels), max_size=len(labels)),
            ),
            min_size=1,
            max_size=3,
        )
    )
    return {
        "kind": "bar",
        "title": draw(text),
        "labels": labels,
        "ylabel": draw(text),
        "series": series,
    }


hexes = st.text("0123456789abcdef", min_size=64, max_size=64)
zones = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
recordings = st.fixed_dictionaries(
    {
        "schemaVersion": st.just(1),
        "lessonId": st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6}){0,3}", fullmatch=True),
        "contentHash": hexes,
        "rendererHash": hexes,
        "kind": st.just("executed"),
        "generatedAt": st.datetimes(timezones=zones).map(lambda d: d.isoformat()),
        "provenance": st.from_regex(r"recorded_[a-z0-9]{1,8}_computation", fullmatch=True),
        "environment": st.fixed_dictionaries(
            {
                "backend": text,
                "deviceCount": st.integers(1, 4096),
                "jax": text,
                "numpy": text,
                "matplotlib": text,
            }
        ),
        "stdout": st.text(max_size=300),
        "data": st.fixed_dictionaries(
            {"kind": st.just("panels"), "panels": st.lists(panels(), max_size=3)}
        ),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recordings)
def test_any_valid_recording_round_trips_byte_for_byte(raw: dict[str, Any]) -> None:
    data = json.dumps(raw, indent=2, ensure_ascii=False).encode()
    loaded = recording.loads(data, "generated.json")
    assert recording.dumps(loaded) == data
    assert recording.loads(recording.dumps(loaded), "again.json") == loaded


# -- issue 17: files that are not files, or too big to read, where a recording should be -----


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))  # the socket file stays when the socket is closed


def _huge(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(2**30)  # sparse: 1 GiB that costs nothing on disk


SPECIAL = {
    "FIFO": (_fifo, "is a FIFO (named pipe), not a regular file"),
    # issue 25: a link is never followed, wherever it points (/dev/zero filled the memory)
    "link to /dev/zero": (lambda p: p.symlink_to("/dev/zero"), "is a symbolic link (to /dev/z"),
    "folder": (lambda p: p.mkdir(), "is a folder, not a regular file"),
    "socket": (_socket, "is a socket, not a regular file"),
    "1 GiB file": (_huge, "is 1024.0 MiB, over the 20 MiB limit"),
    "link to nowhere": (lambda p: p.symlink_to("gone.json"), "is a symbolic link (to gone.json)"),
    "missing": (lambda p: None, ""),
}


@pytest.mark.parametrize("case", SPECIAL)
def test_a_recording_path_that_is_not_a_file_is_named_without_hanging_or_reading_it(
    tmp_path: Path, case: str
) -> None:
    """check and validate never open a FIFO for reading (it waited forever for a writer)
    nor read a device or a huge file whole (a link to /dev/zero ran out of memory)."""
    make, message = SPECIAL[case]
    write_course(tmp_path, {LESSON: "print(1)\n"})
    (tmp_path / "recordings").mkdir()
    path = tmp_path / "recordings" / f"{LESSON}.json"
    make(path)
    checked = subprocess.run(cli(tmp_path, "check"), capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    if not message:  # a recording that is not there
        assert f"{LESSON}  missing" in checked.stdout
        return
    assert f"{LESSON}  invalid" in checked.stdout and message in checked.stdout
    validated = subprocess.run(
        [*cli(tmp_path, "validate")[:4], str(path)], capture_output=True, text=True, timeout=60
    )
    assert validated.returncode == 1
    assert validated.stdout.startswith(f"{path}: {message}")


@pytest.mark.parametrize("value", [10**400, -(10**309), 1e301], ids=["1e400", "-1e309", "1e301"])
def test_a_panel_value_too_large_to_draw_is_invalid_when_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float
) -> None:
    """It used to load, then fail the render with OverflowError: int too large for a float."""
    raw = json.loads(reference_as(LESSON))
    raw["data"]["panels"][0]["series"][0]["y"][0] = value
    course_with_recording(tmp_path, json.dumps(raw, indent=2).encode())
    assert main(cli(tmp_path, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert f"{LESSON}  invalid" in out and "must be at most 1e+300 in size to be drawn" in out
    assert "field data.panels.0.series.0.y.0" in out
    assert main(cli(tmp_path, "render")[3:]) == 0, "the page says so; nothing raises"


def test_diff_reads_the_work_trees_recordings_through_the_same_door(tmp_path: Path) -> None:
    """`diff` (and the What changed page) read recordings from the work tree: a FIFO there
    is named, never opened; an editor's lock file is not a recording."""
    from builder.review import git as revision

    (tmp_path / f"{LESSON}.json").write_bytes(reference_as(LESSON))
    (tmp_path / f".#{LESSON}.json").symlink_to("root@host.4242:1700000000")
    (tmp_path / "empty.json").write_bytes(b"")
    assert sorted(revision.json_files(tmp_path, None)) == [LESSON, "empty"]
    os.mkfifo(tmp_path / "calm-02.json")
    with pytest.raises(RecordingError, match="is a FIFO \\(named pipe\\), not a regular file"):
        revision.json_files(tmp_path, None)


def test_a_deeply_nested_recording_is_one_line_in_validate_and_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check and render: in CASES above; validate, diff (the work tree and a git revision)
    and the inputs sidecar here. Each read refuses the nesting before json.loads recurses."""
    path = course_with_recording(tmp_path, reference_as(LESSON))
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    path.write_bytes(NESTED)
    inputs = path.parent / "_inputs"
    inputs.mkdir()
    (inputs / f"{LESSON}.json").write_bytes(b"{" + b'"a":[' * 100_000 + b"]" * 100_000 + b"}")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out == (
        f"{path}: nests arrays and objects 100000 deep, over the 64 limit\n"
    )
    where = ["--content", str(tmp_path / "content"), "--recordings", str(path.parent)]
    assert main(["diff", "HEAD", *where]) == 0
    out = capsys.readouterr().out
    assert f"{LESSON}: cannot be compared (work tree: recordings/{LESSON}.json: nests" in out
    subprocess.run([*git, "commit", "-qam", "nested"], check=True)
    assert main(["diff", "HEAD~1", "HEAD", *where, "--format", "markdown"]) == 0
    assert "nests arrays and objects 100000 deep, over the 64 limit" in capsys.readouterr().out
    assert main(cli(tmp_path, "check")[3:]) == 1  # and the sidecar is ignored, as damaged ones are
    assert "100000 deep" in capsys.readouterr().out


# -- issue 25: more panels or bars than a page shows ------------------------------------------


def _many_panels(raw: dict[str, Any]) -> None:
    raw["data"]["panels"] = raw["data"]["panels"][:1] * (MAX_PANELS + 1)


def _many_labels(raw: dict[str, Any]) -> None:
    panel = raw["data"]["panels"][0]
    panel["labels"] = [f"l{n}" for n in range(100_000)]
    panel["series"] = [{"label": "s", "y": [1] * 100_000}]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            _many_panels,
            f"field data.panels: List should have at most {MAX_PANELS} items after validation",
        ),
        (_many_labels, "100000 labels x 1 series is 100000 bars, more than 240 in one panel"),
    ],
    ids=["too many panels", "100,000 labels"],
)
def test_more_panels_or_bars_than_a_page_shows_are_invalid_when_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Any, message: str
) -> None:
    """A recording made by hand (a pull request) with 100,000 labels loaded, and its chart
    ran the render for over 200 s; panels had no bound at all. Both bounds of a recorded run hold
    for a recording read from disk."""
    raw = json.loads(reference_as(LESSON))
    damage(raw)
    course_with_recording(tmp_path, json.dumps(raw, indent=2).encode())
    assert main(cli(tmp_path, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert f"{LESSON}  invalid" in out and message in out
    assert main(cli(tmp_path, "render")[3:]) == 0, "the page says so; nothing raises"


# -- issue 38: one value a key, and the bytes the builder writes -----------------------------

FIRST = "basics-01"  # in the recorded fixture course: fresh
FORGED = {  # a key written again before the real one: a reviewer reads the first
    "stdout": ('  "stdout": ', '  "stdout": "all good\\n",\n'),
    "lessonId": ('  "lessonId": ', '  "lessonId": "basics-02",\n'),
    "contentHash": ('  "contentHash": ', f'  "contentHash": "{"0" * 64}",\n'),
    "environment": ('  "environment": ', '  "environment": {},\n'),
    "backend": ('    "backend": ', '    "backend": "gpu",\n'),
    "y": ('            "y": ', '            "y": [9],\n'),
}


def _forged(path: Path, key: str) -> bytes:
    before, line = FORGED[key]
    text = path.read_text("utf-8")
    at = text.index(before)
    forged = (text[:at] + line + text[at:]).encode()
    path.write_bytes(forged)
    return forged


@pytest.mark.parametrize("key", FORGED)
def test_a_key_written_twice_is_refused_by_check_and_validate_naming_it(
    recorded: Any, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """A second `stdout` (or any key, at any depth) passed `validate` and `check`: every
    reader took the last value, while a reviewer of the raw pull request reads the first."""
    path = recorded.recordings / f"{FIRST}.json"
    forged = _forged(path, key)
    root = recorded.content.parent
    assert main(cli(root, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert f"{FIRST}  invalid" in out and f'holds the key "{key}" twice in one object' in out
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f'{path}: holds the key "{key}" twice'), out
    with pytest.raises(RecordingError, match=f'"{key}" twice'):
        recording.load(path)
    assert path.read_bytes() == forged


def _reordered(text: str) -> str:
    raw = json.loads(text)
    return json.dumps({"lessonId": raw.pop("lessonId"), **raw}, indent=2, ensure_ascii=False)


UNCANONICAL = {  # the same recording, read the same, in other bytes
    "keys reordered": (_reordered, 2),
    "a trailing newline": (lambda text: text + "\n", 38),
    "tabs for indent": (lambda text: text.replace("\n  ", "\n\t"), 2),
    "compact": (lambda text: json.dumps(json.loads(text), ensure_ascii=False), 1),
    "3 spelled 3.0": (lambda text: text.replace('"y": [\n              3\n', '"y": [3.0\n'), 30),
    "3 spelled 30e-1": (
        lambda text: text.replace("              3\n", "              30e-1\n"),
        31,
    ),
    "a letter escaped": (lambda text: text.replace("{ lambda", "{ \\u006cambda"), 16),
}


@pytest.mark.parametrize("case", UNCANONICAL)
def test_a_recording_not_in_the_builders_bytes_is_not_fresh(
    recorded: Any, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """The README promises loading and saving gives back the same bytes; a recording in
    other bytes (a hand edit, another tool) passed `check` as fresh. It is `not canonical`,
    naming the first line that differs, with the fix; still valid, and its page renders."""
    path = recorded.recordings / f"{FIRST}.json"
    change, line = UNCANONICAL[case]
    text = path.read_text("utf-8")
    changed = change(text).encode()
    assert changed != text.encode(), "the case changes nothing"
    path.write_bytes(changed)
    assert recording.loads(changed, path) == recording.loads(text.encode(), path)
    root = recorded.content.parent
    assert main(cli(root, "check", "--format", "github")[3:]) == 1
    out = capsys.readouterr().out
    assert f"title={FIRST}%3A recording not canonical::not byte for byte what the builder" in out
    assert f"file={path}," in out and "re-record it with `make record`" in out
    assert f"line={line}," in out and f"from line {line} " in out
    assert main(["validate", str(path)]) == 0
    assert main(cli(root, "render")[3:]) == 0
    assert path.read_bytes() == changed


def test_the_committed_recordings_and_the_reference_are_canonical() -> None:
    for path in [REFERENCE, *sorted((ROOT / "recordings").glob("*.json"))]:
        assert recording.read(path.read_bytes(), path)[1] == 0, path


def test_validate_says_a_valid_recording_is_not_in_the_builders_bytes(tmp_path: Path) -> None:
    """Schema-valid but not what the builder writes (one-space indent): `validate` passes it
    and says so, with the line and the fix, as `check` fails it as not canonical."""
    path = tmp_path / f"{LESSON}.json"
    path.write_text(json.dumps(json.loads(REFERENCE.read_bytes()), indent=1))
    validated = subprocess.run(
        [*cli(tmp_path, "validate")[:4], str(path), str(REFERENCE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert validated.returncode == 0
    lines = validated.stdout.splitlines()
    assert lines[0] == f"{path}: valid (not canonical from line 2: `make record` writes it anew)"
    assert lines[1] == f"{REFERENCE}: valid"


def test_a_recording_with_crlf_line_endings_names_the_cause(
    recorded: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 56, item 9: git's core.autocrlf made every recording `not canonical`, with a
    message about hand edits; the message now names the line endings and .gitattributes."""
    path = recorded.recordings / f"{FIRST}.json"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert main(cli(recorded.content.parent, "check")[3:]) == 1
    out = capsys.readouterr().out
    assert "not canonical" in out and "has CRLF line endings" in out, out
    assert "core.autocrlf" in out and ".gitattributes" in out, out


def test_an_annotation_takes_its_line_from_the_status_never_from_its_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --format github` put an invalid recording's annotation at the first "line N"
    a regex found in the status's detail, words a recording's own text can put there. The
    line is the status's field, which the JSON parser's error gives; none, the first."""
    from builder.course.status import LessonStatus, State
    from builder.course.verdict import _annotation

    path = course_with_recording(tmp_path, b'{\n  "schemaVersion": 1,\n  oops\n}')
    assert main(cli(tmp_path, "check", "--format", "github")[3:]) == 1
    assert f"file={path},line=3," in capsys.readouterr().out
    said = LessonStatus(LESSON, State.INVALID, 'its key "line 9" is twice in one object', path)
    assert f"file={path},line=1," in _annotation(said, tmp_path / "content")
