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

An example in cells (builder/cells.py) runs cell by cell in one namespace, as a notebook's
kernel would: each cell's place in stdout, the repr of its last expression (as IPython
shows it) or the exception it was declared to raise goes into the result as `cells`. A
`show` cell does not run; a `timeit` cell is timed as IPython's %timeit times it. The
matplotlib figures a cell drew become panels (builder/run/figures.py), listed with the cell.

This file, figures.py, cells.py and panels.py are hashed into every recording's
rendererHash: keep them small and stable. Standard library only (figures.py reads matplotlib
only where the example imported it).
"""

from __future__ import annotations

import array
import ast
import atexit
import fcntl
import io
import json
import linecache
import math
import os
import select
import sys
import termios
import threading
import timeit
import tokenize
import traceback
from pathlib import Path
from typing import Any

from builder import cells, panels
from builder.run import figures


def run(lesson_id: str, source_path: str, ran: list[dict[str, Any]], relays: Relays) -> str | int:
    """Run the example: 'ok', 'raised', or the exit code it asked for with sys.exit; the
    cells that ran are appended to `ran`, their parts of stdout counted in bytes at fd 1
    (`Relay`), so what a subprocess or C code writes there falls to the cell that wrote it."""
    name = f"{lesson_id}-example"
    source = Path(source_path).read_text("utf-8-sig")
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    namespace = {"__name__": "__main__", "__file__": os.path.abspath(source_path)}
    sys.argv = [source_path]
    _count_printed()
    try:
        parts = cells.parse(source)
        if not parts:
            exec(compile(source, name, "exec", dont_inherit=True), namespace)
            figures.capture("example.py", None, True, lesson_id)
        relay = relays.make() if parts else None
        for cell in parts:
            if relay and not cell.show:
                ran.append(_run_cell(cell, name, namespace, relay))
    except SystemExit as stop:
        return _exit_code(stop.code)
    except (CellDidNotRaise, figures.FigureError) as error:
        print(error, file=sys.stderr)
        return "raised"
    except BaseException as error:  # the example's own failure, shown as its traceback
        _print_example_traceback(error)
        return "raised"
    return "ok"


def _run_cell(
    cell: cells.Cell, name: str, namespace: dict[str, Any], relay: Relay
) -> dict[str, Any]:
    """Run one cell in the example's namespace: its stdout's place, its last expression's
    repr (as IPython shows it), or the exception it was declared to raise."""
    try:
        tree = compile(cell.code, name, "exec", ast.PyCF_ONLY_AST, True)
        assert isinstance(tree, ast.Module)
    except SyntaxError as error:
        error.lineno = (error.lineno or 0) + cell.line  # a line of the whole file
        error.end_lineno = (error.end_lineno or 0) + cell.line
        raise
    ast.increment_lineno(tree, cell.line)  # positions read as lines of the whole file
    record: dict[str, Any] = {"name": cell.name, "start": relay.position()}
    value: Any = None
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr) or cell.timeit or _quiet(cell.code):
        last = None  # no value to show: the cell runs whole
    else:
        tree.body.pop()
    try:
        if cell.timeit:
            print(_timeit(tree, name, namespace))
        else:
            exec(compile(tree, name, "exec", dont_inherit=True), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
                record |= _value(value, cell)
    except Exception as error:
        if cell.raises is None or not _is(error, cell.raises):
            if cell.raises is not None:
                said = f"cell {cell.name!r} raised {type(error).__name__}, not {cell.raises}"
                error.add_note(f"{said} (raises={cell.raises})")
            raise
        message = _bounded(figures.plain(str(error)), cell, "its exception's message")
        record["raised"] = {"type": _type_name(error), "message": message}
    else:
        if cell.raises is not None:
            said = f"raises={cell.raises}" if cell.raises else "raises"
            raise CellDidNotRaise(f"cell {cell.name!r} ({said}) did not raise")
    record["end"] = relay.position()
    record |= _drew(cell, value, name.removesuffix("-example"))
    keys = ("name", "start", "end", "value", "raised", "panels")
    return {k: record[k] for k in keys if k in record}


class Relays:
    """The Relay made for an example in cells, if one was."""

    def __init__(self) -> None:
        self.found: list[Relay] = []

    def make(self) -> Relay:
        self.found.append(Relay())
        return self.found[0]


class Relay:
    """fd 1 made a pipe that this process forwards to the real stdout, counting the bytes:
    `position()` is how many every writer (print, sys.stdout.buffer, a subprocess, C code
    that flushed) had written by then, all of them forwarded. A daemon thread forwards
    while a cell runs, so a cell that prints more than a pipe holds never blocks."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self.real = os.dup(1)  # not inherited: the example's subprocesses write to the pipe
        self.read, write = os.pipe()
        os.dup2(write, 1)
        os.close(write)
        os.set_blocking(self.read, False)
        self.count = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while select.select([self.read], [], [])[0]:
            with self.lock:
                if not self._forward():
                    return

    def _forward(self) -> bool:
        """What the pipe holds, forwarded; False at its end."""
        try:
            data = os.read(self.read, 1 << 16)
        except BlockingIOError:
            return True
        view = memoryview(data)
        while view:
            view = view[os.write(self.real, view) :]
        self.count += len(data)
        return bool(data)

    def position(self) -> int:
        sys.stdout.flush()
        waiting = array.array("i", [0])
        with self.lock:
            while fcntl.ioctl(self.read, termios.FIONREAD, waiting) == 0 and waiting[0]:
                self._forward()
            return self.count


