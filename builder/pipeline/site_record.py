"""The record of the files this builder wrote in a site folder: kept in the build's own
cache, never in the site, which holds nothing but what it publishes.

One record a site folder: `<cache>/sites/<digest>.txt`, the digest of the folder's resolved
path from the cache folder's (`../site` for a checkout's: moved or copied, it keeps its
record); a file name a line, headed by the folder's identity (st_dev, st_ino) and the sha256
of the index.html the builder wrote there. `make clean` removes it with the site.

`read` is what the builder knows of a site folder before it writes there (`Known`):
- the record, when it is of the folder there now: the same identity and no file the record
  does not list, or an index.html this builder wrote (its generator meta, or a digest the
  record holds: a base.html of the course's own may not have the meta). The identity alone
  is not enough: a folder deleted and made again by someone else often gets its inode
  number back, and a copied site has another;
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
from collections.abc import Iterable, Sequence
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
PAGE = re.compile(r"# index.html: ([0-9a-f]{64})")
MAX_PAGE_BYTES = 64 * 2**20  # an index.html this large is not one to recognise


# What name_problem finds in names put between newlines: characters (the newline itself is
# told by counting), and parts that are empty, '.' or '..' (strings found in C).
_ANY_WRONG = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\\\\]")
_WRONG_PARTS = (
    "\n\n",
    "\n/",
    "/\n",
    "//",
    "/./",
    "\n./",
    "/.\n",
    "\n.\n",
    "/../",
    "\n../",
    "/..\n",
    "\n..\n",
)


def first_problem(names: Sequence[str]) -> tuple[str, str] | None:
    """The first of `names` that `name_problem` finds a problem with, and the problem; None
    when every one is plainly a file's name inside a folder. The names are looked at
    together (a site lists tens of thousands), and one by one only when one is wrong."""
    joined = "\n" + "\n".join(names) + "\n"
    fine = joined.count("\n") == len(names) + 1 and not _ANY_WRONG.search(joined)
    if fine and not any(part in joined for part in _WRONG_PARTS):
        return None
    for name in names:
        if problem := name_problem(name):
            return name, problem
    return None


@dataclass(frozen=True)
class Record:
    names: frozenset[str]  # the files this builder wrote in the folder (temporary ones aside)
    pages: frozenset[str]  # sha256 of each index.html it wrote there that may be in place


@dataclass(frozen=True)
class Known:
    names: tuple[str, ...]  # the files an earlier build wrote there (or left, temporary)
    held: Record | None  # what this folder's record says (None: it has none)
    adopted: bool = False  # a site of this builder with no record: nothing of it is deleted


def record_path(cache: Path, out: Path) -> Path:
    """Where the record of the site folder `out` is kept: named by where the folder is
    from the cache folder, so that a checkout moved or copied with both keeps it."""
    digest = hashlib.sha256(os.fsencode(_from(cache, out))).hexdigest()[:32]
    return cache / RECORDS / f"{digest}.txt"


def read(out: Path, cache: Path, present: Iterable[str] = ()) -> Known:
    """What the builder knows it wrote in `out` (`present`: the files it holds); refuses a
    folder it did not make, and a record or marker it did not write."""
    path, identity = record_path(cache, out), _identity(out)
    _not_a_link(cache / RECORDS, "the folder of the records of the files this builder wrote")
    recorded, recorded_of = _read_record(path)
    legacy, _ = _read_record(out / LEGACY)
    if recorded is not None and not _recorded_here(out, recorded, identity == recorded_of, present):
        recorded = None
    if recorded is None and legacy is None:
        return _unrecorded(out)
    names = {*(recorded.names if recorded else ()), *(legacy.names if legacy else ())}
    names |= {LEGACY} if legacy is not None else set()
    held = recorded if recorded_of == identity else None  # None: recorded again, as this folder
    return Known(tuple(sorted(names)), held)


def _recorded_here(out: Path, record: Record, same: bool, present: Iterable[str]) -> bool:
    """Whether `record` is of the folder `out` holds: its index.html is this builder's (a
    page it wrote there, or any of its pages: a copy of the site), or the folder is the one
    recorded (`same` identity) and holds no file the record does not list. An identity alone
    is not enough: a folder deleted and made again often gets the inode number back."""
    listed = record.names | {LEGACY}  # an older builder's marker is its own
    if same and all(n in listed or TEMPORARY.fullmatch(n) for n in present):
        return True
    page = index_page(out)
    return page is not None and (ours(page) or _digest(page) in record.pages)


def save(out: Path, cache: Path, record: Record) -> None:
    """Record what this builder wrote in `out`, which exists."""
    identity = _identity(out)
    assert identity is not None, "the site folder is made before it is recorded"
    lines = [
        HEADER,
        f"# site folder, from the cache folder: {json.dumps(_from(cache, out))}\n",
        f"# identity: {identity[0]} {identity[1]}\n",
        *(f"# index.html: {digest}\n" for digest in sorted(record.pages)),
        "".join(n + "\n" for n in sorted(record.names)),
    ]
    path = record_path(cache, out)
    write_atomic(path, "".join(lines).encode(), durable=False, root=cache)
    _sweep(path)


def pages(out: Path, *coming: bytes | None) -> frozenset[str]:
    """The digests of `out/index.html` as it is and of the `coming` ones."""
    return frozenset(_digest(page) for page in (index_page(out), *coming) if page is not None)


def _sweep(record: Path) -> None:
    """The temporary files a build killed while it saved `record` left beside it, deleted
    (a build holds the cache's lock: no other is saving it)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(record.parent):
            if name.startswith(f".{record.name}.") and TEMPORARY.fullmatch(name):
                os.unlink(record.parent / name)  # a link itself, never what it points to


def index_page(out: Path) -> bytes | None:
    """The bytes of `out/index.html` when it is a regular file (not a link) of at most
    MAX_PAGE_BYTES, read through the one input door (builder/course/files.py), else None."""
    try:
        return read_file(out / "index.html", MAX_PAGE_BYTES, BuildError)
    except (OSError, BuildError):
        return None


def ours(page: bytes) -> bool:
    """Whether a site's index.html is a page this builder made (base.html's generator meta)."""
    return GENERATOR in page[:HEAD_BYTES]


def _digest(page: bytes) -> str:
    return hashlib.sha256(page).hexdigest()


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


def _read_record(path: Path) -> tuple[Record | None, tuple[int, int] | None]:
    """What the record (or old marker) at `path` lists (None when there is no such file),
    and the identity of the folder it says it is of (None: it says none)."""
    _not_a_link(path, "the list of files this builder wrote")
    try:
        data = read_file(path, MAX_RECORD_BYTES, BuildError)
    except FileNotFoundError:
        return None, None
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        lines = [raw.decode("utf-8", "surrogateescape") for raw in data.split(b"\n")]
    notes = [line for line in lines if not line or line.startswith("#")]
    names = [line for line in lines if line and not line.startswith("#")]
    if wrong := first_problem(names):
        line, problem = wrong
        number = lines.index(line) + 1
        shown = line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise BuildError(
            f"line {number} names {shown!r}, which {problem}: this builder lists only "
            "files inside the site; nothing was written or deleted",
            path=path,
            hint="delete that line (this builder never writes one), then run the command again",
        )
    digests: set[str] = set()
    identity: tuple[int, int] | None = None
    for line in notes:
        if found := IDENTITY.fullmatch(line):
            identity = (int(found[1]), int(found[2]))
        elif found := PAGE.fullmatch(line):
            digests.add(found[1])
    return Record(frozenset(names), frozenset(digests)), identity


def _unrecorded(out: Path) -> Known:
    """A site folder with no record: nothing, the temporary files a killed first build left
    (to be deleted), or a site this builder made (adopted); any other is refused."""
    refused = BuildError(
        "is not empty and was not made by this builder; refusing to write the site there",
        path=out,
        hint="pass an empty or new folder with --out",
    )
    page = index_page(out)
    if page is not None and ours(page):
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
