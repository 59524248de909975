"""The search bundles (builder/render/search.py) are made of what rendering each page kept,
in the builder's own process: a prose edit's new word is found by its lesson's bundle (and
by no other), an edited-away word is gone, and no program runs to index the site."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.pipeline.build import build
from builder.render import search
from tests.helpers import synthetic_copy

LESSON = "a01-002"


@pytest.fixture
def paths(course_template: Path, tmp_path: Path) -> Paths:
    return synthetic_copy(course_template, tmp_path)


def _render(paths: Paths) -> None:
    build(paths, execute=False, jobs=2)


def _bundles(out: Path) -> dict[str, bytes]:
    folder = out / search.MERGED
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.js"))}


def _pages(script: bytes) -> list[dict[str, Any]]:
    text = script.decode()
    found: list[dict[str, Any]] = json.loads(text[text.index("push(") + 5 : text.rindex(");")])
    return found


def _finding(out: Path, word: str) -> dict[str, list[str]]:
    """The pages whose sections hold `word`, by bundle."""
    return {
        name: [page["url"] for page in _pages(data) if word in json.dumps(page["sections"])]
        for name, data in _bundles(out).items()
        if any(word in json.dumps(page["sections"]) for page in _pages(data))
    }


def test_a_prose_edit_is_found_by_its_bundle_and_an_edited_away_word_is_not(
    paths: Paths,
) -> None:
    _render(paths)
    before = _bundles(paths.out)
    lesson = paths.content / "lessons" / LESSON / "lesson.md"
    original = lesson.read_text()
    lesson.write_text(original + "\n## Far away\n\nA sentence with a new word: zanzibar.\n")
    _render(paths)
    found = _finding(paths.out, "zanzibar")
    assert list(found) == ["search-index/a01-1/offline.js"], found
    assert len(found["search-index/a01-1/offline.js"]) == 1
    after = _bundles(paths.out)
    assert {n for n in after if after[n] != before.get(n)} == set(found)  # no other bundle
    (page,) = [p for p in _pages(after[next(iter(found))]) if "zanzibar" in json.dumps(p)]
    assert ["far-away", "Far away", "A sentence with a new word: zanzibar."] in page["sections"]
    lesson.write_text(original)
    _render(paths)
    assert _finding(paths.out, "zanzibar") == {}
    assert _bundles(paths.out) == before


def test_indexing_runs_no_program(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Pagefind, nor any other program (git is missing too): the bundles are made, and
    find what the pages say."""
    ran: list[str] = []

    def nothing(command: Any, *args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        ran.append(str(command[0]))
        raise FileNotFoundError(2, "No such file or directory", command[0])

    monkeypatch.setattr(subprocess, "Popen", nothing)
    monkeypatch.setitem(sys.modules, "pagefind_bin", None)
    monkeypatch.setenv("PATH", str(paths.out.parent / "no-programs"))
    _render(paths)
    assert set(ran) <= {"git"}, ran
    main = _pages(_bundles(paths.out)["search-index/main/offline.js"])
    assert [page["url"] for page in main] == ["glossary/index.html"]
    assert len(main[0]["sections"]) > 1  # a section a term
    lessons = [
        p
        for n, data in _bundles(paths.out).items()
        if n != "search-index/main/offline.js"
        for p in _pages(data)
    ]
    count = len(load_course(paths.content).lessons)
    assert len(lessons) == count and all(page["title"] and page["sections"] for page in lessons)


def _index_traces(paths: Paths) -> dict[str, Any]:
    from builder.core.store import INDEX, Store
    from builder.pipeline.traced import Traced

    store = Store(paths.cache)
    try:
        traced = Traced.load(store, f"{INDEX}/site")
        assert traced is not None
        return traced.traces()
    finally:
        store.close()


def test_the_index_keeps_no_search_text_and_a_bundle_made_again_finds_every_page(
    paths: Paths,
) -> None:
    """The index's traces hold no page's search text (most of their bytes): a prose edit's
    bundle takes its other pages' text from the store's copy of each page, and finds
    every page of the bundle with what it said before."""
    _render(paths)
    _render(paths)  # the site folder observed as it is: its files are kept from here on
    assert all(trace.searched is None for trace in _index_traces(paths).values())
    name = "search-index/a01-1/offline.js"
    before = {page["url"]: page for page in _pages(_bundles(paths.out)[name])}
    lesson = paths.content / "lessons" / LESSON / "lesson.md"
    lesson.write_text(lesson.read_text() + "\nOne more sentence.\n")
    _render(paths)
    after = {page["url"]: page for page in _pages(_bundles(paths.out)[name])}
    assert after.keys() == before.keys() and len(after) > 1
    changed = [url for url in after if after[url] != before[url]]
    assert changed == [f"l/s{LESSON}/index.html"]


def test_a_page_whose_copy_the_store_lost_is_made_again_for_its_bundle(paths: Paths) -> None:
    """A kept page whose artifact the store no longer holds (damaged, or pruned by another
    build while a preview ran) is made again to give its bundle its text: the bundle
    finds every page, as before."""
    import contextlib
    import sqlite3

    from builder.core.store import FILE

    _render(paths)
    _render(paths)  # the site folder observed as it is: its files are kept from here on
    name = "search-index/a01-1/offline.js"
    before = {page["url"]: page for page in _pages(_bundles(paths.out)[name])}
    other = "l/sa01-003/index.html"  # in the bundle of LESSON, and not edited
    key = _published_files(paths)[other]
    with contextlib.closing(sqlite3.connect(paths.cache / FILE)) as db:
        assert db.execute("DELETE FROM artifacts WHERE key = ?", (key,)).rowcount == 1
        db.commit()
    lesson = paths.content / "lessons" / LESSON / "lesson.md"
    lesson.write_text(lesson.read_text() + "\nOne more sentence.\n")
    _render(paths)
    after = {page["url"]: page for page in _pages(_bundles(paths.out)[name])}
    assert after.keys() == before.keys()
    assert [url for url in after if after[url] != before[url]] == [f"l/s{LESSON}/index.html"]
    with contextlib.closing(sqlite3.connect(paths.cache / FILE)) as db:  # stored again
        assert db.execute("SELECT 1 FROM artifacts WHERE key = ?", (key,)).fetchone()


def _published_files(paths: Paths) -> dict[str, str]:
    from builder.core.store import Store
    from builder.pipeline.index import SITE, Published

    store = Store(paths.cache)
    try:
        published = store.manifest(SITE)
        assert isinstance(published, Published)
        return published.files
    finally:
        store.close()
