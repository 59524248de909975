"""Issue 57, "prose first": every problem of a lesson's Markdown that needs no recording is
reported, all at once, before any example runs; and what only a recording can decide (a
value, an output slice, a link to a panel) is not reported before it is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.core.errors import BuildErrors
from builder.core.observe import Paths
from builder.course.rules import MAX_PANELS
from builder.pipeline.build import NOT_RECORDED, build
from tests.helpers import CountingRunner, canned_run, copy_course, edit


def _lesson(paths: Paths, lesson_id: str) -> Path:
    return paths.content / "lessons" / lesson_id / "lesson.md"


def test_prose_problems_fail_the_build_before_any_example_runs(tmp_path: Path) -> None:
    paths = copy_course(tmp_path, broken=False)
    edit(_lesson(paths, "basics-01"), "## Tracing\n", "## Tracing\n\nSee {func}`jax.jit` here.\n")
    edit(
        _lesson(paths, "basics-02"),
        "Only output here",
        "A [[no-such-term]] and\n\n[a page](other.md) and\n\n{{ cell nowhere }}\n\nOnly output here",
    )
    runner = CountingRunner(canned_run)
    with pytest.raises(BuildErrors) as raised:
        build(paths, execute=True, jobs=2, runner=runner)
    assert runner.calls == []  # not one example ran
    assert not list(paths.recordings.glob("*.json")) and not paths.out.exists()
    said = str(raised.value)
    first, second = _lesson(paths, "basics-01"), _lesson(paths, "basics-02")
    assert f"{first}: line 12: " in said and "{func}`jax.jit`" in said
    assert f"{second}: line 9: [[no-such-term]] is not a glossary term" in said
    assert f"{second}: line 11: link 'other.md'" in said
    assert f"{second}: line 13: cell 'nowhere'" in said
    assert len(raised.value.errors) == 4  # one summary, every lesson's problems
    assert said.endswith(NOT_RECORDED)


def test_what_only_a_recording_decides_is_not_reported_before_it(tmp_path: Path) -> None:
    """A value, an output slice and links to panels of lessons not recorded yet: the build
    records them, then renders (the fixture lessons place values and panels already)."""
    paths = copy_course(tmp_path, broken=False)
    edit(
        _lesson(paths, "basics-02"),
        "Only output here",
        "See [its chart](lesson:first#panel-1) and {{ value line=2 }}.\n\nOnly output here",
    )
    edit(_lesson(paths, "basics-01"), "{{ panel 1 }}", "{{ panel 1 }}\n\n[Above](#panel-1).")
    runner = CountingRunner(canned_run)
    build(paths, execute=True, jobs=2, runner=runner)
    assert sorted(runner.calls) == ["basics-01", "basics-02", "speed-01"]


def test_a_panel_no_lesson_may_have_is_reported_first(tmp_path: Path) -> None:
    paths = copy_course(tmp_path, broken=False)
    far = f"panel-{MAX_PANELS + 1}"
    edit(_lesson(paths, "basics-01"), "{{ panel 1 }}", f"{{{{ panel 1 }}}}\n\n[Far](#{far}).")
    runner = CountingRunner(canned_run)
    with pytest.raises(BuildErrors, match=f"no anchor '{far}'"):
        build(paths, execute=True, jobs=2, runner=runner)
    assert runner.calls == []


def test_a_fresh_course_checks_nothing_more_and_force_checks_every_lesson(
    recorded: Paths,
) -> None:
    """Nothing to record: no prose is checked before (the render reports as it does); with
    force every lesson is about to run, and its prose is checked first."""
    lesson = _lesson(recorded, "speed-01")
    lesson.write_text(lesson.read_text() + "\nA {ref}`label` here.\n")
    runner = CountingRunner(canned_run)
    with pytest.raises(BuildErrors) as raised:
        build(recorded, execute=True, jobs=2, runner=runner, force=True)
    assert runner.calls == [] and str(raised.value).endswith(NOT_RECORDED)
