"""A damaged build cache (.cache/store.sqlite) is ignored, with at most one line of warning,
and the site is byte for byte what a build from nothing makes."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import build_cli, charts_shown, snapshot, synthetic_copy

# -- a damaged store: ignored, with at most one line of warning ----------------------------


@pytest.fixture(scope="module")
def small_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench.generate import generate

    root = tmp_path_factory.mktemp("course")
    generate(4, root)
    return root


@pytest.fixture
def built(small_course: Path, tmp_path: Path) -> Path:
    """A copy of a small synthetic course (recorded, nothing executes), built once."""
    synthetic_copy(small_course, tmp_path)
    assert build_cli(tmp_path) == (0, "")
    return tmp_path


@pytest.fixture(scope="module")
def clean_site(small_course: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The site a build from nothing makes of the small course."""
    clean = tmp_path_factory.mktemp("clean")
    for name in ("content", "recordings"):  # copies: the course is read through no link
        shutil.copytree(small_course / name, clean / name)
    assert build_cli(clean)[0] == 0
    return snapshot(clean / "site")


def _truncate(store: Path) -> None:
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])


def _garble_middle(store: Path) -> None:
    data = bytearray(store.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes((b * 37 + 11) % 256 for b in range(4096))
    store.write_bytes(bytes(data))


def _garble_header(store: Path) -> None:
    data = bytearray(store.read_bytes())
    data[:100] = b"\xff" * 100
    store.write_bytes(bytes(data))


def _folder(store: Path) -> None:
    store.unlink()
    store.mkdir()
    (store / "something").write_text("a user's file")


def _wrong_layout(store: Path) -> None:
    store.unlink()
    db = sqlite3.connect(store)
    db.execute("CREATE TABLE artifacts (key TEXT PRIMARY KEY, value TEXT, extra INTEGER)")
    db.execute("CREATE TABLE manifest (name TEXT)")
    db.execute("INSERT INTO artifacts VALUES ('k', 'v', 1)")
    db.commit()
    db.close()


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(store: Path) -> None:
        db = sqlite3.connect(store)
        db.execute(statement)
        db.commit()
        db.close()

    return damage


def _flip_bits(store: Path) -> None:
    """Damage that leaves every row readable: one letter of each page and chart changed."""
    db = sqlite3.connect(store)
    for key, data in db.execute("SELECT key, data FROM artifacts").fetchall():
        flipped = data.replace(b"</html>", b"</htmX>").replace(b"</svg>", b"</svX>")
        db.execute("UPDATE artifacts SET data = ? WHERE key = ?", (flipped, key))
    db.commit()
    db.close()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "garbled in the middle": _garble_middle,
    "garbled header": _garble_header,
    "empty file": lambda store: store.write_bytes(b""),
    "not a database": lambda store: store.write_bytes(b"<html>not sqlite</html>" * 500),
    "a folder": _folder,
    "wrong table layout": _wrong_layout,
    "tables dropped": _sql("DROP TABLE artifacts"),
    "every blob garbled": _sql("UPDATE artifacts SET data = randomblob(length(data))"),
    "every blob cut short": _sql("UPDATE artifacts SET data = substr(data, 1, length(data)/2)"),
    "blobs of the wrong type": _sql(
        "UPDATE artifacts SET data = CASE abs(random()) % 3 WHEN 0 THEN NULL "
        "WHEN 1 THEN 'text' ELSE 42 END"
    ),
    "a bit flipped in every page and chart": _flip_bits,
    "manifest garbled": _sql("UPDATE manifest SET data = randomblob(200)"),
    "manifest of the wrong type": _sql(
        "UPDATE manifest SET data = X'80059505000000000000008c01789400942e'"  # pickle of ('x',)
    ),
    "manifest a NULL": _sql("UPDATE manifest SET data = NULL"),
    "a part of the index missing": _sql("DELETE FROM manifest WHERE id = 'index/1'"),
    "the index's site row missing": _sql("DELETE FROM manifest WHERE id = 'index/site'"),
    "the index's site row garbled": _sql(
        "UPDATE manifest SET data = randomblob(length(data)) WHERE id = 'index/site'"
    ),
    "the index's first row missing": _sql("DELETE FROM manifest WHERE id = 'index'"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_store_is_ignored_and_the_site_is_as_from_nothing(
    built: Path, clean_site: dict[str, bytes], damage: str
) -> None:
    """The store is damaged, and the site lost pages (so the build must take them from the
    store or make them): the build succeeds with at most one line of warning, and the site
    equals a build from nothing, and so does the one after it."""
    store = built / ".cache" / "store.sqlite"
    DAMAGE[damage](store)
    chart = charts_shown(built / "site", "l/sa01-002/index.html")[0]
    for page in ("index.html", "l/sa01-002/index.html", chart):
        (built / "site" / page).unlink()
    code, err = build_cli(built)
    assert code == 0, err
    assert len(err.splitlines()) <= 1 and "Traceback" not in err, err
    assert err == "" or str(store) in err, err
    assert snapshot(built / "site") == clean_site
    code, err = build_cli(built)
    assert code == 0 and snapshot(built / "site") == clean_site
    if damage == "a folder":
        assert "is not a usable database" in err and "building without the cache" in err
        assert (store / "something").read_text() == "a user's file", "never deleted"
