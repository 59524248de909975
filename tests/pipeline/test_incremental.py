"""The incremental build: after any edit, and after a build killed at any write, the site
equals a build from nothing; a prose edit rewrites only what shows it; the store keeps only
what the index references. Synthetic courses (bench/generate.py): nothing executes."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import builder.pipeline.build as pipeline
from bench.generate import generate, write_recordings
from builder.core import observe
from builder.core.artifact import Artifact
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.core.store import Store
from builder.course import files as course_files
from builder.pipeline import index, make, reuse, site, traced
from builder.pipeline.build import build
from builder.pipeline.index import Head
from builder.pipeline.keys import Digests, Keyed
from builder.pipeline.make import MIN_PER_WORKER
from builder.pipeline.site_record import record_path
from builder.render import lessons, printed
from tests.helpers import assert_like_a_clean_build, killed_at, synthetic_copy, wall_clock

LESSON = "a01-002"
LESSONS = 6  # the course_template fixture's size (tests/conftest.py)


@pytest.fixture
def paths(course_template: Path, tmp_path: Path) -> Paths:
    return synthetic_copy(course_template, tmp_path)


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def render(paths: Paths) -> None:
    build(paths, execute=False, jobs=2)


def lesson_md(paths: Paths, lesson: str = LESSON) -> Path:
    return paths.content / "lessons" / lesson / "lesson.md"


def example_py(paths: Paths, lesson: str = LESSON) -> Path:
    return paths.content / "lessons" / lesson / "example.py"


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def unused_term(paths: Paths) -> str:
    """The id of a term of glossary.yml that LESSON's page does not use."""
    ids = re.findall(r"^- id: (\S+)$", (paths.content / "glossary.yml").read_text(), re.M)
    return next(t for t in ids if f"[[{t}]]" not in lesson_md(paths).read_text())


EDITS: dict[str, Callable[[Paths], None]] = {
    "prose": lambda p: append(lesson_md(p), "\nA new sentence about fusion.\n"),
    "title": lambda p: lesson_md(p).write_text(
        lesson_md(p).read_text().replace("title: ", "title: Renamed ", 1)
    ),
    "example": lambda p: append(example_py(p), "\nprint('more')\n"),
    "re-recorded": lambda p: (
        append(example_py(p), "\nprint('more')\n"),
        write_recordings(p.content, p.recordings),
    ),
    "recording deleted": lambda p: (p.recordings / f"{LESSON}.json").unlink(),
    "lesson removed": lambda p: shutil.rmtree(lesson_md(p).parent),
    "glossary": lambda p: (p.content / "glossary.yml").write_text(
        (p.content / "glossary.yml").read_text().replace("definition: ", "definition: Now, ", 1)
    ),
    "course.yml": lambda p: (p.content / "course.yml").write_text(
        (p.content / "course.yml").read_text().replace("title: ", "title: New ", 1)
    ),
    # what the other pages read of the lessons: a term's uses (the glossary), a run time
    "term used": lambda p: append(lesson_md(p), f"\nIt uses [[{unused_term(p)}]] now.\n"),
    "run time": lambda p: (p.recordings / "_inputs" / f"{LESSON}.json").write_text(
        (p.recordings / "_inputs" / f"{LESSON}.json")
        .read_text()
        .replace('"seconds": ', '"seconds": 7', 1)
    ),
    "page edited in site": lambda p: (p.out / "l" / "sa01-002" / "index.html").write_text("x"),
    "page deleted in site": lambda p: (p.out / "index.html").unlink(),
}


@pytest.mark.parametrize("edit", EDITS)
def test_after_each_edit_the_site_equals_a_build_from_nothing(
    paths: Paths, tmp_path: Path, edit: str
) -> None:
    render(paths)
    time.sleep(0.01)
    EDITS[edit](paths)
    render(paths)
    assert_like_a_clean_build(paths, tmp_path)
    head = Head.load(Store(paths.cache))
    assert head is not None
    assert head.site == observe.snapshot([paths.out]), "the site as the index says"


