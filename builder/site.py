"""The build, as a table of contents: load, check status, record, render, write."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .course import Course, load_course
from .errors import BuildError, ExecutionError
from .execute import Runner, run_example
from .fsutil import cannot_write, check_writable, write_all
from .status import LessonStatus, course_status, read_inputs

SITE_MARKER = ".coursebuilder-site"


@dataclass(frozen=True)
class Paths:
    content: Path
    recordings: Path
    out: Path
    cache: Path


@dataclass(frozen=True)
class BuildResult:
    executed: list[str]
    written: int
    removed: int
    total: int


def record_stale(
    course: Course,
    paths: Paths,
    *,
    jobs: int,
    force: bool = False,
    only: tuple[str, ...] = (),
    statuses: list[LessonStatus] | None = None,
    runner: Runner = run_example,
    log: TextIO = sys.stderr,
) -> list[str]:
    """Re-execute what is not fresh (or everything with force); raise if any run failed."""
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
    report = record(lessons, paths.recordings, jobs=jobs, runner=runner, log=log)
    if report.failures:
        raise ExecutionError(failure_summary(report.failures, course))
    return [execution.lesson_id for execution in report.executions]


def build(
    paths: Paths,
    *,
    execute: bool,
    jobs: int,
    force: bool = False,
    runner: Runner = run_example,
    log: TextIO = sys.stderr,
) -> BuildResult:
    """Record what changed (unless `execute` is off), then render and write the site."""
    with build_lock(paths.cache):
        course = load_course(paths.content)
        statuses = course_status(course, paths.recordings)
        executed = []
        if execute:
            executed = record_stale(
                course, paths, jobs=jobs, force=force, statuses=statuses, runner=runner, log=log
            )
        if executed:  # the recordings changed: read them again
            statuses = course_status(course, paths.recordings)
        written, removed, total = render_to(course, statuses, paths)
    return BuildResult(executed, written, removed, total)


def render_to(course: Course, statuses: list[LessonStatus], paths: Paths) -> tuple[int, int, int]:
    from .buildcache import LessonCache, cached_search
    from .render import render_site
    from .search import search_index

    seconds = {
        lesson_id: entry["seconds"]
        for lesson_id, entry in read_inputs(paths.recordings).items()
        if isinstance(entry, dict) and isinstance(entry.get("seconds"), int | float)
    }
    pages = LessonCache(paths.cache)
    files = render_site(course, statuses, paths.cache / "charts", seconds, lesson_map=pages)
    files[SITE_MARKER] = b"made by python -m builder; every file here is regenerated\n"
    files |= cached_search(files, paths.cache, search_index)
    _check_owned(paths.out)
    try:
        written = write_all(paths.out, files)
    except OSError as error:
        raise cannot_write(error, "the previous site is unchanged") from None
    try:
        removed = _remove_others(paths.out, set(files))
    except OSError as error:
        raise cannot_write(error, "the new site is written; some old files remain") from None
    return written, removed, len(files)


def _check_owned(out: Path) -> None:
    """Refuse to clean a folder this builder did not make (a mistyped --out)."""
    if out.exists() and any(out.iterdir()) and not (out / SITE_MARKER).exists():
        raise BuildError(
            "is not empty and was not made by this builder; refusing to write the site there",
            path=out,
            hint="pass an empty or new folder with --out",
        )


def _remove_others(out: Path, keep: set[str]) -> int:
    """Delete files a previous build wrote that this build no longer produces."""
    removed = 0
    for path in sorted(out.rglob("*"), key=str, reverse=True):  # str: Path.__lt__ is slow
        name = path.relative_to(out).as_posix()
        if path.is_file() and name not in keep:
            path.unlink()
            removed += 1
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
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
