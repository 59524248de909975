"""The builder's forked workers: each ends when the builder does, and holds none of its locks.

A forked process inherits every open file of its parent, the build lock's included, and an
flock belongs to the open file, not to the process: a rendering worker left running after
the builder was SIGKILLed (a cancelled CI job, the OOM killer) held `.cache/build.lock`,
and every later build waited on a pid that no longer existed. So:

- the builder names each lock it holds (`held`), and a forked process lets go of its
  copies at once, before it runs anything else (`os.register_at_fork`): each is pointed at
  /dev/null, so the file stays locked by the builder and the worker no longer shares it;
- the worker asks the kernel for SIGKILL when the builder's thread that forked it ends
  (Linux `PR_SET_PDEATHSIG`), leaves at once if the builder is already gone, and, where
  there is no prctl, a thread of its own watches its parent and ends it when that changes;
The examples' supervisors do the same themselves (builder/run/supervise.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.25  # how often a worker without prctl looks for its parent
_held: set[int] = set()  # the file descriptors of the locks this process holds


@contextlib.contextmanager
def held(fd: int) -> Iterator[None]:
    """While the block runs, `fd` (a lock) is one a forked worker lets go of first."""
    _held.add(fd)
    try:
        yield
    finally:
        _held.discard(fd)


def orphaned(parent: int) -> None:
    """In a worker forked by `parent` (its copies of the locks already let go): end it
    (SIGKILL, or os._exit) when `parent` ends, or at once if it already has."""
    dies_with_parent = _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)
    if not dies_with_parent:
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()


def alive(pid: int) -> bool:
    """False only when process `pid` is known to be gone (another user's, or a zombie, is
    alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's; no such pid can exist
        return True
    return True


def _let_go() -> None:
    """Each inherited lock's descriptor now names /dev/null (close-on-exec), so a
    descriptor number the parent's objects still name is never another file's."""
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    for fd in _held:
        with contextlib.suppress(OSError):
            os.dup2(null, fd, inheritable=False)
    os.close(null)
    _held.clear()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def _prctl(option: int, value: int) -> bool:
    """Linux prctl(2); False where it is not available."""
    call = _libc_prctl()
    return call is not None and int(call(option, value, 0, 0, 0)) == 0


def _libc_prctl() -> Callable[..., int] | None:
    try:
        call: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return call


os.register_at_fork(after_in_child=_let_go)