def test_an_edit_that_keeps_size_and_mtime_is_seen(paths: Paths, tmp_path: Path) -> None:
    render(paths)
    path = lesson_md(paths)
    before = path.stat()
    path.write_text(path.read_text().replace("the", "teh", 1))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    render(paths)
    assert_like_a_clean_build(paths, tmp_path)


def test_a_prose_edit_rewrites_its_page_and_its_search_bundle_only(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """... and the printable course (asked for in course.yml), which holds its prose: rendered again for that lesson
    alone (the others' are kept by their pages' keys)."""
    append(paths.content / "course.yml", "\nprint_page: true\n")
    render(paths)
    before = {name: data for name, data in files(paths.out).items()}
    append(lesson_md(paths), "\nA sentence with a new word: zanzibar.\n")
    moved: list[str] = []
    real = printed._prose
    monkeypatch.setattr(printed, "_prose", lambda *args: moved.append(args[4].page) or real(*args))
    render(paths)
    changed = {n for n, data in files(paths.out).items() if before.get(n) != data}
    assert "l/sa01-002/index.html" in changed and "print/index.html" in changed
    assert b"zanzibar" in (paths.out / "print" / "index.html").read_bytes()
    assert moved == ["l/sa01-002/index.html"]
    outside = {n for n in changed if not n.startswith(("search-index/", "l/sa01-002/", "print/"))}
    assert not outside, f"a prose edit rewrote {sorted(outside)}"


def test_a_prose_edit_restates_the_reading_time_and_a_code_block_leaves_it(paths: Paths) -> None:
    """The minutes a lesson page states are counted as its prose renders, in the page the
    edited lesson's key makes again: 600 words of prose add three, 1,000 of code none."""
    render(paths)
    page = paths.out / "l" / "sa01-002" / "index.html"

    def minutes() -> int:
        found = re.search(rb"about (\d+) minutes? of reading", page.read_bytes())
        assert found is not None
        return int(found[1])

    before = minutes()
    append(lesson_md(paths), "\n" + " ".join(["word"] * 600) + "\n")
    render(paths)
    assert minutes() == before + 3
    append(lesson_md(paths), "\n```python\n" + " ".join(["code"] * 1000) + "\n```\n")
    render(paths)
    assert minutes() == before + 3


def test_a_second_build_writes_nothing(paths: Paths) -> None:
    render(paths)
    before = {p: p.stat().st_mtime_ns for p in paths.out.rglob("*")}
    result = build(paths, execute=False, jobs=2)
    assert (result.written, result.removed) == (0, 0)
    assert {p: p.stat().st_mtime_ns for p in paths.out.rglob("*")} == before


def test_the_store_keeps_only_what_the_index_references(paths: Paths) -> None:
    render(paths)
    first = set(Store(paths.cache).keys())
    append(lesson_md(paths), "\nAnother sentence.\n")
    render(paths)
    second = set(Store(paths.cache).keys())
    assert first - second, "the replaced page stays in the store"
    assert len(second) == len(first), "one page replaced by one page"


def opened_inputs(monkeypatch: pytest.MonkeyPatch, paths: Paths) -> list[str]:
    """The course's and the recordings' files a build opens from now on (every input is
    opened by builder.course.files.open_input), relative to their folder's parent."""
    opened: list[str] = []
    open_input = course_files.open_input

    def counted(path: Path | str, *args: object, **kwargs: object) -> int:
        path = Path(path)
        for root in (paths.content, paths.recordings):
            if path.is_relative_to(root):
                opened.append(path.relative_to(root.parent).as_posix())
        return open_input(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(course_files, "open_input", counted)
    return opened


def test_a_prose_edit_reads_only_that_lessons_files(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's index (builder.pipeline.index): files whose metadata is unchanged are not
    read, course.yml and glossary.yml among them. The lesson's status is taken again (its
    recording read: the status depends on the lesson)."""
    wall_clock(monkeypatch)  # no file here is racy unless a test makes it
    render(paths)
    append(lesson_md(paths), "\nA new sentence.\n")
    opened = opened_inputs(monkeypatch, paths)
    render(paths)
    lesson = f"content/lessons/{LESSON}"
    own = [f"{lesson}/lesson.md", f"{lesson}/example.py", f"recordings/{LESSON}.json"]
    assert sorted(opened) == sorted(own)
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def made_artifacts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinds of the artifacts a build makes from now on (not kept, not from the store)."""
    made: list[str] = []
    make_one = make._make_one

    def counted(artifact: Keyed, store: Store) -> Any:
        made.append(artifact.kind)
        return make_one(artifact, store)

    monkeypatch.setattr(make, "_make_one", counted)
    return made


def test_course_yml_is_in_the_read_set_a_touch_makes_nothing_an_edit_renders_again(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """course.yml and glossary.yml are in the index's read set as the door opened them:
    touched without a change, the two are read again (course.yml's metadata changed; they
    are loaded together), no page is made and nothing is written, and the build after it
    is a no-op; its title edited, the pages that show it are made again."""
    wall_clock(monkeypatch)
    render(paths)
    course = paths.content / "course.yml"
    os.utime(course)
    opened, made = opened_inputs(monkeypatch, paths), made_artifacts(monkeypatch)
    touched = build(paths, execute=False, jobs=1)
    assert sorted(opened) == ["content/course.yml", "content/glossary.yml"]
    assert (touched.written, touched.removed, made) == (0, 0, [])
    assert build(paths, execute=False, jobs=1).noop
    opened.clear()
    text = course.read_text()
    course.write_text(text.replace("title: ", "title: Retitled ", 1))
    retitled = build(paths, execute=False, jobs=1)
    assert sorted(opened) == ["content/course.yml", "content/glossary.yml"]
    assert retitled.written > 0 and "page" in made
    for page in ("index.html", f"l/s{LESSON}/index.html"):
        assert b"Retitled " in (paths.out / page).read_bytes(), page
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def test_a_glossary_written_where_there_was_none_is_read(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The door notes glossary.yml even when it is missing (it is optional): one written
    later is in the next build's read set, and on the glossary page."""
    wall_clock(monkeypatch)
    for lesson in (paths.content / "lessons").glob("*/lesson.md"):  # no term marked
        lesson.write_text(re.sub(r"\[\[([^\]]+)\]\]", r"\1", lesson.read_text()))
    glossary = paths.content / "glossary.yml"
    text = glossary.read_text()
    glossary.unlink()
    render(paths)
    glossary.write_text(text)
    opened = opened_inputs(monkeypatch, paths)
    assert build(paths, execute=False, jobs=1).written > 0
    assert sorted(opened) == ["content/course.yml", "content/glossary.yml"]
    term = re.search(r"term: (.+)", text)
    assert term and term.group(1).encode() in (paths.out / "glossary/index.html").read_bytes()
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def test_the_index_holds_what_the_door_opened_for_each_value(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each entry's read set is what builder.course.files opened while reading that value,
    recorded as it opened them: a data file declared now is in the lesson's (and the sidecar
    in its status's, which the data file made stale), and editing it
    (size and mtime kept: git's racy case, seen by its ctime) loads the lesson again."""
    wall_clock(monkeypatch)
    data = paths.content / "lessons" / LESSON / "extra.csv"
    data.write_text("a\n1\n")
    edit = lesson_md(paths)
    edit.write_text(edit.read_text().replace("\n---\n", "\ndata: [extra.csv]\n---\n", 1))
    render(paths)
    store = Store(paths.cache)
    head, now = Head.load(store), pipeline.observe(paths, ())
    assert not index.Index.load(store, head, now, "", Digests(), False).entries, "of other code"
    built = index.Index.load(store, head, now, _salt(store), Digests(), False).entries[LESSON]
    folder = str(paths.content / "lessons" / LESSON)
    loaded, checked, _ = built.reads
    assert loaded.paths == tuple(f"{folder}/{n}" for n in ("lesson.md", "example.py", "extra.csv"))
    recording, sidecar = (
        paths.recordings / p for p in (f"{LESSON}.json", f"_inputs/{LESSON}.json")
    )
    assert checked.paths == (str(recording), str(sidecar)), "stale: its detail reads the sidecar"
    assert loaded.uses, "the validated front matter is kept in the store by the index"
    before = data.stat()
    data.write_text("a\n2\n")
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    opened = opened_inputs(monkeypatch, paths)
    render(paths)
    assert f"content/lessons/{LESSON}/extra.csv" in opened


def _traces(paths: Paths) -> set[str]:
    """The keys of the artifacts the site's traces are of."""
    found = traced.Traced.load(Store(paths.cache), index.SITE)
    assert found is not None
    return set(found.traces())


def _salt(store: Store) -> str:
    found = store.manifest(index.SITE)
    assert isinstance(found, index.Published)
    return found.salt


def test_a_prose_edit_stores_only_its_lessons_part_of_the_index(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index's rows (builder.core.store INDEX): a prose edit writes its head and the
    one part that holds the edited lesson, not all 64 (72 MB at 10,000 lessons), and of the
    site's traces (builder.pipeline.traced) the parts of the artifacts it made again, not all
    64; the rows it leaves are still what the next build reads, so an edit of another
    lesson then reads only that lesson's files."""
    wall_clock(monkeypatch)
    written: list[list[str]] = []
    commit = Store.commit

    def spied(self: Store, rows: Any = None, keep: Any = None) -> None:
        if rows is not None:
            written.append(sorted(rows))
        commit(self, rows, keep)

    monkeypatch.setattr(Store, "commit", spied)
    render(paths)
    assert len(written[-1]) == 2 + index.PARTS + traced.PARTS  # the first build: every part
    before = _traces(paths)
    append(lesson_md(paths), "\nA new sentence.\n")
    render(paths)
    head_and_site = [index.INDEX, index.SITE]
    traces = [row for row in written[-1] if row.startswith(f"{index.SITE}/")]
    rows = [row for row in written[-1] if row not in traces]
    assert rows == sorted([*head_and_site, f"{index.INDEX}/{index._part(LESSON)}"])
    made_again = {
        f"{index.SITE}/{zlib.crc32(k.encode()) % traced.PARTS}" for k in _traces(paths) - before
    }
    assert made_again and made_again <= set(traces) and len(traces) < traced.PARTS // 2
    other = next(x for x in sorted(os.listdir(paths.content / "lessons")) if x != LESSON)
    append(paths.content / "lessons" / other / "lesson.md", "\nAnother sentence.\n")
    opened = opened_inputs(monkeypatch, paths)
    render(paths)
    own = [f"content/lessons/{other}/{n}" for n in ("lesson.md", "example.py")]
    assert sorted(opened) == sorted([*own, f"recordings/{other}.json"])
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def test_a_prose_edit_keys_only_its_lessons_artifacts(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index keeps, by lesson, what its artifacts were made from and their keys
    (builder.pipeline.reuse): a one-shot build after a prose edit digests the edited
    lesson's unit and asks for its page (with its notebook) and charts, and nothing of another."""
    wall_clock(monkeypatch)
    render(paths)
    append(lesson_md(paths), "\nA new sentence.\n")
    asked: list[tuple[str, str]] = []
    real, digest = reuse.Reuse.key, Digests.key

    def key(self: reuse.Reuse, artifact: Artifact) -> Keyed:
        asked.append((artifact.kind, artifact.label))
        return real(self, artifact)

    def digested(self: Digests, fn: Any, args: tuple[Any, ...]) -> str:
        if fn is lessons.make:
            asked.append(("unit", args[1].lesson.id))
        return digest(self, fn, args)

    monkeypatch.setattr(reuse.Reuse, "key", key)
    monkeypatch.setattr(Digests, "key", digested)
    render(paths)
    monkeypatch.undo()
    assert ("unit", LESSON) in asked
    kinds = ("unit", "page", "chart")
    assert {label for kind, label in asked if kind in kinds} == {LESSON}
    assert_like_a_clean_build(paths, tmp_path)


def test_a_one_shot_prose_edit_makes_one_unit_and_a_title_edit_every_one(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What every lesson is keyed with besides its own (the lessons' front matter, the
    theme, the digest of what they share) is in the index (builder.pipeline.reuse
    `Around`): after a prose edit the next build makes the unit of the edited lesson only;
    after a title edit (its neighbours show it) every lesson's."""
    wall_clock(monkeypatch)
    render(paths)
    asked: list[int] = []
    real = lessons.units

    def units(*args: Any, **kwargs: Any) -> list[lessons.LessonUnit]:
        made = real(*args, **kwargs)
        asked.append(len(made))
        return made

    monkeypatch.setattr(lessons, "units", units)
    append(lesson_md(paths), "\nA new sentence.\n")
    render(paths)
    assert asked == [1]
    path = lesson_md(paths)
    path.write_text(re.sub(r"(?m)^title: .*$", "title: A new title", path.read_text(), count=1))
    render(paths)
    assert asked[1:] == [LESSONS]
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def test_what_neither_the_site_nor_the_store_holds_is_made_from_the_remembered_keys(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lesson's artifacts taken by their remembered keys are made again when asked for:
    with the store emptied and another lesson's page, notebook and charts deleted, the
    next build after a prose edit puts them back as a build from nothing makes them."""
    wall_clock(monkeypatch)
    render(paths)
    other = paths.out / "l" / "sa01-004"
    for name in ("index.html", "example.ipynb"):
        (other / name).unlink()
    for chart in sorted((paths.out / "charts").iterdir())[:4]:
        chart.unlink()
    with contextlib.closing(sqlite3.connect(paths.cache / "store.sqlite")) as db:
        assert db.execute("DELETE FROM artifacts").rowcount > 0
        db.commit()
    append(lesson_md(paths), "\nA new sentence.\n")
    render(paths)
    assert_like_a_clean_build(paths, tmp_path)


def test_a_racy_file_is_read_again_and_force_reads_everything(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's racy case, on a file system whose ctime says nothing (as git's
    core.trustctime=false): a same-size edit with its mtime set back. Changed within the
    tick the last build observed it in, it is read again; changed later, it is the blind
    spot (the build is a no-op) and `--force` reads it."""
    monkeypatch.setattr(observe, "_meta", lambda i: (i.st_mtime_ns, i.st_size, i.st_ino, 0))
    path = lesson_md(paths)

    def same_size_edit(old: str, new: str) -> None:
        before = path.stat()
        path.write_text(path.read_text().replace(old, new, 1))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))

    append(path, "\nWord: aaaa.\n")
    clock = observe.clock  # the next build observes it in the tick it was written: racy
    monkeypatch.setattr(observe, "clock", lambda cache, roots: path.stat().st_mtime_ns)
    render(paths)
    monkeypatch.setattr(observe, "clock", clock)
    same_size_edit("aaaa", "bbbb")
    render(paths)
    assert b"bbbb" in (paths.out / "l" / "sa01-002" / "index.html").read_bytes()
    assert_like_a_clean_build(paths, tmp_path)

    os.utime(path, ns=(0, time.time_ns() - 3 * observe.RACY_NS))  # long before any build
    render(paths)
    same_size_edit("bbbb", "cccc")
    render(paths)
    page = paths.out / "l" / "sa01-002" / "index.html"
    assert b"bbbb" in page.read_bytes(), "the blind spot: metadata as it was, not racy"
    build(paths, execute=False, jobs=2, force=True)
    assert b"cccc" in page.read_bytes()


def test_a_same_size_edit_in_the_ctime_tick_of_a_copy_is_seen(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy that keeps mtimes (cp -p, tar, rsync -t) leaves an old mtime and a new ctime,
    which alone says the file is racy: edited again (same size, mtime kept) within that
    ctime's tick after a build observed it, the next build is not a no-op and reads it.
    The no-op took the newest mtime only, and kept the old page. Coarse ticks simulated:
    every ctime from `tick` on reads as `tick`."""
    render(paths)
    long_ago = time.time_ns() - 3 * observe.RACY_NS
    for path in [*paths.content.rglob("*"), *paths.recordings.rglob("*")]:
        os.utime(path, ns=(long_ago, long_ago))  # no input racy by its mtime
    tick = time.time_ns()
    meta, clock = observe._meta, observe.clock
    monkeypatch.setattr(observe, "_meta", lambda i: (*meta(i)[:3], min(i.st_ctime_ns, tick)))
    monkeypatch.setattr(observe, "clock", lambda cache, roots: min(clock(cache, roots), tick))
    path, page = lesson_md(paths), paths.out / "l" / "sa01-002" / "index.html"
    path.write_text(path.read_text() + "\nWord: aaaa.\n")
    os.utime(path, ns=(long_ago, long_ago))  # the copy: its mtime kept
    render(paths)
    assert b"aaaa" in page.read_bytes()
    path.write_text(path.read_text().replace("aaaa", "bbbb"))
    os.utime(path, ns=(long_ago, long_ago))  # size, mtime, inode and (read) ctime as they were
    render(paths)
    assert b"bbbb" in page.read_bytes()
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def test_a_build_stopped_after_rendering_keeps_what_its_workers_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the workers make is committed to the store as it comes, not at the build's end:
    a cold build stopped after it (killed, or failing in a later stage) keeps it, and the
    next build makes none of it again (at 10,000 lessons, minutes of rendering)."""
    generate(30, tmp_path)  # 90 pages, charts and notebooks: made in workers
    content, recordings = tmp_path / "content", tmp_path / "recordings"
    paths = Paths(content, recordings, tmp_path / "site", tmp_path / "cache")

    def stopped(*args: object) -> None:
        raise BuildError("stopped before the search bundles")

    monkeypatch.setattr(site, "with_search", stopped)
    with pytest.raises(BuildError, match="stopped"):
        render(paths)
    monkeypatch.undo()
    made_again: list[str] = []
    real = make._render

    def counted(artifacts: list[Any], missing: list[int], *args: Any) -> object:
        made_again.extend(artifacts[i].kind for i in missing)
        return real(artifacts, missing, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(make, "_render", counted)
    render(paths)
    assert not {"page", "chart", "notebook"} & set(made_again)
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


def _killed_at(paths: Paths, write: int) -> bool:
    return killed_at(lambda: render(paths), write)


def test_a_build_killed_at_any_write_then_reverted_equals_a_clean_build(
    paths: Paths, tmp_path: Path
) -> None:
    """The issue's case: killed while the search pages are written, then the edit
    reverted: no edited-away word may stay in the index."""
    render(paths)
    original = lesson_md(paths).read_text()
    write = 1
    while True:
        lesson_md(paths).write_text(original + "\nA word edited away: zanzibar.\n")
        killed = _killed_at(paths, write)
        lesson_md(paths).write_text(original)
        render(paths)
        assert_like_a_clean_build(paths, tmp_path)
        shutil.rmtree(tmp_path / "clean")
        shutil.rmtree(tmp_path / "clean-cache")
        if not killed:
            break
        write += 1
    # the page, its search bundle, the printable course and the site's record, at least
    assert write > 3, "the build was killed at too few points to mean anything"


@pytest.mark.parametrize("write", [1, 3], ids=["at the record's rename", "at a page's"])
def test_a_killed_first_build_does_not_lock_the_user_out(
    paths: Paths, tmp_path: Path, write: int
) -> None:
    """Killed at its first rename, a first build left only the site record's temporary file
    (in the site folder, before issue 43), and the next build refused the folder as not
    this builder's (issue 25)."""
    assert _killed_at(paths, write)
    render(paths)
    assert_like_a_clean_build(paths, tmp_path)
    assert [p.name for p in (paths.cache / "sites").iterdir()] == [
        record_path(paths.cache, paths.out).name
    ], "a temporary file of the record is left in the cache"


def test_deleting_a_stale_file_never_follows_a_link(paths: Paths, tmp_path: Path) -> None:
    render(paths)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "index.html").write_text("mine")
    shutil.rmtree(paths.out / "l" / "sa01-002")
    (paths.out / "l" / "sa01-002").symlink_to(precious)
    shutil.rmtree(lesson_md(paths).parent)  # its page is no longer made: to be removed
    render(paths)
    assert (precious / "index.html").read_text() == "mine"


def test_a_cold_build_made_in_workers_equals_one_made_in_this_process(tmp_path: Path) -> None:
    """Enough lessons that a cold build with two jobs makes its pages and charts in forked
    workers (builder.pipeline.make), which take artifacts as they go: same files, byte for byte."""
    generate(30, tmp_path)  # 60 pages and charts: enough for 2 workers
    assert 60 // MIN_PER_WORKER >= 2, "too few artifacts to be made in workers"
    content, recordings = tmp_path / "content", tmp_path / "recordings"
    forked = Paths(content, recordings, tmp_path / "forked", tmp_path / "forked-cache")
    serial = Paths(content, recordings, tmp_path / "serial", tmp_path / "serial-cache")
    build(forked, execute=False, jobs=2)
    build(serial, execute=False, jobs=1)
    assert len(files(forked.out)) > 150
    assert files(forked.out) == files(serial.out)


def test_explain_says_which_path_made_each_lesson_read_again(
    paths: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    """`render --explain` names, for each lesson read again, the path that changed; without
    it, nothing is said; an unchanged lesson is never named."""
    from builder.__main__ import main

    args = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    args += ["--out", str(paths.out), "--cache", str(paths.cache)]
    assert main(["render", *args]) == 0
    prose = lesson_md(paths)
    prose.write_text(prose.read_text() + "\nOne more line.\n")
    capsys.readouterr()
    assert main(["render", *args, "--explain"]) == 0
    said = capsys.readouterr().err
    assert f"{LESSON}: read again ({prose} changed)" in said
    assert said.count("read again") == 1
    prose.write_text(prose.read_text() + "\nAnd another.\n")
    assert main(["render", *args]) == 0
    assert "read again" not in capsys.readouterr().err


def test_the_interpreter_reached_by_another_spelling_keeps_the_no_op(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interpreter and its package folders are keyed resolved: the same venv run
    through a link (or a relative path) is no change, and the build after is a no-op."""
    import sys

    wall_clock(monkeypatch)
    render(paths)
    assert build(paths, execute=False, jobs=1).noop
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", os.path.relpath(link))
    [folder, *_] = [p for p in sys.path if "site-packages" in p]
    spelled = tmp_path / "venv" / "site-packages"  # the venv's folder, through a link
    spelled.parent.mkdir()
    spelled.symlink_to(folder)
    monkeypatch.setattr(sys, "path", [str(spelled) if p == folder else p for p in sys.path])
    assert build(paths, execute=False, jobs=1).noop


def test_a_prose_edit_opens_no_file_of_another_lesson(
    recorded: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lesson's page is made from its data files' digests, kept in its index entry: a
    prose edit to one lesson opens no file of another (speed-01's data file among them),
    whatever opens it (every open of the OS counted), and the site is as a clean build's."""
    wall_clock(monkeypatch)
    render(recorded)
    append(lesson_md(recorded, "basics-01"), "\nA new sentence.\n")
    opened: list[str] = []
    os_open = os.open

    def counted(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.path.abspath(path))
        return os_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    render(recorded)
    monkeypatch.undo()
    lessons = str(recorded.content / "lessons")
    others = [p for p in opened if p.startswith(lessons) and "/basics-01/" not in p]
    assert others == [] and any("/basics-01/" in p for p in opened)
    assert_like_a_clean_build(recorded, tmp_path)


def test_workers_take_every_artifact_once_each_from_the_kind_it_prefers() -> None:
    """A cold build's queues (builder.pipeline.make.Queues): with two workers, one takes
    pages until none is left and the other charts (so only one of them loads matplotlib
    while pages are left), then each takes the other kind; every artifact is taken once."""
    from multiprocessing import get_context

    from builder.core.artifact import Made
    from builder.pipeline.keys import Keyed
    from builder.pipeline.make import Queues

    def nothing() -> Made:
        return Made({})

    kinds = ["page", "chart", "page", "page", "chart", "page"]
    artifacts = [Keyed(str(n), nothing, kind) for n, kind in enumerate(kinds)]
    queues = Queues.of(artifacts, list(range(len(artifacts))))
    taken = [get_context("fork").Value("q", 0) for _ in queues.kinds]
    first, second = queues.turned(0), queues.turned(1)
    by_first = [first.take(taken) for _ in range(3)]
    by_second = [second.take(taken) for _ in range(3)]
    assert [kinds[i] for i in by_first if i is not None] == ["page", "page", "page"]
    assert [kinds[i] for i in by_second if i is not None] == ["chart", "chart", "page"]
    assert first.take(taken) is None and second.take(taken) is None
    assert sorted(i for i in by_first + by_second if i is not None) == list(range(6))


@pytest.mark.parametrize(
    "kept",
    [
        None,
        "order",
        ((), b"", ()),
        (("a01-001",), "not bytes", (), None),
        ((1,), b"", (), None),
        (1, 2),
        (("a01-001",), b"", (), "pages"),  # the other pages' keys (Around.pages) damaged
        (("a01-001",), b"", (), ((), ((1, "", ""),))),
    ],
)
def test_a_damaged_record_of_how_the_lessons_were_keyed_keys_every_lesson(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: Any
) -> None:
    """What the index keeps of how the lessons were keyed (reuse.Around) that has not the
    shape it is written with is no record: the next build keys every lesson, and its site
    is a clean build's."""
    render(paths)
    real = reuse.Around.remembered

    def damaged(root: Path, _: Any, values: Any, entries: Any) -> reuse.Around | None:
        return real(root, kept, values, entries)

    monkeypatch.setattr(reuse.Around, "remembered", staticmethod(damaged))
    append(lesson_md(paths), "\nA new sentence.\n")
    render(paths)
    monkeypatch.undo()
    assert_like_a_clean_build(paths, tmp_path)


@pytest.mark.parametrize(("edit", "keyed"), [("prose", 0), ("term used", 1), ("title", 1)])
def test_the_other_pages_are_keyed_again_only_when_what_they_read_changed(
    paths: Paths, monkeypatch: pytest.MonkeyPatch, edit: str, keyed: int
) -> None:
    """A one-shot build takes the other pages' keys from the index (reuse.Around.pages)
    while the lessons' front matter, the statuses and what else the pages read are as they
    were: a prose edit asks for none of their artifacts; a term's new use or a title does."""
    render(paths)
    EDITS[edit](paths)
    asked: list[object] = []
    real = site.pages.page_artifacts
    monkeypatch.setattr(site.pages, "page_artifacts", lambda *a: asked.append(a) or real(*a))
    render(paths)
    assert len(asked) == keyed
