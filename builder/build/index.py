"""The build's index, as git keeps one: what the last good build read from each input file,
by the file's metadata (mtime_ns, size, inode, ctime_ns) as observed before it read them.

A lesson whose lesson.md, example.py and data files have the metadata they had is taken as
it was loaded, not read again; so is its status, when its recording and sidecar have not
changed either, and a sidecar. The racy-timestamp rule is git's: a file whose mtime or
ctime is not older than the observation it was read after (by RACY_NS, for file systems
with coarse clocks) could have changed within the same tick without its metadata showing
it, so it is read again. The values are what load_course, course_status and read_inputs
made of those files, and the digests the last build made of them (builder.build.keys,
Digests.seed), so every key made from them is the key a read would give.

Kept in the store's manifest table beside the manifest (builder.core.store INDEX), written
with it by a good build and read only when a build is not a no-op; another builder, other
packages or `--force` read everything. It is kept in PARTS by lesson id, each pickled on
its own and stored in a row of its own: a build pickles again only the parts whose
entries it read again.

The blind spot is git's: a change that leaves the size, the inode and both times as they
were. `os.utime` sets the mtime back but never the ctime, and an edit within the tick in
which the file was observed is racy, so it takes a clock set back, or a file system that
does not keep these times; `render --force` (`site --force`) reads everything again.
"""

from __future__ import annotations

import os
import pickle
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.observe import RACY_NS, Observed, Snapshot
from ..core.store import INDEX, Store, digest

if TYPE_CHECKING:
    from ..course.model import Course, Lesson
    from ..course.status import LessonStatus
    from .keys import Digests
    from .reuse import Reuse

PARTS = 64
Read = tuple[tuple[str, tuple[int, ...] | None], ...]  # files, by their metadata then
# A lesson's entry: what it was read from (its own files, then its recording and sidecar),
# the Lesson, its status, its sidecar's contents (None: none was read), and what the build
# remembered at the lesson's id (Digests.remember: its artifacts' keys, by the key of what
# they were made from; None: nothing).
Entry = tuple[Read, "Lesson", "LessonStatus | None", Any, "tuple[str, Any] | None"]


