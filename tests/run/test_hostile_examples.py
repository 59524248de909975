"""Examples that misbehave: each one runs for real in its own subprocess, and the builder
says what went wrong, kills what it must and keeps nothing it should not.

Most examples here fail before the harness reads jax's environment, so they stay fast;
the few that succeed pay one jax import each.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from builder.course.model import Lesson
from builder.course.rules import MAX_PANELS
from builder.course.status import recording_path
from builder.run.batch import failure_summary, record
from builder.run.environment import BUILDER_ROOT, child_environment
from builder.run.execute import MAX_OUTPUT, Execution, Limits, Outcome
from builder.run.leaks import builder_secrets, leaked
from tests.helpers import LESSON_ID, cli, make_lesson, run, wait_gone, write_course


def test_a_raised_error_shows_the_examples_own_file_and_line(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        print("before")

        def divide(a, b):
            return a / b

        divide(1, 0)
        """,
    )
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "ZeroDivisionError: division by zero"
    assert f'File "{LESSON_ID}-example", line 6' in execution.stderr
    assert f'File "{LESSON_ID}-example", line 4, in divide' in execution.stderr
    assert "harness" not in execution.stderr
    assert execution.stderr.startswith("Traceback (most recent call last):\n")


def test_exiting_non_zero_fails_with_the_code(tmp_path: Path) -> None:
    execution = run(tmp_path, "import sys\nprint('x')\nsys.exit(3)\n")
    assert execution.outcome is Outcome.EXITED
    assert execution.detail == "sys.exit(3)"


def test_exiting_with_a_message_fails(tmp_path: Path) -> None:
    execution = run(tmp_path, "import sys\nsys.exit('giving up')\n")
    assert execution.outcome is Outcome.EXITED
    assert "giving up" in execution.stderr


def test_sys_exit_0_halfway_records_what_ran(tmp_path: Path) -> None:
    """Run by hand it stops there with status 0, so the recording stops there too."""
    execution = run(
        tmp_path,
        """\
        import sys
        from builder import panels
        print("first half")
        panels.bar("t", labels=["a"], ylabel="u", series={"s": [1]})
        sys.exit(0)
        print("never printed")
        """,
    )
    assert execution.ok, execution
    assert execution.stdout == "first half\n"
    assert len(execution.panels) == 1


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "no pidfd"])
def test_a_hang_is_killed_with_the_child_it_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    if not pidfd:  # a kernel or system without pidfd_open: Popen.wait's own timeout
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    pidfile = tmp_path / "child.pid"
    execution = run(
        tmp_path,
        """\
        import os, subprocess, time
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["PIDFILE"], "w") as f:
            f.write(str(child.pid))
        time.sleep(300)
        """,
        timeout=2,
        env={"PIDFILE": str(pidfile)},
    )
    assert execution.outcome is Outcome.TIMEOUT
    assert execution.detail == "killed after 2 s"
    assert wait_gone(int(pidfile.read_text()))


def test_a_child_left_sleeping_after_the_example_exits_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    execution = run(
        tmp_path,
        """\
        import os, subprocess
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["PIDFILE"], "w") as f:
            f.write(str(child.pid))
        print("parent done")
        """,
        env={"PIDFILE": str(pidfile)},
    )
    assert execution.ok, execution
    assert execution.stdout == "parent done\n"
    assert wait_gone(int(pidfile.read_text()))


def test_printing_100_mb_is_cut_off_and_killed(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        import sys
        chunk = "x" * (1 << 20)
        for _ in range(100):
            sys.stdout.write(chunk)
        """,
    )
    assert execution.outcome is Outcome.TOO_MUCH_OUTPUT
    assert execution.detail == f"more than {MAX_OUTPUT // 1024} KiB on stdout; killed"
    assert execution.stdout == ""


def test_invalid_utf8_on_stdout_is_refused(tmp_path: Path) -> None:
    execution = run(tmp_path, "import sys\nsys.stdout.buffer.write(b'caf\\xe9\\n')\n")
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert "stdout is not valid UTF-8 (byte 3)" in execution.detail


def test_an_absolute_path_on_stdout_is_refused(tmp_path: Path) -> None:
    execution = run(tmp_path, "import os\nprint(os.getcwd())\n")
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert "absolute path" in execution.detail


MACHINE_PATHS = """\
import os, pwd
from builder import panels
checkout = os.environ["PYTHONPATH"]
key = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".ssh", "id_ed25519")
panels.bar("Sizes", labels=["ok", os.getcwd()], ylabel=f"bytes of {key}",
           series={f"{checkout}/trace": [1, 2]})
