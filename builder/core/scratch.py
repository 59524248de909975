"""Scratch folders (the search indexer's pages, an example's working folder), and the sweep of
those a killed build left behind.

A scratch folder is named `coursebuilder-<pid>-<what>-<random>` and its process holds an
flock on it while it lives. Each build that is not a no-op first sweeps /dev/shm and the
temporary folder: a folder so named, owned by this user, a real folder (not a link), whose
process is gone and whose lock nobody holds (a process in another pid namespace may share
it) was left by a killed build, and is deleted; nothing else there is touched. Without the
sweep, a build killed while indexing would hold its pages in /dev/shm's memory until a
reboot.
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

PREFIX = "coursebuilder-"
MEMORY = "/dev/shm"
_NAME = re.compile(r"coursebuilder-([0-9]+)-[a-z0-9_-]+")  # what, then mkdtemp's [a-z0-9_]
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
logger = logging.getLogger(__name__)


@contextlib.contextmanager
def scratch(what: str, where: str | None = None) -> Iterator[Path]:
    """A new scratch folder in `where` (default: the temporary folder), held (locked) while
    the block runs and deleted after it; `what` ([a-z0-9-]) says what it is for."""
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{what}-", dir=where))
    held = None
    try:
        held = os.open(folder, _FOLDER)
        fcntl.flock(held, fcntl.LOCK_EX)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if held is not None:
            os.close(held)


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
            if _left_behind(path, name) and _free(path):
                shutil.rmtree(path, ignore_errors=True)
                swept.append(path)
    if swept:
        logger.info("Removed %d scratch folder(s) left by killed builds", len(swept))
    return swept


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
    return not _alive(int(found[1]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's; no such pid can exist
        return True
    return True


def _free(path: str) -> bool:
    """No process holds the folder's lock (its owner is gone everywhere)."""
    try:
        fd = os.open(path, _FOLDER)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
