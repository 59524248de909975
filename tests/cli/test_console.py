"""What the builder tells the user goes through stdlib logging and the one handler the CLI
sets up (builder/core/console.py): plain lines in CI and when piped; on a terminal, a
progress line for `record` and a cold render, escaped like every other line."""

from __future__ import annotations

import io
import logging
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.console import Console, Progress, console
from builder.core.escape import TerminalStream
from builder.run.batch import record
from tests.helpers import canned_run, cli, copy_course

CLEAR = "\r\x1b[K"  # the progress line's own control: back to the line start, erase it


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _render_on_a_terminal(root: Path, **env: str) -> bytes:
    """`python -m builder render` (cold) with stdout and stderr on a pseudo-terminal: what
    the terminal received."""
    copy_course(root, broken=False)
    master, slave = os.openpty()
    settings = {k: v for k, v in os.environ.items() if k != "CI"} | env
    process = subprocess.Popen(
        cli(root, "render", "-j", "1"), stdout=slave, stderr=slave, env=settings
    )
    os.close(slave)
    received = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    assert process.wait(timeout=60) == 0, received.decode(errors="replace")
    return received


def test_a_cold_render_on_a_terminal_shows_a_progress_line(tmp_path: Path) -> None:
    received = _render_on_a_terminal(tmp_path).decode()
    assert CLEAR in received
    assert "rendering 0/" in received and " elapsed" in received
    assert received.rstrip().splitlines()[-1].lstrip(CLEAR).startswith("Built "), received


def test_in_ci_a_terminal_gets_plain_lines(tmp_path: Path) -> None:
    received = _render_on_a_terminal(tmp_path, CI="1").decode()
    assert "\x1b" not in received and "\r\n" in received  # the terminal's own newlines
    assert "rendering" not in received
    assert [line for line in received.splitlines() if line][-1].startswith("Built ")


def test_piped_output_is_plain_lines(tmp_path: Path) -> None:
    copy_course(tmp_path, broken=False)
    environment = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        cli(tmp_path, "render"), capture_output=True, text=True, env=environment, check=True
    )
    assert "\x1b" not in done.stderr and "\r" not in done.stderr
    assert "rendering" not in done.stderr
    assert done.stderr.startswith("Built "), done.stderr


def test_render_takes_jobs_as_site_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_course(tmp_path, broken=False)
    assert main([*cli(tmp_path, "render", "-j", "2")[3:]]) == 0
    assert capsys.readouterr().err.startswith(f"Built {tmp_path / 'site'}/: ")
    for command in ("render", "site"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "-j JOBS, --jobs JOBS" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["render", "-j", "0"])
    assert "argument -j/--jobs: '0' is not a whole number" in capsys.readouterr().err


HOSTILE = "evil\x1b]0;owned\x07\x1b[2J\u202egnp.\nnext\r::error::x"


def test_a_hostile_name_cannot_act_on_the_terminal_from_the_progress_line() -> None:
    """The progress line shows names as one line, every control escaped; only its own
    `\\r\\033[K` reaches the terminal raw."""
    terminal = _Terminal()
    handler = Console(TerminalStream(terminal), live=True)
    handler.handle(_progress_record(Progress("recording", [HOSTILE, "calm-01"])))
    handler.handle(_line(f"  [1/2] ok   {HOSTILE}"))
    handler.close()
    written = terminal.getvalue()
    assert written.count("\x1b") == written.count(CLEAR), written
    assert "\x07" not in written and "\u202e" not in written
    assert "\\x1b]0;owned\\x07" in written and "\\u202e" in written
    line = written.split(CLEAR)[1]  # the progress line, drawn once
    assert "\n" not in line and "\r" not in line and line.startswith("  recording 0/2 · evil")
    assert "\n::error" not in written  # no workflow command starts a line


def test_record_shows_a_progress_line_under_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from builder.course.load import load_course

    monkeypatch.delenv("CI", raising=False)  # CI (where this suite runs too) gets plain lines

    paths = copy_course(tmp_path, broken=False)
    lessons = list(load_course(paths.content).lessons)
    terminal = _Terminal()
    with console(TerminalStream(terminal)):  # type: ignore[arg-type]
        record(lessons, paths.recordings, jobs=1, runner=canned_run)
    written, total = terminal.getvalue(), len(lessons)
    assert f"{CLEAR}  recording 0/{total} · " in written
    assert f"{CLEAR}  recording 1/{total} · " in written
    assert f"[{total}/{total}] ok" in written
    assert f"recording {total}/{total}" in written.split(f"[{total}/{total}] ok")[-1]
    assert written.endswith(CLEAR), "the progress line is erased at the end"


def test_progress_estimates_from_last_run_times_and_else_from_its_pace() -> None:
    timed = Progress("recording", ["a", "b", "c"], slots=2, costs={"a": 60.0, "b": 30.0})
    assert "~1:08 left" in timed.line()  # (60 + 30 + 45 for c, the mean of those timed) / 2
    assert "· a (+1) ·" in timed.line()  # a and b run first
    timed.step("a")
    assert timed.line() == "  recording 1/3 · b (+1) · 0:00 elapsed, ~0:38 left"
    paced = Progress("rendering", ["x"] * 4)
    assert "left" not in paced.line()  # nothing done yet: no pace to go by
    paced.started -= 10
    paced.step(done=1)
    assert paced.line().endswith("0:10 elapsed, ~0:30 left")


def _progress_record(progress: Progress) -> logging.LogRecord:
    record = _line("recording")
    record.progress = progress
    return record


def _line(text: str) -> logging.LogRecord:
    return logging.LogRecord("builder", logging.INFO, "", 0, "%s", (text,), None)


def test_the_installed_command_and_python_m_builder_run_one_entry() -> None:
    """`coursebuilder` (pyproject's script) and `python -m builder` both run
    builder.__main__.entry: the same collector and exit policy, the same code path that the
    benchmarks time."""
    import ast
    import tomllib

    from tests.helpers import ROOT

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["coursebuilder"] == "builder.__main__:entry"
    tree = ast.parse((ROOT / "builder" / "__main__.py").read_text())
    block = [n for n in tree.body if isinstance(n, ast.If)][-1]
    assert ast.unparse(block) == "if __name__ == '__main__':\n    entry()"
