"""The no-op check: skip a build when nothing it reads or wrote has changed since the last one.

Like make and git, it compares file metadata, not bytes: (mtime_ns, size, inode, ctime_ns) of
every file under
content/, recordings/, templates/ and builder/, plus the interpreter and its site-packages
folders (installing a package changes them), and of every file in the site folder. A stamp
is taken *before* a build reads anything and saved after it succeeds, so an edit made during
a build shows up in the next one. As in git's "racy" rule, a stamp is not trusted when any
input changed within RACY_NS of taking it: an edit in the same clock tick could keep size
and mtime. Standard library only: `python -m builder site` decides this before importing
pydantic, Jinja2 or markdown-it.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAMP_FILE = "build-stamp.marshal"  # marshal: a tenth of JSON's time for 10,000 entries
RACY_NS = 2_000_000_000
BUILDER = Path(__file__).resolve().parent
TEMPLATES = BUILDER.parent / "templates"
SKIP = ("__pycache__",)

Snapshot = dict[str, list[int]]


def snapshot(roots: Iterable[Path], deep: bool = True) -> Snapshot:
    """Metadata of every file under each root (and each root itself when it is a file, or
    when `deep` is off)."""
    files: Snapshot = {}
    for root in roots:
        try:
            info = root.stat()
        except OSError:
            files[str(root)] = []  # absent: its appearance is a change
            continue
        if deep and root.is_dir():
            _walk(str(root), files)
        else:
            files[str(root)] = _meta(info)
    return files


def _walk(folder: str, files: Snapshot) -> None:
    files[folder] = [-1]
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name in SKIP:
                continue
            if entry.is_dir():
                _walk(entry.path, files)
            else:
                files[entry.path] = _meta(entry.stat())


def code_roots() -> list[Path]:
    """The builder's own code and templates: a build depends on them too."""
    return [TEMPLATES, BUILDER]


def file_meta(path: Path) -> list[int]:
    """One file's entry in a snapshot."""
    return _meta(path.stat())


def _meta(info: os.stat_result) -> list[int]:
    """What says a file changed. ctime too, as git does: a write always sets it, and unlike
    mtime it cannot be set back (an edit of the same size with its mtime restored shows)."""
    return [info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns]


def environment_files() -> list[Path]:
    """The interpreter and the folders packages are installed into (not their contents:
    installing, upgrading or removing a package adds or removes a *.dist-info folder there,
    which changes the folder's own mtime; 10,000 stats of the files inside would not say more
    about what pip did)."""
    folders = [Path(p) for p in sys.path if p and Path(p).is_dir() and "site-packages" in p]
    return [Path(sys.executable), *folders]


@dataclass(frozen=True)
class BuildStamp:
    """What a build is about to read, taken before it reads it."""

    path: Path
    settings: dict[str, Any]
    inputs: Snapshot
    taken_ns: int
    out: Path
    site: Snapshot  # the site folder as it was when the stamp was taken

    @classmethod
    def take(cls, cache: Path, out: Path, inputs: list[Path], **settings: Any) -> BuildStamp:
        taken = time.time_ns()
        roots = [*inputs, *code_roots()]
        settings |= {
            "roots": [str(p.resolve()) for p in roots],
            "out": str(out.resolve()),
            "ci": os.environ.get("CI", ""),
        }
        files = snapshot(roots) | snapshot(environment_files(), deep=False)
        return cls(cache / STAMP_FILE, settings, files, taken, out, snapshot([out]))

    def unchanged_total(self) -> int | None:
        """The file count of the last build when nothing changed since it; None otherwise."""
        saved = _read(self.path)
        if (
            saved.get("settings") != self.settings
            or saved.get("inputs") != self.inputs
            or self._racy(saved.get("takenNs", 0))
            or saved.get("outputs") != self.site
        ):
            return None
        total = saved.get("total")
        return total if isinstance(total, int) else None

    def _racy(self, taken_ns: int) -> bool:
        newest = max((meta[0] for meta in self.inputs.values() if len(meta) > 1), default=0)
        return newest >= taken_ns - RACY_NS

    def forget(self) -> None:
        """Drop the saved stamp: a build that fails must never look current."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def save(self, total: int, site: Snapshot | None = None) -> None:
        """Remember this build; `site` is the site folder's snapshot after it, if taken."""
        from .fsutil import write_atomic

        record = {
            "settings": self.settings,
            "takenNs": self.taken_ns,
            "total": total,
            "inputs": self.inputs,
            "outputs": snapshot([self.out]) if site is None else site,
        }
        write_atomic(self.path, marshal.dumps(record), durable=False)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):  # missing, damaged, another Python
        return {}
    return data if isinstance(data, dict) else {}
