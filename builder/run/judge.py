"""How a run ended, judged from what came back (its pipes, the supervisor's status, the
harness's one result message): an Execution that is OK, or one that names the problem.
What it printed is checked for this machine's paths and the builder's secrets
(builder/run/leaks.py) before it can become a recording."""

from __future__ import annotations

import contextlib
import json
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..course.model import Lesson
from ..course.rules import MAX_PANELS
from ..panels import MAX_BARS
from .environment import BUILDER_ROOT, child_environment
from .leaks import builder_secrets, leaked, redact
from .outcome import Execution, Outcome

MAX_RESULT = 16 * 1024 * 1024  # the panels, as JSON


@dataclass(frozen=True)
class Ran:
    """What came back from one run: its pipes, and an outcome decided on the way."""

    out: bytes
    err: bytes
    result: bytes
    status: bytes
    outcome: Outcome | None


def judge(lesson: Lesson, scratch: Path, ran: Ran, seconds: float) -> Execution:
    secrets = builder_secrets(child_environment(lesson, scratch))
    stderr = redact(ran.err.decode("utf-8", "replace"), secrets)  # shown in the failure summary

    def failed(outcome: Outcome, detail: str) -> Execution:
        return Execution(lesson.id, outcome, seconds, stderr=stderr, detail=detail)

    problem = _process_problem(ran, lesson.meta.timeout) or _result_problem(ran)
    if problem:
        return failed(*problem)
    result = json.loads(ran.result)
    if result["outcome"] == "raised":
        return failed(Outcome.RAISED, _last_line(stderr))
    if result["outcome"] != "ok":
        return failed(Outcome.EXITED, f"sys.exit({result['outcome']!r})")
    try:
        stdout = ran.out.decode("utf-8")
    except UnicodeDecodeError as error:
        return failed(
            Outcome.BAD_OUTPUT,
            f"stdout is not valid UTF-8 (byte {error.start}); print text, not raw bytes",
        )
    recorded = {"stdout": stdout}
    recorded |= {f"panel {n}": panel for n, panel in enumerate(result["panels"], 1)}
    cells = result.get("cells") if lesson.cells else None
    cells = _in_characters(cells, ran.out) if isinstance(cells, list) else None
    recorded |= {f"cell {_name(cell, n)}": cell for n, cell in enumerate(cells or (), 1)}
    folders = guarded_folders(lesson, scratch)
    leak = leaked(recorded, folders, secrets)
    if leak:
        return failed(Outcome.BAD_OUTPUT, leak)
    return Execution(
        lesson.id,
        Outcome.OK,
        seconds,
        stdout=stdout,
        stderr=stderr,
        panels=result["panels"],
        timings=result.get("timings") if isinstance(result.get("timings"), dict) else {},
        cells=cells,
    )


def _name(cell: object, number: int) -> str:
    name = cell.get("name") if isinstance(cell, dict) else None
    return repr(name) if isinstance(name, str) else str(number)


def _in_characters(cells: list[Any], out: bytes) -> list[Any]:
    """The harness counts each cell's part of stdout in bytes (all that reached fd 1); the
    recording keeps characters of the decoded text."""
    chars: dict[int, int] = {}

    def at(offset: object) -> object:
        if type(offset) is not int or not 0 <= offset <= len(out):
            return offset  # not the harness's: result.py and validation say what is wrong
        if offset not in chars:
            chars[offset] = len(out[:offset].decode("utf-8", "replace"))
        return chars[offset]

    return [
        cell | {"start": at(cell.get("start")), "end": at(cell.get("end"))}
        if isinstance(cell, dict)
        else cell
        for cell in cells
    ]


def guarded_folders(lesson: Lesson, scratch: Path) -> list[Path]:
    """The folders of this machine no recording may name: the run's scratch folder, the
    course, the checkout around it (recordings/ is in it), the builder's, and the folder
    the builder was started in (where a relative --recordings is); those two only when
    two levels deep or more: "/src" turns up inside honest relative paths ("a/src/b")."""
    content = lesson.folder.resolve().parent.parent
    around = [folder for folder in (content.parent, Path.cwd()) if len(folder.parts) > 2]
    return [scratch, content, BUILDER_ROOT, *around]


def _process_problem(ran: Ran, timeout: float) -> tuple[Outcome, str] | None:
    """How the run's processes failed (timed out, flooded stdout, outlived it), or None."""
    if ran.outcome is Outcome.TIMEOUT:
        return ran.outcome, f"killed after {timeout:g} s"
    if ran.outcome is Outcome.TOO_MUCH_OUTPUT:
        return ran.outcome, f"more than {len(ran.out) // 1024} KiB on stdout; killed"
    if ran.outcome is Outcome.TOO_MANY_PANELS:
        return ran.outcome, (
            f"its panels came to more than {MAX_RESULT // 2**20} MiB; a lesson shows at most "
            f"{MAX_PANELS} panels of {MAX_BARS} bars"
        )
    status = _read_json(ran.status)
    if status is None:
        return Outcome.ESCAPED, (
            "the process supervising the run was killed, so the processes the example "
            "started may still be running; the builder cannot stop them"
        )
    if status.get("left"):
        return Outcome.ESCAPED, (
            f"{len(status['left'])} process(es) it started could not be ended "
            f"(pid {', '.join(map(str, status['left']))}); the builder cannot stop them"
        )
    if ran.outcome is Outcome.ESCAPED:
        return ran.outcome, (
            "a process it started is no longer below the builder's supervisor and still "
            "holds its output; the builder cannot stop it"
        )
    if not ran.result:
        return Outcome.HARNESS, _ended(status.get("returncode"))
    return None


def _ended(code: object) -> str:
    """Why the example's process ended before the run finished, from its exit status (a
    negative one is the signal that killed it, named)."""
    if code == -signal.SIGXFSZ:
        return (
            "a file it wrote reached the file size limit (ulimit -f) and the process was "
            "stopped (SIGXFSZ); raise the limit, or write less"
        )
    if isinstance(code, int) and code < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-code).name
            return f"the example's process was killed by {name} before the run finished"
    return f"the example's process ended (exit status {code}) before the run finished"


def _result_problem(ran: Ran) -> tuple[Outcome, str] | None:
    """The result pipe holds exactly one message of the harness's shape, or the run fails."""
    result = _read_json(ran.result)
    if result is None or (result.get("outcome") == "ok" and not _well_formed(result)):
        return Outcome.HARNESS, (
            "something other than the harness wrote to the harness's result channel; an "
            "example must not write to file descriptors it did not open"
        )
    return None


def _well_formed(result: dict[str, Any]) -> bool:
    """The example can reach `panels.emitted` and put anything in it."""
    return isinstance(result.get("panels"), list)


def _read_json(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""
