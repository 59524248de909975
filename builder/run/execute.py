"""Execute examples: the one door through which an example runs.

`run_example` is the one door: a lesson goes in, an `Execution` comes back. It runs the
example through builder/run/harness.py in a fresh interpreter, in a scratch directory, under
builder/run/supervise.py (which ends every process the example started, even those that left
its process group), optionally in a bubblewrap sandbox, with a timeout and an output cap,
and always cleans up after itself. The harness's result (how the run ended, the panels)
comes back on a pipe only the harness was given; anything but one such message on it
fails the run. What the recording says about the machine (backend, devices, versions) is
measured by builder/run/probe.py, outside the example's process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import BuildError
from ..core.scratch import scratch as scratch_folder
from ..course.files import open_input
from ..course.model import Lesson
from ..course.rules import EXAMPLE_FILE
from .environment import child_environment, supervisor_environment
from .judge import MAX_RESULT, Ran, judge
from .outcome import MAX_OUTPUT as MAX_OUTPUT
from .outcome import Execution as Execution
from .outcome import Limits as Limits
from .outcome import Outcome as Outcome
from .pipes import Reader, wait_for
from .probe import ProbeError, measure
from .sandbox import needed_by, require_sandbox, sandboxed

STDERR_TAIL = 16 * 1024
SUPERVISOR = Path(__file__).resolve().with_name("supervise.py")  # run as a script: see command
STOP_SECONDS = 15.0  # for the supervisor to end everything once told to stop


Runner = Callable[[Lesson, Limits], Execution]

_active: set[subprocess.Popen[bytes]] = set()
_active_lock = threading.Lock()
_stopping = threading.Event()


def kill_all() -> None:
    """Stop every running example and all it started (used on Ctrl-C and SIGTERM).

    Until `allow_runs()` is called again, an example that was about to start is stopped
    as soon as it starts, so none slips past the interrupt.
    """
    with _active_lock:
        _stopping.set()
        for proc in _active:
            _stop(proc)


def allow_runs() -> None:
    """Let examples start again (a new `record` after an interrupted one)."""
    _stopping.clear()


def run_example(lesson: Lesson, limits: Limits) -> Execution:
    """Run one lesson's example in its own process and scratch directory."""
    with scratch_folder(lesson.id) as scratch:  # swept by the next build if this one is killed
        problem = _stage(lesson, scratch)
        if problem:
            return Execution(lesson.id, Outcome.BAD_DATA, 0.0, detail=problem)
        return _run_staged(lesson, scratch, limits)


def _stage(lesson: Lesson, scratch: Path) -> str:
    """Copy the example and its data files into `scratch`; what is wrong with a data file
    (swapped for a link or a FIFO since the course was loaded), or ""."""
    (scratch / EXAMPLE_FILE).write_bytes(lesson.source)
    for name in lesson.meta.data:
        path = lesson.folder / name
        try:
            fd = open_input(path)
        except (BuildError, OSError) as error:
            what = error.problem if isinstance(error, BuildError) else "is missing"
            return f"data file {str(path)!r} changed since the course was loaded: it {what}"
        with open(fd, "rb") as source, open(scratch / name, "wb") as copy:
            shutil.copyfileobj(source, copy)
    return ""


def run_sandboxed(lesson: Lesson, limits: Limits) -> Execution:
    """`run_example` inside bubblewrap (`--sandbox`; builder/run/sandbox.py)."""
    return run_example(lesson, dataclasses.replace(limits, sandbox=True))


@dataclass(frozen=True)
class InSandbox:
    """`runner` with every run in the sandbox (its Limits say so; `run_example` and the
    probe after it follow them): what course.yml's `sandbox: true` makes of any runner,
    `rehearse`'s side interpreter and a Dask cluster's included. A class, so it pickles."""

    runner: Runner

    def __call__(self, lesson: Lesson, limits: Limits) -> Execution:
        return self.runner(lesson, dataclasses.replace(limits, sandbox=True))


def course_runner(runner: Runner, sandbox: bool) -> Runner:
    """The runner for a course whose course.yml says `sandbox: true` (`sandbox`), refused
    at once where bwrap cannot work; `runner` itself otherwise. The one place the course's
    word is applied: every command that runs examples goes through it."""
    if not sandbox:
        return runner
    require_sandbox("course.yml says `sandbox: true`, so its examples run only in the sandbox")
    return runner if sandboxes(runner) else InSandbox(runner)


