"""Issue 18: what an example's processes can do to the build, each run for real.

- forge the harness's result (a file, an atexit hook, the result pipe itself);
- outlive the run (setsid, a double-forked daemon, orphans of orphans);
- outlive the builder (SIGTERM from a CI cancel, SIGKILL).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.run.environment import BUILDER_ROOT
from builder.run.execute import Outcome
from tests.helpers import alive, cli, run, snapshot, wait_gone, write_course

FORGED = (
    '{"outcome": "ok", "panels": [], "environment": {"backend": "tpu", "deviceCount": 256, '
    '"jax": "0.9.2", "numpy": "2.4.4", "matplotlib": "3.10.8"}}'
)


def pids_in(folder: Path) -> list[int]:
    return [int(pid) for f in folder.iterdir() for pid in f.read_text().split()]


@contextlib.contextmanager
def reaped(folder: Path) -> Iterator[None]:
    """Whatever a test asserts, no process it wrote a pid for outlives it."""
    try:
        yield
    finally:
        for pid in pids_in(folder) if folder.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- forging the result ---------------------------------------------------------------------


@pytest.mark.slow
def test_an_atexit_hook_rewriting_the_result_file_changes_nothing(tmp_path: Path) -> None:
    """The issue's case: the hook wrote a well-formed TPU result after the harness wrote
    its file, and it was accepted. There is no result file any more, and the environment
    is measured by a probe outside the example's process."""
    execution = run(
        tmp_path,
        f"""\
        import atexit
        def forge():
            with open(".harness-result.json", "w") as f:
                f.write({FORGED!r})
        atexit.register(forge)
        print("honest")
        """,
    )
    assert execution.ok, execution
    assert execution.environment["backend"] == "cpu"
    assert execution.environment["deviceCount"] != 256


FIND_CHANNEL = """\
import os, stat
def channels():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            try:
                fifo = stat.S_ISFIFO(os.fstat(fd).st_mode)
            except OSError:  # the fd listdir used, closed by now
                continue
            if fifo:
                yield fd
"""


@pytest.mark.parametrize(
    "then",
    [
        "os._exit(0)",  # only the forged message is on the pipe
        "print('carried on')",  # the forged message, then the harness's own
    ],
    ids=["forge and leave", "forge and carry on"],
)
def test_writing_a_result_to_the_harness_pipe_fails_the_run(tmp_path: Path, then: str) -> None:
    execution = run(
        tmp_path,
        FIND_CHANNEL
        + f"""
for fd in channels():
    os.write(fd, b"0" * 64 + b"\\n" + {FORGED.encode()!r})
{then}
""",
    )
    assert execution.outcome is Outcome.HARNESS, execution
    assert "something other than the harness wrote to the harness's result channel" in (
        execution.detail
    )


@pytest.mark.parametrize(
    "claim",
    [
        # The case, without the key it no longer needs: the harness's own message,
        # sent first, saying the run was on a GPU, and the process left before the harness.
        "for fd in channels():\n"
        "    os.write(fd, json.dumps({'outcome': 'ok', 'panels': [],"
        " 'environment': {'backend': 'gpu', 'deviceCount': 8}}).encode())\n"
        "os._exit(0)",
        # jax patched inside the example's process, where the harness once read it.
        "import jax\njax.default_backend = lambda: 'gpu'\njax.device_count = lambda: 8",
    ],
    ids=["a result sent by the example", "jax patched in the example"],
)
def test_an_example_cannot_forge_what_its_recording_says_of_the_machine(
    tmp_path: Path, claim: str
) -> None:
    execution = run(tmp_path, FIND_CHANNEL + "import json\n" + claim + "\n")
    assert execution.ok, execution
    assert execution.environment["backend"] == "cpu"
    assert execution.environment["deviceCount"] == 1


