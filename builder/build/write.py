"""Bring the site folder in line with the made site: write what changed, delete what is gone.

The site folder's marker file (`.coursebuilder-site`) lists every file the builder wrote
there. Before anything is renamed into place it lists the old files and the new ones, and
after, the new ones only: a build stopped at any point leaves a list that covers whatever
it left behind, so the next build can remove it. Only files on that list are ever deleted,
only inside the site folder and never through a symbolic link; a folder that holds other
files and no marker is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BuildError
from ..core.fsutil import Staging, cannot_write, write_atomic
from ..course.rules import read_file

MARKER = ".coursebuilder-site"
TEMPORARY = re.compile(r"(?:.*/)?\.[^/]+\.[0-9]+-[0-9]+\.tmp")  # fsutil's, beside its file
MAX_MARKER_BYTES = 256 * 2**20  # a name a line: millions of files
HEADER = "# made by python -m builder; every file listed here is regenerated\n"


@dataclass(frozen=True)
class Written:
    written: int
    removed: int
    total: int


def write(
    files: dict[str, bytes], names: Iterable[str], out: Path, present: Iterable[str] = ()
) -> Written:
    """Write `files` (the changed ones; the others of `names` are in place already), then
    delete the files an earlier build wrote that are not among `names`, and the temporary
    files a stopped build left among `present` (the site folder's files)."""
    names = sorted(set(names))
    before = _listed(out) + [name for name in present if TEMPORARY.fullmatch(name)]
    try:
        if not set(names) <= set(before):
            _list(out, sorted(set(before) | set(names)))
        with Staging(out) as staging:
            staging.add(files)
            written = staging.commit()
    except OSError as error:
        raise cannot_write(error, "the previous site is unchanged") from None
    try:
        gone = sorted(set(before) - set(names))
        _remove(out, gone)
        if names != before:
            _list(out, names)
    except OSError as error:
        raise cannot_write(error, "the new site is written; some old files remain") from None
    return Written(written, len(gone), len(names))


def _listed(out: Path) -> list[str]:
    """The files the marker lists; refuses a folder this builder did not make."""
    try:
        text = read_file(out / MARKER, MAX_MARKER_BYTES, BuildError).decode("utf-8")
    except FileNotFoundError:
        if out.is_dir() and any(out.iterdir()):
            raise BuildError(
                "is not empty and was not made by this builder; refusing to write the site there",
                path=out,
                hint="pass an empty or new folder with --out",
            ) from None
        return []
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _list(out: Path, names: list[str]) -> None:
    listed = (HEADER + "".join(f"{n}\n" for n in names if not TEMPORARY.fullmatch(n))).encode()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / MARKER, listed, durable=False)


def _remove(out: Path, names: list[str]) -> None:
    """Delete each of `names` that is inside `out` with no link on the way, then the
    folders that leaves empty."""
    root = os.path.realpath(out)
    folders: set[str] = set()
    for name in names:
        path = os.path.join(root, name)
        parent = os.path.dirname(path)
        if os.path.realpath(parent) != os.path.normpath(parent) or not parent.startswith(root):
            continue  # a link on the way, or a name leaving the site: not ours to delete
        if os.path.isfile(path) or os.path.islink(path):
            os.unlink(path)
        while parent != root:
            folders.add(parent)
            parent = os.path.dirname(parent)
    for folder in sorted(folders, key=len, reverse=True):
        if not os.path.islink(folder) and os.path.isdir(folder) and not os.listdir(folder):
            os.rmdir(folder)
