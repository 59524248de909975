"""`check --format table | json | github`: the same statuses, for a person, a tool, or
GitHub Actions (one `::error` annotation per lesson that is not fresh)."""

from __future__ import annotations

import json

import pytest

from builder.__main__ import main
from builder.core.observe import Paths
from tests.conftest import edit


def _check(paths: Paths, *args: str) -> list[str]:
    return [
        "check",
        *args,
        "--content",
        str(paths.content),
        "--recordings",
        str(paths.recordings),
        "--cache",
        str(paths.cache),
    ]


def _spoil(paths: Paths) -> None:
    edit(paths.content / "lessons" / "basics-01" / "example.py", "* 2.0 + 1.0", "* 7.0")
    (paths.recordings / "basics-02.json").unlink()
    (paths.recordings / "speed-01.json").write_text('{\n  "schemaVersion": 1,\n  oops\n}')


def test_github_format_annotates_the_example_or_the_recording(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _spoil(recorded)
    assert main(_check(recorded, "--format", "github")) == 1
    lines = capsys.readouterr().out.splitlines()
    lessons, recordings = recorded.content / "lessons", recorded.recordings
    assert lines == [
        f"::error file={lessons}/basics-01/example.py,line=1,title=basics-01%3A recording "
        "stale(content)::the example changed; run `make record`",
        f"::error file={lessons}/basics-02/example.py,line=1,title=basics-02%3A recording "
        "missing::never recorded; run `make record`",
        f"::error file={recordings}/speed-01.json,line=3,title=speed-01%3A recording "
        "invalid::is not valid JSON: Expecting property name enclosed in double quotes at "
        "line 3 column 3; re-record it with `make record`",
        "3 of 3 recording(s) not fresh. Run `make record` to re-record them (orphans: delete "
        "the file or restore its lesson).",
    ]


def test_github_format_when_all_is_fresh(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_check(recorded, "--format", "github")) == 0
    assert capsys.readouterr().out == "All 3 recordings are fresh.\n"


def test_json_format_and_its_alias_agree(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _spoil(recorded)
    assert main(_check(recorded, "--format", "json")) == 1
    spelled = json.loads(capsys.readouterr().out)
    assert main(_check(recorded, "--json")) == 1
    assert json.loads(capsys.readouterr().out) == spelled
    assert [row["state"] for row in spelled] == ["stale(content)", "missing", "invalid"]


def test_table_is_the_default(recorded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    _spoil(recorded)
    assert main(_check(recorded)) == 1
    out = capsys.readouterr().out
    assert out.startswith("lesson     state               detail\nbasics-01  stale(content)")
    assert out.endswith("(orphans: delete the file or restore its lesson).\n")
