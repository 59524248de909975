"""Shared fixtures: the fixture course copied into a temporary folder, recorded once."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.course.model import Lesson
from builder.run.execute import Execution, Limits, Outcome, Runner, run_example

HERE = Path(__file__).parent
FIXTURE_COURSE = HERE / "fixture_course"
REFERENCE = HERE / "fixtures" / "performance-05.recording.json"
BROKEN = "speed-02"


CANNED = HERE / "fixtures" / "fixture-course-recordings"


def canned_run(lesson: Lesson, limits: Limits) -> Execution:
    """What the fixture course's example printed and emitted when it really ran (kept in
    tests/fixtures/fixture-course-recordings/, checked against real runs by a slow test),
    handed back without executing anything: the fast tests need no JAX."""
    recorded = json.loads((CANNED / f"{lesson.id}.json").read_text("utf-8"))
    return Execution(
        lesson.id,
        Outcome.OK,
        0.0,
        stdout=recorded["stdout"],
        panels=recorded["data"]["panels"],
        environment=recorded["environment"],
    )


class CountingRunner:
    """A runner (by default the real one), counting which lessons it was asked to execute."""

    def __init__(self, runner: Runner = run_example) -> None:
        self.calls: list[str] = []
        self.runner = runner

    def __call__(self, lesson: Lesson, limits: Limits) -> Execution:
        self.calls.append(lesson.id)
        return self.runner(lesson, limits)


def make_paths(root: Path) -> Paths:
    return Paths(root / "content", root / "recordings", root / "site", root / ".cache")


def copy_course(root: Path, *, broken: bool = True) -> Paths:
    paths = make_paths(root)
    shutil.copytree(FIXTURE_COURSE, paths.content)
    if not broken:
        shutil.rmtree(paths.content / "lessons" / BROKEN)
    return paths


def load_errors(paths: Paths) -> str:
    """What loading the course at `paths` reports (it must fail)."""
    from builder.core.errors import BuildError
    from builder.course.model import load_course

    with pytest.raises(BuildError) as caught:
        load_course(paths.content)
    return str(caught.value)


@pytest.fixture
def course_copy(tmp_path: Path) -> Paths:
    """A fresh, unrecorded copy of the fixture course, with its broken lesson."""
    return copy_course(tmp_path)


@pytest.fixture(scope="session")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture course without its broken lesson, recorded once per session from the
    canned runs (tests that need real JAX run examples themselves, marked slow)."""
    from builder.build.pipeline import build

    root = tmp_path_factory.mktemp("recorded")
    build(copy_course(root, broken=False), execute=True, jobs=2, runner=canned_run)
    return root


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Paths:
    """A private copy of the recorded fixture course that a test may change."""
    root = tmp_path / "course"
    shutil.copytree(recorded_template, root)
    return make_paths(root)


Edit = Callable[[Path, str, str], None]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def killed_at(build: Callable[[], object], write: int) -> bool:
    """Run `build` in a forked child that is killed (SIGKILL) at its `write`-th rename;
    False when it finished before that."""
    pid = os.fork()
    if pid == 0:  # the child: count renames, die at the chosen one
        real, count = os.replace, [0]

        def replace(*args: object, **kwargs: object) -> None:
            count[0] += 1
            if count[0] == write:
                os.kill(os.getpid(), signal.SIGKILL)
            real(*args, **kwargs)  # type: ignore[arg-type]

        os.replace = replace  # type: ignore[assignment]
        try:
            build()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)
