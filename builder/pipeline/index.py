"""The build's one index, as git keeps one: every path the last good build read and wrote,
with its metadata (mtime_ns, size, inode, ctime_ns), and what it made of them: for a site
file the key of the artifact it holds, for a lesson's files the values read from them (the
Lesson, its status, its sidecar) with their digests.

- `Head` (the row INDEX, all a no-op unpickles): the metadata of every input path -
  content/, recordings/, builder/ and its templates - and of the interpreter and its
  package folders, observed *before* the build read anything (and of the files it read
  that appeared since: those it recorded, `Index.appeared`); of every site path after the
  build wrote it; and the packages' versions (which `check` reads). When nothing differs
  and nothing is racy, the build is over: the no-op. Its paths are of the folders it
  observed: a build in others (a moved course, `moved`) takes no entry.
- `Published` (INDEX/site): each site file's artifact key, and each artifact's `Trace`
  (INDEX/site/0, ... by part: builder.pipeline.traced), without a page's search text (the
  store's copy of the page has it: builder.pipeline.site `Site.traces`); and course.yml and
  glossary.yml as loaded (`Shared`), with what they were read from.
- `Entry`, by lesson (INDEX/0, INDEX/1, ... PARTS rows, each pickled on its own, so a prose
  edit pickles one again): the values, and for each the paths the input door opened to
  read it (builder.course.files notes them into a `Recorder` as it opens them: no list of
  a lesson's files is kept here) and the store keys reading it used. A value whose paths
  have the metadata the head has is taken, not read.

One racy rule for every path (`racy`), git's: a file whose mtime or ctime is not older than
the file system's clock when its metadata was taken (builder.core.observe `clock`, as git
compares with its index file's mtime) could have changed within the same tick unseen, so
it is not trusted: an input is read again, a site file taken from the store again
(rewritten only if its bytes differ). The build that does so takes the metadata anew, at
a later tick: what it confirmed is no longer racy, and the build after it is a no-op (git
refreshes a racily clean entry and writes its index again). The blind spot is git's too:
a change that keeps the size, the inode and both times, which takes a clock set back;
`--force` reads everything again.

The store keeps what the index references: the site's artifacts and what they used, and
the keys each entry's values were read with (`references`). A row missing, damaged or of
another build means no index: a build from nothing, never a wrong no-op. Standard library
only: the no-op is decided before Jinja2 or markdown-it are imported.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import pickle
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.observe import (
    BUILDER,
    TEMPLATES,
    Observed,
    Paths,
    Snapshot,
    editor_file,
    metadata,
    read_versions,
    site_files,
)
from ..core.store import INDEX, Store, digest
from ..course.files import COURSE_FILES
from .traced import Traced

if TYPE_CHECKING:
    from pathlib import Path

    from ..core.artifact import Trace
    from ..course.load import Shared as Loaded
    from ..course.model import Course, Lesson
    from ..course.status import LessonStatus
    from .keys import Digests
    from .reuse import Remembered

PARTS = 64
SITE = f"{INDEX}/site"  # read only by a build that is not a no-op
STAGES = ("lesson", "status", "sidecar")  # what an entry holds, each read on its own
explain = logging.getLogger("builder.explain")  # why a lesson was read again: --explain


def racy(stat: tuple[int, ...], since: int) -> bool:
    """git's racy rule, for inputs and site files alike: a file's mtime or ctime not older
    than `since`, the file system's clock when its metadata was taken (observe.clock)."""
    return len(stat) > 1 and max(stat[0], stat[3]) >= since


def moved(head: Head, now: Observed) -> bool:
    """Whether the course's folders are not those the head observed (the course moved or
    copied with its cache): the index's paths are those folders', so a path of the old one
    is absent from `now` whether or not its file changed, and what was read from it would
    be taken as it was (a sidecar the last build recorded, a glossary it found missing).
    git keys its index by paths inside the work tree for this; here every input is read
    again, once."""
    return head.seen.roots != now.roots


