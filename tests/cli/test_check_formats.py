"""`check --format table | json | github`: the same statuses, for a person, a tool, or
GitHub Actions (one `::error` annotation per lesson that is not fresh)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from builder.__main__ import main
from builder.core.observe import Paths
from tests.helpers import ROOT, edit


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
        "invalid::line 3: is not valid JSON: Expecting property name enclosed in double "
        "quotes (column 3); re-record it with `make record`",
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


# -- what the course holds cannot forge a CI annotation or act on the terminal (issue 25) ----

FORGED = "::error file=README.md::forged ##[warning]v1 \x1b]0;pwned\x07\x1b[2J\x9b31m"


def _commands(text: str) -> list[str]:
    """The lines GitHub's runner reads as workflow commands (actions/runner's
    ActionCommand.cs: `::` after leading spaces, or `##[` anywhere in the line)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_a_lesson_folder_name_cannot_forge_an_annotation(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported case: a folder whose name holds a newline printed a line of its own,
    `::error file=README.md::...`, through the error message on stderr."""
    (recorded.content / "lessons" / f"x\n{FORGED}").mkdir()
    assert main(_check(recorded, "--format", "github")) == 1
    out, err = capsys.readouterr()
    assert _commands(out + err) == [] and _raw_controls(out + err) == []
    lessons = recorded.content / "lessons"
    assert err == (
        f"error: {lessons}/x\\n::error file=README.md::forged ##\\u005bwarning]v1 "
        "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m/lesson.md: is missing\n"
    )


@pytest.mark.parametrize("form", ["github", "table", "json"])
def test_a_recording_name_is_one_escaped_field_in_every_format(
    recorded: Paths, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    """An orphan recording's name is its lesson id: in the table it started a line with
    `::` (a command, no newline needed); in an annotation each field is escaped by GitHub's
    rules and shown on one line; JSON stays JSON with the same value."""
    name = f"{FORGED}\n{FORGED}"
    (recorded.recordings / f"{name}.json").write_bytes(b"{}")
    assert main(_check(recorded, "--format", form)) == 1
    out, err = capsys.readouterr()
    assert _raw_controls(out + err) == []
    if form == "json":
        assert [row["lessonId"] for row in json.loads(out) if row["state"] == "orphan"] == [name]
        assert _commands(out) == []
    elif form == "table":
        assert _commands(out) == []
        assert "\\x3a:error file=README.md::forged ##\\u005bwarning]v1 \\x1b]0;pwned" in out
    else:
        [annotation] = _commands(out)
        title = (
            "%3A%3Aerror file=README.md%3A%3Aforged ##\\u005bwarning]v1 "
            "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m"
        )
        assert annotation == (
            f"::error file={recorded.recordings}/{title}\\n{title}.json,line=1,"
            f"title={title}\\n{title}%3A recording orphan::no lesson has this id; delete the "
            "recording, or restore its lesson"
        )


@pytest.mark.parametrize(
    "text, shown",
    [
        ("::error::x", "\\x3a:error::x"),
        ("  \u00a0::warning::x", "  \u00a0\\x3a:warning::x"),  # .NET's TrimStart: any space
        ("ok\n \t::notice::x\n", "ok\n \t\\x3a:notice::x\n"),
        ("a ##[error]b", "a ##\\u005berror]b"),  # the old form, read anywhere in a line
        ("a::b", "a::b"),
        ("r\rn\x1b[0m\u202e\udcff", "r\\rn\\x1b[0m\\u202e\\udcff"),
    ],
)
def test_terminal_text_holds_no_workflow_command_and_no_control(text: str, shown: str) -> None:
    from builder.core.escape import terminal

    assert terminal(text) == shown
    assert _commands(shown) == [] and _raw_controls(shown) == []


@pytest.mark.parametrize("command", ["check", "render", "site", "record"])
def test_every_commands_errors_go_through_the_escaping_stream(
    recorded: Paths, command: str
) -> None:
    """The real process (its own stdout and stderr, not pytest's): the course's error, as
    render, site and record print it, holds no command and no control character."""
    (recorded.content / "lessons" / f"x\n{FORGED}").mkdir()
    where = ["--content", str(recorded.content), "--recordings", str(recorded.recordings)]
    out = ["--cache", str(recorded.cache), "--out", str(recorded.out)]
    done = subprocess.run(
        [sys.executable, "-m", "builder", command, *where, *out],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1
    assert _commands(done.stdout + done.stderr) == []
    assert _raw_controls(done.stdout + done.stderr) == []
    assert "x\\n::error file=README.md::forged ##\\u005bwarning]v1 \\x1b]0;pwned" in done.stderr


def test_the_stream_defuses_a_command_printed_in_pieces() -> None:
    """print() writes its arguments and separators one by one: `print("  ", "::error::x")`
    starts a line with spaces, then the command."""
    import io

    from builder.core.escape import TerminalStream

    written = io.StringIO()
    stream = TerminalStream(written)
    print("  ", "::error::x", file=stream)
    print("a", "::b", file=stream)
    stream.write("x\n \t")
    stream.write("::c\n")
    assert written.getvalue() == "   \\x3a:error::x\na ::b\nx\n \t\\x3a:c\n"
    assert _commands(written.getvalue()) == []
