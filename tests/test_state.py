"""Incremental builds (builder.state): after any edit, a build that reuses the last build's
state leaves the site byte-identical to a build from nothing, and touches only the files the
edit changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder import site, state
from builder.course import Lesson
from builder.errors import BuildError
from builder.site import Paths, build
from tests.conftest import edit


def tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def metadata(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file's (inode, mtime): a rewritten file gets a new inode (written, then renamed)."""
    return {
        path.relative_to(folder).as_posix(): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
        if path.is_file()
    }


def from_nothing(paths: Paths, tmp_path: Path) -> dict[str, bytes]:
    """The site a build with no state, no cache and no previous site makes of `paths`."""
    clean = Paths(paths.content, paths.recordings, tmp_path / "clean-site", tmp_path / "clean")
    shutil.rmtree(clean.out, ignore_errors=True)
    shutil.rmtree(clean.cache, ignore_errors=True)
    build(clean, execute=False, jobs=1)
    return tree(clean.out)


def lesson_md(paths: Paths, lesson_id: str) -> Path:
    return paths.content / "lessons" / lesson_id / "lesson.md"


@pytest.fixture
def incremental(recorded: Paths) -> Paths:
    """The recorded course, built once more so that its state describes its site."""
    build(recorded, execute=False, jobs=1)
    assert (recorded.cache / state.STATE_FILE).exists()
    return recorded


def rebuild_and_compare(paths: Paths, tmp_path: Path) -> set[str]:
    """Build incrementally, compare with a build from nothing, return the files it changed."""
    before = metadata(paths.out)
    build(paths, execute=False, jobs=1)
    assert tree(paths.out) == from_nothing(paths, tmp_path)
    after = metadata(paths.out)
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def test_a_prose_edit_rewrites_that_page_and_its_search_bundle_only(
    incremental: Paths, tmp_path: Path
) -> None:
    edit(lesson_md(incremental, "speed-01"), "The scaled", "Freshly edited, the scaled")
    changed = rebuild_and_compare(incremental, tmp_path)
    assert "l/settings/index.html" in changed
    others = {n for n in changed if n != "l/settings/index.html"}
    assert others and all(n.startswith("search-index/speed-1/") for n in others), others