def sandboxes(runner: Runner) -> bool:
    """Whether `runner` runs every example in the sandbox."""
    return runner is run_sandboxed or isinstance(runner, InSandbox)


@dataclass(frozen=True)
class _Channels:
    """The two pipes only the harness (result) and the supervisor (status) write to."""

    result: tuple[int, int] = field(default_factory=os.pipe)
    status: tuple[int, int] = field(default_factory=os.pipe)

    def command(self, lesson: Lesson, scratch: Path, limits: Limits) -> list[str]:
        python = limits.python or sys.executable
        harness = [python, "-m", "builder.run.harness", lesson.id, EXAMPLE_FILE]
        # -I: no PYTHON* variable, user site or cwd reaches the builder's own process
        supervisor = [sys.executable, "-I", "-S", str(SUPERVISOR), str(self.status[1])]
        supervisor += [str(self.result[1]), str(os.getpid()), str(scratch), "--"]
        wrap = sandboxed(scratch, needed_by(python)) if limits.sandbox else []
        return [*supervisor, *wrap, *harness, str(self.result[1])]


def _run_staged(lesson: Lesson, scratch: Path, limits: Limits) -> Execution:
    channels = _Channels()
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            channels.command(lesson, scratch, limits),
            cwd=scratch,
            env=supervisor_environment(child_environment(lesson, scratch)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(channels.result[1], channels.status[1]),
        )
    finally:
        os.close(channels.result[1])
        os.close(channels.status[1])
    with _active_lock:
        _active.add(proc)
        if _stopping.is_set():
            _stop(proc)
    try:
        ran = _communicate(proc, limits, channels)
    finally:
        with _active_lock:
            _active.discard(proc)
    seconds = time.perf_counter() - started
    if _stopping.is_set():
        return Execution(lesson.id, Outcome.INTERRUPTED, seconds, detail="stopped by Ctrl-C")
    judged = judge(lesson, scratch, ran, seconds)
    return _measured(judged, lesson, limits) if judged.ok else judged


def _measured(execution: Execution, lesson: Lesson, limits: Limits) -> Execution:
    """The run with the machine it ran on, as a probe with the same environment sees it."""
    try:
        environment = measure(lesson.meta.env, limits.sandbox, limits.python)
    except ProbeError as error:
        return dataclasses.replace(execution, outcome=Outcome.HARNESS, detail=str(error))
    return dataclasses.replace(execution, environment=environment)


def _communicate(proc: subprocess.Popen[bytes], limits: Limits, channels: _Channels) -> Ran:
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        Reader(proc.stdout.fileno(), MAX_OUTPUT, False, lambda: _stop(proc)),
        Reader(proc.stderr.fileno(), STDERR_TAIL, True, lambda: None),
        Reader(channels.result[0], MAX_RESULT, False, lambda: _stop(proc)),
        Reader(channels.status[0], MAX_RESULT, False, lambda: None),
    ]
    for reader in readers:
        reader.start()
    outcome = None
    try:
        wait_for(proc, limits.timeout)
    except subprocess.TimeoutExpired:
        outcome = Outcome.TIMEOUT
    _end(proc)
    for reader in readers:
        reader.finish()
    for reader in readers:
        reader.join()
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    for fd in (channels.result[0], channels.status[0]):
        os.close(fd)
    out, err, result, status = readers
    if out.overflowed:
        outcome = Outcome.TOO_MUCH_OUTPUT
    elif result.overflowed:  # the panels: the environment is a few short strings
        outcome = Outcome.TOO_MANY_PANELS
    elif outcome is None and not (out.eof and err.eof and result.eof):
        outcome = Outcome.ESCAPED
    return Ran(bytes(out.data), bytes(err.data), bytes(result.data), bytes(status.data), outcome)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Have the supervisor end everything (it has, if it ended by itself); if it does not
    within STOP_SECONDS, kill it and its process group."""
    if proc.poll() is None:
        _stop(proc)
        try:
            wait_for(proc, STOP_SECONDS)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
    proc.wait()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the supervisor: it kills every process of the run, then reports."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if proc.returncode is None:
            os.kill(proc.pid, signal.SIGTERM)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
