"""The JSON Schemas of what a course is made of (`python -m builder schema`), and recording
files checked against theirs (`python -m builder validate`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from ..core.errors import BuildError
from ..core.escape import one_line
from ..core.fsutil import replaceable, write_atomic
from .model import json_schemas
from .recording import json_schema, read, read_bytes
from .rules import INPUTS_DIR


def validate_files(files: list[Path], out: TextIO) -> bool:
    """One line a file on `out` (valid, or what is wrong); whether every recording is valid.
    An `_inputs/` sidecar is skipped, so that `validate recordings/**/*.json` works."""
    failed = 0
    for path in files:
        if path.parent.name == INPUTS_DIR:
            print(f"{one_line(str(path))}: skipped: an inputs sidecar, not a recording", file=out)
            continue
        try:
            _, line = read(read_bytes(path), path)
            note = f" (not canonical from line {line}: `make record` writes it anew)" * bool(line)
            print(f"{one_line(str(path))}: valid{note}", file=out)
        except BuildError as error:
            failed += 1
            print(f"{one_line(str(path))}: {one_line(error.problem)}", file=out)
    return not failed


def write_schemas(folder: Path | None, file: Path | None, out: TextIO) -> None:
    """Every schema (recording, front matter, course.yml, glossary.yml) into `folder`; or the
    recording's into `file`; or on `out`."""
    if folder:
        schemas = {"recording.schema.json": json_schema(), **json_schemas()}
        for name in schemas:
            replaceable(folder / name)  # each checked before any is written
        for name, schema in schemas.items():
            write_atomic(folder / name, _text(schema).encode())
    elif file:
        write_atomic(file, _text(json_schema()).encode())
    else:
        out.write(_text(json_schema()))


def _text(schema: dict[str, object]) -> str:
    return json.dumps(schema, indent=2) + "\n"
