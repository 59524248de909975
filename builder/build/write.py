"""Bring the site folder in line with the made site: write what changed, delete what is gone.

The site folder's marker file (`.coursebuilder-site`) lists every file the builder wrote
there. Before anything is renamed into place it lists the old files and the new ones, and
after, the new ones only: a build stopped at any point leaves a list that covers whatever
it left behind, so the next build can remove it. Only files on that list are ever deleted,
only inside the site folder and never through a symbolic link, and every name written to it
passes the rules it is read with (`_listable`); a folder that holds other
files and no marker is refused, unless all it holds is this builder's temporary files (a
first build killed while it wrote): those are deleted.

The marker is read as untrusted input: it must be a regular file (not a link), and every
name in it plainly inside the site (fsutil.name_problem: no `..`, no absolute path, no
`./`, `//`, backslash or control character), or the build stops before it writes or deletes
anything. Every write and delete below the site folder goes through fsutil.open_below,
which opens one folder at a time and never follows a link (builder.core.fsutil's docstring).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BuildError
from ..core.fsutil import Staging, cannot_write, make_folder, name_problem, open_below, write_atomic
from ..course.files import read_file

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
    _listable(names)
    left = [name for name in present if TEMPORARY.fullmatch(name) and not name_problem(name)]
    before = _listed(out) + left
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


def _listable(names: list[str]) -> None:
    """Every name the marker will list passes the rules `_listed` reads it with, or nothing
    is written: a name with a newline would list two files, one of them not the builder's
    (the course's own files are refused at load, builder/course/files.py site_name)."""
    for name in names:
        problem = name_problem(name)
        if problem:
            raise BuildError(
                f"the site would hold a file named {name!r}, which {problem}; nothing was "
                "written or deleted",
                hint="rename the file the site publishes under that name",
            )


def _listed(out: Path) -> list[str]:
    """The files the marker lists; refuses a folder this builder did not make, and a marker
    this builder did not write."""
    marker = out / MARKER
    if marker.is_symlink():
        raise BuildError(
            "is a symbolic link, not the list of files this builder wrote; "
            "nothing was written or deleted",
            path=marker,
            hint="delete the link, or pass an empty or new folder with --out",
        )
    try:
        data = read_file(marker, MAX_MARKER_BYTES, BuildError)
    except FileNotFoundError:
        return _leftovers(out)
    names = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
            problem = name_problem(line)
        except UnicodeDecodeError:
            line, problem = raw.decode("utf-8", "replace"), "is not UTF-8"
        if not line or line.startswith("#"):
            continue
        if problem:
            raise BuildError(
                f"line {number} names {line!r}, which {problem}: this builder lists only "
                "files inside the site; nothing was written or deleted",
                path=marker,
                hint="delete that line (this builder never writes one), then run the command again",
            )
        names.append(line)
    return names


def _leftovers(out: Path) -> list[str]:
    """A site folder with no marker: the temporary files a killed first build left (to be
    deleted), or nothing; any other file (or a link, or a folder it cannot read) is someone
    else's, and refused."""
    refused = BuildError(
        "is not empty and was not made by this builder; refusing to write the site there",
        path=out,
        hint="pass an empty or new folder with --out",
    )

    def unreadable(error: OSError) -> None:
        gone = isinstance(error, (FileNotFoundError, NotADirectoryError))
        if not gone or error.filename != str(out):  # no folder yet, or a file: said on writing
            raise refused from None

    found: list[str] = []
    for folder, folders, files in os.walk(out, onerror=unreadable):  # links are not followed
        inside = os.path.relpath(folder, out)
        for name in [*files, *(f for f in folders if os.path.islink(os.path.join(folder, f)))]:
            relative = name if inside == "." else f"{inside}/{name}".replace(os.sep, "/")
            ours = TEMPORARY.fullmatch(relative) and not name_problem(relative)
            if not ours or not stat.S_ISREG(os.lstat(os.path.join(folder, name)).st_mode):
                raise refused
            found.append(relative)
    return found


def _list(out: Path, names: list[str]) -> None:
    listed = (HEADER + "".join(f"{n}\n" for n in names if not TEMPORARY.fullmatch(n))).encode()
    make_folder(out)
    write_atomic(out / MARKER, listed, durable=False)


def _remove(out: Path, names: list[str]) -> None:
    """Delete each of `names` that is inside `out` with no link on the way, then the
    folders that leaves empty."""
    root = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        folders: set[tuple[str, ...]] = set()
        for name in names:
            *parts, leaf = name.split("/")
            folder = open_below(root, parts)
            if folder is None:
                continue  # a link (or no folder) on the way: not ours to delete
            try:
                info = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
                if not stat.S_ISDIR(info.st_mode):
                    os.unlink(leaf, dir_fd=folder)  # a link itself, never what it points to
            except FileNotFoundError:
                pass
            finally:
                os.close(folder)
            folders.update(tuple(parts[:n]) for n in range(1, len(parts) + 1))
        for inside in sorted(folders, key=len, reverse=True):
            parent = open_below(root, inside[:-1])
            if parent is None:
                continue
            try:  # a link is not a folder (ENOTDIR); a folder still in use is not empty
                with contextlib.suppress(OSError):
                    os.rmdir(inside[-1], dir_fd=parent)
            finally:
                os.close(parent)
    finally:
        os.close(root)
