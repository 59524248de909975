"""Issue 56 item 5: the builder replaces only what is a regular file or nothing. A file a
command writes because a user named it (`schema --out`, `schema --dir`, `rehearse --report`)
that is a FIFO, a device, a folder or a link is an error naming it, and is left as it was (as
root, `--out /dev/null` replaced the system's /dev/null with a file)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.fsutil import write_atomic

REPO = Path(__file__).resolve().parents[2]


def fifo(path: Path) -> None:
    os.mkfifo(path)


def folder(path: Path) -> None:
    path.mkdir()


def link_outside(path: Path) -> None:
    outside = path.parent / "outside.txt"
    outside.write_text("the user's file\n")
    path.symlink_to(outside)


def device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root makes a device (mknod)")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null


PLACED: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (fifo, "is a FIFO (named pipe)"),
    "folder": (folder, "is a folder"),
    "link": (link_outside, "is a symbolic link"),
    "device": (device, "is a character device"),
}


def state(path: Path) -> tuple[int, str]:
    info = os.lstat(path)
    kept = path.read_text() if stat.S_ISLNK(info.st_mode) else ""
    return info.st_mode, kept


@pytest.mark.parametrize("kind", PLACED)
def test_schema_out_refuses_what_is_not_a_file(tmp_path: Path, kind: str) -> None:
    place, said = PLACED[kind]
    target = tmp_path / "schema.json"
    place(target)
    before = state(target)
    done = subprocess.run(
        [sys.executable, "-m", "builder", "schema", "--out", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {target}: {said}, not a file"), done.stderr
    assert "Traceback" not in done.stderr
    assert state(target) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_schema_dir_checks_every_file_before_writing_any(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "glossary.schema.json")
    assert main(["schema", "--dir", str(tmp_path)]) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["glossary.schema.json"]


def test_rehearse_report_is_refused_before_the_rehearsal(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    link_outside(report)
    lock = tmp_path / "next.lock"
    lock.write_text("iniconfig==2.0.0\n")
    code = main(["rehearse", str(lock), "--report", str(report), "--cache", str(tmp_path / "c")])
    assert code == 1
    assert (tmp_path / "outside.txt").read_text() == "the user's file\n"
    assert not (tmp_path / "c").exists()  # nothing installed first


def test_write_atomic_replaces_a_file_and_makes_a_missing_one(tmp_path: Path) -> None:
    write_atomic(tmp_path / "new.json", b"1")
    write_atomic(tmp_path / "new.json", b"2")
    assert (tmp_path / "new.json").read_bytes() == b"2"


def test_new_force_replaces_a_file_but_not_a_fifo(tmp_path: Path) -> None:
    """`new --force` replaces starter files of the same name; a FIFO there is not one."""
    os.mkfifo(tmp_path / "Makefile")
    assert main(["new", str(tmp_path), "--force"]) == 1
    assert stat.S_ISFIFO(os.lstat(tmp_path / "Makefile").st_mode)
    assert not (tmp_path / "content").exists()
