"""The build, as a table of contents: load, check status, record, render, write."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

from . import stamp, state
from .course import Course, load_course
from .errors import BuildError, ExecutionError
from .fsutil import Staging, cannot_write, check_writable
from .stamp import BuildStamp, Snapshot, snapshot
from .state import BuildState
from .status import LessonStatus, course_status, read_inputs

if TYPE_CHECKING:
    from .execute import Runner

SITE_MARKER = ".coursebuilder-site"


@dataclass(frozen=True)
class Paths:
    content: Path
    recordings: Path
    out: Path
    cache: Path


class Rendered(NamedTuple):
    written: int
    removed: int
    total: int
    parts: dict[str, tuple[str, str]]  # every lesson's part of its page key (buildcache)


@dataclass(frozen=True)
class BuildResult:
    executed: list[str]
    written: int
    removed: int
    total: int
    site: Snapshot  # the site folder after the build


def record_stale(
    course: Course,
    paths: Paths,
    *,
    jobs: int,
    force: bool = False,
    only: tuple[str, ...] = (),
    statuses: list[LessonStatus] | None = None,
    runner: Runner | None = None,
    log: TextIO = sys.stderr,
) -> list[str]:
    """Re-execute what is not fresh (or everything with force); raise if any run failed."""
    from .execute import run_example  # only a build that may execute needs it
    from .record import failure_summary, lessons_to_run, record

    if statuses is None:
        statuses = course_status(course, paths.recordings)
    lessons = lessons_to_run(course, statuses, force=force, only=only)
    unknown = sorted(set(only) - {x.id for x in lessons} - {x.slug for x in lessons})
    if unknown:
        raise BuildError(
            f"no lesson in {paths.content} has the id or slug {', '.join(unknown)}",
            hint="`python -m builder check --json` lists every lesson id",
        )
    if not lessons:
        return []
    check_writable(paths.recordings)
    print(f"Recording {len(lessons)} lesson(s) with -j {jobs}:", file=log)
    report = record(lessons, paths.recordings, jobs=jobs, runner=runner or run_example, log=log)
    if report.failures:
        raise ExecutionError(failure_summary(report.failures, course))
    return [execution.lesson_id for execution in report.executions]


def build(
    paths: Paths,
    *,
    execute: bool,
    jobs: int,
    force: bool = False,
    runner: Runner | None = None,
    log: TextIO = sys.stderr,
    seen: BuildStamp | None = None,
) -> BuildResult:
    """Record what changed (unless `execute` is off), then render and write the site.

    `seen` is the caller's snapshot of the inputs and the site (builder.stamp); without it,
    one is taken here. builder.state uses it to reuse what the last build loaded and wrote.
    """
    with build_lock(paths.cache):
        if seen is not None:
            taken, inputs, site = seen.taken_ns, seen.inputs, seen.site
        else:
            taken, inputs, site = time.time_ns(), _inputs(paths), snapshot([paths.out])
        guard = state.guard(paths.content, paths.recordings, inputs)
        last = state.load(paths.cache, guard)
        state.forget(paths.cache)  # a build that fails must leave no state behind
        loaded = last.loaded(paths.content, paths.recordings, inputs) if last else None
        course = load_course(paths.content, loaded)
        known = last.statuses(loaded) if last and loaded else None
        recorded = last.recordings(loaded, inputs) if last and loaded else None
        statuses = course_status(course, paths.recordings, known, recorded)
        parts = last.parts(loaded) if last and loaded else {}
        executed = []
        if execute:
            executed = record_stale(
                course, paths, jobs=jobs, force=force, statuses=statuses, runner=runner, log=log
            )
        if executed:  # the recordings changed: see them as they are now, then read them
            # Only them: the lessons are remembered with the metadata seen before they were
            # read (one edited while its example ran must look changed to the next build).
            inputs = {**inputs, **snapshot([paths.recordings])}
            statuses, parts = course_status(course, paths.recordings), {}
        now = BuildState(guard, taken, course.meta, course.glossary, {}, str(paths.out.resolve()))
        done = render_to(course, statuses, paths, last, now, site, parts)
        now.lessons = state.remember(
            list(course.lessons), statuses, paths.recordings, inputs, done.parts
        )
        state.save(paths.cache, now, last)
    return BuildResult(executed, done.written, done.removed, done.total, now.site)


def _inputs(paths: Paths) -> Snapshot:
    """What builder.stamp takes: the course, the recordings, the code and the packages."""
    roots = [paths.content, paths.recordings, *stamp.code_roots()]
    return snapshot(roots) | snapshot(stamp.environment_files(), deep=False)


def render_to(
    course: Course,
    statuses: list[LessonStatus],
    paths: Paths,
    last: BuildState | None = None,
    now: BuildState | None = None,
    site: Snapshot | None = None,
    parts: dict[str, tuple[str, str]] | None = None,
) -> Rendered:
    """Render the site and bring `paths.out` in line with it: write what changed, delete what
    is gone. Pages and search bundles `last` wrote and that are unchanged are left alone.
    `parts` are the page-key parts of unchanged lessons; `now` receives what this build
    wrote, for the next one, which also keeps the returned parts of every lesson."""
    from . import buildcache, highlight, search, store
    from .buildcache import LessonCache, SearchFiles, merge_search, prune_search, search_bundles
    from .render import render_site
    from .search import search_index

    seconds = {
        lesson_id: entry["seconds"]
        for lesson_id, entry in read_inputs(paths.recordings).items()
        if isinstance(entry, dict) and isinstance(entry.get("seconds"), int | float)
    }
    _check_owned(paths.out)
    on_disk = state.site_files(paths.out, site)
    trusted = last.trusted(paths.out, on_disk) if last else set()
    pages = LessonCache(paths.cache, last=last.pages if last else {}, trusted=trusted, known=parts)
    with _this_build_only(paths.cache, last):
        bundles = set(search.bundles(course))

        def index(files: dict[str, bytes], which: set[str]) -> Future[SearchFiles]:
            return pool.submit(
                search_bundles,
                course,
                files,
                dict(pages.page_keys),  # a copy: rendering goes on adding keys
                paths,
                search_index,
                last=last.bundles if last else {},
                trusted=trusted,
                which=which,
            )

        # Pagefind runs in its own processes, off the GIL: the lessons' bundles are indexed
        # while the other pages render, the glossary's while the site's files are staged.
        with ThreadPoolExecutor(2) as pool:
            indexing: list[Future[SearchFiles]] = []
            files = render_site(
                course,
                statuses,
                paths.cache / store.FILE,
                seconds,
                lesson_map=pages,
                reuse=pages.reuse_page,  # keys recorded by a cold build too, for the next one
                lessons_done=lambda done: indexing.append(index(done, bundles - {""})),
            )
            highlight.save_store(paths.cache)
            files[SITE_MARKER] = b"made by python -m builder; every file here is regenerated\n"
            indexing.append(index(files, {""}))
            try:
                with Staging(paths.out) as staging:
                    staging.add(files)  # nothing is renamed until the search bundles are done
                    found = merge_search(*(part.result() for part in indexing))
                    staging.add(found.files)
                    written = staging.commit()
            except OSError as error:
                raise cannot_write(error, "the previous site is unchanged") from None
        prune_search(paths.cache, bundles)
        keep = set(files) | set(found.files) | pages.kept | found.kept
        try:
            gone = [name for name in on_disk if name not in keep]
            folders = _remove_others(paths.out, gone)
        except OSError as error:
            raise cannot_write(error, "the new site is written; some old files remain") from None
        if now is not None:
            now.pages, now.bundles = pages.outputs, found.outputs
            now.facts = buildcache.facts()
            if site is None:
                now.site = snapshot([paths.out])
            else:  # what snapshot() would say, from the one taken before and what changed since
                now.site = _site_after(site, paths.out, staging.written, gone, folders)
        return Rendered(written, len(gone), len(keep), pages.parts)


@contextlib.contextmanager
def _this_build_only(cache: Path, last: BuildState | None) -> Iterator[None]:
    """What a build takes from its cache and state (the code digest and package versions,
    highlighted code, compiled templates) holds for that build only."""
    from . import buildcache, highlight
    from .render import keep_compiled_templates

    buildcache.assume(last.facts if last else {})
    highlight.load_store(cache)
    keep_compiled_templates(cache / "templates")
    try:
        yield
    finally:
        buildcache.assume({})
        keep_compiled_templates(None)


def _site_after(
    before: Snapshot, out: Path, written: list[Path], gone: list[str], folders: list[Path]
) -> Snapshot:
    """The site folder's snapshot after writing `written`, deleting `gone` and `folders`."""
    after = dict(before)
    after[str(out)] = [-1]
    for name in gone:
        after.pop(str(out / name), None)
    for folder in folders:
        after.pop(str(folder), None)
    for path in written:
        after[str(path)] = stamp.file_meta(path)
        for parent in path.parents:
            if parent == out or str(parent) in after:
                break
            after[str(parent)] = [-1]
    return after


def _check_owned(out: Path) -> None:
    """Refuse to clean a folder this builder did not make (a mistyped --out)."""
    if out.exists() and any(out.iterdir()) and not (out / SITE_MARKER).exists():
        raise BuildError(
            "is not empty and was not made by this builder; refusing to write the site there",
            path=out,
            hint="pass an empty or new folder with --out",
        )


def _remove_others(out: Path, names: list[str]) -> list[Path]:
    """Delete files a previous build wrote that this build no longer produces, and the
    folders that leaves empty; returns those folders."""
    folders: set[Path] = set()
    for name in names:
        path = out / name
        path.unlink(missing_ok=True)
        folders.update(path.parents)
    removed = []
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if folder != out and out in folder.parents and not any(folder.iterdir()):
            folder.rmdir()
            removed.append(folder)
    return removed


@contextlib.contextmanager
def build_lock(cache: Path) -> Iterator[None]:
    """One build at a time per cache folder: a second one waits, and says so."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / "build.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            print(
                f"Another build is running ({holder}); waiting for it to finish...",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        yield
