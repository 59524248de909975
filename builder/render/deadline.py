"""A page's render deadline: a template that loops for ever, or nested loops, stops with
Overtime. The watchdog thread raises it in the rendering thread, which the interpreter checks
between two steps of Python code, template loops included; so it holds in every thread and
forked worker that renders, at no cost per step (a single long C operation is bounded by
size instead: builder/render/sandbox.py)."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SECONDS = 5.0  # to render one page; the builder's take milliseconds


class Overtime(BaseException):
    """Raised in the rendering thread when its page is past its SECONDS."""


# The watchdog: the threads rendering a page, each with the time it must be done by.
_due: dict[int, float] = {}
_fired: set[int] = set()
_lock = threading.Lock()
TICK = 0.25  # seconds between the watchdog's looks: a page's SECONDS is kept to within it
_watching = [0]  # the process whose watchdog runs (a forked worker starts its own)


@contextmanager
def deadline(seconds: float | None = None) -> Iterator[None]:
    """The block, stopped with Overtime when it runs past `seconds` (SECONDS): the
    watchdog raises it in this thread, which the interpreter checks between two steps of
    Python code, template loops included (a single C operation is bounded by size)."""
    me = threading.get_ident()
    with _lock:
        if _watching[0] != os.getpid():
            _watching[0] = os.getpid()
            _due.clear()
            _fired.clear()
            threading.Thread(target=_watch, name="template-deadline", daemon=True).start()
        _due[me] = time.monotonic() + (SECONDS if seconds is None else seconds)
    try:
        yield
    finally:
        _leave(me)


def _leave(me: int) -> None:
    """This thread off the watchdog's list, and an Overtime raised but not yet seen taken
    back: none is raised outside its page. One that arrives here (the page was done just
    in time) is dropped."""
    while True:
        try:
            with _lock:
                _due.pop(me, None)
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
            for thread, due in _due.items():
                if due <= now and thread not in _fired:
                    _fired.add(thread)
                    _async_raise(thread, Overtime)


def _async_raise(thread: int, error: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread), ctypes.py_object(error) if error else None
    )
