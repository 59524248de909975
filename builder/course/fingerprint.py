"""Hashes of what a recording depends on.

contentHash = sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of

    {"lessonId": <id>,
     "example":  <sha256 of example.py, UTF-8 BOM dropped, CRLF/CR turned into LF>,
     "data":     {<file name>: <sha256 of its bytes>, ...},
     "env":      {<NAME>: <value>, ...}}

rendererHash = sha256 of the canonical JSON of {<harness file name>: <sha256 of it, line
endings normalized>} for the files that run inside the example's process, and, from run
protocol 2 on, {"protocol": <RUN_PROTOCOL>}.

Prose is not an input: editing it never makes a recording stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # standard library only at run time
    from .files import Reads
    from .model import Lesson

# What runs inside the example's process, by the names they had when recordings were first
# made (a move of the file changes no recording; a change to its code does).
HARNESS_FILES = (
    ("harness.py", ("run", "harness.py")),
    ("panels.py", ("panels.py",)),
    ("cells.py", ("cells.py",)),
    ("figures.py", ("run", "figures.py")),
)
# How an example is run, where that is not in the files above: the environment it gets
# (builder/run/environment.py), the interpreter's flags and the supervisor that starts it.
# Bump it when a change there could change what an example prints: every recording then goes
# stale(harness), and the release says so (docs/ci.md, Releases). Protocol 1 adds nothing to the
# hash, so the recordings made before it had a number stay fresh.
RUN_PROTOCOL = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalize_source(data: bytes) -> bytes:
    """The bytes that are hashed for a source file: no BOM, LF line endings."""
    return data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def lesson_inputs(lesson: Lesson) -> dict[str, Any]:
    """Every input that can change what the example prints, each hashed on its own."""
    return inputs(lesson.id, lesson.source, lesson.folder, lesson.meta.data, lesson.meta.env)


def inputs(
    lesson_id: str, source: bytes, folder: Path | str, data: Iterable[str], env: Mapping[str, str]
) -> dict[str, Any]:
    """lesson_inputs from the parts: the example's UTF-8 bytes (BOM dropped), data names, env."""
    return {
        "lessonId": lesson_id,
        "example": sha256(normalize_source(source)),
        "data": {name: file_sha256(Path(folder, name)) for name in data},
        "env": dict(env),
    }


def file_sha256(path: Path, reads: Reads | None = None) -> str:
    """Streamed: a data file may be large (weights), and is never held in memory whole;
    read as every input is (builder.course.files.open_input, noted into `reads`)."""
    from .files import open_input

    with open(open_input(path, reads=reads), "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def content_hash(inputs: dict[str, Any]) -> str:
    return sha256(canonical(inputs))


def renderer_hash() -> str:
    builder = Path(__file__).parents[1]
    files: dict[str, str | int] = {
        name: sha256(normalize_source(builder.joinpath(*where).read_bytes()))
        for name, where in HARNESS_FILES
    }
    if RUN_PROTOCOL > 1:
        files["protocol"] = RUN_PROTOCOL
    return sha256(canonical(files))


def changed_inputs(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Name the inputs that differ: 'the example', 'data file x.npy', 'setting XLA_FLAGS'."""
    changes = []
    if old.get("lessonId") != new["lessonId"]:
        changes.append("the lesson id")
    if old.get("example") != new["example"]:
        changes.append("the example")
    changes += _changed_keys(old.get("data") or {}, new["data"], "data file")
    changes += _changed_keys(old.get("env") or {}, new["env"], "setting")
    return changes


def _changed_keys(old: dict[str, Any], new: dict[str, Any], what: str) -> list[str]:
    return [
        f"{what} {key}" for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)
    ]
