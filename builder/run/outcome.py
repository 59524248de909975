"""What one run of an example produced (`Execution`, whose `Outcome` names how it ended)
and the limits it ran under (`Limits`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

MAX_OUTPUT = 512 * 1024


class Outcome(enum.StrEnum):
    OK = "ok"
    RAISED = "raised an exception"
    EXITED = "exited with an error code"
    TIMEOUT = "timed out"
    TOO_MUCH_OUTPUT = "printed too much"
    BAD_OUTPUT = "printed something a recording cannot keep"
    BAD_PANEL = "emitted a panel that cannot be drawn"
    TOO_MANY_PANELS = "emitted more panels than a page shows"
    HARNESS = "the harness failed"
    INTERRUPTED = "interrupted"
    NOT_SAVED = "could not be saved"
    ESCAPED = "left a process running"
    BAD_DATA = "could not be staged"
    TAMPERED = "ran while a file the builder owns changed"
    WRONG_DEVICE = "ran on the wrong kind of device"
    REFUSED = "was refused by its worker"  # builder.run.distributed: versions differ
    LOST = "lost its worker"  # builder.run.distributed: the worker or the scheduler went away


@dataclass(frozen=True)
class Execution:
    """What one run of an example produced."""

    lesson_id: str
    outcome: Outcome
    seconds: float
    stdout: str = ""
    stderr: str = ""
    detail: str = ""
    panels: list[dict[str, Any]] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)  # the harness's, as it sent them
    cells: list[dict[str, Any]] | None = None  # the cells that ran; None: not in cells

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK


@dataclass(frozen=True)
class Limits:
    timeout: float
    sandbox: bool = False
    python: str = ""  # the interpreter the example runs in (`rehearse`'s side environment)
