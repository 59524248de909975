"""What a preview refresh costs besides the edit (issue 27): keys found again rather than
digested (builder.pipeline.keys.Digests.same), writing site/ put off by an edit that lands
meanwhile (Session.settle), and the kept build set aside from Python's cyclic garbage
collector (builder.preview.heap). The preview's behaviour is in test_serve.py."""

from __future__ import annotations

import gc
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from builder.core.artifact import Artifact
from builder.core.errors import BuildError
from builder.core.observe import TEMPLATES, Paths
from builder.pipeline import keys, reuse
from builder.pipeline.build import build
from builder.pipeline.index import Changes
from builder.pipeline.keys import Keyed
from builder.preview.serve import SETTLE_AFTER, Preview
from builder.preview.session import Session
from builder.render import lessons
from builder.review import git as review_git
from tests.helpers import edit, git, make_paths, wall_clock

LESSON = "basics-01"  # slug "first"


def lesson_md(paths: Paths, lesson: str = LESSON) -> Path:
    return paths.content / "lessons" / lesson / "lesson.md"


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


PROSE_FILES = ("index.html", "example.ipynb")  # a lesson's files that carry its prose


def keyed_in(
    session: Session, path: Path, old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """The lessons whose unit (what their artifacts are made from) is digested, or whose
    artifacts are keyed, when a refresh follows the edit of `path`: one id each time."""
    keyed: list[str] = []
    digest, key = keys.Digests.key, reuse.Reuse.key

    def digested(self: keys.Digests, fn: Any, args: tuple[Any, ...]) -> str:
        if fn is lessons.make:
            keyed.append(args[1].lesson.id)
        return digest(self, fn, args)

    def artifact(self: reuse.Reuse, made: Artifact) -> Keyed:
        if made.kind in ("page", "chart"):
            keyed.append(made.label)
        return key(self, made)

    monkeypatch.setattr(keys.Digests, "key", digested)
    monkeypatch.setattr(reuse.Reuse, "key", artifact)
    edit(path, old, new)
    session.refresh(Changes.events(session.paths, [str(path)]))
    monkeypatch.undo()
    return keyed


def test_a_prose_edit_digests_and_keys_only_the_edited_lesson(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the edited lesson's unit is digested and its artifacts made again; the others'
    are known unchanged from the last refresh (their lesson and status taken, the rest
    equal), keys and all, the two whose pages link to it (as previous and next) too: they
    are given its entry (title, address), which a prose edit leaves as it was. The
    refresh's cost is the edit's, not the course's."""
    session = Session(recorded, execute=False)
    session.start()
    edit(lesson_md(recorded), "{{ panel 1 }}", "A first sentence.\n\n{{ panel 1 }}")
    session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
    made = dict(session.pages.made)
    assert session.course is not None
    meta, glossary = session.course.meta, session.course.glossary
    edited = (lesson_md(recorded), "A first sentence.", "A second sentence.")
    keyed = keyed_in(session, *edited, monkeypatch)
    # its unit digested; its page (with its notebook) and its chart keyed; nothing of another
    assert sorted(keyed) == [LESSON] * 3
    assert session.course is not None
    # course.yml and glossary.yml, read again, validated into the last refresh's objects
    assert session.course.meta is meta and session.course.glossary is glossary
    assert len(session.course.lessons) > 2  # the edited lesson has a neighbour, and another
    assert len(made) > 20
    new = [session.pages.made[key] for key in session.pages.made if key not in made]
    files = {name: data for made_now in new for name, data in (made_now.files or {}).items()}
    assert {"l/first/example.ipynb", "l/first/index.html"} <= set(files)
    assert all(b"A second sentence." in files[f"l/first/{name}"] for name in PROSE_FILES)
    session.close()


def test_a_preview_opened_after_a_build_takes_every_lesson_from_its_index(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve` after `site`: the preview's first build is seeded from the last build's index,
    as the next `site` would be, so no lesson's unit is digested and no page made again;
    after an edit made while no preview ran, only the edited lesson is."""
    build(recorded, execute=False, jobs=1)
    made: list[str] = []
    digest = keys.Digests.key

    def digested(self: keys.Digests, fn: Any, args: tuple[Any, ...]) -> str:
        if fn is lessons.make:
            made.append(args[1].lesson.id)
        return digest(self, fn, args)

    monkeypatch.setattr(keys.Digests, "key", digested)
    session = Session(recorded, execute=False)
    session.start()
    session.close()
    assert made == []
    edit(lesson_md(recorded), "{{ panel 1 }}", "A sentence the preview finds.\n\n{{ panel 1 }}")
    session = Session(recorded, execute=False)
    session.start()
    assert made == [LESSON]
    assert b"A sentence the preview finds." in session.served()["l/first/index.html"]
    session.close()


def keyed_in_a_prose_edit(root: Path, lessons: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lessons keyed (`keyed_in`) by a refresh after a prose edit (no title, no
    glossary use changed) in a generated course of `lessons` lessons."""
    from bench.generate import generate

    generate(lessons, root)
    paths = make_paths(root)
    session = Session(paths, execute=False)
    session.start()
    lesson = paths.content / "lessons" / "a01-001" / "lesson.md"
    edit(lesson, "It uses", "A first sentence. It uses")
    session.refresh(Changes.events(paths, [str(lesson)]))
    keyed = keyed_in(session, lesson, "A first sentence.", "A second sentence.", monkeypatch)
    assert b"A second sentence." in session.served()["l/sa01-001/index.html"]
    session.close()
    return keyed


def test_a_prose_edit_digests_no_other_lesson(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh after a prose edit digests the edited lesson alone, in a course of 12
    lessons as in one of 4: the others are known unchanged."""
    few = keyed_in_a_prose_edit(tmp_path / "few", 4, monkeypatch)
    many = keyed_in_a_prose_edit(tmp_path / "many", 12, monkeypatch)
    assert few == many and set(many) == {"a01-001"}


def test_what_a_refresh_took_from_the_last_stays_in_the_store(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lessons and statuses the preview takes without reading them (a start: from the
    build's index; a refresh: from the last) keep their validated front matter and
    recordings in the store (the index references the keys each was read with): the
    settle's pruning leaves them, so the next build validates nothing again."""
    wall_clock(monkeypatch)  # the files just written are trusted
    build(recorded, execute=False, jobs=1)  # the index: what a start takes, not reading
    session = Session(recorded, execute=False)
    session.start()
    for text in ("A first sentence.", "A second sentence."):
        edit(lesson_md(recorded), "{{ panel 1 }}", f"{text}\n\n{{{{ panel 1 }}}}")
        session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
    assert session.settle() is not None
    assert session.course is not None
    memo, kept = session.build.reuse.memo, set(session.store.keys())
    fronts = {memo.key("front matter", x.front) for x in session.course.lessons}
    recordings = {memo.key("recording", s.digest) for s in session.statuses if s.digest}
    assert recordings and fronts | recordings <= kept
    session.close()


def test_a_refresh_asks_git_nothing_and_a_settle_brings_the_footer_up_to_date(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The footer's revision (static/nav.js) costs a refresh three git processes (10-16 ms
    at 1,000 lessons): it is asked at start and at each settle, which leaves site/ as
    `make site` would, "with local changes" once an edit is saved."""
    root = recorded.content.parent
    (root / ".gitignore").write_text("/site/\n/.cache/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    session = Session(recorded, execute=False)
    session.start()
    assert b"with local changes" not in session.served()["static/nav.js"]
    asked: list[tuple[str, ...]] = []
    real = review_git._git

    def counted(cwd: Path, *args: str, stdin: str | None = None) -> bytes:
        asked.append(args)
        return real(cwd, *args, stdin=stdin)

    monkeypatch.setattr(review_git, "_git", counted)
    edit(lesson_md(recorded), "{{ panel 1 }}", "A first sentence.\n\n{{ panel 1 }}")
    changed = session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
    assert asked == [] and "static/nav.js" not in changed
    asks: list[bool] = []

    def edited() -> bool:  # an edit lands once the pages are made again: the settle is put off
        asks.append(True)  # (asked between steps)
        return len(asks) > 1

    assert session.settle(edited) is None
    settled = session.settle()  # the next settle tells the open pages what the last changed
    assert asked and settled is not None and "static/nav.js" in settled
    assert b"with local changes" in session.served()["static/nav.js"]
    assert b"with local changes" in (recorded.out / "static" / "nav.js").read_bytes()
    session.close()
    build(recorded, execute=False, jobs=1)  # what make site would write: nothing else
    assert site_bytes(recorded.out)["static/nav.js"] == session.served()["static/nav.js"]


def test_keys_found_again_are_the_keys_made_from_nothing(recorded: Paths) -> None:
    """After edits that change what other pages show of a lesson (a title: its neighbours;
    the glossary; course.yml: every page), the session's keys, most found again from the
    last refresh's, are those a session started afresh makes by digesting everything."""
    session = Session(recorded, execute=False)
    session.start()
    lesson = recorded.content / "lessons" / "basics-02" / "lesson.md"
    edits = [
        (lesson_md(recorded), "{{ panel 1 }}", "More prose.\n\n{{ panel 1 }}"),
        (lesson, "title: A lesson without panels", "title: A lesson, renamed"),
        (recorded.content / "glossary.yml", "every shape and dtype", "each shape and dtype"),
        (recorded.content / "course.yml", "title: Fixture course", "title: A course"),
    ]
    for path, old, new in edits:
        edit(path, old, new)
        session.refresh(Changes.events(recorded, [str(path)]))
        afresh = Session(recorded, execute=False)
        afresh.start()
        assert set(session.pages.made) == set(afresh.pages.made), path.name
        assert session.served() == afresh.served()
        afresh.close()
    session.close()


@pytest.mark.parametrize(
    "steps", [0, 1, 2], ids=["before-search", "before-observe", "before-write"]
)
def test_an_edit_puts_off_writing_the_site(recorded: Paths, steps: int) -> None:
    """settle asks between its steps whether an edit came: then it writes nothing (the
    edit is built first) and the next settle writes what `make site` writes."""
    session = Session(recorded, execute=False)
    session.start()
    session.settle()
    written = site_bytes(recorded.out)
    edit(lesson_md(recorded), "{{ panel 1 }}", "A new sentence.\n\n{{ panel 1 }}")
    session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
    asked: list[bool] = []

    def edited() -> bool:  # after `steps` steps
        asked.append(True)
        return len(asked) > steps

    assert session.settle(edited) is None
    assert site_bytes(recorded.out) == written
    assert session.settle(lambda: False) is not None
    session.close()
    root = recorded.out.parent
    clean = Paths(recorded.content, recorded.recordings, root / "clean", root / "clean-cache")
    build(clean, execute=False, jobs=1)
    assert site_bytes(recorded.out) == site_bytes(clean.out)


def test_at_each_pause_the_kept_build_is_set_aside_from_the_collector(recorded: Paths) -> None:
    """gc.freeze once site/ is written (the first build, then each pause, a full collection
    a quiet second later), so that a refresh does not walk what the build keeps; close()
    gives it back."""
    preview = Preview(recorded, port=0, execute=False)
    preview.start()
    assert gc.get_freeze_count() > 0
    gc.unfreeze()
    edit(lesson_md(recorded), "{{ panel 1 }}", "Written at the pause.\n\n{{ panel 1 }}")
    stop = threading.Event()
    threading.Timer(SETTLE_AFTER + 1.5, stop.set).start()
    preview.run(stop)
    assert b"Written at the pause." in (recorded.out / "l/first/index.html").read_bytes()
    assert gc.get_freeze_count() > 0
    preview.close()
    assert gc.get_freeze_count() == 0


def test_a_refresh_of_a_lesson_runs_without_the_collector(recorded: Paths) -> None:
    """A prose edit's refresh runs with gc off (on again once the pages are told); a
    template edit's, which renders every page, with it on."""
    preview = Preview(recorded, port=0, execute=False)
    preview.start()
    enabled: list[bool] = []
    refresh = preview.session.refresh

    def watched(changed: Changes) -> list[str]:
        enabled.append(gc.isenabled())
        return refresh(changed)

    preview.session.refresh = watched  # type: ignore[method-assign]
    assert preview.rebuild([str(lesson_md(recorded))])
    assert preview.rebuild([str(TEMPLATES / "lesson.html")])
    assert enabled == [False, True] and gc.isenabled()
    preview.close()


def test_a_settle_prunes_the_page_versions_of_earlier_edits(recorded: Paths) -> None:
    """The store keeps what the site and the edits since the last settle use: an edited
    page's earlier version, made and stored by a refresh, is gone after the next settle
    (it used to stay until a one-shot build pruned it: a page a save, all session long)."""
    session = Session(recorded, execute=False)
    session.start()
    versions = []
    for text in ("A first sentence.", "A second sentence.", "A third sentence."):
        edit(lesson_md(recorded), "{{ panel 1 }}", f"{text}\n\n{{{{ panel 1 }}}}")
        session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
        versions.append(session.pages.names()["l/first/index.html"])
        assert session.settle() is not None
    stored = set(session.store.keys())
    assert versions[-1] in stored and not stored & set(versions[:-1])
    session.close()


def test_what_a_failed_refresh_read_is_read_again_by_the_next(recorded: Paths) -> None:
    """An edit the preview could not build (another lesson broke the course) is built by
    the refresh after the fix, though that refresh's events name only the fixed lesson."""
    session = Session(recorded, execute=False)
    session.start()
    other = lesson_md(recorded, "basics-02")
    edit(lesson_md(recorded), "{{ panel 1 }}", "A first sentence.\n\n{{ panel 1 }}")
    edit(other, "title: ", "title: [")  # YAML that does not parse
    with pytest.raises(BuildError):
        session.refresh(Changes.events(recorded, [str(lesson_md(recorded)), str(other)]))
    edit(other, "title: [", "title: ")
    session.refresh(Changes.events(recorded, [str(other)]))
    assert b"A first sentence." in session.served()["l/first/index.html"]
    session.close()


def test_a_data_file_edited_twice_is_served_as_it_is(recorded: Paths) -> None:
    """A data file is read at each refresh that names it: the second edit's bytes are
    served though the lesson and its status are the same as after the first (found by
    the property test, PROPERTY_LONG)."""
    session = Session(recorded, execute=False)
    session.start()
    data = recorded.content / "lessons" / "speed-01" / "numbers.txt"
    for number in ("0", "0"):
        data.write_text(data.read_text() + f"{number}\n")
        session.refresh(Changes.events(recorded, [str(data)]))
        served = {n: d for n, d in session.served().items() if n.endswith("/numbers.txt")}
        assert list(served.values()) == [data.read_bytes()]
    session.close()


def test_a_lesson_reading_another_lessons_file_is_refreshed_when_that_file_changes(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """What an edit touches is looked up in what each lesson read, not guessed from the
    shape of its path: here basics-01's prose takes in a file of basics-02's folder (read
    through the input door, which notes it), so editing that file refreshes basics-01's
    page, in the preview as in a one-shot build, and the log says why."""
    from dataclasses import replace

    from builder.course import load
    from builder.course.files import read_text

    note = recorded.content / "lessons" / "basics-02" / "note.md"
    note.write_text("First words.\n")
    original = load._load_lesson

    def reading_elsewhere(folder: Path, cache: Any, reads: Any) -> Any:
        lesson = original(folder, cache, reads)
        if folder.name != LESSON:
            return lesson
        return replace(lesson, body=lesson.body + "\n\n" + read_text(note, reads=reads))

    monkeypatch.setattr(load, "_load_lesson", reading_elsewhere)
    session = Session(recorded, execute=False)
    session.start()
    assert b"First words." in session.served()["l/first/index.html"]
    note.write_text("Second words.\n")
    with caplog.at_level("INFO", logger="builder.explain"):
        changed = session.refresh(Changes.events(recorded, [str(note)]))
    assert "l/first/index.html" in changed
    assert b"Second words." in session.served()["l/first/index.html"]
    assert f"basics-01: read again ({note} changed)" in caplog.text
    assert "basics-02: read again" not in caplog.text  # its own files were not read
    note.write_text("Third words.\n")
    build(recorded, execute=False, jobs=1)
    assert b"Third words." in (recorded.out / "l/first/index.html").read_bytes()
    session.close()


def test_a_lesson_folder_swapped_in_whole_is_read_again(recorded: Paths, tmp_path: Path) -> None:
    """A folder moved in names only itself in the file events, not the files beneath it:
    every value read from beneath it is read again (the prose of the folder moved in is
    served), as a one-shot build, which sees each file's metadata, reads it."""
    session = Session(recorded, execute=False)
    session.start()
    folder = recorded.content / "lessons" / LESSON
    other = tmp_path / LESSON
    shutil.copytree(folder, other)
    edit(other / "lesson.md", "{{ panel 1 }}", "Moved in whole.\n\n{{ panel 1 }}")
    folder.rename(tmp_path / "gone")
    other.rename(folder)
    session.refresh(Changes.events(recorded, [str(folder)]))
    assert b"Moved in whole." in session.served()["l/first/index.html"]
    session.close()