class CellDidNotRaise(Exception):
    """A cell declared `raises` finished without raising."""


class CellTooLong(Exception):
    """A cell's value or exception message is longer than a recording keeps."""


def _value(value: Any, cell: cells.Cell) -> dict[str, Any]:
    """The cell's value as the recording holds it: none for None or a figure (the figure is
    its output), else its repr without memory addresses (figures.plain)."""
    if value is None or figures.is_figure(value):
        return {}
    return {"value": _bounded(figures.plain(repr(value)), cell, "the repr of its last expression")}


def _drew(cell: cells.Cell, value: Any, lesson_id: str) -> dict[str, Any]:
    """The panels of the figures the cell drew (figures.capture), if it drew any."""
    numbers = figures.capture(cell.name, value, not cell.nofigure, lesson_id)
    return {"panels": numbers} if numbers else {}


def _bounded(text: str, cell: cells.Cell, what: str) -> str:
    if len(text) > cells.MAX_VALUE:
        raise CellTooLong(
            f"cell {cell.name!r}: {what} is {len(text):,} characters, over the "
            f"{cells.MAX_VALUE:,} a recording keeps; end the line with ; or show less"
        )
    return text


def _is(error: BaseException, expected: str) -> bool:
    """`error` is an instance of the class named `expected` (by name or module.name), or of
    any Exception when `expected` is ""."""
    if not expected:
        return True
    return any(
        expected in (k.__name__, f"{k.__module__}.{k.__qualname__}") for k in type(error).__mro__
    )


def _type_name(error: BaseException) -> str:
    """The exception's class as a traceback's last line names it."""
    kind = type(error)
    module = kind.__module__
    return (
        kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"
    )


_UNSEEN = frozenset(
    (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT)
) | {tokenize.DEDENT}


def _quiet(code: str) -> bool:
    """The cell's last statement ends with `;`: IPython shows no value."""
    readline = io.StringIO(code).readline
    tokens = [t for t in tokenize.generate_tokens(readline) if t.type not in _UNSEEN]
    return bool(tokens) and tokens[-1].string == ";"


def _timeit(tree: ast.Module, name: str, namespace: dict[str, Any]) -> str:
    """Time the cell as IPython's %timeit does: its statements looped in a function whose
    globals are the example's (what they assign stays local), loops grown tenfold until a
    run takes 0.2 s, then 7 runs; IPython's line, declared a timing."""
    loop = ast.parse(TIMED)
    loop.body[0].body[1].body = tree.body or [ast.Pass()]  # type: ignore[attr-defined]
    ast.fix_missing_locations(loop)
    made: dict[str, Any] = {}
    exec(compile(loop, name, "exec", dont_inherit=True), namespace, made)
    timer = timeit.Timer()
    timer.inner = made["inner"]  # type: ignore[attr-defined]
    number = 1
    for power in range(10):
        number = 10**power
        if timer.timeit(number) >= 0.2:
            break
    runs = [t / number for t in timer.repeat(7, number)]
    mean = math.fsum(runs) / len(runs)
    std = (math.fsum((t - mean) ** 2 for t in runs) / len(runs)) ** 0.5
    line = (
        f"{_format_time(mean)} \u00b1 {_format_time(std)} per loop (mean \u00b1 std. dev. of "
        f"7 runs, {number:,} loop{'' if number == 1 else 's'} each)"
    )
    panels.timings.append({"text": line, "after": panels.printed()})  # builder.panels.timing
    return line


TIMED = """
def inner(_it, _timer):
    _t0 = _timer()
    for _i in _it:
        pass
    return _timer() - _t0
"""


def _format_time(seconds: float) -> str:
    """IPython's _format_time: three significant digits in s, ms, \u00b5s or ns; over a
    minute, in d, h, min and s."""
    if seconds >= 60.0:
        parts, left = [], seconds
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            value = int(left / length)
            if value > 0:
                left %= length
                parts.append(f"{value}{suffix}")
            if left < 1:
                break
        return " ".join(parts)
    units, scaling = ("s", "ms", "\u00b5s", "ns"), (1, 1e3, 1e6, 1e9)
    order = min(-(math.floor(math.log10(seconds)) // 3), 3) if seconds > 0 else 3
    return f"{seconds * scaling[order]:.3g} {units[order]}"


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
    ran: list[dict[str, Any]] = []
    relay = Relays()
    outcome = run(lesson_id, source_path, ran, relay)
    join_threads()
    result: dict[str, Any] = {"outcome": outcome}
    if outcome == "ok":
        result["panels"] = panels.emitted
        result["cells"] = ran
        result["timings"] = {"output": panels.timings, "panels": panels.timing_panels}
    atexit._run_exitfuncs()  # the example's hooks, now: none runs after the result
    body = json.dumps(result).encode()
    if relay.found:
        relay.found[0].position()  # all it printed, forwarded before the result
    sys.stdout.flush()
    sys.stderr.flush()
    with open(channel, "wb") as pipe:
        pipe.write(body)
    os._exit(0 if outcome == "ok" else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
