"""What the preview's open pages are told (builder/preview/serve.py streams it to each over
Server-Sent Events): the files that changed, the build's errors, the re-recording failures
by lesson and the pages being re-recorded; and each page, when its own file changed, what
to do about it (`page_update`): swap in its new <main> and title, or reload. What a page
is made of is data its template left (builder.core.artifact.Parts): no HTML is read here."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..core.artifact import Parts
from ..core.errors import BuildError, BuildErrors

# Messages a page's stream holds that it has not been sent: one that cannot keep up (a slow
# or stopped reader) is told to reload instead of holding every page's new <main> in memory.
BACKLOG = 32

Problem = dict[str, Any]  # {"file", "line", "message"}: what the overlay shows
Update = dict[str, Any]  # {"main", "title"}: swapped in place; {"reload": True}
Served = tuple[bytes, Parts | None]  # a page's file as served, and its parts
Updates = Callable[[str], Update | None]  # a page's name -> what it is told to do


class Hub:
    """What the open pages are told: the build's errors, the re-recording failures by
    lesson, the pages being re-recorded; every message goes to every page's stream, with
    what that page (named when it subscribed) does about its own file."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.streams: dict[queue.Queue[str | None], str] = {}  # -> the page it shows
        self.errors: list[Problem] = []
        self.record_errors: dict[str, list[Problem]] = {}
        self.recording: list[str] = []
        # The build the served files are from, stamped on each page served: a page that
        # subscribes after a later build (or to a restarted server) reloads.
        self.build = time.time_ns() // 1_000_000

    def subscribe(self, page: str = "", build: int | None = None) -> queue.Queue[str | None]:
        stream: queue.Queue[str | None] = queue.Queue(BACKLOG)
        with self.lock:
            state = self._state(())
            if build is not None and build != self.build:
                state["page"] = {"reload": True}
            stream.put(_message(state))
            self.streams[stream] = page
        return stream

    def unsubscribe(self, stream: queue.Queue[str | None]) -> None:
        with self.lock:
            self.streams.pop(stream, None)

    def publish(
        self, changed: Iterable[str] = (), updates: Updates | None = None, **update: Any
    ) -> None:
        """Tell every page; `updates`: a new build is served, each open page whose file is
        in `changed` is told what to do with it. `update`: new values of `errors`,
        `record_errors`, `recording` (set under the lock: the recorder's thread updates
        them too)."""
        with self.lock:
            for name, value in update.items():
                setattr(self, name, value)
            changed = list(changed)
            state = self._state(changed)
            message = _message(state)
            told: dict[str, str] = {}
            if updates is not None:
                self.build += 1
                for page in {*self.streams.values()}.intersection(changed):
                    found = updates(page)
                    if found is not None:
                        told[page] = _message({**state, "page": found})
            behind = _message({**state, "page": {"reload": True}})
            for stream, page in self.streams.items():
                _tell(stream, told.get(page, message), behind)

    def state(self) -> dict[str, Any]:
        """What a page opened now is told."""
        with self.lock:
            return self._state(())

    def _state(self, changed: Iterable[str]) -> dict[str, Any]:
        errors = [*self.errors, *(e for found in self.record_errors.values() for e in found)]
        return {"changed": list(changed), "errors": errors, "recording": list(self.recording)}

    def close(self) -> None:
        with self.lock:
            for stream in self.streams:
                _tell(stream, None, None)


def _tell(stream: queue.Queue[str | None], message: str | None, behind: str | None) -> None:
    """`message` into `stream`; a stream that is full is emptied and given `behind` instead
    (a reload: the page has missed messages)."""
    try:
        stream.put_nowait(message)
    except queue.Full:
        with contextlib.suppress(queue.Empty):  # its reader may take the last one first
            while True:
                stream.get_nowait()
        stream.put_nowait(behind)  # only the hub puts, under its lock: there is room now


def _message(state: dict[str, Any]) -> str:
    return f"event: state\ndata: {json.dumps(state)}\n\n"


def page_update(old: Served | None, new: Served | None, *, reload: bool = False) -> Update | None:
    """What an open page does when its file went from `old` to `new`: nothing if it is the
    same; its new <main> and title, swapped in place, when its frame is the same (what its
    template placed outside them but its description and link-preview metas: a lesson's
    prose or recording changed); else (a template, the page's <head> or navigation, a page
    whose template has no parts, or `reload` asked) a reload."""
    if old == new:
        return None
    if reload or old is None or new is None:
        return {"reload": True}
    (_, before), (page, after) = old, new
    if before is None or after is None or before.frame != after.frame:
        return {"reload": True}
    start, end = after.main
    return {"main": page[start:end].decode("utf-8", "replace"), "title": after.title}


def problems(error: BaseException) -> list[Problem]:
    """What the overlay shows of an error: each problem's file, line and message."""
    if isinstance(error, BuildErrors):
        return [p for each in error.errors for p in problems(each)]
    if not isinstance(error, BuildError):
        message = f"{type(error).__name__}: {error} (a builder bug: please report it)"
        return [{"file": "", "line": 0, "message": message}]
    hint = f"\n-> {error.hint}" if error.hint else ""
    return [{"file": error.path or "", "line": error.line, "message": error.message + hint}]
