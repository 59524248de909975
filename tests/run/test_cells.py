"""Cells run for real (issue 40): each example below runs in its own subprocess through the
builder's runner, as `record` runs it, and the tests check what an author would see: the
recording's per-cell parts of stdout, values and declared exceptions, or the failure the
record command prints (naming the cell and the example's own lines).

One JAX example (a module fixture, recorded once through `record`) covers what needs JAX:
hide, a last expression's value, raises by name, base class and module.qualname, timeit,
the positions JAX prints. The rest import nothing heavy and stay fast."""

from __future__ import annotations

import itertools
import json
import re
import textwrap
from pathlib import Path

import pytest

from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.course.recording import Recording, dumps, read
from builder.course.status import recording_path
from builder.run.batch import failure_summary, record
from builder.run.execute import MAX_OUTPUT, Execution, Limits, Outcome, run_example
from builder.run.harness import _format_time

LESSON = "calm-01"
FILE = f"{LESSON}-example"  # the name tracebacks and JAX give the example

COURSE_YML = """\
title: Cells course
summary: Examples in cells.
arcs:
  - id: calm
    title: Calm
    summary: Cells.
"""


def write(root: Path, source: str, *, timeout: float | None = None) -> Course:
    """A course of one lesson whose example.py is `source`, loaded as the builder loads it."""
    folder = root / "content" / "lessons" / LESSON
    folder.mkdir(parents=True)
    (root / "content" / "course.yml").write_text(COURSE_YML)
    extra = f"timeout: {timeout:g}\n" if timeout else ""
    folder.joinpath("lesson.md").write_text(
        f"---\nid: {LESSON}\nslug: calm\ntitle: Calm\narc: calm\norder: 1\nsummary: Cells.\n"
        f"{extra}---\n{{{{ example }}}}\n"
    )
    folder.joinpath("example.py").write_text(textwrap.dedent(source), "utf-8")
    return load_course(root / "content")


def run(root: Path, source: str, *, timeout: float | None = None) -> Execution:
    lesson = write(root, source, timeout=timeout).lessons[0]
    return run_example(lesson, Limits(timeout=lesson.meta.timeout))


def parts(execution: Execution) -> dict[str, str]:
    """Each cell that ran: its own part of stdout."""
    assert execution.ok, (execution.outcome, execution.detail, execution.stderr)
    return {c["name"]: execution.stdout[c["start"] : c["end"]] for c in execution.cells or ()}


def cell(execution: Execution, name: str) -> dict[str, object]:
    assert execution.ok, (execution.outcome, execution.detail, execution.stderr)
    return next(c for c in execution.cells or () if c["name"] == name)


def summary(root: Path, source: str, *, timeout: float | None = None) -> tuple[str, Path]:
    """What `record` says of a failing example (it must fail), and its recording's path."""
    course = write(root, source, timeout=timeout)
    recordings = root / "recordings"
    recordings.mkdir(exist_ok=True)
    report = record(list(course.lessons), recordings)
    assert report.failures, "the run was to fail"
    return failure_summary(report.failures, course), recording_path(recordings, LESSON)


# -- the JAX example, recorded once -----------------------------------------------------------

JAX_EXAMPLE = """\
# A lesson in cells, run with JAX.

# %% setup hide
import jax
import jax.numpy as jnp

print("setup ran")


def f(x):
    if x > 0:
        return x
    return -x


# %% trace
print(jax.make_jaxpr(jnp.sin)(1.0))
jnp.arange(3.0) * 2

# %% bool-error raises=TracerBoolConversionError
jax.jit(f)(1.0)

# %% base raises=TypeError
jax.jit(f)(2.0)

# %% qualified raises=jax.errors.ConcretizationTypeError
jax.jit(f)(3.0)

# %% quiet
jnp.arange(2.0);

# %% nothing
print("printed, no value")

# %% debug
g = jax.jit(lambda x: (jax.debug.print("debug says {}", x), x * 2)[1])
g(1.0);

# %% speed timeit
y = jnp.ones(3).block_until_ready()

# %% aside show
open("shown-cell-ran.txt", "w").write("it ran")

# %% after
import os
print("y" in globals(), os.path.exists("shown-cell-ran.txt"))
jnp.float32(1.5)
"""

TIMEIT_LINE = re.compile(
    r"\d[\d.]* (?:s|ms|µs|ns) ± \d[\d.]* (?:s|ms|µs|ns) per loop "
    r"\(mean ± std\. dev\. of 7 runs, (?:1 loop|[1-9]\d{0,2}(?:,000)* loops) each\)\n"
)


