"""A course folder moved or copied with its cache (`.cache`) and site: an edit made in the
new place shows on the next build's pages, and an edit of the original does not reach the
copy. The cache's index names the paths of the folder it was built in; a build in another
folder reads every input again (builder.pipeline.index `moved`), as a build from nothing.
And, moved or not, a file a build read that was absent when it observed its inputs (a
recording or sidecar it wrote, one saved while it ran) is in its index with metadata, so
that removing it shows (`Index.appeared`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import builder.pipeline.build as pipeline
from builder.core.observe import Observed, Paths
from builder.pipeline.build import build
from tests.helpers import (
    assert_like_a_clean_build,
    canned_run,
    copy_course,
    edit,
    make_paths,
    wall_clock,
)

PAGE = Path("l") / "first" / "index.html"  # basics-01's page
SIDECAR = "_inputs/basics-01.json"  # its sidecar, in recordings/


def _sidecar(paths: Paths) -> None:
    """The Python the recording names (same length: the size stays)."""
    sidecar = paths.recordings / SIDECAR
    edit(sidecar, '"python": "3.11.7"', '"python": "3.13.1"')
    assert json.loads(sidecar.read_text("utf-8"))["machine"]["python"] == "3.13.1"


def _prose(paths: Paths) -> None:
    edit(paths.content / "lessons" / "basics-01" / "lesson.md", "lists one", "names one")


def _data(paths: Paths) -> None:
    (paths.content / "lessons" / "speed-01" / "numbers.txt").write_text("7\n8\n9\n")


def _course(paths: Paths) -> None:
    edit(paths.content / "course.yml", "title: Fixture course", "title: Moved course")


def _glossary(paths: Paths) -> None:
    edit(paths.content / "glossary.yml", "The traced program", "The moved program")


# What each edit changes, and what a reader then sees: a file of the site and a text in it.
EDITS: dict[str, tuple[Callable[[Paths], None], Path, str]] = {
    "sidecar": (_sidecar, PAGE, "Python 3.13.1"),
    "prose": (_prose, PAGE, "names one equation"),
    "data": (_data, Path("l") / "settings" / "numbers.txt", "7\n8\n9\n"),
    "course.yml": (_course, PAGE, "Moved course"),
    "glossary": (_glossary, PAGE, "The moved program"),
}


def _mv(source: Path, target: Path) -> None:
    os.rename(source, target)


def _cp_a(source: Path, target: Path) -> None:
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


def _copytree(source: Path, target: Path) -> None:
    shutil.copytree(source, target)  # copy2: mtimes kept, not inodes


MOVES = {"mv": _mv, "cp -a": _cp_a, "copytree": _copytree}


def _built(root: Path) -> Paths:
    """The fixture course in `root`, recorded (canned runs) and built: the build that
    writes recordings and their sidecars, as `make site` does."""
    paths = copy_course(root, broken=False)
    build(paths, execute=True, jobs=1, runner=canned_run)
    return paths


def _shown(paths: Paths, where: Path) -> str:
    return (paths.out / where).read_text("utf-8")


@pytest.mark.parametrize("kind", EDITS)
@pytest.mark.parametrize("move", MOVES)
def test_an_edit_after_moving_the_course_shows(tmp_path: Path, move: str, kind: str) -> None:
    _built(tmp_path / "a")
    MOVES[move](tmp_path / "a", tmp_path / "b")
    moved = make_paths(tmp_path / "b")
    change, where, seen = EDITS[kind]
    assert seen not in _shown(moved, where)
    change(moved)
    build(moved, execute=False, jobs=1)
    assert seen in _shown(moved, where)
    assert_like_a_clean_build(moved, tmp_path / "clean")


@pytest.mark.parametrize("kind", ["sidecar", "prose", "glossary"])
def test_an_edit_of_the_original_does_not_reach_the_copy(tmp_path: Path, kind: str) -> None:
    original = _built(tmp_path / "a")
    _cp_a(tmp_path / "a", tmp_path / "b")
    copy = make_paths(tmp_path / "b")
    change, where, seen = EDITS[kind]
    change(original)
    build(copy, execute=False, jobs=1)
    build(original, execute=False, jobs=1)
    assert seen not in _shown(copy, where)
    assert seen in _shown(original, where)
    assert_like_a_clean_build(copy, tmp_path / "clean")


def test_an_edit_that_keeps_size_and_mtime_after_a_copy_shows(tmp_path: Path) -> None:
    """`cp -a` keeps every mtime; an edit of the same size with its mtime set back leaves
    size and mtime as the index has them (the ctime and the path do not)."""
    _built(tmp_path / "a")
    _cp_a(tmp_path / "a", tmp_path / "b")
    copy = make_paths(tmp_path / "b")
    sidecar = copy.recordings / "_inputs" / "basics-01.json"
    before = sidecar.stat()
    _sidecar(copy)
    os.utime(sidecar, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert sidecar.stat().st_size == before.st_size
    build(copy, execute=False, jobs=1)
    assert "Python 3.13.1" in _shown(copy, PAGE)


def test_the_command_line_build_of_a_moved_course_shows_the_edit(tmp_path: Path) -> None:
    """As the report ran it: `python -m builder site --no-execute` in the moved folder."""
    _built(tmp_path / "a")
    _mv(tmp_path / "a", tmp_path / "b")
    moved = make_paths(tmp_path / "b")
    _sidecar(moved)
    folders = {"--content": moved.content, "--recordings": moved.recordings}
    folders |= {"--out": moved.out, "--cache": moved.cache}
    command = ["-m", "builder", "site", "--no-execute", "-j", "1"]
    command += [str(part) for pair in folders.items() for part in pair]
    environment = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    run = subprocess.run(
        [sys.executable, *command],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert run.returncode == 0, run.stderr
    assert "Python 3.13.1" in _shown(moved, PAGE)


def test_a_recording_removed_after_the_build_that_wrote_it_shows(tmp_path: Path) -> None:
    """The recording did not exist when that build observed its inputs: its removal must
    not read as "absent then, absent now" (a no-op that kept the page)."""
    paths = _built(tmp_path / "a")
    assert "equations: 3" in _shown(paths, PAGE)
    (paths.recordings / "basics-01.json").unlink()
    build(paths, execute=False, jobs=1)
    page = _shown(paths, PAGE)
    assert "equations: 3" not in page and "recording is missing" in page
    assert_like_a_clean_build(paths, tmp_path / "clean")


def test_a_file_saved_during_a_build_then_removed_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sidecar saved (copied back) after a build observed its inputs and before it read
    them is read by that build (a prose edit makes it no no-op); its removal afterwards
    shows as well. The wall clock: no file is racy, which would have it read again anyway."""
    wall_clock(monkeypatch)
    paths = _built(tmp_path / "a")
    sidecar = paths.recordings / SIDECAR
    saved = sidecar.read_bytes()
    sidecar.unlink()
    while not build(paths, execute=False, jobs=1).noop:  # what the builds wrote, settled
        pass
    assert "Python 3.11.7" not in _shown(paths, PAGE)
    observed = pipeline.observe

    def then_saved(*args: Any) -> Observed:
        now = observed(*args)
        sidecar.write_bytes(saved)
        return now

    _prose(paths)
    monkeypatch.setattr(pipeline, "observe", then_saved)
    build(paths, execute=False, jobs=1)
    monkeypatch.setattr(pipeline, "observe", observed)
    assert "Python 3.11.7" in _shown(paths, PAGE)
    sidecar.unlink()
    build(paths, execute=False, jobs=1)
    assert "Python 3.11.7" not in _shown(paths, PAGE)
    assert_like_a_clean_build(paths, tmp_path / "clean")
