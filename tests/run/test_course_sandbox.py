"""Where a pull request's examples run, they can run sandboxed (issue 38, item 9): `serve`
and `rehearse` take `--sandbox`, and a course.yml that says `sandbox: true` has every
command run its examples in the sandbox, the provenance probe too, with no switch to run
them outside it. COURSEBUILDER_SANDBOX=1, set outside the checkout, does the same for a
course whose pull request took the line out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.run import probe
from builder.run.execute import InSandbox, Limits, course_runner, run_example, run_sandboxed
from builder.run.sandbox import sandbox_problem
from tests.helpers import cli, make_lesson, write_course

PROBLEM = sandbox_problem()
needs_bwrap = pytest.mark.skipif(bool(PROBLEM), reason=f"--sandbox cannot run here: {PROBLEM}")

# Writes beside the course (outside its scratch folder): the sandbox has no such folder.
ESCAPES = """\
import os
target = os.path.join({folder!r}, "escaped.txt")
try:
    open(target, "w").write("out")
    print("wrote outside")
except OSError as error:
    print("refused:", type(error).__name__)
"""


def _course(root: Path, *, says_sandbox: bool) -> None:
    write_course(root, {"calm-01": ESCAPES.format(folder=str(root))})
    if says_sandbox:
        course_yml = root / "content" / "course.yml"
        course_yml.write_text(course_yml.read_text() + "sandbox: true\n")


def _recorded_stdout(root: Path) -> str:
    import json

    return str(json.loads((root / "recordings" / "calm-01.json").read_text())["stdout"])


@needs_bwrap
def test_a_course_that_says_sandbox_is_recorded_in_it_without_the_flag(tmp_path: Path) -> None:
    _course(tmp_path, says_sandbox=True)
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _recorded_stdout(tmp_path) == "refused: FileNotFoundError\n"
    assert not (tmp_path / "escaped.txt").exists()


@needs_bwrap
def test_the_variable_outside_the_checkout_sandboxes_any_course(tmp_path: Path) -> None:
    _course(tmp_path, says_sandbox=False)
    env = os.environ | {"COURSEBUILDER_SANDBOX": "1"}
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert _recorded_stdout(tmp_path) == "refused: FileNotFoundError\n"


@pytest.mark.parametrize("value", ["ture", "2", "sandbox", "y es"])
def test_a_variable_that_is_neither_on_nor_off_runs_nothing(tmp_path: Path, value: str) -> None:
    """A misspelt COURSEBUILDER_SANDBOX is refused, not read as "no": a setting meant to
    sandbox never leaves an example unsandboxed by a typo."""
    _course(tmp_path, says_sandbox=False)
    env = os.environ | {"COURSEBUILDER_SANDBOX": value}
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert "COURSEBUILDER_SANDBOX=" in done.stderr and "neither on nor off" in done.stderr
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "recordings").exists() or not any((tmp_path / "recordings").iterdir())


def test_without_the_sandbox_the_same_example_writes_outside(tmp_path: Path) -> None:
    """The control: what the two tests above stop does happen otherwise."""
    _course(tmp_path, says_sandbox=False)
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _recorded_stdout(tmp_path) == "wrote outside\n"
    assert (tmp_path / "escaped.txt").exists()


def test_a_course_that_says_sandbox_is_not_run_where_there_is_none(tmp_path: Path) -> None:
    """Without bwrap on the builder's PATH, nothing runs: the example is not run outside."""
    _course(tmp_path, says_sandbox=True)
    bare = tmp_path / "bin"
    bare.mkdir()
    env = os.environ | {"PATH": str(bare)}
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert "course.yml says `sandbox: true`, so its examples run only in the sandbox: " in (
        done.stderr
    )
    assert "bubblewrap (bwrap) is not installed" in done.stderr
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "recordings" / "calm-01.json").exists()


def test_any_runner_a_sandboxed_course_gets_runs_in_the_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("builder.run.execute.require_sandbox", lambda asked_by: None)
    seen: list[Limits] = []
    chosen = course_runner(lambda lesson, limits: seen.append(limits), True)  # type: ignore[arg-type,func-returns-value]
    chosen(None, Limits(timeout=1))  # type: ignore[arg-type]
    assert isinstance(chosen, InSandbox) and seen[0].sandbox
    assert course_runner(run_sandboxed, True) is run_sandboxed
    assert course_runner(run_example, False) is run_example


@needs_bwrap
def test_the_probe_follows_the_run_into_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[str]] = []
    real = subprocess.run

    def watched(command: list[str], **settings: object) -> object:
        started.append([str(part) for part in command])
        return real(command, **settings)  # type: ignore[call-overload]

    probe._measured.cache_clear()
    monkeypatch.setattr(probe.subprocess, "run", watched)
    lesson = make_lesson(tmp_path, "print('ran')\n")
    execution = course_runner(run_example, True)(lesson, Limits(timeout=120))
    assert execution.ok, execution
    command = started[-1]  # after the check that bwrap works here
    assert Path(command[0]).name == "bwrap" and "--unshare-net" in command
    assert command[-4:-2] == [sys.executable, "-I"]
    probe._measured.cache_clear()


@needs_bwrap
def test_serve_sandbox_re_records_in_the_sandbox(tmp_path: Path) -> None:
    _course(tmp_path, says_sandbox=False)
    command = cli(tmp_path, "serve", "--sandbox", "--port", "0")
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    recording = tmp_path / "recordings" / "calm-01.json"
    try:
        deadline = time.monotonic() + 120
        while not recording.exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    assert recording.exists(), err.decode(errors="replace")
    assert _recorded_stdout(tmp_path) == "refused: FileNotFoundError\n"
    assert not (tmp_path / "escaped.txt").exists()
