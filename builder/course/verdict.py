"""What `check` says of the lessons' statuses: a table for people, JSON for tools, or one
GitHub Actions annotation per lesson that is not fresh, each naming the next step."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TextIO

from ..core.escape import json_text, one_line, workflow_command, write_command
from .rules import EXAMPLE_FILE
from .status import WAITING, LessonStatus

FORMATS = ("table", "json", "github")
FIXES = MappingProxyType(  # by state: the next step, as docs/recordings.md's table says it
    {
        "missing": "run `make record`",
        "stale(content)": "run `make record`",
        "stale(harness)": "run `make record FORCE=1`",
        "stale(environment)": "install the pinned versions (requirements.lock), or re-record",
        "invalid": "re-record it with `make record`",
        "not canonical": "re-record it with `make record`",
        "orphan": "delete the recording, or restore its lesson",
        "needs a GPU machine": "record it with `record --dask ADDRESS` on a cluster with a "
        "GPU worker (dask worker --resources GPU=1)",
        "needs a TPU machine": "record it on a TPU machine with `python -m builder record ID` "
        "(docs/recordings.md, Recording on a machine without network)",
    }
)


def passed(statuses: list[LessonStatus]) -> bool:
    """Every recording fresh (a lesson only a GPU or TPU machine can record does not fail it)."""
    return all(status.passes for status in statuses)


def say(statuses: list[LessonStatus], form: str, content: Path, out: TextIO) -> None:
    """The statuses in `form` (FORMATS) on `out`."""
    bad = [status for status in statuses if not status.passes]
    shown = [status for status in statuses if not status.fresh]  # and those needing a GPU
    if form == "json":
        print(json_text([_state(s) for s in statuses]), file=out)
    elif form == "github":
        for status in shown:
            write_command(out, _annotation(status, content))
        print(_verdict(bad, statuses), file=out)
    else:
        print(_table(shown) + _verdict(bad, statuses), file=out)


def _state(s: LessonStatus) -> dict[str, str]:
    return {"lessonId": s.lesson_id, "state": str(s.state), "detail": s.detail, "path": str(s.path)}


def _table(bad: list[LessonStatus]) -> str:
    if not bad:
        return ""
    ids = [one_line(s.lesson_id) for s in bad]
    width = max(len(lesson_id) for lesson_id in ids)
    rows = [
        f"{i:<{width}}  {s.state:<18}  {one_line(s.detail)}" for i, s in zip(ids, bad, strict=True)
    ]
    return "\n".join([f"{'lesson':<{width}}  {'state':<18}  detail", *rows, ""]) + "\n"


def _verdict(bad: list[LessonStatus], statuses: list[LessonStatus]) -> str:
    waiting = [status for status in statuses if status.waiting]
    if not bad and waiting:
        kinds = [kind for kind, state in WAITING.items() if any(s.state is state for s in waiting)]
        return (
            f"All {len(statuses) - len(waiting)} recordings are fresh; {len(waiting)} lesson(s) "
            f"need a {' or '.join(k.upper() for k in kinds)} machine to be recorded (requires: "
            f"{' or '.join(kinds)}), which this check does not count as a failure."
        )
    if not bad:
        return f"All {len(statuses)} recordings are fresh."
    return (
        f"{len(bad)} of {len(statuses)} recording(s) not fresh. Run `make record` to "
        "re-record them (orphans: delete the file or restore its lesson)."
    )


def _annotation(status: LessonStatus, content: Path) -> str:
    """A GitHub Actions `::error` line: on the example when the lesson's inputs changed or
    it was never recorded, else on the recording (at the status's line, if it has one)."""
    state = str(status.state)
    level = "warning" if status.passes else "error"
    on_example = state in ("missing", "stale(content)")
    path = content / "lessons" / status.lesson_id / EXAMPLE_FILE if on_example else status.path
    message = f"{status.detail}; {FIXES[state]}" if status.detail else FIXES[state]
    return workflow_command(
        level,
        message,
        file=str(path),
        line=str(status.line or 1),
        title=f"{status.lesson_id}: recording {state}",
    )