@dataclass(frozen=True)
class Head:
    """What a no-op compares, the index's first row: all a no-op unpickles."""

    seen: Observed  # what the last good build observed (its site: in `site`, after it)
    site: Snapshot  # every site path after the build wrote it
    site_ns: int  # the file system's clock when `site` was observed (observe.clock)
    total: int  # how many files the site has
    versions: dict[str, str]  # the installed packages' (`check` reads them from here)

    @classmethod
    def load(cls, store: Store) -> Head | None:
        head = store.manifest(INDEX)
        return head if isinstance(head, cls) else None

    def unchanged(self, now: Observed) -> bool:
        """Nothing to read or write differs from what the last build saw, nor is racy."""
        before = self.seen
        return (
            now.settings == before.settings
            and now.out == before.out
            and now.environment == before.environment
            and now.inputs == before.inputs
            and now.site == self.site
            and not any(racy(m, before.since) for m in now.inputs.values())
            and not any(racy(m, self.site_ns) for m in now.site.values())
        )

    def intact(self, out: Path, now: Observed) -> set[str]:
        """Site files that still hold exactly what the last build wrote there."""
        if now.out != self.seen.out:
            return set()
        left, found, since = site_files(out, self.site), site_files(out, now.site), self.site_ns
        return {n for n, m in found.items() if left.get(n) == m and not racy(m, since)}


@dataclass(frozen=True)
class Read:
    """What one value was read from: the paths the door opened, the store keys it used."""

    paths: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Shared:
    """course.yml and glossary.yml as loaded, and what the door opened to read them."""

    values: Loaded
    read: Read


@dataclass(frozen=True)
class Published:
    """The index's second row: the artifact each site file holds, by key, and its trace;
    the course's own files as loaded."""

    taken_ns: int  # the head's observation: a row of another build is none
    salt: str  # Index.salt: the entries' rows are of this index only if it is the same
    files: dict[str, str]
    traces: dict[str, Trace] = field(default_factory=dict)
    shared: Shared | None = None
    around: tuple[Any, ...] | None = None  # how its lessons were keyed (reuse.Around)


@dataclass(frozen=True)
class Entry:
    """A lesson's values, and what each was read from. `made`: what its artifacts were made
    from and their keys (builder.pipeline.reuse.Remembered: its lesson and status among
    them, pickled with the entry, are the entry's own objects)."""

    lesson: Lesson
    reads: tuple[Read, ...]  # by STAGES
    status: LessonStatus | None = None
    sidecar: Any = None  # None: none read
    made: Remembered | None = None


Reads = dict[str, dict[str, Read]]  # by stage (STAGES), then by owner (a lesson's id)
NOT_READ = Read()  # what an entry holds of a stage that read nothing for it


class Recorder:
    """Where the input door (builder.course.files.Reads) notes what a stage reads, by owner."""

    def __init__(self, store: Store, found: dict[str, Read]) -> None:
        self.store, self.found = store, found
        self.paths: list[str] = []  # of the owner being read (outside one: none kept)

    def note(self, path: str) -> None:
        self.paths.append(path)

    @contextlib.contextmanager
    def of(self, owner: str) -> Iterator[None]:
        self.paths = paths = list[str]()
        with self.store.recording() as used:
            yield
        self.found[owner] = Read(tuple(dict.fromkeys(paths)), tuple(sorted(used)))


