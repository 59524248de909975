"""The build caches never serve a stale page: after every kind of edit, the cached build
gives the same bytes as a build without caches, and re-renders only what the edit touches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builder import buildcache, cli, render, stamp, store
from builder.buildcache import LessonCache
from builder.course import load_course
from builder.site import Paths
from builder.status import course_status
from tests.conftest import edit


def render_both(paths: Paths, pages: LessonCache) -> dict[str, bytes]:
    """Render through the cache, check it against a render without it, return the files."""
    course = load_course(paths.content)
    statuses = course_status(course, paths.recordings)
    charts = paths.cache / store.FILE
    cached = render.render_site(course, statuses, charts, lesson_map=pages)
    assert cached == render.render_site(course, statuses, charts)
    return cached


def lesson_md(paths: Paths, lesson_id: str) -> Path:
    return paths.content / "lessons" / lesson_id / "lesson.md"


@pytest.fixture
def pages(recorded: Paths) -> LessonCache:
    """A cache warmed by one render of the recorded fixture course."""
    store.discard(recorded.cache / store.FILE)  # the fixture's build filled it
    cache = LessonCache(recorded.cache, jobs=1)
    render_both(recorded, cache)
    assert cache.rendered == 3
    return cache


def test_a_second_render_reuses_every_page(recorded: Paths, pages: LessonCache) -> None:
    render_both(recorded, pages)
    assert (pages.hits, pages.rendered) == (3, 0)


def test_a_prose_edit_shows_up_and_rerenders_only_that_page(
    recorded: Paths, pages: LessonCache
) -> None:
    edit(lesson_md(recorded, "speed-01"), "The scaled", "Freshly edited, the scaled")
    files = render_both(recorded, pages)
    assert pages.rendered == 1
    assert any(b"Freshly edited" in data for name, data in files.items() if "index.html" in name)


def test_a_neighbours_title_rerenders_the_pages_that_show_it(
    recorded: Paths, pages: LessonCache
) -> None:
    edit(lesson_md(recorded, "basics-02"), "title: ", "title: Renamed ")
    files = render_both(recorded, pages)
    assert pages.rendered == 3  # itself, its arc neighbour before it, the next lesson
    lessons = [data for name, data in files.items() if name.endswith("index.html")]
    assert all(b"Renamed" in data for data in lessons if b'class="lesson"' in data)


def test_a_changed_recording_changes_the_page(recorded: Paths, pages: LessonCache) -> None:
    path = recorded.recordings / "basics-01.json"
    data = json.loads(path.read_text())
    data["stdout"] += "re-recorded line\n"
    path.write_text(json.dumps(data, indent=2))
    files = render_both(recorded, pages)
    assert pages.rendered == 1
    assert b"re-recorded line" in files["l/first/index.html"]


def test_a_glossary_edit_rerenders_pages(recorded: Paths, pages: LessonCache) -> None:
    glossary = recorded.content / "glossary.yml"
    glossary.write_text(glossary.read_text().replace("definition: ", "definition: NEW ", 1))
    files = render_both(recorded, pages)
    assert pages.rendered == 3
    assert b"NEW " in files["l/first/index.html"]


def test_a_template_change_rerenders_every_page(
    recorded: Paths, pages: LessonCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(render.TEMPLATES, templates)
    for module in (render, buildcache):
        monkeypatch.setattr(module, "TEMPLATES", templates)
    render._environment.cache_clear()
    buildcache.code_digest.cache_clear()
    edit(templates / "lesson.html", "<h1>", "<h1 data-new-template>")
    try:
        files = render_both(recorded, pages)
    finally:
        render._environment.cache_clear()
        buildcache.code_digest.cache_clear()
    assert pages.rendered == 3
    assert b"data-new-template" in files["l/first/index.html"]


def test_a_builder_code_change_rerenders_every_page(
    recorded: Paths, pages: LessonCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = tmp_path / "builder"
    shutil.copytree(stamp.BUILDER, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(buildcache, "BUILDER", code)
    buildcache.code_digest.cache_clear()
    try:
        render_both(recorded, pages)
        assert pages.rendered == 0  # the same code in another folder: the same keys
        (code / "prose.py").write_text((code / "prose.py").read_text() + "\n# changed\n")
        buildcache.code_digest.cache_clear()
        render_both(recorded, pages)
        assert pages.rendered == 3
    finally:
        buildcache.code_digest.cache_clear()


def test_a_damaged_entry_is_rendered_again(recorded: Paths, pages: LessonCache) -> None:
    entries = buildcache.cached_entries(recorded.cache)
    assert len(entries) == 3
    store.put(recorded.cache / store.FILE, "pages", dict.fromkeys(entries, b"not a pickle"))
    render_both(recorded, pages)
    assert pages.rendered == 3


def test_a_cache_file_that_is_not_a_database_is_replaced(
    recorded: Paths, pages: LessonCache
) -> None:
    file = recorded.cache / store.FILE
    store.close()
    file.write_bytes(b"not a database, " * 1000)
    render_both(recorded, pages)
    assert pages.rendered == 3  # every page rendered again, the same bytes as without a cache
    again = LessonCache(recorded.cache, jobs=1)
    render_both(recorded, again)
    assert (again.hits, again.rendered) == (3, 0)  # and stored in a new file


def test_a_cache_that_cannot_be_written_is_an_error_naming_its_file(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk cannot be made here (tests run as root): SQLite's error is injected."""
    import sqlite3

    def full(path: Path) -> object:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "_transaction", full)
    shutil.rmtree(recorded.out)
    store.discard(recorded.cache / store.FILE)
    assert site(recorded) == 1
    message = capsys.readouterr().err
    assert "cache.sqlite: cannot write the build cache (database or disk is full)" in message
    assert "disk is not full" in message and "Traceback" not in message


