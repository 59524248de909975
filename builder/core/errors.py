"""One family of errors, each naming the file, the problem and the next step.

The CLI prints a BuildError's message without a traceback and exits non-zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .escape import one_line


class BuildError(Exception):
    """A problem the user can fix; `str()` is the whole message. `line`: the line of `path`
    it is at (0: none), a field, so that what shows it (the preview's overlay) reads it
    rather than the message; `problem` says it ("line 12: ..."), `message` does not."""

    def __init__(
        self, message: str, *, path: Path | str | None = None, hint: str = "", line: int = 0
    ) -> None:
        self.path = str(path) if path is not None else None
        self.message, self.line = message, line
        self.problem = f"line {line}: {message}" if line else message
        self.hint = hint
        where = f"{one_line(self.path)}: " if self.path else ""  # a newline names no line
        super().__init__(f"{where}{self.problem}" + (f"\n  -> {hint}" if hint else ""))

    def __reduce__(self) -> tuple[object, ...]:  # for errors sent back by worker processes
        return (_revive, (type(self), self.message, self.path, self.hint, self.line))


class ContentError(BuildError):
    """A lesson, the course file or the glossary is not valid."""


class RecordingError(BuildError):
    """A recording file cannot be read or does not follow the schema."""


class RenderError(BuildError):
    """A lesson's prose refers to something that does not exist."""


class ExecutionError(BuildError):
    """One or more examples failed to run; the previous recordings are untouched."""


class BuildErrors(BuildError):
    """Several problems found in one pass, reported together."""

    def __init__(self, errors: Iterable[BuildError], hint: str = "") -> None:
        self.errors = list(errors)
        lines = [str(error) for error in self.errors]
        super().__init__(f"{len(self.errors)} problem(s):\n" + "\n".join(lines), hint=hint)

    def __reduce__(self) -> tuple[object, ...]:
        return (BuildErrors, (self.errors, self.hint))


def _revive(
    kind: type[BuildError], message: str, path: str | None, hint: str, line: int = 0
) -> BuildError:
    return kind(message, path=path, hint=hint, line=line)


def raise_all(errors: list[BuildError]) -> None:
    """Raise the single error, or all of them together; do nothing when there are none."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise BuildErrors(errors)


def os_error_message(error: OSError) -> str:
    """An OSError no command turned into a BuildError, in one line and a next step: the
    disk is blamed only when a file is named."""
    if error.filename:  # a file the builder could not read or write
        return (
            f"error: {one_line(str(error.filename))}: {error.strerror or error}\n"
            "  -> check that the path exists, that you may read and write it, and that the "
            "disk is not full"
        )
    return (
        f"error: {error.strerror or error} ({type(error).__name__}, no file involved)\n"
        "  -> run the command again; if it fails the same way, report it with the command"
    )
