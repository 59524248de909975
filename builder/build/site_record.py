"""The record of the files this builder wrote in a site folder: kept in the build's own
cache, never in the site, which holds nothing but what it publishes.

One record a site folder: `<cache>/sites/<digest>.txt`, the digest of the folder's resolved
path from the cache folder's (`../site` for a checkout's: moved or copied, it keeps its
record); a file name a line, headed by the folder's identity (st_dev, st_ino), so that a
folder deleted and made again at the same path by someone else is not taken for the one the
record describes. `make clean` removes it with the site.

`read` is what the builder knows of a site folder before it writes there (`Known`):
- the record, when it is this folder's, or the folder is a copy of the site it records
  (another identity, and its index.html is this builder's);
- an older builder's marker in the site itself (`.coursebuilder-site`), read once as the
  record and then deleted from the site like any file the builder no longer makes;
- with neither, a folder holding only this builder's temporary files (a first build killed
  while it wrote: they are deleted) or nothing;
- else a folder whose index.html carries the builder's generator mark (the site of a cache
  since deleted: `adopted`, written over, and nothing else in it deleted);
- any other folder is refused: `--out ~/Documents` writes and deletes nothing.

The record and the old marker are untrusted input: a link is not read, and a line that is
not plainly a file inside the site (fsutil.name_problem: `..`, an absolute path, `./`,
`//`, a backslash, a control character, not UTF-8) stops the build before it writes or
deletes anything, naming the file and the line.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BuildError
from ..core.fsutil import TEMPORARY, name_problem, write_atomic
from ..course.files import read_file

RECORDS = "sites"  # the cache's folder of records
LEGACY = ".coursebuilder-site"  # where builders before issue 43 kept the record: the site
MAX_RECORD_BYTES = 256 * 2**20  # a name a line: millions of files
GENERATOR = b'<meta name="generator" content="coursebuilder">'  # base.html's, in every page
HEAD_BYTES = 64 * 1024  # of index.html, where its <head> is
HEADER = "# the files python -m builder wrote in the site folder below; make clean removes both\n"
IDENTITY = re.compile(r"# identity: ([0-9]+) ([0-9]+)")


@dataclass(frozen=True)
class Known:
    names: tuple[str, ...]  # the files an earlier build wrote there (or left, temporary)
    held: frozenset[str] | None  # what this folder's record lists (None: it has none)
    adopted: bool = False  # a site of this builder with no record: nothing of it is deleted


def record_path(cache: Path, out: Path) -> Path:
    """Where the record of the site folder `out` is kept: named by where the folder is
    from the cache folder, so that a checkout moved or copied with both keeps it."""
    digest = hashlib.sha256(os.fsencode(_from(cache, out))).hexdigest()[:32]
    return cache / RECORDS / f"{digest}.txt"


def read(out: Path, cache: Path) -> Known:
    """What the builder knows it wrote in `out`; refuses a folder it did not make, and a
    record or marker it did not write."""
    path, identity = record_path(cache, out), _identity(out)
    _not_a_link(cache / RECORDS, "the folder of the records of the files this builder wrote")
    recorded, recorded_of = _read_names(path)
    legacy, _ = _read_names(out / LEGACY)
    if recorded_of != identity and (identity is None or not ours(out)):
        recorded = None  # another folder than this one, and not a copy of the site it records
    if recorded is None and legacy is None:
        return _unrecorded(out)
    names = {*(recorded or ()), *(legacy or ()), *((LEGACY,) if legacy is not None else ())}
    held = frozenset(recorded) if recorded is not None and recorded_of == identity else None
    return Known(tuple(sorted(names)), held)  # held None: recorded again, with this identity


def save(out: Path, cache: Path, names: list[str]) -> None:
    """Record `names` (temporary files aside) as the files this builder wrote in `out`,
    which exists."""
    identity = _identity(out)
    assert identity is not None, "the site folder is made before it is recorded"
    lines = [
        HEADER,
        f"# site folder, from the cache folder: {json.dumps(_from(cache, out))}\n",
        f"# identity: {identity[0]} {identity[1]}\n",
        *(f"{n}\n" for n in names if not TEMPORARY.fullmatch(n)),
    ]
    path = record_path(cache, out)
    write_atomic(path, "".join(lines).encode(), durable=False, root=cache)
    _sweep(path)


def _sweep(record: Path) -> None:
    """The temporary files a build killed while it saved `record` left beside it, deleted
    (a build holds the cache's lock: no other is saving it)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(record.parent):
            if name.startswith(f".{record.name}.") and TEMPORARY.fullmatch(name):
                os.unlink(record.parent / name)  # a link itself, never what it points to


def ours(out: Path) -> bool:
    """Whether `out/index.html` (a regular file, not a link) is a page this builder made."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(out / "index.html", flags)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and GENERATOR in os.read(fd, HEAD_BYTES)
    finally:
        os.close(fd)


def _from(cache: Path, out: Path) -> str:
    return os.path.relpath(out.resolve(), cache.resolve())


def _identity(out: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(out)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def _not_a_link(path: Path, what: str) -> None:
    if path.is_symlink():
        raise BuildError(
            f"is a symbolic link, not {what}; nothing was written or deleted",
            path=path,
            hint="delete the link, or pass an empty or new folder with --out",
        )


def _read_names(path: Path) -> tuple[list[str] | None, tuple[int, int] | None]:
    """The names `path` lists (None when there is no such file), and the identity of the
    folder it says they are in (None: it says none)."""
    _not_a_link(path, "the list of files this builder wrote")
    try:
        data = read_file(path, MAX_RECORD_BYTES, BuildError)
    except FileNotFoundError:
        return None, None
    names: list[str] = []
    identity: tuple[int, int] | None = None
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
            problem = name_problem(line)
        except UnicodeDecodeError:
            line, problem = raw.decode("utf-8", "replace"), "is not UTF-8"
        if not line or line.startswith("#"):
            found = IDENTITY.fullmatch(line)
            identity = (int(found[1]), int(found[2])) if found else identity
            continue
        if problem:
            raise BuildError(
                f"line {number} names {line!r}, which {problem}: this builder lists only "
                "files inside the site; nothing was written or deleted",
                path=path,
                hint="delete that line (this builder never writes one), then run the command again",
            )
        names.append(line)
    return names, identity


def _unrecorded(out: Path) -> Known:
    """A site folder with no record: nothing, the temporary files a killed first build left
    (to be deleted), or a site this builder made (adopted); any other is refused."""
    refused = BuildError(
        "is not empty and was not made by this builder; refusing to write the site there",
        path=out,
        hint="pass an empty or new folder with --out",
    )
    if ours(out):
        return Known((), None, adopted=True)

    def unreadable(error: OSError) -> None:
        gone = isinstance(error, (FileNotFoundError, NotADirectoryError))
        if not gone or error.filename != str(out):  # no folder yet, or a file: said on writing
            raise refused from None

    found: list[str] = []
    for folder, folders, files in os.walk(out, onerror=unreadable):  # links are not followed
        inside = os.path.relpath(folder, out)
        for name in [*files, *(f for f in folders if os.path.islink(os.path.join(folder, f)))]:
            relative = name if inside == "." else f"{inside}/{name}".replace(os.sep, "/")
            temporary = TEMPORARY.fullmatch(relative) and not name_problem(relative)
            if not temporary or not stat.S_ISREG(os.lstat(os.path.join(folder, name)).st_mode):
                raise refused
            found.append(relative)
    return Known(tuple(found), None)