def test_the_folders_of_the_old_one_file_per_entry_cache_are_removed(recorded: Paths) -> None:
    store.discard(recorded.cache / store.FILE)
    for old in ("pages/ab/abcd.pickle", "charts/abcd.svg"):
        (recorded.cache / old).parent.mkdir(parents=True, exist_ok=True)
        (recorded.cache / old).write_bytes(b"from an earlier version")
    render_both(recorded, LessonCache(recorded.cache, jobs=1))
    assert not (recorded.cache / "pages").exists() and not (recorded.cache / "charts").exists()
    assert len(buildcache.cached_entries(recorded.cache)) == 3


def test_a_page_with_errors_is_never_cached(recorded: Paths, pages: LessonCache) -> None:
    edit(lesson_md(recorded, "speed-01"), "The scaled", "{{ panel 9 }}\n\nThe scaled")
    for _ in range(2):
        with pytest.raises(Exception, match="panel 9"):
            render_both(recorded, pages)
        assert pages.rendered == 1


def test_worker_processes_give_the_same_pages(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(buildcache, "MIN_PER_WORKER", 1)
    render_both(recorded, LessonCache(recorded.cache, jobs=2))


def test_worker_errors_keep_their_file_and_message(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(buildcache, "MIN_PER_WORKER", 1)
    edit(lesson_md(recorded, "speed-01"), "The scaled", "{{ panel 9 }}\n\nThe scaled")
    course = load_course(recorded.content)
    statuses = course_status(course, recorded.recordings)
    results = LessonCache(recorded.cache, jobs=2)(course, statuses, None)
    errors = [error for _, _, found in results for error in found]
    assert len(errors) == 1 and "speed-01" in str(errors[0].path) and "panel 9" in str(errors[0])


# -- the no-op stamp -------------------------------------------------------------------------


class Builds:
    """Count the builds that the CLI really ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import builder.site

        self.count = 0
        real = builder.site.build

        def counting(*args: object, **kwargs: object) -> object:
            self.count += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(builder.site, "build", counting)


def site(paths: Paths, *extra: str) -> int:
    return cli.main(
        ["site", "--no-execute", "--content", str(paths.content), "--recordings",
         str(paths.recordings), "--out", str(paths.out), "--cache", str(paths.cache), *extra]
    )  # fmt: skip


@pytest.fixture
def builds(recorded: Paths, monkeypatch: pytest.MonkeyPatch) -> Builds:
    monkeypatch.setattr(stamp, "RACY_NS", 0)  # files the fixture just wrote count as settled
    counter = Builds(monkeypatch)
    assert site(recorded) == 0
    assert counter.count == 1
    return counter


def test_nothing_changed_skips_the_build(recorded: Paths, builds: Builds) -> None:
    assert site(recorded) == 0
    assert builds.count == 1


def test_an_edit_after_the_stamp_rebuilds(recorded: Paths, builds: Builds) -> None:
    edit(lesson_md(recorded, "speed-01"), "The scaled", "Edited, the scaled")
    assert site(recorded) == 0
    assert builds.count == 2
    assert b"Edited, the scaled" in (recorded.out / "l" / "settings" / "index.html").read_bytes()


def test_a_deleted_or_changed_output_rebuilds(recorded: Paths, builds: Builds) -> None:
    page = next(recorded.out.glob("l/*/index.html"))
    good = page.read_bytes()
    page.unlink()
    assert site(recorded) == 0
    assert builds.count == 2 and page.read_bytes() == good
    page.write_bytes(good + b"<!-- hand edit -->")
    assert site(recorded) == 0
    assert builds.count == 3 and page.read_bytes() == good


def test_force_and_other_settings_rebuild(recorded: Paths, builds: Builds) -> None:
    assert site(recorded, "--force") == 0
    assert builds.count == 2


def test_a_failed_build_is_never_current(recorded: Paths, builds: Builds) -> None:
    lesson = lesson_md(recorded, "speed-01")
    good = lesson.read_text()
    lesson.write_text(good.replace("The scaled", "{{ panel 9 }}\n\nThe scaled", 1))
    assert site(recorded) == 1
    lesson.write_text(good)  # back to the bytes of the last good build
    assert site(recorded) == 0
    assert builds.count == 3  # the stamp was dropped when the build started


def test_inputs_changed_just_before_the_stamp_are_not_trusted(
    recorded: Paths, builds: Builds, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stamp, "RACY_NS", 10**18)  # every input counts as just written
    assert site(recorded) == 0
    assert builds.count == 2


# -- rendering in forked workers -------------------------------------------------------------


def test_pages_rendered_by_forked_workers_are_the_pages_one_process_renders(
    tmp_path: Path,
) -> None:
    """The fixture course is too small for workers (MIN_PER_WORKER): a generated one is not.
    Workers render, store their pages in the cache and hand back the code they highlighted."""
    from bench.generate import generate
    from builder import highlight

    generate(2 * buildcache.MIN_PER_WORKER + 3, tmp_path)
    course = load_course(tmp_path / "content")
    statuses = course_status(course, tmp_path / "recordings")
    alone = render.render_site(course, statuses, None)
    highlight.load_store(tmp_path / "nowhere")  # forget what this process highlighted
    pages = LessonCache(tmp_path / ".cache", jobs=2)
    charts = tmp_path / ".cache" / store.FILE
    assert render.render_site(course, statuses, charts, lesson_map=pages) == alone
    assert pages.rendered == len(course.lessons)
    assert len(buildcache.cached_entries(tmp_path / ".cache")) == len(course.lessons)
    panels = sum(len(s.recording.panels) for s in statuses if s.recording)
    assert len(store.keys(charts, "charts")) == 2 * panels  # both workers stored their charts
    blocks = [key for key in highlight.made() if not key.startswith("stylesheet")]
    assert blocks, "the code blocks the workers highlighted did not reach the parent"
    again = LessonCache(tmp_path / ".cache", jobs=2)
    assert render.render_site(course, statuses, None, lesson_map=again) == alone
    assert (again.hits, again.rendered) == (len(course.lessons), 0)