@dataclass(frozen=True)
class Index:
    salt: str  # the code digest and the versions recordings are checked against
    taken_ns: int  # when the files were observed, before they were read
    entries: dict[str, Entry]  # by lesson id, which is its folder's name
    parts: tuple[bytes, ...] = field(default=(), repr=False)  # as stored, PARTS of them
    # Those of `parts` that may differ from the store's rows: all but the ones Index.load
    # read and no build replaced since. Only these are written (a prose edit: one of 64).
    fresh: frozenset[int] = frozenset(range(PARTS))

    @classmethod
    def load(cls, store: Store, reuse: Reuse, versions: dict[str, str], force: bool) -> Index:
        """The last build's index, its digests and what it remembered given to `reuse`; an
        empty one when it was made by other code, for other versions, or with `force`."""
        salt = index_salt(reuse.salt, versions)
        found = None if force else store.manifest(INDEX)
        if not isinstance(found, tuple) or len(found) != 3 or found[0] != salt:
            return cls(salt, 0, {})
        if not isinstance(found[2], int):  # a foreign row
            return cls(salt, 0, {})
        rows = [store.row(f"{INDEX}/{k}") for k in range(found[2])]
        stored = tuple(row for row in rows if row is not None)
        entries: dict[str, Entry] = {}
        try:
            parts = [pickle.loads(part) for part in stored]
        except Exception:  # damaged: nothing in the store can fail a build
            return cls(salt, 0, {})
        if len(parts) != len(rows):  # a part missing, or its checksum wrong
            return cls(salt, 0, {})
        for some, digests in parts:
            entries.update(some)
            reuse.digests.seed(digests)
            reuse.digests.remembered.update((k, e[4]) for k, e in some.items() if e[4])
        return cls(salt, found[1], entries, stored, frozenset())

    def lessons(self, now: Observed) -> dict[str, Lesson]:
        """The lessons (by folder name) whose files are as they were, and not racy."""
        return self._kept(now, 1, slice(None, -2))

    def statuses(self, now: Observed) -> dict[str, LessonStatus]:
        """The statuses (by lesson id) whose lesson, recording and sidecar are as they were."""
        return self._kept(now, 2, slice(None))

    def sidecars(self, now: Observed, recorded: Iterable[str] = ()) -> dict[str, Any]:
        """The sidecars (by lesson id) as they were, but for the lessons `recorded` now."""
        return self._kept(now, 3, slice(-1, None), frozenset(recorded))

    def _kept(
        self, now: Observed, value: int, files: slice, skip: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        """Each entry's `value`-th item, where it has one and the `files` it was read from
        are as they were and older than this index's observation (git's racy rule)."""
        since = self.taken_ns - RACY_NS
        return {
            name: entry[value]
            for name, entry in self.entries.items()
            if entry[value] is not None
            and name not in skip
            and _unchanged(entry[0][files], now.inputs, since)
        }

    def stored(self) -> dict[str, bytes]:
        """The rows to store (builder.core.store INDEX): its head, and each part that may
        differ from the store's row, as it is (no copy of them all); the store keeps the
        other rows, which hold these very bytes."""
        head = pickle.dumps((self.salt, self.taken_ns, len(self.parts)), protocol=5)
        parts = {f"{INDEX}/{k}": self.parts[k] for k in sorted(self.fresh) if k < len(self.parts)}
        return {INDEX: head} | parts

    @classmethod
    def of(
        cls,
        before: Index,
        now: Observed,
        digests: Digests,
        course: Course,
        statuses: list[LessonStatus],
        sidecars: Mapping[str, Any],
    ) -> Index:
        """What this build read, by the metadata `now` observed before it read it; the parts
        of `before` (the last build's) whose entries are the same kept as they were stored."""
        by_id, remembered = {s.lesson_id: s for s in statuses}, digests.remembered
        entries: dict[str, Entry] = {}
        for x in course.lessons:
            status, sidecar, old = by_id.get(x.id), sidecars.get(x.id), before.entries.get(x.id)
            made = remembered.get(x.id)
            if old is not None and old[1] is x and old[2] is status and old[3] is sidecar:
                # all three kept: their files are as `old` says
                entries[x.id] = old if old[4] is made else (*old[:4], made)
            else:
                read = _meta(now, _files(x, status.path if status else None))
                entries[x.id] = (read, x, status, sidecar, made)
        parts: list[dict[str, Entry]] = [{} for _ in range(PARTS)]
        for name, entry in entries.items():
            parts[_part(name)][name] = entry
        olds: list[dict[str, Entry]] = [{} for _ in range(PARTS)]
        for name, entry in before.entries.items():
            olds[_part(name)][name] = entry
        kept = {k for k in range(PARTS) if before.parts and _same(olds[k], parts[k])}
        stored = tuple(
            before.parts[k] if k in kept else _pickled(part, digests)
            for k, part in enumerate(parts)
        )
        fresh = frozenset(range(PARTS)) - (kept - before.fresh)
        return cls(before.salt, now.taken_ns, entries, stored, fresh)


def index_salt(salt: str, versions: dict[str, str]) -> str:
    """What an index is valid for: the code (and packages) its keys are made with (`salt`),
    and the versions recordings are checked against."""
    from ..course.rules import expected_versions

    return digest(salt, repr(expected_versions(versions)))


def _part(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % PARTS


def _same(old: dict[str, Entry], new: dict[str, Entry]) -> bool:
    """The same entries, the very same objects."""
    return old.keys() == new.keys() and all(entry is old[name] for name, entry in new.items())


def _pickled(part: dict[str, Entry], digests: Digests) -> bytes:
    """A part, with the digests made of its lessons, statuses and panels."""
    kept: list[object] = []
    for _, lesson, status, _, _ in part.values():
        kept += [lesson, status] if status else [lesson]
        kept += status.recording.panels if status and status.recording else []
    return pickle.dumps((part, digests.known(kept)), protocol=5)


def _files(lesson: Lesson, recording: Path | None) -> tuple[str, ...]:
    """What a lesson is read from, then its recording and its sidecar (paths as the
    snapshot names them)."""
    from ..course.rules import EXAMPLE_FILE, INPUTS_DIR, LESSON_FILE

    folder, recordings = str(lesson.folder), str(recording.parent if recording else "")
    sidecar = os.path.join(recordings, INPUTS_DIR, f"{lesson.id}.json")
    data = (os.path.join(folder, name) for name in (LESSON_FILE, EXAMPLE_FILE, *lesson.meta.data))
    return (*data, str(recording), sidecar)


def _meta(now: Observed, files: Iterable[str]) -> Read:
    return tuple((name, now.inputs.get(name)) for name in files)


def _unchanged(read: Read, inputs: Snapshot, since: int) -> bool:
    """Every file as it was (or still absent), each older than `since` (git's racy rule)."""
    for name, meta in read:
        if inputs.get(name) != meta or (meta and max(meta[0], meta[3]) >= since):
            return False
    return True
