"""Shared fixtures: the fixture course copied into a temporary folder, recorded once."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from builder.core.observe import Paths
from tests.helpers import canned_run, copy_course, make_paths


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches every process the tests start, as from a terminal: a suite started in
    the background by a shell without job control (`.ci/run &`) inherits SIGINT ignored, and
    so would each `serve` or build it starts, and a Python started with SIGINT ignored never
    raises KeyboardInterrupt (the tests that send it then timed out)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def course_copy(tmp_path: Path) -> Paths:
    """A fresh, unrecorded copy of the fixture course, with its broken lesson."""
    return copy_course(tmp_path)


@pytest.fixture(scope="session")
def recorded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture course without its broken lesson, recorded once per session from the
    canned runs (tests that need real JAX run examples themselves, marked slow)."""
    from builder.pipeline.build import build

    root = tmp_path_factory.mktemp("recorded")
    build(copy_course(root, broken=False), execute=True, jobs=2, runner=canned_run)
    return root


@pytest.fixture
def recorded(recorded_template: Path, tmp_path: Path) -> Paths:
    """A private copy of the recorded fixture course that a test may change."""
    root = tmp_path / "course"
    shutil.copytree(recorded_template, root)
    return make_paths(root)


@pytest.fixture(scope="module")
def course_template(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A course written by bench/generate.py, once a module: of the module's LESSONS lessons
    (3 when it says none)."""
    from bench.generate import generate

    root = tmp_path_factory.mktemp("course")
    generate(getattr(request.module, "LESSONS", 3), root)
    return root
