"""Issue 38 item 11: the scratch of a killed build is swept by the next build, and nothing
else (builder/core/scratch.py). A scratch folder is named with its process's pid and locked
while it lives; a folder is swept only when that process is gone and nobody holds the lock.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from builder.core.scratch import CLAIM, scratch, sweep


@pytest.fixture
def gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def _claimed(place: Path, pid: int, what: str = "search", random: str = "abc_1234") -> Path:
    """A folder as `scratch` makes it (its name and the builder's claim), with a page."""
    path = place / f"coursebuilder-{pid}-{what}-{random}"
    path.mkdir()
    (path / CLAIM).write_text(f"coursebuilder scratch {pid} {random}\n")
    (path / "page.html").write_text("x")
    return path


def _users(place: Path, name: str) -> Path:
    path = place / name
    path.mkdir()
    (path / "page.html").write_text("x")
    return path


def test_only_scratch_of_a_process_that_is_gone_and_unlocked_is_swept(
    tmp_path: Path, gone_pid: int
) -> None:
    place = tmp_path / "tmp"
    place.mkdir()
    dead = _claimed(place, gone_pid)
    live_child = subprocess.Popen(["sleep", "60"])
    try:
        live = _claimed(place, live_child.pid)
        mine = _claimed(place, os.getpid())
        no_pid = _users(place, "coursebuilder-search-abc_1234")  # an older builder's: no owner
        theirs = _users(place, "other-tool-123")
        locked = _claimed(place, gone_pid, "example")  # held in another pid namespace
        held = os.open(locked, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(held, fcntl.LOCK_EX)
        target = _users(place, "target")
        link = place / f"coursebuilder-{gone_pid}-search-link_123"
        link.symlink_to(target)
        try:
            assert sweep((str(place),)) == [str(dead)]
        finally:
            os.close(held)
        for kept in (live, mine, no_pid, theirs, locked, target):
            assert (kept / "page.html").exists(), kept
        assert link.is_symlink()
    finally:
        live_child.kill()
        live_child.wait()


@pytest.mark.parametrize(
    "name",
    [
        "coursebuilder-2024-notes",  # a user's folders, deleted by the sweep of issue 38
        "coursebuilder-999996-home-x",
        "coursebuilder-999996-home-abc_1234-x",  # the rule's shape, with more after it
        "coursebuilder-999996--abc_1234",  # no `what`
        "coursebuilder-0999996-home-abc_1234",  # not a pid as the builder writes one
        "coursebuilder-999996-Home-abc_1234",  # `what` is never upper case
        "coursebuilder-999996-home-abc_12345",  # mkdtemp's part is 8 characters
    ],
)
def test_a_folder_named_almost_like_scratch_is_never_swept(tmp_path: Path, name: str) -> None:
    """Even with a claim naming its pid and last part: the name must be exactly the rule."""
    folder = _users(tmp_path, name)
    pid, _, last = name.removeprefix("coursebuilder-").partition("-")
    (folder / CLAIM).write_text(f"coursebuilder scratch {pid} {last.rpartition('-')[2]}\n")
    assert sweep((str(tmp_path),)) == []
    assert (folder / "page.html").read_text() == "x"


def test_scratch_without_the_builders_claim_is_never_swept(tmp_path: Path, gone_pid: int) -> None:
    """Named exactly as the builder names its scratch, its process gone, its lock free:
    without the claim (missing, a link to a true claim, a folder, another folder's claim,
    a FIFO, an empty file), it is not the builder's."""
    (tmp_path / "true-claim").write_text(f"coursebuilder scratch {gone_pid} linked12\n")
    missing = _users(tmp_path, f"coursebuilder-{gone_pid}-search-missing_")
    linked = _users(tmp_path, f"coursebuilder-{gone_pid}-search-linked12")
    (linked / CLAIM).symlink_to(tmp_path / "true-claim")
    folder = _users(tmp_path, f"coursebuilder-{gone_pid}-search-folder12")
    (folder / CLAIM).mkdir()
    other = _claimed(tmp_path, gone_pid, "search", "other123")
    copied = _users(tmp_path, f"coursebuilder-{gone_pid}-search-copied12")
    (copied / CLAIM).write_bytes((other / CLAIM).read_bytes())
    fifo = _users(tmp_path, f"coursebuilder-{gone_pid}-search-fifo1234")
    os.mkfifo(fifo / CLAIM)
    empty = _users(tmp_path, f"coursebuilder-{gone_pid}-search-empty123")
    (empty / CLAIM).write_text("")
    assert sweep((str(tmp_path),)) == [str(other)]
    for kept in (missing, linked, folder, copied, fifo, empty):
        assert (kept / "page.html").read_text() == "x", kept
    assert (tmp_path / "true-claim").exists()


def test_scratch_of_a_killed_process_is_swept(tmp_path: Path) -> None:
    """A real one: made by `scratch` in a process SIGKILLed while it held it."""
    made = tmp_path / "made"
    source = (
        "import os, signal, sys\n"
        "from builder.core.scratch import scratch\n"
        f"with scratch('lab-j3', {str(tmp_path)!r}) as folder:\n"
        "    (folder / 'page.html').write_text('x')\n"
        f"    open({str(made)!r}, 'w').write(str(folder))\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    here = Path(__file__).resolve().parents[2]
    killed = subprocess.run([sys.executable, "-c", source], cwd=here, check=False)
    assert killed.returncode == -signal.SIGKILL
    folder = Path(made.read_text())
    assert (folder / CLAIM).is_file()
    assert sweep((str(tmp_path),)) == [str(folder)]
    assert not folder.exists()


def test_a_scratch_folder_is_named_locked_and_removed(tmp_path: Path) -> None:
    with scratch("search", str(tmp_path)) as folder:
        assert folder.name.startswith(f"coursebuilder-{os.getpid()}-search-")
        probe = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(probe)
    assert not folder.exists()
