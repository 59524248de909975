"""Runs inside the example's own process and turns the run into recording data.

    python -m builder.harness LESSON_ID SOURCE RESULT

compiles SOURCE under the stable name `<LESSON_ID>-example` (so positions JAX prints read
`performance-05-example:14:20` on every machine), runs it as `__main__` in the current
working directory, and writes the emitted panels and the environment, read inside this
process, to RESULT as JSON. The example's stdout is left alone: it is the recording.

This file and panels.py are hashed into every recording's rendererHash: keep them small
and stable. Standard library only, apart from reading jax's backend after the run.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import traceback
from importlib import metadata
from pathlib import Path
from typing import Any

from builder import panels


def run(lesson_id: str, source_path: str) -> str | int:
    """Run the example: 'ok', 'raised', or the exit code it asked for with sys.exit."""
    name = f"{lesson_id}-example"
    source = Path(source_path).read_text("utf-8-sig")
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    namespace = {"__name__": "__main__", "__file__": os.path.abspath(source_path)}
    sys.argv = [source_path]
    try:
        exec(compile(source, name, "exec", dont_inherit=True), namespace)
    except SystemExit as stop:
        return _exit_code(stop.code)
    except BaseException as error:  # the example's own failure, shown as its traceback
        _print_example_traceback(error)
        return "raised"
    return "ok"


def _exit_code(code: object) -> str | int:
    if code is None or code == 0:
        return "ok"
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_example_traceback(error: BaseException) -> None:
    """The traceback without this harness's own frame: it starts in the example."""
    sys.stdout.flush()
    lines = traceback.TracebackException.from_exception(error).format()
    frames = [line for line in lines if not line.startswith('  File "' + __file__)]
    sys.stderr.write("".join(frames))


def environment() -> dict[str, Any]:
    import jax  # read inside the example's process, after the example ran

    return {
        "backend": jax.default_backend(),
        "deviceCount": jax.device_count(),
        **{name: metadata.version(name) for name in ("jax", "numpy", "matplotlib")},
    }


def main(argv: list[str]) -> int:
    lesson_id, source_path, result_path = argv
    outcome = run(lesson_id, source_path)
    sys.stdout.flush()
    result: dict[str, Any] = {"outcome": outcome}
    if outcome == "ok":
        result |= {"panels": panels.emitted, "environment": environment()}
    Path(result_path).write_text(json.dumps(result), "utf-8")
    return 0 if outcome == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