@dataclass(frozen=True)
class Changes:
    """What changed since a build's values were read: paths, spelled as the input door notes
    them. A one-shot build's are the inputs whose metadata differs from what its head
    observed, or is racy (`observed`); the preview's are its file events' (`events`). Both
    are looked up the same way, in what each value was read from (`Values.taken`)."""

    paths: frozenset[str] = frozenset()
    everything: bool = False  # no last build to compare with: every value read
    code: bool = False  # the builder's templates: every key made anew (Build.rekey)
    folders: tuple[str, ...] = ()  # of `paths`, those no file is at: all beneath changed

    @classmethod
    def observed(cls, head: Head | None, now: Observed) -> Changes:
        if head is None:
            return cls(everything=True)
        then, since = head.seen.inputs, head.seen.since
        differ = {path for path, _ in then.items() ^ now.inputs.items()}
        return cls(frozenset(differ.union([p for p, m in then.items() if racy(m, since)])))

    @classmethod
    def events(cls, paths: Paths, files: Iterable[str]) -> Changes:
        """File events' paths, as the door spells them: under the input folders as `paths`
        name them (the watcher names them absolute)."""
        inputs = (paths.content, paths.recordings)
        roots = [(os.path.join(os.path.abspath(r), ""), str(r)) for r in inputs]
        found, code = set[str](), False
        for name in map(os.path.abspath, files):
            found.update(os.path.join(r, name[len(a) :]) for a, r in roots if name.startswith(a))
            code = code or name.startswith(os.path.join(TEMPLATES, ""))
        folders = tuple(os.path.join(p, "") for p in found if not os.path.isfile(p))
        return cls(frozenset(found), code=code, folders=folders)  # a folder moved in or out

    def __or__(self, other: Changes) -> Changes:
        everything, code = self.everything or other.everything, self.code or other.code
        return Changes(self.paths | other.paths, everything, code, self.folders + other.folders)

    def why(self, read: Read | None) -> str | None:
        """The first path of `read` that changed ("" with none to compare: read anew)."""
        if read is None or self.everything:
            return ""
        changed, folders = self.paths, self.folders
        return next((p for p in read.paths if p in changed or p.startswith(folders)), None)

    def stale(self, reads: Mapping[str, Read], owners: Iterable[str]) -> set[str]:
        """Those of `owners` whose values must be read again (`why` is not None): in one
        set operation a value when no folder changed, as a prose edit's one path."""
        if self.everything:
            return set(owners)
        if self.folders:
            return {owner for owner in owners if self.why(reads.get(owner)) is not None}
        changed = self.paths  # and with no last read: read again
        return {o for o in owners if (r := reads.get(o)) is None or not changed.isdisjoint(r.paths)}


@dataclass(frozen=True)
class Values:
    """What a build holds read before: lessons by folder name, statuses and sidecars by
    lesson id, course.yml and glossary.yml as loaded (None: read them)."""

    lessons: Mapping[str, Lesson] = field(default_factory=dict)
    statuses: Mapping[str, LessonStatus] = field(default_factory=dict)
    sidecars: Mapping[str, Any] = field(default_factory=dict)
    shared: Loaded | None = None

    def taken(self, changes: Changes, reads: Reads) -> Values:
        """Those of them read from no path that `changes` names: a lesson whose files are
        as they were, its status when its recording is too, its sidecar likewise. Why each
        lesson is read again is logged to builder.explain (`--explain`)."""
        lesson, status, sidecar = (reads[stage] for stage in STAGES)
        again = changes.stale(lesson, self.lessons)
        for name in sorted(again):
            why = changes.why(lesson.get(name))
            explain.info("%s: read again (%s)", name, f"{why} changed" if why else "no last read")
        lessons = {n: x for n, x in self.lessons.items() if n not in again}
        again |= changes.stale(status, self.statuses)  # a lesson read again: its status too
        statuses = {n: x for n, x in self.statuses.items() if n in lessons and n not in again}
        stale = changes.stale(sidecar, self.sidecars)
        sidecars = {n: v for n, v in self.sidecars.items() if n not in stale}
        shared = None if changes.why(lesson.get(COURSE_FILES)) is not None else self.shared
        return Values(lessons, statuses, sidecars, shared)


