"""The preview's process and Python's cyclic garbage collector (builder/preview/serve.py).

What the build keeps in memory between edits (every lesson, status and artifact: a hundred
and more objects the collector tracks a lesson) is garbage to none, yet the collector walks
all of it whenever its oldest generation fills, about once a refresh, which then costs more
than the refresh's own work, and a refresh's own young objects a few more times. So:

    set_aside()  at each pause, once site/ is written: everything alive set aside from the
                 collector (gc.freeze, which costs nothing)
    kept()       a second later, if no edit came: what was set aside is collected with the
                 rest (a full collection: an edit landing then would wait for it), then
                 set aside again; no cycle outlives a long pause
    paused()     a refresh of a few lessons runs with the collector off, and it runs once
                 the pages are told (the next allocation after); a template or course.yml
                 edit, which renders every page (in forked workers, which inherit the
                 setting), keeps it on
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def set_aside() -> None:
    gc.freeze()


def kept() -> None:
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@contextlib.contextmanager
def paused(when: bool = True) -> Iterator[None]:
    """The collector off inside the block (if it was on and `when`)."""
    was = gc.isenabled()
    if when and was:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def given_back() -> None:
    """What was set aside, back to the collector (the preview closes)."""
    gc.unfreeze()
