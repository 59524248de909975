"""The no-op: it unpickles only the index's first row (what it compares), yet every change
it guards against still makes the next build real; a site row that is missing, damaged or
of another build makes a build from nothing, never a crash or a wrong no-op."""

from __future__ import annotations

import dataclasses
import os
import pickle
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builder.core import observe as observed
from builder.core.observe import Observed, Paths
from builder.core.store import INDEX, Store
from builder.pipeline.build import build, observe, settings
from builder.pipeline.index import SITE, Head, Index, Published
from builder.pipeline.keys import Digests
from tests.helpers import assert_like_a_clean_build, synthetic_copy, wall_clock

PAGE = "l/sa01-002/index.html"


@pytest.fixture
def paths(course_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """A built copy of the course; its files were just written, so none is racy only when
    the racy rule reads the wall clock (the tests that are about the racy rule set their
    own clock)."""
    wall_clock(monkeypatch)
    paths = synthetic_copy(course_template, tmp_path)
    build(paths, execute=False, jobs=1)
    return paths


def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    unpickle = Store.manifest

    def spied(self: Store, row_id: str = INDEX) -> Any:
        read.append(row_id)
        return unpickle(self, row_id)

    monkeypatch.setattr(Store, "manifest", spied)
    return read


def test_a_noop_unpickles_only_the_first_row(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = rows_read(monkeypatch)
    assert build(paths, execute=False, jobs=1).written == 0
    assert read == [INDEX], "the files and traces are not the no-op's to read"
    (paths.out / PAGE).write_text("x")
    read.clear()
    assert build(paths, execute=False, jobs=1).written == 1
    assert SITE in read, "a real build reads the rest"
    assert_like_a_clean_build(paths, tmp_path)


def _touch(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1))


LESSON = "lessons/a01-002"
ON_DISK: dict[str, Callable[[Paths], None]] = {
    "an input edited": lambda p: _touch(p.content / LESSON / "lesson.md"),
    "an input added": lambda p: (p.content / LESSON / "data.csv").write_text("a\n1\n"),
    "an input removed": lambda p: (p.content / LESSON / "example.py").unlink(),
    "a recording removed": lambda p: (p.recordings / "a01-002.json").unlink(),
    "a site file changed": lambda p: _touch(p.out / PAGE),
    "a site file deleted": lambda p: (p.out / PAGE).unlink(),
    "a site file added": lambda p: (p.out / "stray.txt").write_text("x"),
}


def _other(field: str, value: Callable[[Any], Any]) -> Callable[[Paths, Observed], Observed]:
    return lambda _, now: dataclasses.replace(now, **{field: value(getattr(now, field))})


OBSERVED: dict[str, Callable[[Paths, Observed], Observed]] = {
    "another interpreter": _other("environment", lambda e: {**e, "/other/python": (1, 2, 3, 4)}),
    "a package installed": _other(
        "environment", lambda e: {k: (m[0] + 1, *m[1:]) for k, m in e.items()}
    ),
    "other settings": lambda paths, _: observe(paths, settings(True, "")),
    "another site folder": _other("out", lambda out: out + "-elsewhere"),
}


@pytest.mark.parametrize("change", [*ON_DISK, *OBSERVED, "a racy input"])
def test_each_change_the_noop_guards_makes_the_next_build_real(
    paths: Paths, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = Head.load(Store(paths.cache))
    assert head is not None
    asked = settings(False, "")
    assert head.unchanged(observe(paths, asked)), "nothing changed yet"
    now = observe(paths, asked)
    if change in ON_DISK:
        ON_DISK[change](paths)
        now = observe(paths, asked)
    elif change in OBSERVED:
        now = OBSERVED[change](paths, now)
    else:  # nothing changed, but the inputs were copied in the tick the build observed them
        newest = max(max(m[0], m[3]) for m in head.seen.inputs.values() if len(m) > 1)
        head = dataclasses.replace(head, seen=dataclasses.replace(head.seen, since=newest))
    assert not head.unchanged(now)


def _put_row(paths: Paths, row_id: str, data: bytes | None) -> None:
    db = sqlite3.connect(paths.cache / "store.sqlite")
    with db:
        if data is None:
            db.execute("DELETE FROM manifest WHERE id = ?", (row_id,))
        else:
            db.execute("INSERT OR REPLACE INTO manifest VALUES (?, ?)", (row_id, data))
    db.close()


def _sealed(data: bytes) -> bytes:
    """As the store seals a row: its CRC-32 first."""
    return zlib.crc32(data).to_bytes(4, "little") + data


def _of_another_build(paths: Paths) -> None:
    old = Store(paths.cache).row(SITE)
    assert old is not None
    time.sleep(0.01)
    with (paths.content / LESSON / "lesson.md").open("a") as lesson:
        lesson.write("\nMore prose.\n")
    assert build(paths, execute=False, jobs=1).written > 0
    _put_row(paths, SITE, _sealed(old))


def _old_layout(paths: Paths) -> None:
    """The rows builders before the one index wrote: a manifest, and the index's head as a
    tuple."""
    last = _published(paths)
    _put_row(paths, "manifest", _sealed(pickle.dumps(last, protocol=5)))
    _put_row(paths, INDEX, _sealed(pickle.dumps(("salt", 0, 64), protocol=5)))


def _published(paths: Paths) -> Published | None:
    """The index's site row, when it is of its head."""
    store = Store(paths.cache)
    now = observe(paths, ())
    return Index.load(store, Head.load(store), now, "", Digests(), force=True).published


SECOND_ROW: dict[str, Callable[[Paths], None]] = {
    "missing": lambda paths: _put_row(paths, SITE, None),
    "damaged": lambda paths: _put_row(paths, SITE, b"\0\0\0\0not a pickle"),
    "not the expected tuple": lambda paths: _put_row(paths, SITE, _sealed(pickle.dumps(("x",)))),
    "of another build": _of_another_build,
    "of the old layout (one row)": _old_layout,
    "a part of its traces missing": lambda paths: _put_row(paths, f"{SITE}/5", None),
    "a part of its traces damaged": lambda paths: _put_row(paths, f"{SITE}/3", b"\0\0\0\0x"),
}


@pytest.mark.parametrize("damage", SECOND_ROW)
def test_an_index_row_missing_damaged_or_of_another_build_means_a_build_from_nothing(
    paths: Paths, tmp_path: Path, damage: str
) -> None:
    SECOND_ROW[damage](paths)
    assert _published(paths) is None
    (paths.out / PAGE).write_text("x")
    (paths.out / "index.html").unlink()
    assert build(paths, execute=False, jobs=1).written >= 2
    assert _published(paths) is not None
    assert_like_a_clean_build(paths, tmp_path)


def test_the_noop_imports_no_stage_of_a_real_build(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither Jinja2 nor markdown-it, nor builder.pipeline.stages: only the index's head.
    (Built again with the real clock, as a subprocess has it, and once more: that one
    confirms what the first left racy.)"""
    monkeypatch.undo()
    build(paths, execute=False, jobs=1, force=True)
    build(paths, execute=False, jobs=1)
    code = (
        "import sys; from builder.__main__ import main; code = main(sys.argv[1:]); "
        "heavy = sorted(m for m in ('jinja2', 'markdown_it', 'builder.pipeline.stages') "
        "if m in sys.modules); print(code, heavy)"
    )
    folders = ("content", "recordings", "out", "cache")
    where = [f"--{name}={getattr(paths, name)}" for name in folders]
    out = subprocess.run(
        [sys.executable, "-c", code, "render", *where],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.splitlines()[-1] == "0 []", out.stderr
    assert "0 written" in out.stderr


def test_the_build_after_one_that_left_racy_files_confirms_them_and_the_next_is_a_noop(
    course_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's racily clean entries: a file not older than the file system's clock when its
    metadata was taken may change unseen, so the next build reads it (an input) or compares
    it (a site file); finding it unchanged, it takes its metadata anew, later, and the
    build after that is a no-op. Here every file is racy for the second build (the first
    one's clock read as the dawn of time): it writes nothing and the third does nothing."""
    paths = synthetic_copy(course_template, tmp_path)
    monkeypatch.setattr(observed, "clock", lambda cache, roots: 0)
    assert build(paths, execute=False, jobs=1).written > 0
    monkeypatch.undo()
    second = build(paths, execute=False, jobs=1)
    assert (second.noop, second.written, second.removed) == (False, 0, 0)
    assert build(paths, execute=False, jobs=1).noop
    assert_like_a_clean_build(paths, tmp_path)


def test_site_three_times_in_a_row_ends_in_a_noop(course_template: Path, tmp_path: Path) -> None:
    """With the real clock and no pause: the second build writes nothing (it confirms the
    files the first wrote in its last tick, if any), the third is a no-op."""
    paths = synthetic_copy(course_template, tmp_path)
    results = [build(paths, execute=False, jobs=1) for _ in range(3)]
    assert results[0].written > 0 and not results[0].noop
    assert (results[1].written, results[1].removed) == (0, 0)
    assert results[2].noop


def test_the_clock_is_the_file_systems_and_falls_back_to_a_margin_where_it_cannot_be(
    tmp_path: Path,
) -> None:
    """observe.clock reads the file system's clock from a file it makes in the cache folder
    (and removes); a cache that is a file, or missing, or a root on another file system
    (/dev/shm: another clock, perhaps a coarser one) gets the wall clock less the margin."""
    cache, root = tmp_path / "cache", tmp_path / "content"
    cache.mkdir()
    root.mkdir()
    before = time.time_ns()
    read = observed.clock(cache, [root])
    assert before - observed.RACY_NS // 2 < read <= time.time_ns()
    assert list(cache.iterdir()) == [], "the clock's file is removed"
    (tmp_path / "a-file").write_text("not a folder")
    elsewhere = Path("/dev/shm")
    for where, roots in [
        (tmp_path / "a-file", [root]),
        (tmp_path / "missing", [root]),
        (cache, [root, elsewhere]),
    ]:
        if where == cache and (
            not elsewhere.is_dir() or elsewhere.stat().st_dev == cache.stat().st_dev
        ):
            continue  # no other file system here
        read = observed.clock(where, roots)
        assert before - observed.RACY_NS <= read <= time.time_ns() - observed.RACY_NS, where
