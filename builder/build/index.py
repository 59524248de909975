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
  (INDEX/site/0, ... by part: builder.build.traced); and course.yml and glossary.yml as
  loaded (`Shared`), with what they were read from.
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
import operator
import pickle
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.observe import (
    BUILDER,
    TEMPLATES,
    Observed,
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

PARTS = 64
SITE = f"{INDEX}/site"  # read only by a build that is not a no-op
STAGES = ("lesson", "status", "sidecar")  # what an entry holds, each read on its own


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


@dataclass(frozen=True)
class Entry:
    """A lesson's values, and what each was read from. `made`: what the build remembered at
    the lesson's id (Digests.remember: its artifacts' keys by the key of their arguments,
    and those arguments, its lesson and status among them: pickled with the entry, they
    are the entry's own objects)."""

    lesson: Lesson
    reads: tuple[Read, ...]  # by STAGES
    status: LessonStatus | None = None
    sidecar: Any = None  # None: none read
    made: tuple[str, Any, tuple[Any, ...]] | None = None


Reads = dict[str, dict[str, Read]]  # by stage (STAGES), then by owner (a lesson's id)


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
            digests.remembered.update((k, e.made) for k, e in some.items() if e.made)
        return replace(index, entries=entries, parts=stored, fresh=frozenset())

    def reads(self) -> Reads:
        """What each of its values was read from, by stage and owner."""
        entries = self.entries.items()
        reads = {stage: {k: e.reads[n] for k, e in entries} for n, stage in enumerate(STAGES)}
        if self.shared is not None:
            reads[STAGES[0]][COURSE_FILES] = self.shared.read
        return reads

    def course_files(self, now: Observed) -> Loaded | None:
        """course.yml and glossary.yml as loaded, when what was read for them is as it was."""
        shared, same = self.shared, self._same(now)
        return shared.values if shared is not None and same(shared.read.paths) else None

    def lessons(self, now: Observed) -> dict[str, Lesson]:
        """The lessons (by folder name) whose files are as they were, and not racy."""
        same = self._same(now)
        return {n: e.lesson for n, e in self.entries.items() if same(e.reads[0].paths)}

    def statuses(self, now: Observed) -> dict[str, LessonStatus]:
        """The statuses (by lesson id) whose lesson and recording are as they were."""
        entries, same = self.entries.items(), self._same(now)
        read = ((n, e, e.reads[0].paths + e.reads[1].paths) for n, e in entries)
        return {n: e.status for n, e, paths in read if e.status and same(paths)}

    def sidecars(self, now: Observed, recorded: Iterable[str] = ()) -> dict[str, Any]:
        """The sidecars (by lesson id) as they were, but for the lessons `recorded` now."""
        skip, same, entries = frozenset(recorded), self._same(now), self.entries.items()
        return {n: e.sidecar for n, e in entries if n not in skip and same(e.reads[2].paths)}

    def _same(self, now: Observed) -> Callable[[Iterable[str]], bool]:
        """Whether every one of some paths is as the head has it (or still absent), and
        older than it (racy). The paths that are not are found once for each observation,
        by set operations over both snapshots, not path by path for each value."""
        if self.head is None:
            return lambda paths: False
        found = self.__dict__.get("_changed")
        if found is None or found[0] is not now or found[1] is not self.head:
            then, since = self.head.seen.inputs, self.head.seen.since
            differ = {path for path, _ in then.items() ^ now.inputs.items()}
            changed = frozenset(differ.union([p for p, m in then.items() if racy(m, since)]))
            found = self.__dict__["_changed"] = (now, self.head, changed)  # frozen: no field
        return found[2].isdisjoint

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
        course: Course,
        values: tuple[list[LessonStatus], Mapping[str, Any]],
        reads: Reads,
    ) -> Index:
        """What this build read (`values`: statuses, sidecars) and from what; the parts of
        `before` whose entries are the same objects kept as stored. Head and site: later."""
        by_id, sidecars = {s.lesson_id: s for s in values[0]}, values[1]
        entries: dict[str, Entry] = {}
        for x in course.lessons:
            read = tuple(reads[stage].get(x.id, Read()) for stage in STAGES)
            made = digests.remembered.get(x.id)
            new = Entry(x, read, by_id.get(x.id), sidecars.get(x.id), made)
            old = before.entries.get(x.id)
            entries[x.id] = old if old is not None and _same_entry(old, new) else new
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


def _same_entry(old: Entry, new: Entry) -> bool:
    """The very same values, read from the very same reads."""
    olds = (old.lesson, old.status, old.sidecar, old.made, *old.reads)
    news = (new.lesson, new.status, new.sidecar, new.made, *new.reads)
    return len(olds) == len(news) and all(map(operator.is_, olds, news))


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