@dataclass(frozen=True)
class Index:
    salt: str  # the code digest and the versions recordings are checked against
    head: Head | None = None
    published: Published | None = None
    entries: dict[str, Entry] = field(default_factory=dict)  # by lesson id (its folder)
    shared: Shared | None = None  # of this code and these versions, unless forced
    parts: tuple[bytes, ...] = field(default=(), repr=False)  # as stored, PARTS of them
    # Those of `parts` that may differ from the store's rows: all but the ones Index.load
    # read and no build replaced since. Only these are written (a prose edit: one of 64).
    fresh: frozenset[int] = frozenset(range(PARTS))
    traced: Traced = field(default=Traced(), repr=False)  # the site's traces, by part

    @classmethod
    def load(
        cls,
        store: Store,
        head: Head | None,
        now: Observed,
        salt: str,
        digests: Digests,
        force: bool,
    ) -> Index:
        """The last build's index (its digests given to `digests`); without entries when of
        other code or versions, of other folders (`moved`), or with `force`; without a site
        when it is not `head`'s."""
        found = store.manifest(SITE)
        if head is None or not isinstance(found, Published) or found.taken_ns != head.seen.taken_ns:
            return cls(salt, head)
        if (traced := Traced.load(store, SITE)) is None:
            return cls(salt, head)
        index = cls(salt, head, replace(found, traces=traced.traces()), traced=traced)
        if force or found.salt != salt or moved(head, now):
            return index
        index = replace(index, shared=found.shared)
        stored = tuple(filter(None, (store.row(f"{INDEX}/{k}") for k in range(PARTS))))
        try:
            parts = [pickle.loads(part) for part in stored]
        except Exception:  # damaged: nothing in the store can fail a build
            return index
        if len(parts) != PARTS:  # a part missing, or its checksum wrong
            return index
        entries: dict[str, Entry] = {}
        for some, known in parts:
            entries.update(some)
            digests.seed(known)
        return replace(index, entries=entries, parts=stored, fresh=frozenset())

    def reads(self) -> Reads:
        """What each of its values was read from, by stage and owner."""
        entries = self.entries.items()
        reads = {stage: {k: e.reads[n] for k, e in entries} for n, stage in enumerate(STAGES)}
        if self.shared is not None:
            reads[STAGES[0]][COURSE_FILES] = self.shared.read
        return reads

    def values(self) -> Values:
        """What its entries hold: the last good build's values, read before."""
        entries, shared = self.entries.items(), self.shared
        return Values(
            {n: e.lesson for n, e in entries},
            {n: e.status for n, e in entries if e.status},
            {n: e.sidecar for n, e in entries},
            shared.values if shared is not None else None,
        )

    def appeared(self, inputs: Snapshot) -> Snapshot:
        """`inputs` (observed before the build read) with the paths its values were read
        from that were absent then and are there now: files the build wrote (a recording,
        its sidecar) or that appeared while it ran. Absent from the head, such a path
        would compare equal to its own removal (a deleted recording kept its page); with
        its metadata now, not older than the observation (racy), it is read again."""
        new = {path for read in self._reads() for path in read.paths if path not in inputs}
        return inputs | metadata(sorted(new))

    def references(self) -> set[str]:
        """The store keys its entries' values were read with."""
        return {key for read in self._reads() for key in read.uses}

    def _reads(self) -> list[Read]:
        reads = [read for e in self.entries.values() for read in e.reads]
        return reads + ([self.shared.read] if self.shared is not None else [])

    def rows(self) -> dict[str, bytes]:
        """Its rows: the head, the site (its traces by `traced`'s parts), and the parts that
        may differ from the stored ones."""
        assert self.head is not None and self.published is not None
        parts = {f"{INDEX}/{k}": self.parts[k] for k in sorted(self.fresh) if k < len(self.parts)}
        site = replace(self.published, traces={})
        head, site_row = (pickle.dumps(row, protocol=5) for row in (self.head, site))
        return {INDEX: head, SITE: site_row} | parts | self.traced.written(SITE)

    @classmethod
    def of(
        cls,
        before: Index,
        digests: Digests,
        made: Mapping[str, Remembered],
        course: Course,
        values: tuple[list[LessonStatus], Mapping[str, Any]],
        reads: Reads,
    ) -> Index:
        """What this build read (`values`: statuses, sidecars) and from what, and what it
        made of each lesson (`made`, by id: builder.pipeline.reuse); the parts of
        `before` whose entries are the same objects kept as stored. Head and site: later."""
        by_id, sidecars = {s.lesson_id: s for s in values[0]}, values[1]
        lesson, status, sidecar = (reads[stage] for stage in STAGES)
        entries: dict[str, Entry] = {}
        for x in course.lessons:
            at = x.id
            new = (x, by_id.get(at), sidecars.get(at), made.get(at))
            read = (lesson.get(at, NOT_READ), status.get(at, NOT_READ), sidecar.get(at, NOT_READ))
            old = before.entries.get(at)
            if old is None or not _same_entry(old, new, read):  # else: the entry as it was
                old = Entry(x, read, *new[1:])
            entries[at] = old
        parts, olds = _by_part(entries), _by_part(before.entries)
        kept = {k for k in range(PARTS) if before.parts and _same_part(olds[k], parts[k])}
        stored = tuple(
            before.parts[k] if k in kept else _pickled(part, digests)
            for k, part in enumerate(parts)
        )
        fresh = frozenset(range(PARTS)) - (kept - before.fresh)
        shared = Shared((course.meta, course.glossary), reads[STAGES[0]].get(COURSE_FILES, Read()))
        published, traced = before.published, before.traced
        return cls(before.salt, before.head, published, entries, shared, stored, fresh, traced)


