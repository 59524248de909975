"""Runs inside the example's own process and turns the run into recording data.

    python -m builder.run.harness LESSON_ID SOURCE RESULT_FD

compiles SOURCE under the stable name `<LESSON_ID>-example` (so positions JAX prints read
`performance-05-example:14:20` on every machine), runs it as `__main__` in the current
working directory, waits for its threads and runs its atexit hooks (as a run by hand
would), and writes how it ended and the panels it emitted once to the pipe RESULT_FD. Then
it flushes stdio and leaves with os._exit: nothing the example left behind writes after
the result. RESULT_FD is not inherited by the example's subprocesses (a guard against
accidents, not against an example that sets out to write there: everything sent here is
the example's own output, which it could print anyway). What the recording says about the
machine is not measured here but by builder/run/probe.py, a process the example cannot
reach. The example's stdout is left alone: it is the recording.

This file and panels.py are hashed into every recording's rendererHash: keep them small
and stable. Standard library only.
"""

from __future__ import annotations

import atexit
import json
import linecache
import os
import sys
import threading
import traceback
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
    _count_printed()
    try:
        exec(compile(source, name, "exec", dont_inherit=True), namespace)
    except SystemExit as stop:
        return _exit_code(stop.code)
    except BaseException as error:  # the example's own failure, shown as its traceback
        _print_example_traceback(error)
        return "raised"
    return "ok"


def _count_printed() -> None:
    """Count the characters written to sys.stdout, so a timing the example formats
    (panels.timing) says how much had been printed before it: the builder finds it in
    stdout from there. Writes that bypass sys.stdout are not counted (a lower bound)."""
    stdout, count = sys.stdout, [0]
    write = stdout.write

    def counted(text: str) -> int:
        written = write(text)
        count[0] += len(text)
        return written

    try:
        stdout.write = counted  # type: ignore[method-assign]
    except AttributeError:  # not a file object that takes it: timings are found from the top
        return
    panels.printed = lambda: count[0]


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


def join_threads() -> None:
    """Wait for the example's non-daemon threads, as the interpreter does at exit."""
    while others := [
        t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon
    ]:
        for thread in others:
            thread.join()


def main(argv: list[str]) -> None:
    lesson_id, source_path, result_fd = argv
    channel = int(result_fd)
    os.set_inheritable(channel, False)
    outcome = run(lesson_id, source_path)
    join_threads()
    result: dict[str, Any] = {"outcome": outcome}
    if outcome == "ok":
        result["panels"] = panels.emitted
        result["timings"] = {"output": panels.timings, "panels": panels.timing_panels}
    atexit._run_exitfuncs()  # the example's hooks, now: none runs after the result
    body = json.dumps(result).encode()
    sys.stdout.flush()
    sys.stderr.flush()
    with open(channel, "wb") as pipe:
        pipe.write(body)
    os._exit(0 if outcome == "ok" else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