print("sizes")
"""


def test_a_machine_path_in_a_panel_fails_the_run(tmp_path: Path) -> None:
    """Issue 25: titles, labels, series names and ylabel carried the checkout, the scratch
    folder and a home-folder key path into a committed recording, its page and its SVGs;
    only stdout was checked. Every string the recording keeps is now (builder/run/leaks.py)."""
    execution = run(tmp_path, MACHINE_PATHS)
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert execution.detail.startswith("panel 1 (labels[1]) contains the absolute path '/")
    assert execution.detail.endswith("; show paths relative to the cwd")


@pytest.mark.parametrize("field", ["title", "labels[1]", "ylabel", "series[0].label"])
@pytest.mark.parametrize("where", ["checkout", "scratch", "home key", "secret"])
def test_every_string_of_a_panel_is_checked_for_paths_and_secrets(
    tmp_path: Path, field: str, where: str
) -> None:
    scratch = tmp_path / "course-hostile-01-x1"
    texts = {
        "checkout": f"{BUILDER_ROOT}/content",
        "scratch": f"dump at {scratch}/trace.json",
        "home key": os.path.expanduser("~/.ssh/id_ed25519"),
        "secret": f"token {TOKEN}",
    }
    panel: dict[str, object] = {"kind": "bar", "title": "t", "labels": ["a", "b"], "ylabel": "u"}
    panel["series"] = [{"label": "s", "y": [1, 2]}]
    if field == "labels[1]":
        panel["labels"] = ["a", texts[where]]
    elif field == "series[0].label":
        panel["series"] = [{"label": texts[where], "y": [1, 2]}]
    else:
        panel[field] = texts[where]
    recorded = {"stdout": "clean\n", "panel 1": {"kind": "bar"}, "panel 2": panel}
    found = leaked(recorded, [scratch, BUILDER_ROOT], {TOKEN: "COURSE_DEPLOY_TOKEN"})
    kind = "the value of the builder's" if where == "secret" else "the absolute path"
    assert found.startswith(f"panel 2 ({field}) contains {kind}")
    assert TOKEN not in found


def test_a_panel_nested_100000_deep_is_walked_without_recursion() -> None:
    deep: object = "/nowhere"
    for _ in range(100_000):
        deep = [deep]
    assert leaked({"stdout": "", "panel 1": deep}, [Path("/nowhere")], {}).startswith(
        "panel 1 ([0][0][0]) contains the absolute path '/nowhere'"
    )


@pytest.mark.slow
def test_nul_bytes_ansi_codes_and_markup_are_recorded_exactly(tmp_path: Path) -> None:
    """Kept byte-exact in the recording; the renderer escapes them (test_hostile_lessons)."""
    text = "a\x00b \x1b[31mred\x1b[0m </pre><script>alert(1)</script>\n"
    execution = run(tmp_path, f"print({text[:-1]!r})\n")
    assert execution.ok, execution
    assert execution.stdout == text


@pytest.mark.slow
def test_files_written_in_the_working_directory_stay_in_the_scratch_folder(
    tmp_path: Path,
) -> None:
    cwd_file = tmp_path / "cwd.txt"
    execution = run(
        tmp_path,
        """\
        import os
        from pathlib import Path
        Path("dump.txt").write_text("trace")
        Path("dumps").mkdir()
        Path("dumps/a.hlo").write_text("hlo")
        Path(os.environ["CWDFILE"]).write_text(os.getcwd())
        """,
        env={"CWDFILE": str(cwd_file)},
    )
    assert execution.ok, execution
    scratch = Path(cwd_file.read_text())
    assert scratch.name.startswith(f"coursebuilder-{os.getpid()}-{LESSON_ID}-")
    assert not scratch.exists(), "the scratch folder is removed after the run"
    folder = tmp_path / "lessons" / LESSON_ID
    assert sorted(p.name for p in folder.iterdir()) == ["example.py"]
    assert not Path("dump.txt").exists()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('series={"s": [float("nan")]}', "series 's': nan is not finite"),
        ('series={"s": [float("inf")]}', "series 's': inf is not finite"),
        ('series={"s": [1, 2]}', "series 's' has 2 values for 1 labels"),
        ('series={"s": []}', "series 's' has 0 values for 1 labels"),
        ("series={}", "a bar panel needs at least one series"),
        ('series={"s": [1] * 10000}', "series 's' has 10000 values for 1 labels"),
        ("series={'s': ['many']}", "series 's': 'many' is text, not a number"),
    ],
)
def test_a_bad_panel_raises_at_the_examples_line(tmp_path: Path, call: str, message: str) -> None:
    execution = run(
        tmp_path,
        f"""\
        from builder import panels
        print("computed")
        panels.bar("Title", labels=["a"], ylabel="unit", {call})
        """,
    )
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == f"builder.panels.PanelError: {message}"
    assert f'File "{LESSON_ID}-example", line 3, in <module>' in execution.stderr


def test_a_10000_bar_panel_is_refused(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        from builder import panels
        labels = [f"l{i}" for i in range(10000)]
        panels.bar("Title", labels=labels, ylabel="unit", series={"s": [1] * 10000})
        """,
    )
    assert execution.outcome is Outcome.RAISED
    assert "10000 bars is more than 240 in one panel" in execution.detail