def _same_entry(old: Entry, values: tuple[Any, ...], reads: tuple[Read, ...]) -> bool:
    """The very same values (lesson, status, sidecar, made), read from the very same reads."""
    return (
        old.lesson is values[0]
        and old.status is values[1]
        and old.sidecar is values[2]
        and old.made is values[3]
        and all(map(operator.is_, old.reads, reads))
        and len(old.reads) == len(reads)
    )


def index_salt(salt: str, versions: dict[str, str]) -> str:
    """What an index's entries are valid for: the code (and packages) its keys are made
    with (`salt`), and the versions recordings are checked against."""
    from ..course.rules import expected_versions

    return digest(salt, repr(expected_versions(versions)))


def _part(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % PARTS


def _by_part(entries: dict[str, Entry]) -> list[dict[str, Entry]]:
    parts: list[dict[str, Entry]] = [{} for _ in range(PARTS)]
    for name, entry in entries.items():
        parts[_part(name)][name] = entry
    return parts


def _same_part(old: dict[str, Entry], new: dict[str, Entry]) -> bool:
    """The same entries, the very same objects."""
    return old.keys() == new.keys() and all(entry is old[name] for name, entry in new.items())


def _pickled(part: dict[str, Entry], digests: Digests) -> bytes:
    """A part, with the digests made of its lessons, statuses and panels."""
    kept: list[object] = []
    for e in part.values():
        kept += [e.lesson, e.status] if e.status else [e.lesson]
        kept += e.status.recording.panels if e.status and e.status.recording else []
    return pickle.dumps((part, digests.known(kept)), protocol=5)


def installed_versions(environment: Snapshot, head: Head | None) -> dict[str, str]:
    """Each package's installed version (or 'not installed'): the last build's when the
    interpreter and its package folders (`environment`) are as they were, else read."""
    if head is not None and head.seen.environment == environment:
        return head.versions
    return read_versions()


def code_digest(versions: dict[str, str]) -> str:
    """The builder's own code, its templates and the installed packages' versions: every
    key of the store is made with it, so that new code never serves an old artifact."""
    parts: list[str | bytes] = [repr(sorted(versions.items()))]
    for folder, pattern in ((BUILDER, "**/*.py"), (TEMPLATES, "**/*")):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts and not editor_file(path.name):
                parts += [str(path.relative_to(folder)), path.read_bytes()]
    return digest(*parts)
