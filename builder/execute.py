"""Execute examples: the only module that starts a subprocess.

`run_example` is the one door: a lesson goes in, an `Execution` comes back. It runs the
example through builder/harness.py in a fresh interpreter, in a scratch directory, in its
own process group, with a timeout and an output cap, and always cleans up after itself.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .course import Lesson
from .rules import EXAMPLE_FILE

MAX_OUTPUT = 512 * 1024
STDERR_TAIL = 16 * 1024
DRAIN_SECONDS = 2.0
PASS_THROUGH = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")
BUILDER_ROOT = Path(__file__).resolve().parent.parent
RESULT_FILE = ".harness-result.json"
MIN_SECRET = 8  # shorter values ("1", "true", "x86_64") turn up in honest output


class Outcome(enum.StrEnum):
    OK = "ok"
    RAISED = "raised an exception"
    EXITED = "exited with an error code"
    TIMEOUT = "timed out"
    TOO_MUCH_OUTPUT = "printed too much"
    BAD_OUTPUT = "printed something a recording cannot keep"
    BAD_PANEL = "emitted a panel that cannot be drawn"
    HARNESS = "the harness failed"
    INTERRUPTED = "interrupted"
    NOT_SAVED = "could not be saved"
    ESCAPED = "left a process running"
    WRONG_DEVICE = "ran on the wrong kind of device"
    REFUSED = "was refused by its worker"  # builder.distributed: versions differ
    LOST = "lost its worker"  # builder.distributed: the worker or the scheduler went away


@dataclass(frozen=True)
class Execution:
    """What one run of an example produced."""

    lesson_id: str
    outcome: Outcome
    seconds: float
    stdout: str = ""
    stderr: str = ""
    detail: str = ""
    panels: list[dict[str, Any]] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK


@dataclass(frozen=True)
class Limits:
    timeout: float
    max_output: int = MAX_OUTPUT


Runner = Callable[[Lesson, Limits], Execution]

_active: set[subprocess.Popen[bytes]] = set()
_active_lock = threading.Lock()
_stopping = threading.Event()


def kill_all() -> None:
    """Kill every running example's whole process group (used on Ctrl-C).

    Until `allow_runs()` is called again, an example that was about to start is killed
    as soon as it starts, so none slips past the interrupt.
    """
    with _active_lock:
        _stopping.set()
        for proc in _active:
            _kill_group(proc)


def allow_runs() -> None:
    """Let examples start again (a new `record` after an interrupted one)."""
    _stopping.clear()


def run_example(lesson: Lesson, limits: Limits) -> Execution:
    """Run one lesson's example in its own process and scratch directory."""
    scratch = Path(tempfile.mkdtemp(prefix=f"course-{lesson.id}-"))
    try:
        _stage(lesson, scratch)
        return _run_staged(lesson, scratch, limits)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _stage(lesson: Lesson, scratch: Path) -> None:
    (scratch / EXAMPLE_FILE).write_bytes(lesson.source)
    for name in lesson.meta.data:
        shutil.copyfile(lesson.folder / name, scratch / name)