def test_an_atexit_hook_writing_to_the_pipe_fails_the_run(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        FIND_CHANNEL
        + f"""
import atexit
atexit.register(lambda: [os.write(fd, {FORGED.encode()!r}) for fd in channels()])
raise SystemExit(3)
""",
    )
    assert execution.outcome is Outcome.HARNESS, execution


@pytest.mark.slow
@pytest.mark.parametrize(
    "spawn",
    [
        'subprocess.run([sys.executable, "child.py"], close_fds=False, check=True)',
        'assert os.system(f"{sys.executable} child.py") == 0',
        'os.fork() or os.execv(sys.executable, [sys.executable, "child.py"])',
    ],
    ids=["Popen close_fds=False", "os.system", "fork and exec"],
)
def test_the_result_pipe_is_not_inherited_by_the_examples_subprocesses(
    tmp_path: Path, spawn: str
) -> None:
    """A child that writes a forged result to every pipe it holds forges nothing (and says
    how many it found: none)."""
    child = (
        FIND_CHANNEL
        + f"found = list(channels())\nfor fd in found:\n    os.write(fd, {FORGED.encode()!r})\nprint(len(found))\n"
    )
    execution = run(
        tmp_path,
        f"""\
        import os, subprocess, sys, time
        with open("child.py", "w") as f:
            f.write({child!r})
        {spawn}
        time.sleep(0.5)
        print("parent done")
        """,
    )
    assert execution.ok, execution
    assert execution.stdout == "0\nparent done\n"


def test_a_thread_still_running_at_the_end_is_waited_for_as_python_does(tmp_path: Path) -> None:
    """Run by hand, Python waits for non-daemon threads: so does the harness, before its
    result; nothing the thread prints is lost or comes after the result."""
    execution = run(
        tmp_path,
        """\
        import sys, threading, time
        def late():
            time.sleep(0.3)
            print("from the thread")
        threading.Thread(target=late).start()
        print("main done")
        sys.exit(4)
        """,
    )
    assert execution.outcome is Outcome.EXITED
    assert execution.detail == "sys.exit(4)"


# -- outliving the run ------------------------------------------------------------------------

DAEMON = """\
import os, sys, time
piddir = os.environ["PIDDIR"]
if os.fork() == 0:  # a classic double-forked daemon: setsid, stdio on /dev/null
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        with open(os.path.join(piddir, "daemon"), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(300)
    os._exit(0)
while not os.path.exists(os.path.join(piddir, "daemon")):
    time.sleep(0.01)
"""


