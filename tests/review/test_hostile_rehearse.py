"""Issue 38 item 3: `rehearse LOCK --out DIR` deletes only what a rehearsal made. A folder
given with --out that holds anything without the rehearsal's marker (another course, with
its committed recordings) is refused before anything is installed, written or deleted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.review.rehearse import MARKER, _seed, rehearse
from tests.helpers import copy_course, snapshot


@pytest.fixture
def other_course(tmp_path: Path) -> Path:
    """Another course's checkout: a committed recording, a site, a README."""
    other = tmp_path / "other-course"
    (other / "recordings").mkdir(parents=True)
    (other / "recordings" / "theirs-01.json").write_text('{"committed": true}')
    (other / "site").mkdir()
    (other / "site" / "index.html").write_text("their site")
    (other / "README.md").write_text("their course")
    return other


def test_out_naming_another_course_is_refused_and_nothing_is_deleted(
    tmp_path: Path, other_course: Path
) -> None:
    paths = copy_course(tmp_path / "mine", broken=False)
    lock = tmp_path / "next.lock"
    lock.write_text("iniconfig==2.0.0\n")
    before = snapshot(other_course)
    command = [sys.executable, "-m", "builder", "rehearse", str(lock), "--out", str(other_course)]
    command += ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    command += ["--cache", str(paths.cache)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: {other_course}: holds files a rehearsal did not make")
    assert f"no {MARKER}" in done.stderr and "-> give a new or empty folder" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(other_course) == before
    assert not (other_course / MARKER).exists()
    assert not list(paths.cache.glob("rehearse/*/venv"))  # refused before any install


def test_a_marker_that_is_a_link_proves_nothing(tmp_path: Path, other_course: Path) -> None:
    paths = copy_course(tmp_path / "mine", broken=False)
    (tmp_path / "forged").write_text("# made by a rehearsal\n")
    (other_course / MARKER).symlink_to(tmp_path / "forged")
    before = snapshot(other_course)
    lock = tmp_path / "next.lock"
    lock.write_text("iniconfig==2.0.0\n")
    with pytest.raises(BuildError, match="did not make"):
        rehearse(lock, paths.content, paths.recordings, paths.cache, out=other_course)
    assert snapshot(other_course) == before


def test_a_link_in_a_rehearsal_folder_is_removed_not_followed(
    tmp_path: Path, other_course: Path
) -> None:
    """Inside a folder a rehearsal made, `recordings` linked to another course's: the link
    goes, their recordings stay."""
    mine = tmp_path / "mine-recordings"
    mine.mkdir()
    (mine / "calm-01.json").write_text("{}")
    folder = tmp_path / "rehearsal"
    folder.mkdir()
    (folder / MARKER).write_text("# made by a rehearsal of python -m builder\n")
    (folder / "recordings").symlink_to(other_course / "recordings")
    before = snapshot(other_course)
    _seed(mine, folder / "recordings")
    assert snapshot(other_course) == before
    assert not (folder / "recordings").is_symlink()
    assert [p.name for p in (folder / "recordings").iterdir()] == ["calm-01.json"]