def child_environment(lesson: Lesson, scratch: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    env |= {
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(BUILDER_ROOT),
        "MPLBACKEND": "Agg",
    }
    return env | dict(lesson.meta.env)


def _run_staged(lesson: Lesson, scratch: Path, limits: Limits) -> Execution:
    command = [sys.executable, "-m", "builder.harness", lesson.id, EXAMPLE_FILE, RESULT_FILE]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        cwd=scratch,
        env=child_environment(lesson, scratch),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    with _active_lock:
        _active.add(proc)
        if _stopping.is_set():
            _kill_group(proc)
    try:
        out, err, outcome = _communicate(proc, limits)
    finally:
        _kill_group(proc)  # also ends anything the example left running
        with _active_lock:
            _active.discard(proc)
    seconds = time.perf_counter() - started
    if _stopping.is_set():
        return Execution(lesson.id, Outcome.INTERRUPTED, seconds, detail="stopped by Ctrl-C")
    return _judge(lesson, scratch, out, err, outcome, seconds, proc.returncode)


class _Reader(threading.Thread):
    """Drain one pipe, keeping at most `keep` bytes (the head or the tail)."""

    def __init__(self, pipe: IO[bytes], keep: int, tail: bool, on_overflow: Callable[[], None]):
        super().__init__(daemon=True)
        self.pipe, self.keep, self.tail, self.on_overflow = pipe, keep, tail, on_overflow
        self.data = bytearray()
        self.overflowed = False
        self.eof = False
        self.deadline: float | None = None

    def run(self) -> None:
        """Read until end of file, or until DRAIN_SECONDS after `finish()` at the latest:
        a process that escaped the example's process group may hold the pipe forever."""
        fd = self.pipe.fileno()
        with contextlib.suppress(OSError, ValueError):
            while self.deadline is None or time.monotonic() < self.deadline:
                if not select.select([fd], [], [], 0.05)[0]:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.eof = True
                    return
                self.data += chunk
                if len(self.data) > self.keep:
                    self._overflow()

    def finish(self) -> None:
        """The example's process group is dead: stop once the pipe is drained."""
        self.deadline = time.monotonic() + DRAIN_SECONDS

    def _overflow(self) -> None:
        if self.tail:
            del self.data[: len(self.data) - self.keep]
            return
        del self.data[self.keep :]
        if not self.overflowed:
            self.overflowed = True
            self.on_overflow()


def _communicate(
    proc: subprocess.Popen[bytes], limits: Limits
) -> tuple[bytes, bytes, Outcome | None]:
    assert proc.stdout is not None and proc.stderr is not None
    out = _Reader(proc.stdout, limits.max_output, tail=False, on_overflow=lambda: _kill_group(proc))
    err = _Reader(proc.stderr, STDERR_TAIL, tail=True, on_overflow=lambda: None)
    out.start()
    err.start()
    outcome = None
    try:
        _wait(proc, limits.timeout)
    except subprocess.TimeoutExpired:
        outcome = Outcome.TIMEOUT
    _kill_group(proc)
    proc.wait()
    for reader in (out, err):
        reader.finish()
    for reader in (out, err):
        reader.join()
        reader.pipe.close()
    if out.overflowed:
        outcome = Outcome.TOO_MUCH_OUTPUT
    elif outcome is None and not (out.eof and err.eof):
        outcome = Outcome.ESCAPED
    return bytes(out.data), bytes(err.data), outcome


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """`proc.wait(timeout)` without its polling, which sleeps up to 50 ms between checks: a
    pidfd (Linux 5.3+) is readable the moment the process ends."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # another system, or an older kernel
        proc.wait(timeout=timeout)
        return
    try:
        if not select.select([pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(pidfd)
    proc.wait()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _judge(
    lesson: Lesson,
    scratch: Path,
    out: bytes,
    err: bytes,
    outcome: Outcome | None,
    seconds: float,
    returncode: int,
) -> Execution:
    secrets = builder_secrets(child_environment(lesson, scratch))
    stderr = redact(err.decode("utf-8", "replace"), secrets)  # shown in the failure summary

    def failed(outcome: Outcome, detail: str) -> Execution:
        return Execution(lesson.id, outcome, seconds, stderr=stderr, detail=detail)

    if outcome is Outcome.TIMEOUT:
        return failed(outcome, f"killed after {lesson.meta.timeout:g} s")
    if outcome is Outcome.TOO_MUCH_OUTPUT:
        return failed(outcome, f"more than {len(out) // 1024} KiB on stdout; killed")
    if outcome is Outcome.ESCAPED:
        return failed(
            outcome,
            "a process it started left its process group (setsid, a daemon) and still holds "
            "its output; the builder cannot stop it",
        )
    result = _read_result(scratch / RESULT_FILE)
    if result is None:
        return failed(
            Outcome.HARNESS,
            f"the example's process ended (exit status {returncode}) before the run finished",
        )
    if result["outcome"] == "raised":
        return failed(Outcome.RAISED, _last_line(stderr))
    if result["outcome"] != "ok":
        return failed(Outcome.EXITED, f"sys.exit({result['outcome']!r})")
    panels, environment = result.get("panels"), result.get("environment")
    if not isinstance(panels, list) or not isinstance(environment, dict):
        return failed(Outcome.HARNESS, f"{RESULT_FILE} was overwritten; do not write that file")
    try:
        stdout = out.decode("utf-8")
    except UnicodeDecodeError as error:
        return failed(
            Outcome.BAD_OUTPUT,
            f"stdout is not valid UTF-8 (byte {error.start}); print text, not raw bytes",
        )
    leak = _leaked_path(stdout, scratch, lesson)
    if leak:
        return failed(
            Outcome.BAD_OUTPUT,
            f"stdout contains the absolute path {leak!r}; print paths relative to the cwd",
        )
    secret = _leaked_secret({"stdout": stdout, "a panel": _texts(panels)}, secrets)
    if secret:
        return failed(
            Outcome.BAD_OUTPUT,
            f"{secret}; a recording is committed and published: print only what the example "
            "computes",
        )
    return Execution(
        lesson.id,
        Outcome.OK,
        seconds,
        stdout=stdout,
        stderr=stderr,
        panels=result["panels"],
        environment=result["environment"],
    )


def _leaked_path(stdout: str, scratch: Path, lesson: Lesson) -> str | None:
    """An absolute path of this machine that would make the recording machine-specific."""
    home = os.path.expanduser("~")
    candidates = {str(scratch), str(scratch.resolve()), str(lesson.folder.resolve().parent.parent)}
    candidates |= {str(BUILDER_ROOT)} | ({home} if len(home) > 1 else set())
    return next((path for path in sorted(candidates) if path in stdout), None)


def builder_secrets(child: dict[str, str]) -> dict[str, str]:
    """The builder's environment variables the example was not given, by value: the
    example can still read them (from /proc/<parent>/environ, as the same user), so what it
    prints is checked for them. Values shorter than MIN_SECRET are left out."""
    given = set(child.values())
    return {
        value: name
        for name, value in sorted(os.environ.items())
        if len(value) >= MIN_SECRET and value not in given
    }


def redact(text: str, secrets: dict[str, str]) -> str:
    """`text` with each secret value replaced by the name of its variable, as `$NAME`."""
    for value, name in secrets.items():
        text = text.replace(value, f"${name}")
    return text


def _leaked_secret(places: dict[str, str], secrets: dict[str, str]) -> str:
    """Which place holds which variable's value (never the value itself), or ""."""
    for place, text in places.items():
        for value, name in secrets.items():
            if value in text:
                return (
                    f"{place} contains the value of the builder's environment variable {name}, "
                    "which the example was not given"
                )
    return ""


def _texts(value: Any) -> str:
    """Every string in a panel's data, one a line."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    return "\n".join(_texts(item) for item in value) if isinstance(value, list) else ""


def _read_result(path: Path) -> dict[str, Any] | None:
    try:
        result = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) and "outcome" in result else None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