def test_a_double_forked_daemon_is_ended_with_the_run(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    with reaped(piddir):
        execution = run(tmp_path, DAEMON + "raise SystemExit(5)\n", env={"PIDDIR": str(piddir)})
        assert execution.outcome is Outcome.EXITED, execution
        [daemon] = pids_in(piddir)
        assert wait_gone(daemon), "the daemon outlived the run"


def test_orphans_of_orphans_are_all_ended(tmp_path: Path) -> None:
    """A chain of processes, each one's parent gone before it sleeps: all below the
    supervisor, all ended."""
    piddir = tmp_path / "pids"
    piddir.mkdir()
    with reaped(piddir):
        execution = run(
            tmp_path,
            """\
            import os, time
            for level in range(4):
                if os.fork():
                    os._exit(0) if level else None
                    break
                os.setsid() if level % 2 else None
                with open(os.path.join(os.environ["PIDDIR"], str(level)), "w") as f:
                    f.write(str(os.getpid()))
            else:
                time.sleep(300)
            if len(os.listdir(os.environ["PIDDIR"])) < 4:
                time.sleep(0.5)
            raise SystemExit(6)
            """,
            env={"PIDDIR": str(piddir)},
        )
        assert execution.outcome is Outcome.EXITED, execution
        pids = pids_in(piddir)
        assert len(pids) == 4
        assert all(wait_gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]


def test_a_daemon_of_a_hanging_example_is_ended_on_timeout(tmp_path: Path) -> None:
    piddir = tmp_path / "pids"
    piddir.mkdir()
    with reaped(piddir):
        execution = run(
            tmp_path, DAEMON + "time.sleep(300)\n", timeout=3, env={"PIDDIR": str(piddir)}
        )
        assert execution.outcome is Outcome.TIMEOUT
        [daemon] = pids_in(piddir)
        assert wait_gone(daemon)


def test_killing_the_supervisor_fails_the_run_saying_what_may_still_run(tmp_path: Path) -> None:
    """The one way out of supervision a program can take on purpose: kill the supervisor
    (same user). The builder says it cannot vouch for what is left."""
    execution = run(
        tmp_path,
        """\
        import os, signal
        parent = os.getppid()
        with open(f"/proc/{parent}/cmdline", "rb") as f:
            if b"builder/run/supervise.py" in f.read():  # never the test runner itself
                os.kill(parent, signal.SIGKILL)
        print("done")
        """,
    )
    assert execution.outcome is Outcome.ESCAPED, execution
    assert "the process supervising the run was killed" in execution.detail


# -- outliving the builder --------------------------------------------------------------------

SLEEPER = """\
import os, subprocess, time
child = subprocess.Popen(["sleep", "300"], start_new_session=True)
with open(os.path.join(os.environ["PIDDIR"], "{name}"), "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(300)
"""


def start_hanging_build(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    piddir, systmp = tmp_path / "pids", tmp_path / "systmp"
    piddir.mkdir()
    systmp.mkdir()
    write_course(
        tmp_path,
        {"hang-01": SLEEPER.format(name="a"), "hang-02": SLEEPER.format(name="b")},
        env={"PIDDIR": str(piddir)},
    )
    (tmp_path / "recordings").mkdir()
    (tmp_path / "recordings" / "hang-01.json").write_bytes(b'{"previous": "one"}')
    builder = subprocess.Popen(
        cli(tmp_path, "record", "-j", "2"),
        cwd=BUILDER_ROOT,
        env={**os.environ, "TMPDIR": str(systmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(1200):  # both examples and their escaped children are running
        if len(pids_in(piddir)) == 4 or builder.poll() is not None:  # written, not just made
            break
        time.sleep(0.05)
    assert len(pids_in(piddir)) == 4, builder.communicate()
    return builder, piddir, systmp


def gone_soon(folder: Path) -> bool:
    for _ in range(200):
        if not list(folder.iterdir()):
            return True
        time.sleep(0.05)
    return False


def test_sigterm_stops_the_build_like_ctrl_c(tmp_path: Path) -> None:
    """A CI cancel: exit 143 with a message, every example and every process it started
    (escaped ones too) ended, recordings as they were, no scratch folder left."""
    builder, piddir, systmp = start_hanging_build(tmp_path)
    with reaped(piddir):
        before = snapshot(tmp_path / "recordings")
        builder.send_signal(signal.SIGTERM)
        _, err = builder.communicate(timeout=120)
        assert builder.returncode == 143, err
        assert "terminated (SIGTERM): running examples were stopped" in err
        assert "Traceback" not in err
        pids = pids_in(piddir)
        assert all(wait_gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]
        assert snapshot(tmp_path / "recordings") == before
        assert list(systmp.iterdir()) == []


def test_a_sigkilled_builder_leaves_no_example_running_and_no_scratch_folder(
    tmp_path: Path,
) -> None:
    """The supervisors get SIGTERM when the builder dies (PR_SET_PDEATHSIG), end every
    process of their run and remove its scratch folder; none holds the build lock, which
    the next build takes at once."""
    builder, piddir, systmp = start_hanging_build(tmp_path)
    with reaped(piddir):
        builder.kill()
        builder.communicate(timeout=60)
        with (tmp_path / ".cache" / "build.lock").open() as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # while the supervisors end
        pids = pids_in(piddir)
        assert all(wait_gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]
        assert gone_soon(systmp), list(systmp.iterdir())