@pytest.mark.slow
def test_an_example_with_no_panels_records_none(tmp_path: Path) -> None:
    execution = run(tmp_path, "print('just text')\n")
    assert execution.ok, execution
    assert execution.panels == []


def test_importing_a_missing_module_names_it_and_the_line(tmp_path: Path) -> None:
    execution = run(tmp_path, "import os\nimport no_such_module_here\n")
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "ModuleNotFoundError: No module named 'no_such_module_here'"
    assert f'File "{LESSON_ID}-example", line 2, in <module>' in execution.stderr


def test_a_syntax_error_points_at_the_example(tmp_path: Path) -> None:
    execution = run(tmp_path, "print('a')\nx = (\n")
    assert execution.outcome is Outcome.RAISED
    assert f'File "{LESSON_ID}-example", line 2' in execution.stderr
    assert execution.detail.startswith("SyntaxError:")


def test_os_exit_before_the_end_is_a_harness_failure(tmp_path: Path) -> None:
    execution = run(tmp_path, "import os\nprint('bye', flush=True)\nos._exit(0)\n")
    assert execution.outcome is Outcome.HARNESS
    assert "ended (exit status 0) before the run finished" in execution.detail


def test_killing_its_own_process_group_is_a_harness_failure(tmp_path: Path) -> None:
    execution = run(tmp_path, "import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    assert execution.outcome is Outcome.HARNESS
    assert "was killed by SIGKILL before the run finished" in execution.detail


def test_a_file_past_the_file_size_limit_is_named_as_the_cause(tmp_path: Path) -> None:
    """`ulimit -f` stops a process that writes past it with SIGXFSZ: said as such, with
    the remedy, not as 'exit status -25'."""
    source = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "open('big.bin', 'wb').write(b'x' * 65536)\n"
    )
    execution = run(tmp_path, source)
    assert execution.outcome is Outcome.HARNESS
    assert "reached the file size limit (ulimit -f)" in execution.detail


