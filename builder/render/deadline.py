"""A page's render deadline: a template that loops for ever, or nested loops, stops with
Overtime; and a build's: the pages made with a course's templates (all of them, in each
process that renders) stop with OverBudget past BUILD_SECONDS, however many pages a slow
template slows. The watchdog thread raises it in the rendering thread, which the
interpreter checks between two steps of Python code, template loops included; so it holds
in every thread and forked worker that renders, at no cost per step (a single long C
operation is bounded by size instead: builder/render/sandbox.py). Prose has its own
deadline (builder/render/prose.py)."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SECONDS = 5.0  # to render one page; the builder's take milliseconds
BUILD_SECONDS = 20.0  # a build's pages made with a course's templates, in each process


class Overtime(BaseException):
    """Raised in the rendering thread when its page is past its SECONDS."""


class OverBudget(Overtime):
    """Raised in the rendering thread when the build's pages have used BUILD_SECONDS."""


# The watchdog: the threads rendering a page, each with the time it must be done by and
# what it raises then.
_due: dict[int, tuple[float, type[Overtime]]] = {}
_budget: list[float | None] = [None]  # seconds left to this build's pages, in this process
_fired: set[int] = set()
_lock = threading.Lock()
TICK = 0.25  # seconds between the watchdog's looks: a page's SECONDS is kept to within it
_watching = [0]  # the process whose watchdog runs (a forked worker starts its own)


@contextmanager
def build_budget(seconds: float | None = None) -> Iterator[None]:
    """Inside the block (a build's rendering), the `budgeted` deadlines of each process
    take at most `seconds` (BUILD_SECONDS) in all; forked workers start with what is left."""
    _budget[0] = BUILD_SECONDS if seconds is None else seconds
    try:
        yield
    finally:
        _budget[0] = None


@contextmanager
def deadline(seconds: float | None = None, budgeted: bool = False) -> Iterator[None]:
    """The block, stopped with Overtime when it runs past `seconds` (SECONDS): the
    watchdog raises it in this thread, which the interpreter checks between two steps of
    Python code, template loops included (a single C operation is bounded by size).
    `budgeted`: its time counts against the build's budget, and past that it stops with
    OverBudget. Within another deadline, the earlier of the two holds."""
    me, start = threading.get_ident(), time.monotonic()
    due = start + (SECONDS if seconds is None else seconds)
    kind: type[Overtime] = Overtime
    if budgeted and _budget[0] is not None and start + _budget[0] < due:
        due, kind = start + max(_budget[0], 0.0), OverBudget
    with _lock:
        if _watching[0] != os.getpid():
            _watching[0] = os.getpid()
            _due.clear()
            _fired.clear()
            threading.Thread(target=_watch, name="template-deadline", daemon=True).start()
        outer = _due.get(me)
        _due[me] = min(outer, (due, kind), key=lambda x: x[0]) if outer else (due, kind)
    try:
        yield
    finally:
        _leave(me, outer)
        if budgeted and _budget[0] is not None:
            _budget[0] -= time.monotonic() - start


def _leave(me: int, outer: tuple[float, type[Overtime]] | None) -> None:
    """This thread off the watchdog's list (back to the `outer` deadline, if any), and an
    Overtime raised but not yet seen taken back: none is raised outside its page. One that
    arrives here (the page was done just in time) is dropped."""
    while True:
        try:
            with _lock:
                _due.pop(me, None)
                if outer:
                    _due[me] = outer
                if me in _fired:
                    _fired.discard(me)
                    _async_raise(me, None)
            return
        except Overtime:
            continue


def _watch() -> None:
    """Look every TICK, so a page waits for nothing: a wake-up per page would cost every
    page its thread switches."""
    while True:
        time.sleep(TICK)
        with _lock:
            now = time.monotonic()
            for thread, (due, kind) in _due.items():
                if due <= now and thread not in _fired:
                    _fired.add(thread)
                    _async_raise(thread, kind)


def _async_raise(thread: int, error: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread), ctypes.py_object(error) if error else None
    )
