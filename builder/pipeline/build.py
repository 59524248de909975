"""The build, as a table of contents: observe, index, load, status, record, render, write.

    observe   the inputs' and the site's file metadata: unchanged since the last good
              build -> done (the no-op)
    index     what the last build read and wrote (builder.pipeline.index): the lessons,
              statuses and sidecars whose files' metadata is unchanged are taken from it
    load      content/ -> Course (validated, frozen)
    status    Course + recordings/ -> one LessonStatus per lesson
    record    each lesson not fresh runs in its own process -> recordings/ (then status again)
    render    lesson pages and charts, the other pages, the search bundles -> artifacts,
              each made, or taken from the site or the store (builder.pipeline.make)
    write     the changed files into site/, all renamed into place; what is gone, removed
    remember  the index of this build, and the store pruned to what it references

Each stage is a method of one `Build`, and `Build.run` runs them in order for every command:
`build` (site, render) all, `check` up to status, the preview (builder.preview.session) up
to the pages on each edit. A difference between commands is an argument to `run`, never a
copy of the sequence.

Everything a build keeps is in the store (builder.core.store); its index is committed
only when a build succeeds, so a failed build leaves the last good index, and the site
it describes (what it made is committed as it is made: the next build takes it from there).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..core.lineage import alive, held
from ..core.observe import Observed, Paths
from ..core.store import Store
from .index import (
    STAGES,
    Changes,
    Head,
    Index,
    Reads,
    Recorder,
    Values,
    code_digest,
    index_salt,
    installed_versions,
)

if TYPE_CHECKING:
    from ..course.load import Shared
    from ..course.model import Course, Lesson, Move
    from ..course.status import LessonStatus
    from ..review.moves import Compared
    from ..run.execute import Runner
    from .make import Kept
    from .reuse import Reuse
    from .site import Site
    from .write import Written

logger = logging.getLogger(__name__)
NOT_RECORDED = (
    "nothing was recorded: these need no recording to be found; fix them, then build again"
)


@dataclass(frozen=True)
class BuildResult:
    executed: tuple[str, ...]
    written: int
    removed: int
    total: int
    noop: bool = False  # nothing read or made: inputs and site as the last build left them


class Build:
    """One build of a course, stage by stage (`run`), and what each stage made so far; the
    preview (builder.preview.session) keeps one between edits. The store is opened, a
    damaged one reported and the last build's index consulted the same way for all."""

    def __init__(self, paths: Paths, store: Store) -> None:
        self.paths = paths
        self.store = store
        self.reuse: Reuse  # made by begin() with the code digest
        self.versions: dict[str, str] = {}
        self.index = Index("")
        self.reads: Reads = {stage: {} for stage in STAGES}  # what each value was read from
        self.course: Course | None = None
        self.statuses: list[LessonStatus] = []
        self.sidecars: dict[str, Any] = {}
        self.executed: tuple[str, ...] = ()  # the lessons the last record stage ran
        self.written: Written | None = None  # what the publish stage wrote and removed

    @classmethod
    @contextlib.contextmanager
    def opened(cls, paths: Paths, lock: bool = True) -> Iterator[Build]:
        """A build of `paths` with its store open and, with `lock`, the cache folder's lock
        held (`check` writes nothing the lock guards)."""
        locked = build_lock(paths.cache) if lock else contextlib.nullcontext()
        with locked, contextlib.closing(open_store(paths)) as store:
            yield cls(paths, store)

    def begin(self, now: Observed, head: Head | None = None, reread: bool = False) -> Changes:
        """What the last good build left: its index (without its entries with `reread`:
        every input is read again), the packages' versions (read again only when the
        interpreter's folders changed), the code digest every key is made with and how it
        keyed its lessons (builder.pipeline.reuse `Around`); the change-set since `head`
        (builder.pipeline.index `Changes.observed`)."""
        from .reuse import Around  # with Reuse: not imported by a no-op

        self.versions = installed_versions(now.environment, head)
        self.rekey()
        salt, digests = index_salt(self.reuse.salt, self.versions), self.reuse.digests
        self.index = Index.load(self.store, head, now, salt, digests, reread)
        self.reads = self.index.reads()
        self.reuse.made.update((n, e.made) for n, e in self.index.entries.items() if e.made)
        published, shared = self.index.published, self.index.shared
        kept = published.around if published is not None else None  # how it keyed lessons
        values = shared.values if shared is not None else None
        self.reuse.around = Around.remembered(self.paths.content, kept, values, self.index.entries)
        return Changes.observed(head, now)

    def rekey(self) -> None:
        """Keys made anew from the code (a template changed under a running preview)."""
        from .reuse import Reuse  # not imported by a no-op, which makes no key

        self.reuse = Reuse(self.store, code_digest(self.versions))

    def run(
        self,
        changes: Changes,
        kept: Kept | None = None,
        *,
        jobs: int = 1,
        record: Execute | None = None,
        built: str | None = None,
        since: str | None = None,
        publish: Observed | None = None,
    ) -> Site | None:
        """The stages in order, each value that `changes` leaves as it was taken: up to
        status without `kept` (`check`), record with `record`, up to the pages without
        `publish` (the preview's refresh), else the search bundles and site/ written as
        `publish` observed it before reading (`built` and `since`: see `pages`)."""
        taken = self.taken(changes)
        self.load(taken.lessons, taken.shared)
        self.status(taken.statuses)
        if kept is None:
            return None
        self.executed = self.record(jobs, record) if record else ()
        self.shifted()
        self.inputs({n: v for n, v in taken.sidecars.items() if n not in self.executed})
        from ..render.deadline import build_budget

        with self.reuse.templates(), build_budget():
            pages = self.pages(kept, jobs, built, since)
            if publish is None:
                return pages
            site = self.search(pages, kept, jobs)
        self.store.commit()  # what it made: not held twice (made, and pickled) while publishing
        self.publish(site, site.files(), publish)
        return site

    def taken(self, changes: Changes) -> Values:
        """What this build holds, read before (the last good build's index; in the
        preview, the last refresh), that `changes` leaves as it was: one question, whether
        the paths came from file metadata or from file events."""
        course = self.course
        if course is None:
            return self.index.values().taken(changes, self.reads)
        statuses = {s.lesson_id: s for s in self.statuses}
        lessons = {x.id: x for x in course.lessons}  # its folder's name
        held = Values(lessons, statuses, self.sidecars, (course.meta, course.glossary))
        return held.taken(changes, self.reads)

    def load(self, kept: Mapping[str, Lesson], shared: Shared | None = None) -> Course:
        """content/ -> Course; the lessons in `kept` (by folder name) are not read again,
        nor course.yml and glossary.yml when `shared` holds them."""
        from ..course.load import load_course

        memo, reads = self.reuse.memo, Recorder(self.store, self.reads["lesson"])
        self.course = load_course(self.paths.content, memo, kept, reads, shared)
        return self.course

    def status(self, kept: Mapping[str, LessonStatus] | None = None) -> list[LessonStatus]:
        """Each lesson's status against recordings/; those in `kept` (by id) are not
        read again."""
        from ..course.status import course_status

        assert self.course is not None
        course, recordings, memo = self.course, self.paths.recordings, self.reuse.memo
        reads = Recorder(self.store, self.reads["status"])
        self.statuses = course_status(course, recordings, self.versions, memo, kept, reads)
        return self.statuses

    def record(self, jobs: int, asked: Execute) -> tuple[str, ...]:
        """Run what is not fresh (everything with `force`; of `only`, when given) and read
        the statuses again; the lesson ids run (builder.run.batch, imported only when a
        build records). The prose of the lessons about to run is checked first: a problem
        no recording can change is reported, all at once, before any example runs. With
        `only` (the preview's background recorder, whose file events bring the statuses
        again) the statuses are not read here."""
        from ..run.batch import lessons_to_run, record_stale

        assert self.course is not None
        course, statuses, paths = self.course, self.statuses, self.paths
        force, runner, dask, only = asked.force, asked.runner, asked.dask, asked.only
        due = lessons_to_run(course, statuses, force=force, only=only, waiting=True)
        if due:
            self.proofread(due)
        done = record_stale(course, statuses, paths, jobs, force, runner, only, dask)
        if done and not only:  # read again: what recording wrote
            self.status()
        return done

    def proofread(self, lessons: list[Lesson]) -> None:
        """Each problem of `lessons`' prose that needs no recording to be found, raised
        together (builder.render.lessons.unrecorded_problems), with nothing recorded."""
        from ..core.errors import BuildErrors
        from ..render.lessons import unrecorded_problems

        assert self.course is not None
        if errors := unrecorded_problems(self.course, self.statuses, lessons):
            raise BuildErrors(errors, hint=NOT_RECORDED)

    def shifted(self) -> None:
        """Each `lines=` reference whose lines moved under it since the last build (an
        inserted line, a re-record that printed more above) is an error naming what to
        write instead (builder.render.shifted), so a page never shows other lines than its
        author chose. Only a lesson whose example or output changed is compared."""
        from ..core.errors import BuildErrors
        from ..render.shifted import moved_references

        assert self.course is not None
        entries, errors = self.index.entries, []
        pairs = zip(self.course.lessons, self.statuses, strict=False)  # the orphans after
        for lesson, status in pairs:
            entry = entries.get(lesson.id)
            if entry is None or (entry.lesson is lesson and entry.status is status):
                continue  # new, or taken from the index as it was
            then, now = entry.status.recording if entry.status else None, status.recording
            old, new = (then.stdout if then else None), (now.stdout if now else None)
            if entry.lesson.source != lesson.source or old != new:
                errors += moved_references(entry.lesson, lesson, old, new)
        if errors:
            raise BuildErrors(errors)

    def inputs(self, kept: Mapping[str, Any]) -> dict[str, Any]:
        """What each recording's sidecar says; those in `kept` (by id) are not read again."""
        from ..course.rules import read_inputs

        reads = Recorder(self.store, self.reads["sidecar"])
        self.sidecars = read_inputs(self.paths.recordings, kept, reads)
        return self.sidecars

    def pages(self, kept: Kept, jobs: int, built: str | None, since: str | None) -> Site:
        """Every page and chart, made or taken from `kept` and the store (no search
        bundles: what the preview serves first), with the page of each of course.yml's
        moves (what it changed is read from content/moves/, committed); the footer says
        `built` (None: what git says, after recording); with `since` (a git revision), a
        "What changed" page."""
        from ..review.git import built_from
        from .site import make_pages

        assert self.course is not None
        course, statuses, sidecars, reuse = self.course, self.statuses, self.sidecars, self.reuse
        built = built_from(self.paths.content) if built is None else built
        changes, moves = _changes(self.paths, since), _moves(course, reuse)
        return make_pages(course, statuses, sidecars, reuse, kept, jobs, built, changes, moves)

    def search(self, pages: Site, kept: Kept, jobs: int) -> Site:
        """`pages` and the search bundles that index them."""
        from .site import with_search

        assert self.course is not None
        return with_search(pages, self.course, self.statuses, self.reuse, kept, jobs)

    def publish(self, site: Site, files: dict[str, bytes], now: Observed) -> Written:
        """`files` (those of `site` that site/ does not hold) written and what `site` no
        longer has removed; then this build's index (what it read, by the metadata `now`
        observed before reading, and the site it left) committed, and the store pruned."""
        from .stages import publish

        assert self.course is not None
        salt = index_salt(self.reuse.salt, self.versions)
        before = self.index if self.index.salt == salt else Index(salt)
        values = (self.statuses, self.sidecars)
        digests, made = self.reuse.digests, self.reuse.made
        index = Index.of(before, digests, made, self.course, values, self.reads)
        reuse = self.reuse
        around = reuse.around.remembered_by(reuse.digests) if reuse.around else None
        self.written, self.index = publish(
            self.store, self.paths, site, files, now, self.versions, index, around
        )
        return self.written