def test_after_a_build_from_nothing_an_edit_renders_only_its_page(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold build records the key of every page it makes, and a page's key does not depend
    on how its inputs were loaded (from the state or read afresh): the first edit after it
    renders neither the glossary, nor the recordings page, nor the index (0.3 s at 1,000)."""
    from builder import render

    shutil.rmtree(recorded.out)
    shutil.rmtree(recorded.cache)
    build(recorded, execute=False, jobs=1)
    made: list[str] = []
    real = render._page
    monkeypatch.setattr(render, "_page", lambda t, *a, **k: made.append(t) or real(t, *a, **k))
    edit(lesson_md(recorded, "speed-01"), "The scaled", "Freshly edited, the scaled")
    build(recorded, execute=False, jobs=1)
    assert made == ["lesson.html"]


def test_a_changed_lesson_reuses_only_what_is_unchanged_on_disk(
    incremental: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lesson whose lesson.md changed keeps its validated front matter when the front
    matter reads as before, and its recording when that file is as it was (builder.state;
    nothing is validated again on a prose edit). Settled files, so that reuse happens."""
    monkeypatch.setattr(state, "RACY_NS", 0)
    lesson, page = lesson_md(incremental, "basics-01"), incremental.out / "l" / "first"
    edit(lesson, "The function", "Reused: the function")  # body only: both reused
    rebuild_and_compare(incremental, tmp_path)
    recording = incremental.recordings / "basics-01.json"  # the recording changes too
    data = json.loads(recording.read_text())
    data["stdout"] += "re-recorded line\n"
    recording.write_text(json.dumps(data, indent=2))
    edit(lesson, "Reused: the function", "Again: the function")
    rebuild_and_compare(incremental, tmp_path)
    assert b"re-recorded line" in (page / "index.html").read_bytes()
    edit(lesson, "title: ", "title: Retitled ")  # the front matter changes: read again
    rebuild_and_compare(incremental, tmp_path)
    assert b"Retitled" in (page / "index.html").read_bytes()
    edit(lesson, "order: ", "order: -")  # and is still checked
    with pytest.raises(BuildError, match="order"):
        build(incremental, execute=False, jobs=1)


def test_a_prose_edit_imports_no_pydantic(recorded: Paths) -> None:
    """The lessons come back from the state as they were validated: nothing to validate,
    so pydantic (0.15 s of imports) stays out of a prose edit's process. Inputs settled
    (their mtimes set back) so that the state trusts them."""
    past = time.time() - 60
    for path in [*recorded.content.rglob("*"), *recorded.recordings.rglob("*")]:
        os.utime(path, (past, past))
    folders = ["--content", str(recorded.content), "--recordings", str(recorded.recordings)]
    folders += ["--out", str(recorded.out), "--cache", str(recorded.cache)]
    code = (
        "import sys; from builder.cli import main; code = main(sys.argv[1:]); "
        "print(code, sorted(m for m in ('pydantic', 'jax') if m in sys.modules))"
    )

    def site_build() -> str:
        command = [sys.executable, "-c", code, "site", "--no-execute", *folders]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    assert site_build() == "0 ['pydantic']\n"  # every lesson read again: utime set ctime
    edit(lesson_md(recorded, "speed-01"), "The scaled", "Freshly edited, the scaled")
    assert site_build() == "0 []\n"
    assert b"Freshly edited" in (recorded.out / "l" / "settings" / "index.html").read_bytes()


def test_a_title_edit_reaches_neighbours_navigation_and_index(
    incremental: Paths, tmp_path: Path
) -> None:
    edit(lesson_md(incremental, "basics-02"), "title: A lesson", "title: Renamed, a lesson")
    changed = rebuild_and_compare(incremental, tmp_path)
    for name in ("l/no-panels/index.html", "l/first/index.html", "l/settings/index.html"):
        assert name in changed  # the page and both neighbours (prev / next)
    for name in ("index.html", "a/basics/index.html", "static/nav.js", "recordings/index.html"):
        assert name in changed


def test_every_kind_of_edit_gives_the_site_a_build_from_nothing_gives(
    incremental: Paths, tmp_path: Path
) -> None:
    paths = incremental
    edits = [
        lambda: edit(lesson_md(paths, "basics-01"), "The function", "[[primitive]]s: the function"),
        lambda: edit(
            paths.content / "lessons" / "speed-01" / "example.py", "print", "print ;print"
        ),
        lambda: edit(paths.content / "glossary.yml", "The traced program", "The program traced"),
        lambda: edit(paths.content / "course.yml", "title:", "title: New"),
        lambda: shutil.move(paths.content / "lessons" / "speed-01", tmp_path / "parked"),
        lambda: shutil.move(tmp_path / "parked", paths.content / "lessons" / "speed-01"),
        lambda: (paths.recordings / "speed-01.json").unlink(),
        lambda: (paths.out / "l" / "first" / "index.html").write_text("vandalised"),
        lambda: (paths.out / "search-index" / "basics-1" / "pagefind-entry.json").unlink(),
        lambda: (paths.out / "stray.html").write_text("not the builder's"),
        lambda: (paths.cache / state.STATE_FILE).write_bytes(b"not a pickle"),
        lambda: (paths.cache / f"{state.CHUNK_PREFIX}0.pickle").write_bytes(b"\x80\x05junk"),
        lambda: (paths.cache / f"{state.CHUNK_PREFIX}0.pickle").unlink(),
    ]
    for number, change in enumerate(edits):
        change()
        rebuild_and_compare(paths, tmp_path / str(number))


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(
    incremental: Paths, tmp_path: Path
) -> None:
    """Size, mtime and inode can all be kept by an editor; ctime cannot (as git knows)."""
    path = lesson_md(incremental, "speed-01")
    info = path.stat()
    edit(path, "The scaled", "The SCALED")  # same length
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size
    rebuild_and_compare(incremental, tmp_path)
    assert b"The SCALED" in (incremental.out / "l" / "settings" / "index.html").read_bytes()


def test_a_failed_build_leaves_no_state_to_trust(incremental: Paths) -> None:
    edit(lesson_md(incremental, "speed-01"), "title:", "titel:")
    with pytest.raises(BuildError, match="titel"):
        build(incremental, execute=False, jobs=1)
    assert not (incremental.cache / state.STATE_FILE).exists()


def test_the_state_knows_the_site_as_it_is_after_the_build(incremental: Paths) -> None:
    """The site's snapshot after a build is worked out from what the build wrote and
    deleted, not taken again: it must equal a real one, or the next build trusts wrongly."""
    from builder import stamp

    edit(lesson_md(incremental, "speed-01"), "title: Settings", "title: Renamed settings")
    shutil.rmtree(incremental.out / "search-index" / "basics-1")  # a folder to bring back
    (incremental.out / "old" / "deep").mkdir(parents=True)
    (incremental.out / "old" / "deep" / "gone.html").write_text("a page no build makes")
    build(incremental, execute=False, jobs=1, seen=None)
    seen = site._inputs(incremental)
    remembered = state.load(
        incremental.cache, state.guard(incremental.content, incremental.recordings, seen)
    )
    assert remembered is not None
    assert remembered.site == stamp.snapshot([incremental.out])
    assert not (incremental.out / "old").exists()


def test_unchanged_lessons_are_not_written_to_the_state_again(
    incremental: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state, "CHUNK", 1)  # one lesson a file
    build(incremental, execute=False, jobs=1)
    files = {p.name: p.stat().st_mtime_ns for p in incremental.cache.glob("build-state-*")}
    assert len(files) == 3
    edit(lesson_md(incremental, "speed-01"), "The scaled", "Freshly edited, the scaled")
    build(incremental, execute=False, jobs=1)
    after = {p.name: p.stat().st_mtime_ns for p in incremental.cache.glob("build-state-*")}
    assert [name for name in files if after[name] != files[name]] == [
        f"{state.CHUNK_PREFIX}2.pickle"  # lessons by folder: basics-01, basics-02, speed-01
    ]


def test_a_lesson_edited_while_examples_run_shows_in_the_next_build(
    incremental: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state must remember a lesson with the metadata seen before it was read, not the
    metadata after the examples ran (the racy rule off: the run lasts seconds)."""
    from builder.execute import Execution, Limits, run_example

    monkeypatch.setattr(state, "RACY_NS", 0)
    build(incremental, execute=False, jobs=1)
    edit(incremental.content / "lessons" / "basics-01" / "example.py", "print", "print ;print")

    def editing_runner(lesson: Lesson, limits: Limits) -> Execution:
        edit(lesson_md(incremental, "speed-01"), "The scaled", "Edited while it ran, the scaled")
        return run_example(lesson, limits)

    assert build(incremental, execute=True, jobs=1, runner=editing_runner).executed == ["basics-01"]
    build(incremental, execute=False, jobs=1)
    page = (incremental.out / "l" / "settings" / "index.html").read_bytes()
    assert b"Edited while it ran" in page
