"""What the preview's open pages are told (builder/preview/serve.py streams it to each over
Server-Sent Events): the files that changed, the build's errors, the re-recording failures
by lesson and the pages being re-recorded."""

from __future__ import annotations

import json
import queue
import re
import threading
from collections.abc import Iterable
from typing import Any

from ..core.errors import BuildError, BuildErrors

_LINE = re.compile(r"line (\d+): (.*)", re.DOTALL)

Problem = dict[str, Any]  # {"file", "line", "message"}: what the overlay shows


class Hub:
    """What the open pages are told: the build's errors, the re-recording failures by
    lesson, the pages being re-recorded; every message goes to every page's stream."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.streams: list[queue.Queue[str | None]] = []
        self.errors: list[Problem] = []
        self.record_errors: dict[str, list[Problem]] = {}
        self.recording: list[str] = []

    def subscribe(self) -> queue.Queue[str | None]:
        stream: queue.Queue[str | None] = queue.Queue()
        with self.lock:
            stream.put(self._message(()))
            self.streams.append(stream)
        return stream

    def unsubscribe(self, stream: queue.Queue[str | None]) -> None:
        with self.lock:
            if stream in self.streams:
                self.streams.remove(stream)

    def publish(self, changed: Iterable[str] = (), **update: Any) -> None:
        """Tell every page; `update`: new values of `errors`, `record_errors`, `recording`
        (set under the lock: the recorder's thread updates them too)."""
        with self.lock:
            for name, value in update.items():
                setattr(self, name, value)
            message = self._message(changed)
            for stream in self.streams:
                stream.put(message)

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
                stream.put(None)

    def _message(self, changed: Iterable[str]) -> str:
        return f"event: state\ndata: {json.dumps(self._state(changed))}\n\n"


def problems(error: BaseException) -> list[Problem]:
    """What the overlay shows of an error: each problem's file, line and message."""
    if isinstance(error, BuildErrors):
        return [p for each in error.errors for p in problems(each)]
    if not isinstance(error, BuildError):
        message = f"{type(error).__name__}: {error} (a builder bug: please report it)"
        return [{"file": "", "line": 0, "message": message}]
    line, message = 0, error.problem
    found = _LINE.fullmatch(message)
    if found:
        line, message = int(found.group(1)), found.group(2)
    hint = f"\n-> {error.hint}" if error.hint else ""
    return [{"file": error.path or "", "line": line, "message": message + hint}]
