"""What the builder tells the user: stdlib logging, shown by one handler the CLI sets up.

Every module logs to `logging.getLogger(__name__)` (all under "builder"); nothing is shown
until a command opens `console(stream)`, which puts one `Console` handler on "builder":

    plain   one line per message, as it is worded (`warning: ...`, `error: ...`): in CI
            (`CI` set) and when the stream is not a terminal
    live    the same lines, and under them one line redrawn in place while a long task
            runs (`Progress`: record, a cold render): done/total, what is running,
            elapsed, and an estimate of what is left

Everything it writes goes through builder/core/escape.py: messages as `terminal` text, the
progress line as `one_line` names, so a lesson id holding an escape sequence or a newline
shows it escaped and can neither act on the terminal nor break the line.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TextIO

from .escape import one_line, terminal, write_control

TICK_SECONDS = 1.0  # how often the live line is redrawn (its elapsed time moves)
REDRAW_SECONDS = 0.1  # at most this often on its own steps (a render makes 1,000s a second)
logger = logging.getLogger(__name__)


class Progress:
    """A long task's progress: `step()` as items finish (`finished`, by name) or as a count
    (`done`), each a log record that a live console draws as its progress line and a plain
    one drops. `order`: the items' names in the order they start, `slots` of them at once
    (the running ones are the first `slots` not finished); `costs`: each item's last run
    time in seconds, for the estimate (without them: the pace so far)."""

    def __init__(
        self,
        what: str,
        order: Sequence[str],
        slots: int = 1,
        costs: Mapping[str, float] | None = None,
    ) -> None:
        self.what, self.order, self.slots = what, list(order), max(1, slots)
        known = [costs[name] for name in self.order if name in costs] if costs else []
        untimed = sum(known) / len(known) if known else 0.0
        self.costs = {n: costs.get(n, untimed) for n in self.order} if known and costs else None
        self.finished: set[str] = set()
        self.done = 0
        self.started = time.monotonic()
        self.over = False

    def __enter__(self) -> Progress:
        self._tell()
        return self

    def __exit__(self, *exc: object) -> None:
        self.over = True
        self._tell()

    def step(self, finished: str | None = None, done: int | None = None) -> None:
        """One item finished (`finished`), or `done` of them so far (the first `done` of
        `order` taken as finished)."""
        if finished is not None:
            self.finished.add(finished)
        self.done = len(self.finished) if done is None else min(done, len(self.order))
        self._tell()

    def _tell(self) -> None:
        logger.info("%s", self.what, extra={"progress": self})

    def _running(self) -> list[str]:
        if self.finished:
            return [n for n in self.order if n not in self.finished][: self.slots]
        return self.order[self.done : self.done + self.slots]

    def _left(self, elapsed: float) -> float | None:
        if self.costs is not None:
            left = [self.costs[n] for n in self.order if n not in self.finished]
            return sum(left) / self.slots
        if self.done == 0:
            return None
        return elapsed / self.done * (len(self.order) - self.done)

    def line(self, width: int = 0) -> str:
        """'recording 3/19 · performance-05 (+1) · 0:12 elapsed, ~0:40 left', every name
        one_line, cut to `width` characters (0: not cut)."""
        elapsed = time.monotonic() - self.started
        running = [n for n in self._running() if n]
        parts = [f"{self.what} {self.done}/{len(self.order)}"]
        if running:
            more = f" (+{len(running) - 1})" if len(running) > 1 else ""
            parts.append(one_line(running[0][:60]) + more)
        left = self._left(elapsed)
        parts.append(f"{clock(elapsed)} elapsed" + (f", ~{clock(left)} left" if left else ""))
        text = "  " + " · ".join(parts)
        return text[: width - 1] + "…" if width and len(text) > width else text


class Console(logging.Handler):
    """The CLI's one handler: each message a line of `terminal` text (a traceback after it,
    if it carries one); with `live`, the progress line of the task running redrawn under
    them, every TICK_SECONDS and at each step."""

    def __init__(self, stream: TextIO, live: bool) -> None:
        super().__init__(logging.INFO)
        self.stream, self.live = stream, live
        self.progress: Progress | None = None
        self.drawn = 0.0  # when the progress line was last drawn (0: not on screen)
        self.stopping = threading.Event()
        self.ticker: threading.Thread | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            progress = getattr(record, "progress", None)
            if isinstance(progress, Progress):
                self._follow(progress)
                return
            self._clear()
            self.stream.write(terminal(self.format(record)) + "\n")
            self._draw()
            self.stream.flush()
        except Exception:
            self.handleError(record)

    def _follow(self, progress: Progress) -> None:
        if not self.live:
            return
        if progress.over:
            if progress is self.progress:
                self._clear()
                self.progress = None
            return
        if progress is not self.progress or time.monotonic() - self.drawn >= REDRAW_SECONDS:
            self.progress = progress
            self._draw()
            self._tick()

    def _draw(self) -> None:
        if self.progress is None:
            return
        width = shutil.get_terminal_size().columns
        write_control(self.stream, "\r\033[K")
        self.stream.write(one_line(self.progress.line(width)))
        self.stream.flush()
        self.drawn = time.monotonic()

    def _clear(self) -> None:
        if self.drawn:
            write_control(self.stream, "\r\033[K")
            self.drawn = 0.0

    def _tick(self) -> None:
        """A thread that redraws the progress line every TICK_SECONDS, while there is one."""
        if self.ticker is not None:
            return

        def redraw() -> None:
            while not self.stopping.wait(TICK_SECONDS):
                self.acquire()
                try:
                    if self.progress is not None:
                        self._draw()
                finally:
                    self.release()

        self.ticker = threading.Thread(target=redraw, name="progress", daemon=True)
        self.ticker.start()

    def close(self) -> None:
        self.stopping.set()
        if self.ticker is not None:
            self.ticker.join()
        self.acquire()
        try:
            self.progress = None
            self._clear()
            self.stream.flush()
        finally:
            self.release()
        super().close()


def live(stream: TextIO) -> bool:
    """A progress line goes to a terminal, and not in CI (whose log shows every redraw)."""
    return not os.environ.get("CI") and stream.isatty()


@contextmanager
def console(stream: TextIO) -> Iterator[Console]:
    """What the builder logs shown on `stream` while the block runs (the CLI's handler)."""
    root = logging.getLogger("builder")
    handler = Console(stream, live(stream))
    saved = root.level, root.propagate
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    root.propagate = False  # shown once, here, whatever a library set up on the root logger
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        root.propagate = saved[1]
        handler.close()


def clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds + 0.5), 60)
    return f"{minutes}:{rest:02d}"
