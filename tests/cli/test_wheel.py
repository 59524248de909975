"""Tested as an author would (slow, minutes; network or a warm pip cache): the wheel built
from this checkout's files, installed into a fresh virtual environment, gives the
`coursebuilder` command; `coursebuilder new` starts a course, and there the course's own
Makefile sets up its own .venv from its lock with that wheel as the builder (COURSEBUILDER=),
records the one real JAX example and renders the site (`make site`), then `make check`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.core.release import source_version
from tests.helpers import ROOT

pytestmark = pytest.mark.slow


def _run(command: list[str], cwd: Path, timings: dict[str, float], label: str) -> str:
    """Run as on a clean machine: no venv active, nothing of this checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    timings[label] = time.perf_counter() - started
    assert done.returncode == 0, f"{label}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def _tracked_copy(dest: Path) -> Path:
    """This checkout's files as git sees them (tracked, and new ones not ignored): a wheel
    built here is what a clone would build, and nothing is left in the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if name.startswith(("content/", "recordings/", "tests/", "bench/")):
            continue
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def test_the_wheel_installs_a_command_whose_new_course_builds_with_make(tmp_path: Path) -> None:
    timings: dict[str, float] = {}
    tree = _tracked_copy(tmp_path / "tree")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", ".", "-w", str(tmp_path)],
        tree,
        timings,
        "pip wheel",
    )
    wheel = next(tmp_path.glob("coursebuilder-*-py3-none-any.whl"))
    tool = tmp_path / "tool"
    _run([sys.executable, "-m", "venv", str(tool)], tmp_path, timings, "venv")
    lock = ROOT / "builder" / "scaffold" / "starter" / "requirements.lock"
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(
        "".join(x + "\n" for x in lock.read_text().splitlines() if "coursebuilder" not in x)
    )
    pip = [str(tool / "bin" / "python"), "-m", "pip", "install", "-q"]
    _run([*pip, "-c", str(constraints), str(wheel)], tmp_path, timings, "pip install")
    command = str(tool / "bin" / "coursebuilder")
    # the installed command runs what `python -m builder` runs (its process policy too)
    assert "from builder.__main__ import entry" in Path(command).read_text()
    out = _run([command, "--version"], tmp_path, timings, "--version")
    assert out == f"coursebuilder {source_version()}\n"

    out = _run([command, "new", "course"], tmp_path, timings, "coursebuilder new")
    course = tmp_path / "course"
    assert "content/lessons/basics-01/example.py" in out and (course / "Makefile").is_file()
    make = ["make", f"PYTHON={sys.executable}", f"COURSEBUILDER={wheel}"]
    out = _run([*make, "site"], course, timings, "make site")
    assert "executed 1 example(s)" in out
    page = (course / "site" / "l" / "first-jaxpr" / "index.html").read_text()
    assert "softplus" in page and "Equations per function" in page
    assert (course / "recordings" / "basics-01.json").is_file()
    where = _run(
        [str(course / ".venv" / "bin" / "python"), "-c", "import builder; print(builder.__file__)"],
        tmp_path,
        timings,
        "where",
    )
    assert Path(where.strip()).is_relative_to(course / ".venv")  # the wheel's, not ROOT's
    out = _run([*make, "check"], course, timings, "make check")
    assert "All 1 recordings are fresh." in out
    print({label: round(seconds, 1) for label, seconds in timings.items()})