@pytest.fixture(scope="module")
def jax_recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """The JAX example recorded through `record`: its recording file's path and bytes."""
    root = tmp_path_factory.mktemp("jax-cells")
    course = write(root, JAX_EXAMPLE)
    recordings = root / "recordings"
    recordings.mkdir()
    report = record(list(course.lessons), recordings)
    assert not report.failures, failure_summary(report.failures, course)
    path = recording_path(recordings, LESSON)
    return path, path.read_bytes()


@pytest.fixture(scope="module")
def jax_recording(jax_recorded: tuple[Path, bytes]) -> Recording:
    path, data = jax_recorded
    return read(data, path)[0]


def jax_part(recording: Recording, name: str) -> str:
    run = next(c for c in recording.cells or () if c.name == name)
    return recording.stdout[run.start : run.end]


def line_of(text: str, source: str = JAX_EXAMPLE) -> int:
    return source.splitlines().index(text) + 1


def test_every_cell_that_ran_is_listed_in_file_order_show_cells_not(
    jax_recording: Recording,
) -> None:
    assert [c.name for c in jax_recording.cells or ()] == [
        "setup",
        "trace",
        "bool-error",
        "base",
        "qualified",
        "quiet",
        "nothing",
        "debug",
        "speed",
        "after",
    ]
    # the parts follow each other and make up the whole of stdout
    runs = jax_recording.cells or []
    assert runs[0].start == 0 and runs[-1].end == len(jax_recording.stdout)
    assert all(a.end == b.start for a, b in itertools.pairwise(runs))


def test_a_hide_cell_runs_and_its_output_is_its_own(jax_recording: Recording) -> None:
    assert jax_part(jax_recording, "setup") == "setup ran\n"


def test_the_last_expression_is_recorded_as_ipython_shows_it(jax_recording: Recording) -> None:
    trace = next(c for c in jax_recording.cells or () if c.name == "trace")
    assert trace.value == "Array([0., 2., 4.], dtype=float32)"
    assert trace.raised is None
    assert jax_part(jax_recording, "trace") == "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n"
    after = next(c for c in jax_recording.cells or () if c.name == "after")
    assert after.value == "Array(1.5, dtype=float32)"


def test_a_cell_ending_in_a_semicolon_or_a_none_shows_no_value(jax_recording: Recording) -> None:
    by_name = {c.name: c for c in jax_recording.cells or ()}
    assert by_name["quiet"].value is None and jax_part(jax_recording, "quiet") == ""
    assert by_name["nothing"].value is None
    assert jax_part(jax_recording, "nothing") == "printed, no value\n"


def test_raises_matches_by_name_base_class_and_module_qualname(jax_recording: Recording) -> None:
    """The three cells raise the same error, declared three ways; each records it, and the
    cells after it still run. The message names the example's own line (JAX's position)."""
    where = f"{FILE}:{line_of('def f(x):')}"
    for name in ("bool-error", "base", "qualified"):
        run = next(c for c in jax_recording.cells or () if c.name == name)
        assert run.value is None and run.raised is not None
        assert run.raised.type == "jax.errors.TracerBoolConversionError"
        assert run.raised.message.startswith("Attempted boolean conversion of traced array")
        assert f"while tracing the function f at {where} for jit" in run.raised.message
        assert jax_part(jax_recording, name) == ""


def test_jax_debug_print_lands_in_its_own_cell(jax_recording: Recording) -> None:
    assert jax_part(jax_recording, "debug") == "debug says 1.0\n"


def test_timeit_prints_ipythons_line_and_declares_it_a_timing(jax_recording: Recording) -> None:
    printed = jax_part(jax_recording, "speed")
    assert TIMEIT_LINE.fullmatch(printed), printed
    assert jax_recording.timings is not None
    (span,) = jax_recording.timings.output
    line = jax_recording.stdout.splitlines()[span.line - 1]
    assert line[span.start : span.end] == printed.rstrip("\n")


def test_what_a_timeit_cell_assigns_stays_in_it_and_a_show_cell_never_runs(
    jax_recording: Recording,
) -> None:
    assert jax_part(jax_recording, "after") == "False False\n"


