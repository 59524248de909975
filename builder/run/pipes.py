"""A child's pipes and its end, for builder.run.execute: read each pipe with a cap, in a
thread, without waiting forever on a pipe that an escaped process holds; wait for a
process the moment it ends (a pidfd), not at the next poll."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import threading
import time
from collections.abc import Callable

DRAIN_SECONDS = 2.0


class Reader(threading.Thread):
    """Drain one pipe, keeping at most `keep` bytes (the head or the tail)."""

    def __init__(self, fd: int, keep: int, tail: bool, on_overflow: Callable[[], None]):
        super().__init__(daemon=True)
        self.fd, self.keep, self.tail, self.on_overflow = fd, keep, tail, on_overflow
        self.data = bytearray()
        self.overflowed = False
        self.eof = False
        self.deadline: float | None = None

    def run(self) -> None:
        """Read until end of file, or until DRAIN_SECONDS after `finish()` at the latest:
        a process that escaped the supervisor may hold the pipe forever."""
        with contextlib.suppress(OSError, ValueError):
            while self.deadline is None or time.monotonic() < self.deadline:
                if not select.select([self.fd], [], [], 0.05)[0]:
                    continue
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    self.eof = True
                    return
                self.data += chunk
                if len(self.data) > self.keep:
                    self._overflow()

    def finish(self) -> None:
        """The supervisor has ended: stop once the pipe is drained."""
        self.deadline = time.monotonic() + DRAIN_SECONDS

    def _overflow(self) -> None:
        if self.tail:
            del self.data[: len(self.data) - self.keep]
            return
        del self.data[self.keep :]
        if not self.overflowed:
            self.overflowed = True
            self.on_overflow()


def wait_for(proc: subprocess.Popen[bytes], timeout: float) -> None:
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
