"""The build, as a table of contents: observe, index, load, status, record, render, write.

    observe   the inputs' and the site's file metadata: unchanged since the last good
              build -> done (the no-op)
    index     what the last build read (builder.build.index): the lessons, statuses and
              sidecars whose files' metadata is unchanged are taken from it, not read
    load      content/ -> Course (validated, frozen)
    status    Course + recordings/ -> one LessonStatus per lesson
    record    each lesson not fresh runs in its own process -> recordings/ (then status again)
    render    lesson pages and charts, the other pages, the search bundles -> artifacts,
              each made, or taken from the site or the store (builder.build.make)
    write     the changed files into site/, all renamed into place; what is gone, removed
    remember  the manifest of this build, and the store pruned to what it references

Everything a build keeps is in the store (builder.core.store); its manifest is committed
only when a build succeeds, so a failed build leaves the last good manifest, and the site
it describes (what it made is committed as it is made: the next build takes it from there).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..core.observe import Observed, Paths, environment_snapshot
from ..core.scratch import sweep
from ..core.store import Memo, Store
from .manifest import Head, Manifest, code_digest, installed_versions

if TYPE_CHECKING:
    from ..course.model import Course
    from ..course.status import LessonStatus
    from ..review.changes import CourseChanges
    from ..run.execute import Runner

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildResult:
    executed: tuple[str, ...]
    written: int
    removed: int
    total: int


def build(
    paths: Paths,
    *,
    execute: bool,
    jobs: int,
    force: bool = False,
    runner: Runner | None = None,
    since: str | None = None,
    dask: str | None = None,
) -> BuildResult:
    """Record what changed (unless `execute` is off), then render and write the site, in
    `jobs` processes at once for either; with `since` (a git revision), a "What changed"
    page against it too. Progress and warnings are logged (builder.core.console)."""
    with build_lock(paths.cache), contextlib.closing(Store(paths.cache, _warn)) as store:
        sweep()  # the scratch folders of killed builds
        now = observe(paths, settings(execute, _commit(paths, since)))
        head = Head.load(store)  # what a no-op compares, not what the site files hold
        if head is not None and head.unchanged(now) and not force:
            return BuildResult((), 0, 0, head.total)
        from .stages import Index, Kept, course_status, load_course, make_site, publish, read_inputs

        last = Manifest.load(store, head)
        versions = installed_versions(now.environment, last)
        memo = Memo(store, code_digest(versions))
        index = Index.load(store, memo, versions, force)  # what the last build read
        course = load_course(paths.content, memo, index.lessons(now))
        statuses = course_status(course, paths.recordings, versions, memo, index.statuses(now))
        executed = _record(course, statuses, paths, jobs, force, runner, dask) if execute else ()
        if executed:  # read again: what recording wrote
            statuses = course_status(course, paths.recordings, versions, memo)
        sidecars = read_inputs(paths.recordings, index.sidecars(now, executed))
        kept = Kept.since(last, paths.out, now)
        changes = _changes(paths, since)
        built = _built(paths)  # the revision, for the footer
        site = make_site(course, statuses, sidecars, memo, kept, jobs, built, changes)
        store.commit()  # what it made: not held twice (made, and pickled) while publishing
        read = Index.of(index, now, memo, course, statuses, sidecars)
        written = publish(store, paths, site, site.files(), now, versions, read)
    return BuildResult(executed or (), written.written, written.removed, written.total)


def _record(
    course: Course,
    statuses: list[LessonStatus],
    paths: Paths,
    jobs: int,
    force: bool,
    runner: Runner | None,
    dask: str | None,
) -> tuple[str, ...]:
    """Record what is not fresh (builder.run.batch, imported only when a build records)."""
    from ..run.batch import record_stale

    return record_stale(course, statuses, paths, jobs, force, runner, dask=dask)


def settings(execute: bool, since: str) -> tuple[str, ...]:
    """What a build was asked (`since`: the commit a What-changed page compares with): a
    build asked something else is not a no-op."""
    return (f"execute={execute}", f"since={since}")


def observe(paths: Paths, asked: tuple[str, ...]) -> Observed:
    """The inputs' and the site's file metadata, before anything is read."""
    return Observed.take([paths.content, paths.recordings], paths.out, *asked)


def _commit(paths: Paths, since: str | None) -> str:
    """The commit `since` names now: a build keyed on it notices when the branch moves."""
    if not since:
        return ""
    from ..review.git import commit  # git, tarfile: only with --since

    return commit(paths.recordings, since)


def _built(paths: Paths) -> str:
    """The revision the site is built from, as its footer says it (git)."""
    from ..review.git import built_from

    return built_from(paths.content)


def _changes(paths: Paths, since: str | None) -> CourseChanges | None:
    """What the recordings changed since `since` (builder.review), for the What changed page."""
    if not since:
        return None
    from ..review.diff import diff  # git: only with --since

    return diff(paths.content, paths.recordings, since, None)


@dataclass(frozen=True)
class Checked:
    course: Course
    statuses: list[LessonStatus]


def check(paths: Paths) -> Checked:
    """The course and every lesson's status, as the next build would see them, executing
    nothing; what it validates is kept in the store for the next build or check. It
    imports the two stages it runs, not builder.build.stages: jinja2 and markdown-it stay
    unloaded."""
    from ..course.load import load_course
    from ..course.status import course_status

    with contextlib.closing(Store(paths.cache, _warn)) as store:
        versions = installed_versions(environment_snapshot(), Head.load(store))
        memo = Memo(store, code_digest(versions))
        course = load_course(paths.content, memo)
        statuses = course_status(course, paths.recordings, versions, memo)
        store.commit()  # a store that cannot be written only costs time (and says so)
    return Checked(course, statuses)


def _warn(message: str) -> None:
    """A one-line warning (a damaged build cache)."""
    logger.warning("warning: %s", message)


@contextlib.contextmanager
def build_lock(cache: Path) -> Iterator[None]:
    """One build at a time per cache folder: a second one waits, and says so."""
    with _lock_file(cache) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            logger.info("Another build is running (%s); waiting for it to finish...", holder)
            fcntl.flock(handle, fcntl.LOCK_EX)
        with contextlib.suppress(OSError):  # who holds it only informs; a full disk may not
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
        yield


def _lock_file(cache: Path) -> TextIO:
    """The cache folder's lock file, open; a folder that cannot hold it is a BuildError."""
    path = cache / "build.lock"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        try:  # never through a link: its target would be truncated to "pid N"
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            os.unlink(path)  # the link, not what it points to: the lock file is ours
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        return os.fdopen(fd, "r+")
    except OSError as error:
        from ..core.fsutil import cannot_write  # not imported by a build that can lock

        failure = OSError(error.errno, error.strerror, error.filename or str(path))
        raise cannot_write(failure, "nothing was built") from None