def test_the_recording_is_canonical_and_valid(jax_recorded: tuple[Path, bytes]) -> None:
    from io import StringIO

    from builder.course.schemas import validate_files

    path, data = jax_recorded
    recording, line = read(data, path)
    assert line == 0 and dumps(recording) == data
    raw = json.loads(data)
    assert list(raw)[-2:] == ["timings", "cells"]
    assert raw["cells"][0] == {"name": "setup", "start": 0, "end": len("setup ran\n")}
    said = StringIO()
    assert validate_files([path], said), said.getvalue()
    assert said.getvalue() == f"{path}: valid\n"


# -- raises --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "said"),
    [("raises=ValueError", "raises=ValueError"), ("raises", "raises")],
)
def test_a_raises_cell_that_does_not_raise_fails_the_lesson_naming_the_cell(
    tmp_path: Path, declared: str, said: str
) -> None:
    source = f"# %% fine\nprint(1)\n# %% quiet-one {declared}\nx = int('3')\n# %% later\n"
    text, path = summary(tmp_path, source)
    assert f"{LESSON} (" in text and "example.py): raised an exception:" in text
    assert f"cell 'quiet-one' ({said}) did not raise" in text
    assert not path.exists()  # nothing was recorded


def test_a_raises_cell_raising_another_type_fails_saying_both(tmp_path: Path) -> None:
    text, _ = summary(tmp_path, "# %% lookup raises=ValueError\n{}['missing']\n")
    assert "KeyError: 'missing'" in text
    assert "cell 'lookup' raised KeyError, not ValueError (raises=ValueError)" in text
    assert f'File "{FILE}", line 2, in <module>' in text


def test_a_declared_base_class_name_matches_its_subclass(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        # %% lookup raises=LookupError
        print("before the error")
        {}["k"]
        # %% arith raises=ArithmeticError
        1 / 0
        # %% anything raises
        int("x")
        # %% builtin raises=builtins.ValueError
        int("y")
        # %% json raises=json.decoder.JSONDecodeError
        import json
        json.loads("{")
        # %% nested raises=__main__.Outer.Inner
        class Outer:
            class Inner(Exception):
                pass
        raise Outer.Inner("<inner>")
        # %% still-runs
        print("after")
        """,
    )
    raised = {c["name"]: c.get("raised") for c in execution.cells or ()}
    assert raised == {
        "lookup": {"type": "KeyError", "message": "'k'"},
        "arith": {"type": "ZeroDivisionError", "message": "division by zero"},
        "anything": {
            "type": "ValueError",
            "message": "invalid literal for int() with base 10: 'x'",
        },
        "builtin": {
            "type": "ValueError",
            "message": "invalid literal for int() with base 10: 'y'",
        },
        "json": {
            "type": "json.decoder.JSONDecodeError",
            "message": "Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)",
        },
        "nested": {"type": "Outer.Inner", "message": "<inner>"},
        "still-runs": None,
    }
    assert parts(execution)["lookup"] == "before the error\n"
    assert parts(execution)["still-runs"] == "after\n"


def test_bare_raises_does_not_swallow_a_keyboard_interrupt(tmp_path: Path) -> None:
    """Bare `raises` is any Exception: Ctrl-C (a BaseException) still stops the run."""
    execution = run(tmp_path, "# %% a raises\nraise KeyboardInterrupt\n")
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "KeyboardInterrupt"


def test_raises_system_exit_is_honoured_or_refused_at_load(tmp_path: Path) -> None:
    from builder.core.errors import BuildError

    source = "# %% stop raises=SystemExit\nimport sys\nsys.exit(3)\n# %% after\nprint(1)\n"
    try:
        execution = run(tmp_path, source)
    except BuildError as error:  # refused when the course loads: fine too
        assert "line 1" in str(error) and "SystemExit" in str(error)
        return
    assert cell(execution, "stop")["raised"] == {"type": "SystemExit", "message": "3"}
    assert parts(execution)["after"] == "1\n"


def test_a_raises_cell_with_an_overlong_message_fails_saying_so(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% long raises=ValueError\nraise ValueError('x' * 70_000)\n")
    assert execution.outcome is Outcome.RAISED
    assert "cell 'long': its exception's message is 70,000 characters, over the 65,536" in (
        execution.detail
    )


# -- show, hide ----------------------------------------------------------------------------


def test_a_show_cell_never_runs_even_when_it_is_not_python(tmp_path: Path) -> None:
    marker = tmp_path / "show-ran"
    execution = run(
        tmp_path,
        f"""\
        # %% before
        print("before")
        # %% aside show
        open({str(marker)!r}, "w").write("ran")
        raise SystemExit(5)
        # %% pseudo show
        for each step in the loop: ...  (pseudo-code, never parsed)
        # %% after
        print("after")
        """,
    )
    assert parts(execution) == {"before": "before\n", "after": "after\n"}
    assert not marker.exists()


def test_an_undeclared_error_in_a_hide_cell_fails_the_run_at_its_line(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% setup hide\nimport math\nmath.sqrt(-1)\n# %% b\nprint(1)\n")
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "ValueError: math domain error"
    assert f'File "{FILE}", line 3, in <module>' in execution.stderr


# -- last expression -----------------------------------------------------------------------


def test_which_last_expressions_show_a_value(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        # %% plain
        1 + 1
        # %% comment-after
        1 + 2  # a comment; not a semicolon
        # %% semicolon-comment
        1 + 3;  # quiet
        # %% semicolon-in-a-string
        "a;"
        # %% two-on-a-line
        x = 5; x
        # %% multi-line-quiet
        (1 +
         2);
        # %% none
        None
        # %% print-returns-none
        print("hi")
        # %% assignment-last
        y = 3
        # %% expression-then-statement
        y
        z = 1
        # %% a-for-loop
        for i in range(2):
            i
        # %% comments-only
        # nothing here
        # %% empty
        # %% markup
        "<script>alert(1)</script>"
        """,
    )
    values = {c["name"]: c.get("value") for c in execution.cells or ()}
    assert values == {
        "plain": "2",
        "comment-after": "3",
        "semicolon-comment": None,
        "semicolon-in-a-string": "'a;'",
        "two-on-a-line": "5",
        "multi-line-quiet": None,
        "none": None,
        "print-returns-none": None,
        "assignment-last": None,
        "expression-then-statement": None,
        "a-for-loop": None,
        "comments-only": None,
        "empty": None,
        "markup": "'<script>alert(1)</script>'",
    }
    assert parts(execution)["print-returns-none"] == "hi\n"