@dataclass(frozen=True)
class Execute:
    """What the record stage is asked (builder.run.batch): all again, only some, how, where."""

    force: bool = False
    runner: Runner | None = None
    dask: str | None = None
    only: tuple[str, ...] = ()


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
    with Build.opened(paths) as run:
        now = observe(paths, settings(execute, _commit(paths, since)))
        head = Head.load(run.store)  # what a no-op compares, not what the site files hold
        if head is not None and head.unchanged(now) and not force:
            return BuildResult((), 0, 0, head.total, noop=True)
        from ..core.scratch import sweep  # not on a no-op: a build that does work sweeps
        from .make import Kept  # with the stages: not imported by a no-op

        sweep()  # the scratch folders of killed builds
        changes = run.begin(now, head, reread=force)
        kept = Kept.since(run.index, paths.out, now)
        record = Execute(force, runner, dask) if execute else None
        run.run(changes, kept, jobs=jobs, record=record, since=since, publish=now)
    assert run.written is not None
    done = run.written
    return BuildResult(run.executed, done.written, done.removed, done.total)


def settings(execute: bool, since: str) -> tuple[str, ...]:
    """What a build was asked (`since`: the commit a What-changed page compares with): a
    build asked something else is not a no-op."""
    return (f"execute={execute}", f"since={since}")


