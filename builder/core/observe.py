"""What a build is about to read, observed before it reads anything: the metadata of every
input file and of the site folder, the interpreter's package folders and the versions
installed there, and where the builder's own code and templates live.

Metadata, not bytes (as make and git do); a file is (mtime_ns, size, inode, ctime_ns).
What its times are compared with (`clock`) is the file system's own clock, as git compares
them with its index file's mtime. Editors' lock, swap and backup files are never inputs.
Standard library only: the no-op is decided before anything heavy is imported.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

NOT_INSTALLED = "not installed"
RACY_NS = 2_000_000_000  # a coarse file system's tick (FAT's), when its clock is not read
CLOCK = ".clock-"  # the files `clock` makes in the cache folder (and removes at once)
BUILDER = Path(__file__).resolve().parent.parent  # the builder package
TEMPLATES = BUILDER / "render" / "templates"
# The packages that matter, in one table. A recording's environment states the versions of
# RECORDED (its probe reads them; a page's "Run it yourself" pins them); a Dask worker must
# have GUARDED as this checkout pins them; PACKAGES are every one a recording's environment
# or a page's bytes depend on, whose versions key the build.
RECORDED = ("jax", "numpy", "matplotlib")
GUARDED = ("jax", "jaxlib", "numpy", "matplotlib")
PACKAGES = (
    *RECORDED,
    "pygments",
    "jinja2",
    "markdown-it-py",
    "mdit-py-plugins",
    "latex2mathml",
)

Snapshot = dict[str, tuple[int, ...]]

# What editors leave beside the file being edited: Emacs' lock (.#name, a dangling link)
# and auto-save (#name#), backups (name~), Vim's swap files (.name.swp, .swo, ...) and the
# file it writes to test a folder (4913). No build reads them, and none is a change.
EDITOR_FILE = re.compile(r"\.#.*|#.*#|.*~|\..*\.sw[a-p]|4913")


def editor_file(name: str) -> bool:
    """Whether a file name is an editor's lock, swap or backup file (each begins with . or
    #, or ends with ~, or is 4913: the pattern only for those, as the walk asks of every
    file)."""
    if name[:1] not in (".", "#") and name[-1:] != "~" and name != "4913":
        return False
    return EDITOR_FILE.fullmatch(name) is not None


def snapshot(roots: Iterable[Path], deep: bool = True) -> Snapshot:
    """Metadata of every file under each root (each root itself when it is a file, or when
    `deep` is off). Links under a root are listed, never followed; a root that is a link to
    a folder is walked (the user named it: `--out` may be one); folders are listed as (-1,)."""
    files: Snapshot = {}
    for root in roots:
        try:
            info = root.lstat()
        except OSError:
            files[str(root)] = ()  # absent: its appearance is a change
            continue
        if deep and root.is_dir():
            _walk(str(root), files)
        else:
            files[str(root)] = _meta(info)
    return files


def _walk(folder: str, files: Snapshot) -> None:
    """Editor files are left out; a file or folder deleted while it is walked is absent
    (an editor's lock or swap file comes and goes while an author saves). A no-op is
    mostly this walk (several entries a lesson): a plain name costs no call."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                special = name[0] in "._#" or name[-1] == "~" or name == "4913"  # editor_file's
                if special and (name == "__pycache__" or editor_file(name)):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    _walk(entry.path, files)
                    continue
                try:
                    files[entry.path] = _meta(entry.stat(follow_symlinks=False))
                except FileNotFoundError:
                    continue
    except (FileNotFoundError, NotADirectoryError):
        return
    files[folder] = (-1,)


def _meta(info: os.stat_result) -> tuple[int, ...]:
    """What says a file changed. ctime too, as git does: a write always sets it, and unlike
    mtime it cannot be set back (an edit of the same size with its mtime restored shows)."""
    return (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)


def metadata(paths: Iterable[str]) -> Snapshot:
    """The metadata of each of `paths` that exists now (links not followed)."""
    files: Snapshot = {}
    for path in paths:
        with contextlib.suppress(OSError):
            files[path] = _meta(os.lstat(path))
    return files


def restat(taken: Snapshot, root: Path, names: Iterable[str]) -> Snapshot:
    """`taken` (a snapshot of `root`) with the metadata of `names` (files inside it, by
    their name there) and of their folders as they are now: what `snapshot([root])` gives
    when nothing else below `root` changed since `taken`, without walking all of it."""
    files, top = dict(taken), str(root)
    folders: set[str] = set()
    for name in names:
        *parts, leaf = name.split("/")
        if editor_file(leaf) or "__pycache__" in parts:
            continue
        path = os.path.join(top, *parts, leaf)
        try:
            files[path] = _meta(os.lstat(path))
        except FileNotFoundError:
            files.pop(path, None)
        folders.update(os.path.join(top, *parts[:n]) for n in range(1, len(parts) + 1))
    for folder in (top, *folders):
        try:  # the root is walked through a link; a link below it is listed as a file
            info = os.stat(folder) if folder == top else os.lstat(folder)
        except FileNotFoundError:
            files.pop(folder, None)
            continue
        files[folder] = (-1,) if stat.S_ISDIR(info.st_mode) else _meta(info)
    return files


def environment_files() -> list[Path]:
    """The interpreter and the folders packages are installed into (not their contents:
    installing or removing a package adds or removes a *.dist-info folder, which changes
    the folder's own mtime), resolved: the same interpreter reached through a link or a
    relative path is the same, and keeps the no-op."""
    folders = [p for p in sys.path if p and "site-packages" in p and os.path.isdir(p)]
    return [Path(os.path.realpath(p)) for p in (sys.executable, *folders)]


def environment_snapshot() -> Snapshot:
    return snapshot(environment_files(), deep=False)


def site_files(out: Path, site: Snapshot) -> dict[str, tuple[int, ...]]:
    """The files of a snapshot of the site folder, by their name inside it."""
    prefix = len(str(out)) + 1
    return {
        path[prefix:].replace(os.sep, "/"): meta
        for path, meta in site.items()
        if len(meta) > 1 and path != str(out)
    }


@dataclass(frozen=True)
class Paths:
    """Where a build reads the course and its recordings, and writes the site and its cache."""

    content: Path
    recordings: Path
    out: Path
    cache: Path


@dataclass(frozen=True)
class Observed:
    """What a build is about to read and the site folder as it is, taken before reading."""

    settings: tuple[str, ...]  # what the build was asked, and where it reads
    out: str  # the site folder, resolved
    inputs: Snapshot
    environment: Snapshot
    site: Snapshot
    taken_ns: int  # the wall clock: which observation it is (the index's rows name it)
    since: int = 0  # `clock` before the metadata was taken: a file not older is racy (0: all)
    roots: tuple[str, ...] = ()  # the input folders, resolved: the index's paths are under them

    @classmethod
    def take(cls, roots: list[Path], out: Path, cache: Path, *settings: str) -> Observed:
        taken = time.time_ns()
        since = clock(cache, [*roots, out])
        where = tuple(str(p.resolve()) for p in roots)
        environment = environment_snapshot()
        inputs = snapshot([*roots, TEMPLATES, BUILDER])
        site = snapshot([out])
        folder = str(out.resolve())
        seen = (*settings, *where), folder, inputs, environment, site, taken, since
        return cls(*seen, roots=where)


def clock(cache: Path, roots: Iterable[Path]) -> int:
    """What a file's mtime and ctime are compared with to tell whether it may have changed
    unseen since its metadata was taken (git's racy rule: builder.pipeline.index `racy`): the
    file system's clock now, as a file made in `cache` reads it, so a file written in the
    same tick is racy and one written before is not. When a root is on another file system
    than `cache`, or `cache` cannot be written: the wall clock less RACY_NS, a margin that
    covers the coarsest file system's tick."""
    margin = time.time_ns() - RACY_NS
    try:
        device = os.stat(cache).st_dev
        for root in (*roots, TEMPLATES, BUILDER):  # the builder's files are inputs too
            with contextlib.suppress(FileNotFoundError):  # absent: nothing of it to judge
                if os.stat(root).st_dev != device:
                    return margin
        name = os.path.join(cache, f"{CLOCK}{os.getpid()}-{time.time_ns()}")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            made = os.fstat(fd)
        finally:
            os.close(fd)
            os.unlink(name)
        return min(made.st_mtime_ns, made.st_ctime_ns)
    except OSError:
        return margin


def read_versions() -> dict[str, str]:
    from importlib import metadata

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = NOT_INSTALLED
    return versions
