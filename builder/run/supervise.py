"""Between the builder and one example: ends every process the example started.

    python -I -S builder/run/supervise.py STATUS_FD RESULT_FD BUILDER_PID SCRATCH -- COMMAND...

The builder starts this in a session of its own, in the example's scratch folder, isolated
(`-I`: no PYTHON* variable of the lesson's can change this interpreter) and with an
environment of its own: the example's is in EXAMPLE_ENV (JSON), and only COMMAND gets it. It

- makes itself a child subreaper (Linux `prctl`), so a process the example starts and
  orphans (a double fork, `setsid`, a daemon with its stdio on /dev/null) is re-parented to
  it, not to init: it stays a descendant that can be found;
- asks for SIGTERM when the builder's thread that started it ends (`PR_SET_PDEATHSIG`:
  the builder was SIGKILLed) and leaves at once if the builder is already gone;
- runs COMMAND (the harness, or bwrap around it) in its own process group, killed with
  SIGKILL if this process dies, handing it RESULT_FD (the harness's result channel to the
  builder) and keeping no copy of it;
- when COMMAND ends, or on SIGTERM (the builder stops a run: timeout, Ctrl-C, too much
  output), kills every descendant left, again and again until none is left (or
  GIVE_UP_SECONDS pass), and writes one line of JSON to STATUS_FD:
  `{"returncode": <COMMAND's, or null if stopped>, "left": [pids it could not end]}`;
- removes SCRATCH when the builder is gone (otherwise the builder removes it).

Standard library only, and small: it starts for every example.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GIVE_UP_SECONDS = 10.0
EXAMPLE_ENV = "COURSEBUILDER_EXAMPLE_ENV"  # COMMAND's environment, as a JSON object


class Stop(Exception):
    """SIGTERM: the builder stops this run, or the builder itself is gone."""


def prctl(option: int, value: int) -> bool:
    """Linux prctl(2) through ctypes; False where it is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent() -> None:
    """In the child, between fork and exec: SIGKILL when this supervisor dies."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the clean-up short
    raise Stop


def descendants(root: int) -> list[int]:
    """Every process below `root` (zombies included), from each process's parent in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:  # it ended while we looked
                continue
            parent = int(stat.rsplit(b")", 1)[1].split()[1])  # the name may hold spaces
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def end_all() -> list[int]:
    """Kill and reap every descendant until none is left; the pids that outlived the wait."""
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while True:
        left = descendants(os.getpid())
        if not left or time.monotonic() > deadline:
            return left
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        time.sleep(0.005)


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def run(command: list[str], result_fd: int, builder: int) -> int | None:
    """COMMAND's exit status (negative: the signal that ended it), None when stopped."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != builder:  # the builder died before the line above
        raise Stop
    given = os.environ.get(EXAMPLE_ENV)
    child = subprocess.Popen(
        command,
        env=json.loads(given) if given is not None else None,
        pass_fds=(result_fd,),
        process_group=0,
        preexec_fn=_die_with_parent,
    )
    os.close(result_fd)  # only the harness holds it now: its end is the harness's end
    return os.waitstatus_to_exitcode(os.waitpid(child.pid, 0)[1])


def main(argv: list[str]) -> int:
    status_fd, result_fd, builder = (int(arg) for arg in argv[:3])
    scratch = argv[3]
    command = argv[argv.index("--") + 1 :]
    signal.signal(signal.SIGTERM, _stop)
    returncode: int | None = None
    with contextlib.suppress(Stop):
        returncode = run(command, result_fd, builder)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # nothing interrupts the clean-up
    left = end_all()
    report = json.dumps({"returncode": returncode, "left": left}).encode() + b"\n"
    with contextlib.suppress(OSError):  # the builder may be gone
        os.write(status_fd, report)
    if os.getppid() != builder:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
