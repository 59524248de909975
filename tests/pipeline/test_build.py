"""End to end through the real subprocess and real JAX: record, render, rebuild, check."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import ExecutionError
from builder.core.observe import Paths
from builder.pipeline.build import build
from tests.helpers import ROOT, CountingRunner, charts_shown, copy_course, edit

pytestmark = pytest.mark.slow


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _cli(paths: Paths, *args: str) -> list[str]:
    return [
        *args,
        "--content",
        str(paths.content),
        "--recordings",
        str(paths.recordings),
        "--out",
        str(paths.out),
        "--cache",
        str(paths.cache),
    ]


def test_recorded_site_has_every_page(recorded: Paths) -> None:
    site = recorded.out
    for page in (
        "index.html",
        "glossary/index.html",
        "l/first/index.html",
        "l/no-panels/index.html",
        "l/settings/index.html",
        *charts_shown(site, "l/first/index.html"),
    ):
        assert (site / page).is_file(), page
    lesson = (site / "l/first/index.html").read_text()
    assert f"Recorded CPU computation · jax {version('jax')} · 1 device · " in lesson
    assert '<data class="rv" value="3"' in lesson  # three equations, from the recording
    assert "equations: 3" in lesson
    assert 'href="../../l/no-panels/index.html"' in lesson  # relative prev/next and links
    settings = (site / "l/settings/index.html").read_text()
    assert ">19.5<" in settings  # (1 + 2 + 3.5) * FIXTURE_SCALE 3, from a data file and a setting
    recording = json.loads((recorded.recordings / "speed-01.json").read_text())
    assert recording["stdout"] == "sum 6.5 scaled 19.5\n"
    assert [s["label"] for s in recording["data"]["panels"][0]["series"]] == ["plain", "scaled"]


def test_second_build_executes_nothing_and_writes_identical_bytes(recorded: Paths) -> None:
    before = _snapshot(recorded.out)
    recordings = _snapshot(recorded.recordings)
    runner = CountingRunner()
    result = build(recorded, execute=True, jobs=2, runner=runner)
    assert runner.calls == []
    assert result.written == 0
    assert _snapshot(recorded.out) == before
    assert _snapshot(recorded.recordings) == recordings


def test_a_build_from_scratch_gives_the_same_site(recorded: Paths, tmp_path: Path) -> None:
    other = Paths(recorded.content, recorded.recordings, tmp_path / "site2", tmp_path / "cache2")
    build(other, execute=False, jobs=1)
    assert _snapshot(other.out) == _snapshot(recorded.out)


def test_editing_one_example_reexecutes_exactly_that_lesson(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(recorded.content / "lessons" / "basics-01" / "example.py", "* 2.0 + 1.0", "* 2.0")
    assert main(_cli(recorded, "check")) == 1
    out = capsys.readouterr().out
    assert "basics-01  stale(content)" in out and "the example changed" in out
    assert "basics-02" not in out
    untouched = (recorded.recordings / "basics-02.json").read_bytes()
    runner = CountingRunner()
    build(recorded, execute=True, jobs=2, runner=runner)
    assert runner.calls == ["basics-01"]
    assert (recorded.recordings / "basics-02.json").read_bytes() == untouched
    assert main(_cli(recorded, "check")) == 0
    assert "equations: 2" in (recorded.out / "l/first/index.html").read_text()


def test_editing_prose_changes_the_page_and_executes_nothing(recorded: Paths) -> None:
    edit(
        recorded.content / "lessons" / "basics-02" / "lesson.md",
        "Only output here",
        "Only the recorded output here",
    )
    runner = CountingRunner()
    build(recorded, execute=True, jobs=2, runner=runner)
    assert runner.calls == []
    assert "Only the recorded output here" in (recorded.out / "l/no-panels/index.html").read_text()


def test_a_failing_example_keeps_the_previous_recording_and_site(
    recorded: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    recordings, site = _snapshot(recorded.recordings), _snapshot(recorded.out)
    edit(
        recorded.content / "lessons" / "basics-02" / "example.py",
        'print("line", n + 1)',
        'print("line", n + 1)\n    if n == 1:\n        raise RuntimeError("boom at two")',
    )
    edit(recorded.content / "lessons" / "basics-01" / "example.py", "* 2.0 + 1.0", "* 5.0")
    assert main(_cli(recorded, "site", "-j", "2")) == 1
    err = capsys.readouterr().err
    assert "basics-02" in err and "RuntimeError: boom at two" in err
    assert 'File "basics-02-example", line 4, in <module>' in err
    assert "make record" in err
    after = _snapshot(recorded.recordings)
    assert after["basics-02.json"] == recordings["basics-02.json"]
    assert after["basics-01.json"] != recordings["basics-01.json"]  # the others still ran
    assert _snapshot(recorded.out) == site  # a broken lesson stops the build before writing


def test_the_broken_fixture_lesson_fails_with_a_summary(course_copy: Paths) -> None:
    with pytest.raises(ExecutionError) as caught:
        build(course_copy, execute=True, jobs=2)
    message = str(caught.value)
    assert "1 example(s) failed" in message
    assert "speed-02" in message and "ZeroDivisionError: division by zero" in message
    assert not (course_copy.recordings / "speed-02.json").exists()
    assert (course_copy.recordings / "basics-01.json").exists()
    assert not course_copy.out.exists()


def test_no_execute_marks_pages_whose_recording_is_not_fresh(recorded: Paths) -> None:
    edit(recorded.content / "lessons" / "basics-01" / "example.py", "* 2.0 + 1.0", "* 7.0")
    runner = CountingRunner()
    build(recorded, execute=False, jobs=1, runner=runner)
    assert runner.calls == []
    page = (recorded.out / "l/first/index.html").read_text()
    assert "Not fresh:" in page and "stale(content): the example changed" in page
    assert "Not fresh:" not in (recorded.out / "l/no-panels/index.html").read_text()


def test_no_machine_path_reaches_a_recording_or_page(recorded: Paths) -> None:
    markers = {str(recorded.content.parent), str(Path.home()), str(Path(sys.executable).parent)}
    for folder in (recorded.recordings, recorded.out):
        for path in folder.rglob("*"):
            if path.is_file():
                text = path.read_text("utf-8", "replace")
                assert not [m for m in markers if m in text], path


def test_check_imports_neither_jax_nor_matplotlib(recorded: Paths) -> None:
    """Nor pydantic when all is fresh: builder/quickcheck.py proves it without."""
    code = (
        "import sys; from builder.__main__ import main; code = main(sys.argv[1:]); "
        "heavy = sorted(m for m in ('jax', 'matplotlib', 'jinja2', 'markdown_it', 'pydantic') "
        "if m in sys.modules); print(code, heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *_cli(recorded, "check")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines()[-1] == "0 []"


def test_check_json_lists_every_lesson(recorded: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    (recorded.recordings / "basics-02.json").unlink()
    assert main(_cli(recorded, "check", "--json")) == 1
    states = {row["lessonId"]: row["state"] for row in json.loads(capsys.readouterr().out)}
    assert states == {"basics-01": "fresh", "basics-02": "missing", "speed-01": "fresh"}


def test_record_only_named_lessons_and_force(recorded: Paths) -> None:
    before = _snapshot(recorded.recordings)
    assert main(_cli(recorded, "record", "no-panels")) == 0
    after = _snapshot(recorded.recordings)
    assert after["basics-02.json"] != before["basics-02.json"]  # re-run: new generatedAt
    assert after["basics-01.json"] == before["basics-01.json"]
    assert main(_cli(recorded, "record", "nope")) == 1


def test_record_starts_the_examples_that_took_longest_first(recorded: Paths) -> None:
    from builder.course.load import load_course
    from builder.pipeline.build import check
    from builder.run.batch import record_stale

    sidecars = recorded.recordings / "_inputs"
    for lesson_id, seconds in {"basics-01": 0.5, "basics-02": 2.0}.items():
        remembered = json.loads((sidecars / f"{lesson_id}.json").read_text())
        (sidecars / f"{lesson_id}.json").write_text(json.dumps(remembered | {"seconds": seconds}))
    (sidecars / "speed-01.json").unlink()  # never timed: it may be the longest of all
    runner = CountingRunner()
    course = load_course(recorded.content)
    record_stale(course, check(recorded).statuses, recorded, 1, force=True, runner=runner)
    assert runner.calls == ["speed-01", "basics-02", "basics-01"]


def test_a_course_elsewhere_builds_with_the_cli(tmp_path: Path) -> None:
    paths = copy_course(tmp_path, broken=False)
    (paths.content / "lessons" / "speed-01").rename(tmp_path / "speed-01-aside")
    assert main(_cli(paths, "site", "-j", "2")) == 0
    assert main(_cli(paths, "check")) == 0
    assert sorted(p.name for p in paths.recordings.iterdir()) == [
        "_inputs",
        "basics-01.json",
        "basics-02.json",
    ]
    assert sorted(p.name for p in (paths.recordings / "_inputs").iterdir()) == [
        "basics-01.json",
        "basics-02.json",
    ]


def test_the_project_course_recordings_are_fresh() -> None:
    """The committed course and its recordings agree (what `make check` guards in CI)."""
    root = ROOT
    assert (
        main(
            ["check", "--content", str(root / "content"), "--recordings", str(root / "recordings")]
        )
        == 0
    )


def test_the_canned_runs_are_what_the_examples_print(tmp_path: Path) -> None:
    """The fast tests record the fixture course from tests/fixtures/fixture-course-recordings
    (conftest.canned_run): each must be what its example prints when it really runs."""
    from builder.course.load import load_course
    from builder.run.execute import Limits, run_example
    from tests.helpers import canned_run

    paths = copy_course(tmp_path, broken=False, cells=True)
    for lesson in load_course(paths.content).lessons:
        real, canned = run_example(lesson, Limits(60)), canned_run(lesson, Limits(60))
        assert real.ok, real.detail
        assert (real.stdout, real.panels) == (canned.stdout, canned.panels), lesson.id
        assert real.cells == canned.cells, lesson.id
        assert real.environment == canned.environment, "re-record the canned runs"