def test_a_repr_over_64_kib_fails_with_a_clear_message(tmp_path: Path) -> None:
    text, _ = summary(tmp_path, "# %% fine\nprint(1)\n# %% big\n'x' * 70_000\n")
    assert (
        "cell 'big': the repr of its last expression is 70,002 characters, over the 65,536 a "
        "recording keeps; end the line with ; or show less"
    ) in text
    execution = run(tmp_path / "quiet", "# %% big\n'x' * 70_000;\n")
    assert execution.ok and cell(execution, "big").get("value") is None


def test_a_repr_that_raises_fails_at_its_line(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        "# %% a\nclass A:\n    def __repr__(self):\n        raise ValueError('no repr')\nA()\n",
    )
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "ValueError: no repr"
    assert f'File "{FILE}", line 4, in __repr__' in execution.stderr


def test_a_value_naming_the_machines_folders_is_refused(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% where\nimport os\nos.getcwd()\n")
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert "contains the absolute path" in execution.detail
    execution = run(
        tmp_path / "raised",
        "# %% where raises=FileNotFoundError\nimport os\nopen(os.path.join(os.getcwd(), 'no'))\n",
    )
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert "contains the absolute path" in execution.detail


# -- stdout per cell -------------------------------------------------------------------------


def test_each_cells_part_of_stdout_is_counted_in_characters(tmp_path: Path) -> None:
    """é is 2 bytes, 😀 4, and a carriage return is a character like any other: each cell's
    part is exactly what it printed."""
    execution = run(
        tmp_path,
        """\
        # %% accents
        print("café", end="")
        # %% nothing
        x = 1
        # %% emoji
        import sys
        print(" 😀\\r\\n", end="")
        sys.stdout.write("progress 10%\\rprogress 100%\\n")
        # %% combining
        print("e\\u0301 \\U0001F468\\u200d\\U0001F469\\u200d\\U0001F467")
        # %% flushed
        print("flushed", flush=True)
        print("twice", file=sys.stdout)
        """,
    )
    assert parts(execution) == {
        "accents": "café",
        "nothing": "",
        "emoji": " 😀\r\nprogress 10%\rprogress 100%\n",
        "combining": "e\u0301 \U0001f468\u200d\U0001f469\u200d\U0001f467\n",
        "flushed": "flushed\ntwice\n",
    }


def test_output_that_bypasses_sys_stdout_does_not_shift_later_cells(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        # %% a
        import subprocess
        subprocess.run(["echo", "from a subprocess"]);
        # %% b
        print("b")
        """,
    )
    assert parts(execution)["b"] == "b\n"


# -- failures: where, and what is kept ------------------------------------------------------


def test_a_syntax_error_in_cell_3_names_the_line_of_the_whole_file(tmp_path: Path) -> None:
    text, _ = summary(
        tmp_path,
        """\
        # %% one
        print("one")
        # %% two
        x = 1

        # %% three
        y = 2
        z = (
        """,
    )
    assert f'File "{FILE}", line 8' in text
    assert "SyntaxError: '(' was never closed" in text


def test_a_syntax_error_in_a_cell_shows_only_the_example(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% one\nprint('one')\n# %% two\nz = (\n")
    assert execution.outcome is Outcome.RAISED
    assert "ast.py" not in execution.stderr and "harness" not in execution.stderr


def test_a_traceback_across_cells_names_each_line_of_the_file(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        # %% define
        def divide(a, b):
            return a / b
        # %% fine
        print("fine")
        # %% call
        divide(1, 0)
        """,
    )
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "ZeroDivisionError: division by zero"
    assert f'File "{FILE}", line 7, in <module>\n    divide(1, 0)' in execution.stderr
    assert f'File "{FILE}", line 3, in divide\n    return a / b' in execution.stderr
    assert "harness" not in execution.stderr


def test_a_cell_that_hangs_is_killed_and_the_previous_recording_kept(tmp_path: Path) -> None:
    course = write(
        tmp_path,
        "# %% fine\nprint('fine')\n# %% hang\nimport time\ntime.sleep(300)\n",
        timeout=2,
    )
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    previous = b'{"previous": "recording"}'
    recording_path(recordings, LESSON).write_bytes(previous)
    report = record(list(course.lessons), recordings)
    assert [x.outcome for x in report.failures] == [Outcome.TIMEOUT]
    text = failure_summary(report.failures, course)
    assert "timed out: killed after 2 s" in text
    assert recording_path(recordings, LESSON).read_bytes() == previous
    assert sorted(p.name for p in recordings.iterdir()) == [f"{LESSON}.json"]


def test_a_cell_that_prints_10_mb_fails_as_printed_too_much(tmp_path: Path) -> None:
    text, path = summary(
        tmp_path,
        """\
        # %% fine
        print("fine")
        # %% flood
        import sys
        for _ in range(10):
            sys.stdout.write("x" * (1 << 20))
        """,
    )
    assert f"printed too much: more than {MAX_OUTPUT // 1024} KiB on stdout; killed" in text
    assert not path.exists()


def test_sys_exit_0_in_a_cell_records_the_cells_that_ran(tmp_path: Path) -> None:
    """As `python example.py` would: the run stops there, with status 0."""
    execution = run(
        tmp_path, "# %% a\nprint('a')\n# %% stop\nimport sys\nsys.exit(0)\n# %% b\nprint('b')\n"
    )
    assert parts(execution) == {"a": "a\n"}
    assert execution.stdout == "a\n"


# -- IPython's %timeit format ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (1.234e-3, "1.23 ms"),
        (4.56e-5, "45.6 µs"),
        (1.5e-6, "1.5 µs"),
        (7e-9, "7 ns"),
        (2.5e-10, "0.25 ns"),
        (0.0, "0 ns"),
        (1.0, "1 s"),
        (12.345, "12.3 s"),
        (75.5, "1min 15s"),
        (3661.0, "1h 1min 1s"),
        (90061.0, "1d 1h 1min 1s"),
    ],
)
def test_times_are_formatted_as_ipython_formats_them(seconds: float, shown: str) -> None:
    """IPython's `_format_time` (IPython/core/magics/execution.py), precision 3."""
    assert _format_time(seconds) == shown


def test_timeit_of_a_slow_statement_says_1_loop(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% slow timeit\nimport time\ntime.sleep(0.21)\n")
    printed = parts(execution)["slow"]
    assert TIMEIT_LINE.fullmatch(printed), printed
    assert printed.endswith("per loop (mean ± std. dev. of 7 runs, 1 loop each)\n")
    assert " ms ± " in printed  # about 210 ms per loop


def test_a_lesson_without_cells_records_no_cells_key(tmp_path: Path) -> None:
    lesson: Lesson = write(tmp_path, "print('one example')\n").lessons[0]
    assert lesson.cells == ()
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    assert not record([lesson], recordings).failures
    raw = json.loads(recording_path(recordings, LESSON).read_bytes())
    assert "cells" not in raw
