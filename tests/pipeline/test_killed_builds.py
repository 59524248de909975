"""Issue 56 item 3: a build SIGKILLed at any moment (a cancelled CI job, the OOM killer)
leaves nothing of its own running and blocks no later build (builder/core/lineage.py).

A cold render SIGKILLed while its forked workers rendered left them running for minutes,
holding `.cache/build.lock`: the next build said "Another build is running (pid N)" of a
pid that no longer existed, and waited past 180 s. Synthetic course (bench/generate.py):
nothing executes."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.pipeline.build import build_lock
from tests.helpers import alive, cli, ends_with, synthetic_copy

LESSONS = 80  # enough pages and charts for a cold render in forked workers (make.MIN_PER_WORKER)
NEXT_BUILD_S = 90  # a cold build of LESSONS takes seconds; the one that waited took > 180


def _stat(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat's fields after the name; None when it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] == b"Z" else fields


def _in_session(session: int) -> list[int]:
    """The live processes of `session` (a build started in a session of its own, with
    everything it forked or started)."""
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    return [pid for pid in pids if (fields := _stat(pid)) and int(fields[3]) == session]


def _children(pid: int) -> list[int]:
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    return [child for child in pids if (fields := _stat(child)) and int(fields[1]) == pid]


@contextlib.contextmanager
def _killed_later(root: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A cold render of the course at `root`, in a session of its own, SIGKILLed (the
    builder alone, as the OOM killer does) when the block ends; every process of that
    session is ended by the test after it, whatever it asserted."""
    build = subprocess.Popen(
        cli(root, "render", "-j", "4"),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield build
        build.kill()
        build.wait()
        ended = time.monotonic() + 5
        while _in_session(build.pid) and time.monotonic() < ended:
            time.sleep(0.02)
        left = _in_session(build.pid)
        assert not left, f"processes of the killed build still run 5 s after it: {left}"
    finally:
        build.kill()
        build.wait()
        for pid in _in_session(build.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _rendering(build: subprocess.Popen[bytes]) -> None:
    """Wait until the build has forked its rendering workers."""
    deadline = time.monotonic() + 120
    while len(_children(build.pid)) < 2:
        assert build.poll() is None, "the build ended before it forked workers"
        assert time.monotonic() < deadline, "the build never forked rendering workers"
        time.sleep(0.01)
    time.sleep(0.2)  # they have started on their share


@pytest.mark.parametrize("when", [0.2, 0.5, 1.0, "rendering"])
def test_a_cold_build_killed_at_any_moment_blocks_no_later_build(
    course_template: Path, tmp_path: Path, when: float | str
) -> None:
    synthetic_copy(course_template, tmp_path)
    with _killed_later(tmp_path) as build:
        if when == "rendering":
            _rendering(build)
        else:
            time.sleep(float(when))
    started = time.monotonic()
    done = subprocess.run(
        cli(tmp_path, "render"), capture_output=True, text=True, timeout=NEXT_BUILD_S * 2
    )
    assert done.returncode == 0, done.stderr
    assert "waiting" not in done.stderr, done.stderr
    assert time.monotonic() - started < NEXT_BUILD_S
    assert (tmp_path / "site" / "index.html").is_file()


def _forked_worker(lock: Path, report: Path, prctl: bool) -> str:
    """A builder (a Python process) that holds the build lock and forks a worker as
    builder.pipeline.make does; the worker, once it runs, writes its pid to `report`."""
    return textwrap.dedent(
        f"""
        import os, time
        from pathlib import Path
        from builder.pipeline.build import build_lock
        from builder.core import lineage
        if not {prctl}:
            lineage._prctl = lambda option, value: False  # a system without prctl
        with build_lock(Path({str(lock)!r})):
            parent = os.getpid()
            if os.fork() == 0:
                lineage.orphaned(parent)
                Path({str(report)!r} + ".tmp").write_text(str(os.getpid()))
                os.rename({str(report)!r} + ".tmp", {str(report)!r})
                time.sleep(300)
                os._exit(0)
            time.sleep(300)
        """
    )


@pytest.mark.parametrize("prctl", [True, False], ids=["prctl", "no-prctl"])
def test_a_worker_ends_with_its_builder_and_the_lock_is_free_at_once(
    tmp_path: Path, prctl: bool
) -> None:
    """With PR_SET_PDEATHSIG, and without it (the worker's own watch of its parent)."""
    report = tmp_path / "worker"
    source = _forked_worker(tmp_path / ".cache", report, prctl)
    builder = subprocess.Popen([sys.executable, "-c", source], cwd=Path(__file__).parents[2])
    try:
        while not report.exists():
            assert builder.poll() is None, "the builder ended before it forked"
            time.sleep(0.02)
        builder.kill()
        builder.wait()
        with (tmp_path / ".cache" / "build.lock").open() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no wait, the worker ending or not
        assert ends_with(builder, int(report.read_text())), "the worker outlived its builder"
    finally:
        builder.kill()
        builder.wait()


def test_a_worker_holds_no_copy_of_the_build_lock(tmp_path: Path) -> None:
    """The builder lets go of the lock while its worker still runs: the next build may
    start at once (an flock belongs to the open file, which fork() shares)."""
    from builder.core.lineage import orphaned

    ready, said = os.pipe()
    with build_lock(tmp_path):
        parent = os.getpid()
        worker = os.fork()
        if worker == 0:
            orphaned(parent)
            os.write(said, b"!")
            time.sleep(60)
            os._exit(0)
        assert os.read(ready, 1) == b"!"  # the worker runs
    os.close(ready)
    os.close(said)
    try:
        with (tmp_path / "build.lock").open() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert alive(worker)
    finally:
        os.kill(worker, signal.SIGKILL)
        os.waitpid(worker, 0)