def observe(paths: Paths, asked: tuple[str, ...]) -> Observed:
    """The inputs' and the site's file metadata, before anything is read."""
    return Observed.take([paths.content, paths.recordings], paths.out, paths.cache, *asked)


def clock(paths: Paths) -> int:
    """The file system's clock now, as `observe` takes it (builder.core.observe.clock)."""
    from ..core import observe as observed

    return observed.clock(paths.cache, [paths.content, paths.recordings, paths.out])


def _commit(paths: Paths, since: str | None) -> str:
    """The commit `since` names now: a build keyed on it notices when the branch moves."""
    if not since:
        return ""
    from ..review.git import commit  # git, tarfile: only with --since

    return commit(paths.recordings, since)


def _changes(paths: Paths, since: str | None) -> Compared | None:
    """What the recordings changed since `since` (builder.review), for the What changed page."""
    if not since:
        return None
    from ..review.moves import compared  # git: only with --since

    return compared(paths.content, paths.recordings, since, None)


def _moves(course: Course, reuse: Reuse) -> tuple[tuple[Move, Compared], ...]:
    """Each of course.yml's moves and what it changed, from its committed file
    (builder.review.moves: no git)."""
    if not course.meta.moves:
        return ()
    from ..review.moves import move_pages  # pydantic's adapter: only when course.yml names one

    return move_pages(course, reuse.memo)