def test_forging_the_harness_result_is_caught(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        import os
        with open(".harness-result.json", "w") as f:
            f.write('{"outcome": "ok"}')
        os._exit(0)
        """,
    )
    assert execution.outcome is Outcome.HARNESS  # no file is read: the harness never wrote
    assert "ended (exit status 0) before the run finished" in execution.detail


def test_a_failed_run_leaves_the_previous_recording_byte_for_byte(tmp_path: Path) -> None:
    """Through `record`: the failure is summarised with the file, the why and the fix."""
    lesson = make_lesson(tmp_path, "raise RuntimeError('boom')\n")
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    previous = b'{"not": "touched"}'
    recording_path(recordings, LESSON_ID).write_bytes(previous)
    report = record([lesson], recordings, jobs=1)
    assert [x.outcome for x in report.failures] == [Outcome.RAISED]
    assert recording_path(recordings, LESSON_ID).read_bytes() == previous
    assert sorted(p.name for p in recordings.iterdir()) == [f"{LESSON_ID}.json"]
    from builder.course.model import Course, CourseMeta
    from builder.course.validation import validate

    course = Course(
        root=tmp_path,
        meta=validate(
            CourseMeta,
            {
                "title": "t",
                "summary": "s",
                "arcs": [{"id": "hostile", "title": "H", "summary": "s"}],
            },
        ),
        lessons=(lesson,),
        glossary=(),
    )
    summary = failure_summary(report.failures, course)
    assert (
        f"{LESSON_ID} ({lesson.example_path}): raised an exception: RuntimeError: boom" in summary
    )
    assert "-> run it by hand" in summary
    assert "previous recordings are untouched" in summary


def test_a_child_that_escapes_the_process_group_is_found_and_ended(tmp_path: Path) -> None:
    """setsid takes a child out of reach of a group kill; the supervisor (a subreaper)
    still finds it below itself and ends it (more cases: tests/run/test_hostile_processes.py)."""
    pidfile = tmp_path / "child.pid"
    execution = run(
        tmp_path,
        """\
        import os, subprocess
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        with open(os.environ["PIDFILE"], "w") as f:
            f.write(str(child.pid))
        print("parent done")
        """,
        env={"PIDFILE": str(pidfile)},
    )
    pid = int(pidfile.read_text())
    try:
        assert execution.ok, execution
        assert wait_gone(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_panel_value_too_large_to_draw_fails_the_run_naming_the_panel(tmp_path: Path) -> None:
    """panels.bar (part of the harness, left alone) accepts an int of 400 digits; record
    refuses it, naming the panel, series and label, and keeps the previous recording."""
    lesson = make_lesson(tmp_path, "print(1)\n")
    panel = {"kind": "bar", "title": "Huge", "labels": ["a", "b"], "ylabel": "count"}
    panel["series"] = [{"label": "runs", "y": [1, 10**400]}]
    environment = {"backend": "cpu", "deviceCount": 1, "jax": "0", "numpy": "0", "matplotlib": "0"}

    def runner(lesson: Lesson, limits: Limits) -> Execution:
        return Execution(lesson.id, Outcome.OK, 0.1, "1\n", panels=[panel], environment=environment)

    recordings = tmp_path / "recordings"
    recordings.mkdir()
    report = record([lesson], recordings, jobs=1, runner=runner)
    [failure] = report.failures
    assert failure.outcome is Outcome.BAD_PANEL
    assert failure.detail == (
        "panel 1 ('Huge'), series 'runs', label 'b': a number of about 401 digits is too large "
        "to draw (a chart draws numbers up to 1e+300)"
    )
    assert not recording_path(recordings, LESSON_ID).exists()


@pytest.mark.parametrize(
    ("labels", "series", "twins"),
    [
        (["caf\u00e9", "cafe\u0301"], ["s"], "labels"),
        (["a", "a"], ["s"], "labels"),
        (["a", "b"], ["\u212b", "\u00c5"], "series"),  # the angstrom sign and letter Å
    ],
)
def test_two_labels_equal_in_unicode_fail_the_run(
    tmp_path: Path, labels: list[str], series: list[str], twins: str
) -> None:
    """A reference `label="café"` would find whichever came first: refused when recorded."""
    lesson = make_lesson(tmp_path, "print(1)\n")
    panel = {"kind": "bar", "title": "Twins", "labels": labels, "ylabel": "count"}
    panel["series"] = [{"label": name, "y": [1] * len(labels)} for name in series]
    environment = {"backend": "cpu", "deviceCount": 1, "jax": "0", "numpy": "0", "matplotlib": "0"}

    def runner(lesson: Lesson, limits: Limits) -> Execution:
        return Execution(lesson.id, Outcome.OK, 0.1, "1\n", panels=[panel], environment=environment)

    (tmp_path / "recordings").mkdir()
    report = record([lesson], tmp_path / "recordings", jobs=1, runner=runner)
    [failure] = report.failures
    assert failure.outcome is Outcome.BAD_PANEL
    first, second = labels if twins == "labels" else series
    assert failure.detail == (
        f"panel 1 ('Twins'): {twins} {first!r} and {second!r} are the same name (equal in "
        "Unicode); give each its own"
    )


# -- issue 17: no secret of the recording machine reaches a recording ----------------------

TOKEN = "tok-3f9a2c71e0d4"  # the value of a variable in the builder's environment only
READ_PARENT = """\
import os
pid = os.getppid()
while True:  # up through the supervisor to the builder
    with open(f"/proc/{pid}/environ", "rb") as handle:
        found = dict(v.split(b"=", 1) for v in handle.read().split(b"\\0") if b"=" in v)
    if b"COURSE_DEPLOY_TOKEN" in found:
        break
    with open(f"/proc/{pid}/stat", "rb") as handle:
        pid = int(handle.read().rsplit(b")", 1)[1].split()[1])
print("deploying with", found[b"COURSE_DEPLOY_TOKEN"].decode())
"""


def test_a_secret_read_from_the_builders_environment_is_refused_never_shown(
    tmp_path: Path,
) -> None:
    """The issue's attack, end to end: the example reads its ancestors' /proc environ (same
    user) and prints a token the builder has; the run fails naming the variable, and
    neither the recording nor the builder's output holds the value."""

    write_course(tmp_path, {"calm-01": READ_PARENT})
    env = os.environ | {"COURSE_DEPLOY_TOKEN": TOKEN}
    done = subprocess.run(cli(tmp_path, "record"), env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "calm-01 (" in done.stderr and "printed something a recording cannot keep" in done.stderr
    assert "stdout contains the value of the builder's environment variable " in done.stderr
    assert "COURSE_DEPLOY_TOKEN, which the example was not given" in done.stderr
    assert TOKEN not in done.stderr + done.stdout
    assert not (tmp_path / "recordings" / "calm-01.json").exists()


def test_a_secret_in_a_panel_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_DEPLOY_TOKEN", TOKEN)
    source = f"""\
    from builder import panels
    panels.bar("t", labels=["{TOKEN}"], ylabel="y", series={{"s": [1]}})
    """
    execution = run(tmp_path, source)
    assert execution.outcome is Outcome.BAD_OUTPUT
    assert execution.detail.startswith(
        "panel 1 (labels[0]) contains the value of the builder's environment variable "
        "COURSE_DEPLOY_TOKEN"
    )


def test_a_secret_on_stderr_is_redacted_in_the_failure_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DEPLOY_TOKEN", TOKEN)
    source = f"raise RuntimeError('could not deploy with {TOKEN}')\n"
    execution = run(tmp_path, source)
    assert execution.outcome is Outcome.RAISED
    assert TOKEN not in execution.stderr + execution.detail
    assert execution.detail == "RuntimeError: could not deploy with $COURSE_DEPLOY_TOKEN"


def test_a_variable_the_example_is_given_is_not_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DEPLOY_TOKEN", TOKEN)
    env = {"COURSE_DEPLOY_TOKEN": TOKEN}
    lesson = make_lesson(tmp_path, "raise SystemExit(0)\n", env=env)
    scratch = tmp_path / "scratch"
    assert TOKEN not in builder_secrets(child_environment(lesson, scratch))


# -- issue 25: a lesson's env: reaches the example's process, never the builder's --------------

IMPORTS_ITS_OWN = """\
import sys
import helper
from builder import panels
print(helper.VALUE, sys.path.index(helper.FOLDER) > sys.path.index(panels.ROOT))
"""


def test_a_lessons_pythonpath_is_honoured_after_the_builders(tmp_path: Path) -> None:
    """A regression: `env: {PYTHONPATH: ...}` replaced the builder's own, so the supervisor
    (`python -m builder.run.supervise`) could not start, and the run was reported as a killed
    supervisor. The lesson's folders now come after the builder's."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helper.py").write_text(f"VALUE = 'helped'\nFOLDER = {str(lib)!r}\n")
    source = IMPORTS_ITS_OWN.replace("panels.ROOT", repr(str(BUILDER_ROOT)))
    execution = run(tmp_path, source, env={"PYTHONPATH": str(lib)})
    assert execution.ok, execution
    assert execution.stdout == "helped True\n"


@pytest.mark.parametrize(
    "setting",
    [
        "PYTHONSAFEPATH=1",
        "PYTHONNOUSERSITE=1",
        "PYTHONINSPECT=1",
        "PYTHONSTARTUP=startup.py",
        "PYTHONWARNINGS=error",
        "PYTHONDEVMODE=1",
        "PYTHONVERBOSE=1",
        "PATH=/nowhere",
    ],
)
def test_python_settings_in_env_reach_the_example_not_the_supervisor(
    tmp_path: Path, setting: str
) -> None:
    """Each of these changed the supervisor too: PYTHONINSPECT left a traceback of its
    exit, PYTHONWARNINGS=error and PYTHONDEVMODE its warnings, PYTHONVERBOSE its imports,
    in the run's stderr. The supervisor is isolated (`python -I`) and gets an environment of
    its own; the example gets the lesson's."""
    name, _, value = setting.partition("=")
    source = f"import os, sys\nprint(os.environ[{name!r}] == {value!r})\n"
    execution = run(tmp_path, source, env={name: value})
    assert execution.ok, execution
    assert execution.stdout == "True\n"
    assert "supervise" not in execution.stderr


@pytest.mark.parametrize("name", ["PYTHONHOME", "PYTHONPLATLIBDIR"])
def test_a_setting_that_moves_the_interpreters_library_is_refused_at_load(
    tmp_path: Path, name: str
) -> None:
    """The example's interpreter is the harness's: it cannot start on another standard
    library (it was reported as a killed supervisor). `check` names the file and field."""

    write_course(tmp_path, {"calm-01": "print(1)\n"}, env={name: "/usr"})
    done = subprocess.run(cli(tmp_path, "check"), capture_output=True, text=True)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and line.endswith(
        "an example runs on the project's Python: leave it out"
    )
    assert f"calm-01/lesson.md: front matter field 'env': Value error, {name} would make" in line


# -- issue 25: how many panels a lesson may emit -------------------------------------------------

MANY_PANELS = """\
from builder import panels
for n in range({count}):
    panels.bar(f"Panel {{n}}", labels=["a"], ylabel="u", series={{"s": [n]}})
print("charted")
"""


def test_more_panels_than_a_page_shows_fail_the_run_naming_the_lesson_and_the_bound(
    tmp_path: Path,
) -> None:
    """There was no bound: 20,000 one-bar panels made a recording, then 20,000 charts on one
    page. Record refuses more than MAX_PANELS, and keeps the previous recording."""
    lesson = make_lesson(tmp_path, MANY_PANELS.format(count=MAX_PANELS + 1))
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    report = record([lesson], recordings, jobs=1)
    [failure] = report.failures
    assert failure.outcome is Outcome.TOO_MANY_PANELS
    assert (
        failure.detail == f"{MAX_PANELS + 1} panels is more than the {MAX_PANELS} a lesson may emit"
    )
    assert not recording_path(recordings, LESSON_ID).exists()
    course = SimpleNamespace(lesson=lambda key: lesson)  # all failure_summary asks of it
    summary = failure_summary(report.failures, course)  # type: ignore[arg-type]
    assert f"{LESSON_ID} (" in summary and "emitted more panels than a page shows" in summary
    assert f"(at most {MAX_PANELS} panels, each of up to 240 bars)" in summary


def test_panels_over_the_result_limit_are_named_not_blamed_on_a_forger(tmp_path: Path) -> None:
    """1,200 panels of 240 long labels are more than the 16 MiB result pipe keeps: the run
    was cut and reported as "something other than the harness wrote to the harness's
    result channel"."""
    source = """\
    from builder import panels
    labels = [f"{n:03d}" + "x" * 60 for n in range(240)]
    for n in range(1200):
        panels.bar(f"Panel {n}", labels=labels, ylabel="u", series={"s": [1] * 240})
    """
    execution = run(tmp_path, source)
    assert execution.outcome is Outcome.TOO_MANY_PANELS, execution.detail
    assert execution.detail == (
        f"its panels came to more than 16 MiB; a lesson shows at most {MAX_PANELS} panels of "
        "240 bars"
    )
