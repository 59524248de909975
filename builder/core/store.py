"""The build's one cache: derived artifacts by the digest of what they are made of.

One SQLite file (`.cache/store.sqlite`) holds everything a build can skip (validated front
matter and recordings, highlighted code, compiled templates, pages, charts, search bundles)
and the index of the last good build. A key is `digest(...)` of an artifact's inputs, so an
entry is either right or never asked for; nothing is updated in place, and after a good
build only what its index references is kept (`commit`'s `keep`).

The store is disposable, and nothing in it can fail a build: a value whose checksum does
not match reads as missing; a file that is not a database of this layout is replaced; one
that cannot be replaced or written leaves the build without a cache; each is one line of
warning (`warn`) naming the file. Writes are gathered in memory until `commit` (the index
last), so a killed build leaves the store as the last commit left it. A connection is never
shared across fork(): a worker opens its own `Store`.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

FILE = "store.sqlite"
# The manifest table's rows, each pickled by its owner: the last good build's index
# (builder.pipeline.index): INDEX, what a no-op compares, then INDEX/site and INDEX/0, INDEX/1...
# (so that no one row holds it all)
INDEX = "index"
LAYOUT = (
    "CREATE TABLE IF NOT EXISTS artifacts (key TEXT PRIMARY KEY, data BLOB)",
    "CREATE TABLE IF NOT EXISTS manifest (id TEXT PRIMARY KEY, data BLOB)",
    "SELECT key, data FROM artifacts LIMIT 0",  # an older or foreign layout fails here
    "SELECT id, data FROM manifest LIMIT 0",
)


def digest(*parts: str | bytes) -> str:
    """The one key of the store: sha256 over the parts, each length-prefixed, so that no
    choice of parts can read as another."""
    import hashlib  # here: a no-op makes no key, and OpenSSL's is not loaded for it

    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.hexdigest()


class Store:
    """Bytes by key; values by key (pickled); the index of the last good build."""

    def __init__(self, folder: Path, warn: Callable[[str], None] = lambda message: None) -> None:
        self.folder = folder
        self.path = folder / FILE
        self.warn = warn  # told, once, of a damaged store and what was done about it
        self.warned = False
        self.pending: dict[str, bytes] = {}
        self.used: set[str] = set()  # every key asked for or added since the last prune
        self._scopes: dict[int, list[set[str]]] = {}  # by thread: see `recording`
        self._db: sqlite3.Connection | None = None

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[str]]:
        """The keys this thread asks for or adds inside the block (what an artifact was made
        with). Per thread: search bundles are made in threads side by side, and a key one
        of them stores must not count as used by another (it would never be pruned)."""
        used: set[str] = set()
        scopes = self._scopes.setdefault(threading.get_ident(), [])
        scopes.append(used)
        try:
            yield used
        finally:
            scopes.pop()  # blocks nest: this block's set is the last

    def use(self, *keys: str) -> None:
        """Count `keys` as asked for by this build (and by the artifact being made, if any):
        a value held elsewhere, as the preview holds its last build's, is kept in the store."""
        self.used.update(keys)
        for scope in self._scopes.get(threading.get_ident(), ()):
            scope.update(keys)

    def get(self, key: str) -> bytes | None:
        self.use(key)
        if key in self.pending:
            return self.pending[key]
        try:
            row = self._connection().execute("SELECT data FROM artifacts WHERE key = ?", (key,))
            found = row.fetchone()
        except sqlite3.Error:
            return None
        return _unsealed(found[0]) if found else None

    def put(self, key: str, data: bytes) -> None:
        self.use(key)
        self.pending[key] = data

    def value(self, key: str, make: Callable[[], T]) -> T:
        """The value stored under `key`, or `make()`'s, stored for next time."""
        data = self.get(key)
        if data is not None:
            with contextlib.suppress(Exception):  # damaged or from another version: remake
                found: T = pickle.loads(data)
                return found
        made = make()
        self.put(key, pickle.dumps(made, protocol=5))
        return made

    def manifest(self, row_id: str = INDEX) -> Any:
        """A row of the manifest table (the index's first by default), unpickled, or None."""
        try:
            found = self.row(row_id)
            return pickle.loads(found) if found is not None else None
        except Exception:  # damaged, or from another version of the builder
            return None

    def row(self, row_id: str) -> bytes | None:
        """A row of the manifest table as it was committed, or None (missing, damaged)."""
        try:
            row = self._connection().execute("SELECT data FROM manifest WHERE id = ?", (row_id,))
            return _unsealed(row.fetchone()[0])
        except Exception:
            return None

    def commit(
        self, index: Mapping[str, bytes] | None = None, keep: Iterable[str] | None = None
    ) -> None:
        """Write what this build added; with `index` (the rows of the last good build's index
        that changed, pickled: the others are kept), make it the last good build's, and,
        with `keep`, delete every entry it does not reference, then count used keys anew: a
        preview's store keeps what its last settle's site and the edits since use, not
        every page version of the session. Every row is sealed (a CRC-32), and all are
        written in one transaction."""

        pending = list(
            self.pending.items()
        )  # threads may add more meanwhile (builder.pipeline.make)

        def work(db: sqlite3.Connection) -> None:
            rows = ((key, _sealed(data)) for key, data in pending)
            db.executemany("INSERT OR REPLACE INTO artifacts VALUES (?, ?)", rows)
            for row_id, data in (index or {}).items():
                db.execute("INSERT OR REPLACE INTO manifest VALUES (?, ?)", (row_id, _sealed(data)))
            if keep is not None:
                stored = {row[0] for row in db.execute("SELECT key FROM artifacts")}
                stale = stored - set(keep)
                db.executemany("DELETE FROM artifacts WHERE key = ?", ((k,) for k in stale))

        if pending or index is not None or keep is not None:
            self._write(work)
        for key, _ in pending:
            self.pending.pop(key, None)
        if keep is not None:  # pruned: what counts as used starts again (a preview's settle)
            self.used = set()

    def keys(self) -> list[str]:
        """Every stored key (for tests and tools)."""
        try:
            return [row[0] for row in self._connection().execute("SELECT key FROM artifacts")]
        except sqlite3.Error:
            return []

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _write(self, work: Callable[[sqlite3.Connection], None]) -> None:
        """Run `work` in one transaction; a file that cannot be written (found damaged only
        now) is started afresh once; if that fails too (a full disk), this build's work is
        not kept, and a warning says why."""
        for attempt in range(2):
            try:
                db = self._connection()
                with db:  # one transaction: committed, or rolled back on any error
                    work(db)
                return
            except (sqlite3.Error, OSError) as error:
                if attempt:
                    self._warn(f"cannot be written ({error}); this build's work is not kept")
                    return
                self._discard()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self._db = _open(self.path)
            except (sqlite3.Error, OSError) as error:
                self._db = self._afresh(error)
        return self._db

    def _afresh(self, error: Exception) -> sqlite3.Connection:
        """A store that did not open: deleted and started afresh, or, where it cannot be
        (a folder in its place, a read-only disk), this build runs without one."""
        try:
            self._discard()
            db = _open(self.path)
        except (sqlite3.Error, OSError):
            self._warn(f"is not a usable database ({error}); building without the cache")
            return _open(":memory:")
        self._warn(f"was damaged ({error}); started afresh")
        return db

    def _warn(self, problem: str) -> None:
        if not self.warned:
            self.warned = True
            self.warn(f"the build cache {self.path} {problem}")

    def _discard(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")


def _open(path: Path | str) -> sqlite3.Connection:
    """A connection to the store at `path`, whose tables have the store's layout."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm", "-journal"):  # SQLite would write through a link
            if os.path.islink(f"{path}{suffix}"):
                os.unlink(f"{path}{suffix}")  # the link, never what it points to
    # Not tied to the thread that opened it: the preview opens the store as it starts and
    # builds in its watcher's loop, and search bundles are made in threads. SQLite is built
    # serialized here (sqlite3.threadsafety == 3), and the builder's process stays the only
    # writer (builder/pipeline/make.py).
    db = sqlite3.connect(path, timeout=60, check_same_thread=False)
    try:
        # WAL: a forked worker reads while another commits. NORMAL: a crash may lose the
        # last transactions, never corrupt the file.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        for statement in LAYOUT:
            db.execute(statement)
    except BaseException:
        db.close()
        raise
    return db


def _sealed(data: bytes) -> bytes:
    """`data` after its CRC-32: a row damaged on disk is found out, not used."""
    return zlib.crc32(data).to_bytes(4, "little") + data


def _unsealed(row: object) -> bytes | None:
    """The data of a sealed row, or None if the row is damaged or not bytes at all."""
    if not isinstance(row, bytes) or len(row) < 4:
        return None
    data = row[4:]
    return data if zlib.crc32(data).to_bytes(4, "little") == row[:4] else None
