"""Scratch folders (an example's working folder, a probe's), and the sweep of those a killed
build left behind.

A scratch folder is named `coursebuilder-<pid>-<what>-<random>` (`what`: lowercase letters and
digits in words joined by `-`; `random`: mkdtemp's 8 of `[a-z0-9_]`), holds the builder's
claim `.coursebuilder-scratch` (one line: `coursebuilder scratch <pid> <random>`, written
when it is made), and its process holds an flock on it while it lives. Each build that is
not a no-op first sweeps /dev/shm and the temporary folder: a folder whose name is exactly
so, owned by this user, a real folder (not a link), holding the claim (a regular file, not
a link) that names the same pid and random part, whose process is gone and whose lock
nobody holds (a process in another pid namespace may share it) was left by a killed build,
and is deleted; nothing else there is touched (a name alone is no proof: a user's
`coursebuilder-2024-notes` was deleted). Without the sweep, a folder in /dev/shm (where
builders before issue 60 indexed the search) would hold its memory until a reboot.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .lineage import alive, held

PREFIX = "coursebuilder-"
MEMORY = "/dev/shm"
_NAME = re.compile(r"coursebuilder-([1-9][0-9]*)-[a-z0-9]+(?:-[a-z0-9]+)*-([a-z0-9_]{8})")
CLAIM = ".coursebuilder-scratch"  # in each scratch folder: the builder made it
_CLAIM_BYTES = 64
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
logger = logging.getLogger(__name__)


@contextlib.contextmanager
def scratch(what: str, where: str | None = None) -> Iterator[Path]:
    """A new scratch folder in `where` (default: the temporary folder), held (locked) while
    the block runs and deleted after it; `what` ([a-z0-9-]) says what it is for."""
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{what}-", dir=where))
    lock = None
    try:
        lock = os.open(folder, _FOLDER)
        fcntl.flock(lock, fcntl.LOCK_EX)
        _claim(lock, folder.name)
        with held(lock):  # a worker forked meanwhile (the preview's) lets go of it
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if lock is not None:
            os.close(lock)


def sweep(places: tuple[str, ...] | None = None) -> list[str]:
    """Delete the scratch folders killed builds left in `places` (default /dev/shm and the
    temporary folder); the paths deleted."""
    if places is None:
        places = tuple(dict.fromkeys((MEMORY, tempfile.gettempdir())))
    swept = []
    for place in places:
        try:
            names = [name for name in os.listdir(place) if name.startswith(PREFIX)]
        except OSError:  # no /dev/shm here, or not ours to list
            continue
        for name in names:
            path = os.path.join(place, name)
            if _left_behind(path, name) and _free(path, name):
                shutil.rmtree(path, ignore_errors=True)
                swept.append(path)
    if swept:
        logger.info("Removed %d scratch folder(s) left by killed builds", len(swept))
    return swept


def _claim(folder: int, name: str) -> None:
    """Write the builder's claim into the new folder (open as `folder`) named `name`."""
    found = _NAME.fullmatch(name)
    if found is None:
        raise ValueError(f"not a scratch folder's name: {name!r}")
    fd = os.open(CLAIM, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder)
    with os.fdopen(fd, "w") as claim:
        claim.write(_claim_line(found))


def _claim_line(found: re.Match[str]) -> str:
    return f"coursebuilder scratch {found[1]} {found[2]}\n"


def _left_behind(path: str, name: str) -> bool:
    """`path` is a scratch folder of this user's whose process is gone."""
    found = _NAME.fullmatch(name)
    if found is None or int(found[1]) == os.getpid():
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    return not alive(int(found[1]))


def _free(path: str, name: str) -> bool:
    """The folder holds the builder's claim to `name`, and no process holds its lock (its
    owner is gone everywhere)."""
    try:
        fd = os.open(path, _FOLDER)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return _claimed(fd, name)
    except OSError:
        return False
    finally:
        os.close(fd)


def _claimed(folder: int, name: str) -> bool:
    """The folder (open as `folder`) holds the claim to `name`: a regular file of this
    user's, never through a link, naming its pid and random part."""
    found = _NAME.fullmatch(name)
    claim = os.open(CLAIM, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    try:
        info = os.fstat(claim)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or found is None:
            return False
        return os.read(claim, _CLAIM_BYTES).decode("ascii", "replace") == _claim_line(found)
    finally:
        os.close(claim)
