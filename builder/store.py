"""The build cache's pages and charts: key -> bytes tables in one SQLite file.

One file instead of one file per entry: creating a file costs 0.25-1 ms here (ext4 without
a journal checks every new inode against the ones deleted in the last 30 s), and a cold
build of 1,000 lessons stored 3,000 entries. SQLite writes them in one transaction per
worker. The cache is disposable: a file that is not a database, or any other SQLite error,
reads as a miss and is replaced on the next write (an OSError naming the file if it cannot
be); an entry is only ever served for its exact key (see builder.buildcache for what a key
covers).

A connection is never shared across fork(): each process opens its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

FILE = "cache.sqlite"
TABLES = ("pages", "charts")
LEGACY = ("pages", "charts")  # the folders of one file per entry that this file replaced

_open: dict[Path, tuple[int, Any]] = {}  # path -> (pid, connection)


def get(path: Path, table: str, key: str) -> bytes | None:
    """The bytes stored under `key`, or None (a miss, or an unreadable cache)."""
    import sqlite3

    try:
        row = _connection(path).execute(f"SELECT data FROM {table} WHERE key = ?", (key,))
        found = row.fetchone()
    except sqlite3.Error:
        return None
    return bytes(found[0]) if found else None


def put(path: Path, table: str, items: dict[str, bytes]) -> None:
    """Store `items` in one transaction."""
    if items:
        rows = list(items.items())
        _write(
            path, lambda db: db.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", rows)
        )


def keep_only(path: Path, table: str, keys: Iterable[str]) -> None:
    """Delete every entry of `table` whose key is not among `keys`."""

    def work(db: Any) -> None:
        db.execute("CREATE TEMP TABLE IF NOT EXISTS keep (key TEXT PRIMARY KEY)")
        db.execute("DELETE FROM keep")
        db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", ((k,) for k in keys))
        db.execute(f"DELETE FROM {table} WHERE key NOT IN (SELECT key FROM keep)")

    _write(path, work)


def delete(path: Path, table: str, keys: Iterable[str]) -> None:
    """Delete the entries of `table` under `keys` (nothing to do: no file opened)."""
    rows = [(key,) for key in keys]
    if rows:
        _write(path, lambda db: db.executemany(f"DELETE FROM {table} WHERE key = ?", rows))


def keys(path: Path, table: str) -> list[str]:
    """Every key of `table` (for tests and tools)."""
    import sqlite3

    try:
        return [row[0] for row in _connection(path).execute(f"SELECT key FROM {table}")]
    except sqlite3.Error:
        return []


def discard(path: Path) -> None:
    """Forget the cache file (and SQLite's companions) entirely."""
    close(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def close(path: Path | None = None) -> None:
    """Close this process's connection to `path` (every connection without one)."""
    for known in [path] if path is not None else list(_open):
        if known in _open:
            pid, connection = _open.pop(known)
            if pid == os.getpid():
                connection.close()


def _write(path: Path, work: Callable[[Any], object]) -> None:
    """Run `work` in one transaction. A cache that cannot be written is started afresh;
    if even that fails (a full disk, a read-only folder), an OSError names the file."""
    import sqlite3

    for attempt in range(2):
        try:
            with _transaction(path) as db:
                work(db)
            return
        except sqlite3.Error as error:
            if attempt:
                raise OSError(0, f"cannot write the build cache ({error})", str(path)) from None
            discard(path)


@contextlib.contextmanager
def _transaction(path: Path) -> Iterator[Any]:
    """One transaction (the connection is in autocommit mode: without BEGIN, each row of an
    executemany would be a transaction of its own), holding the write lock from the start."""
    db = _connection(path)
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back already (a full disk, say)
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _connection(path: Path) -> Any:
    import sqlite3

    if path in _open and _open[path][0] == os.getpid():
        return _open[path][1]
    for attempt in range(2):
        if not path.exists():
            import shutil

            for folder in LEGACY:
                shutil.rmtree(path.parent / folder, ignore_errors=True)
            path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            path, timeout=60, isolation_level=None, check_same_thread=False
        )
        try:
            # WAL: a worker reads while another commits. NORMAL: a crash may lose the last
            # transactions, never corrupt the file.
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            for table in TABLES:
                connection.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, data BLOB NOT NULL)"
                )
        except sqlite3.DatabaseError:
            connection.close()
            if attempt:
                raise
            discard(path)  # not a database, or a damaged one: start afresh
            continue
        _open[path] = (os.getpid(), connection)
        return connection
    raise AssertionError("unreachable")