@dataclass(frozen=True)
class Checked:
    course: Course
    statuses: list[LessonStatus]


def check(paths: Paths) -> Checked:
    """The course and every lesson's status, as the next build would see them (the same
    stages, the same index of what the last build read), executing nothing; what it
    validates is kept in the store for the next build or check. Jinja2 and markdown-it
    stay unloaded: the stages it runs do not need them."""
    with Build.opened(paths, lock=False) as run:
        run.run(run.begin(observe(paths, ()), Head.load(run.store)))  # stops after status
        run.store.commit()  # a store that cannot be written only costs time (and says so)
    assert run.course is not None
    return Checked(run.course, run.statuses)


def open_store(paths: Paths) -> Store:
    """The build cache of `paths`; a damaged one is said once, as a warning, and replaced."""
    return Store(paths.cache, _warn)


def _warn(message: str) -> None:
    """A one-line warning (a damaged build cache)."""
    logger.warning("warning: %s", message)


@contextlib.contextmanager
def build_lock(cache: Path) -> Iterator[None]:
    """One build at a time per cache folder: a second one waits, and says so."""
    with _lock_file(cache) as handle, held(handle.fileno()):
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            logger.info("%s; waiting for it to finish...", _holder(handle.read().strip()))
            fcntl.flock(handle, fcntl.LOCK_EX)
        with contextlib.suppress(OSError):  # who holds it only informs; a full disk may not
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
        yield


def _holder(said: str) -> str:
    """Who holds the lock, from what its holder wrote ("pid N"): a build that is gone
    may have left processes that have not ended yet (they end within a moment)."""
    pid = said.removeprefix("pid ")
    if not pid.isdigit() or alive(int(pid)):
        return f"Another build is running ({said or 'another process'})"
    return f"The build that held the lock ({said}) has ended; its workers are ending"


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
