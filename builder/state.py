"""What the last successful build knew, so that the next one redoes only what changed.

After a build, `.cache/build-state.pickle` (and `build-state-lessons-N.pickle`) keeps:

- every lesson as loaded and checked (its Lesson and LessonStatus), with the metadata
  (mtime_ns, size, inode, ctime_ns) of the files they were made from: lesson.md, example.py, the
  declared data files, the recording (and the inputs sidecar, for a lesson not fresh);
- the course metadata and glossary;
- each lesson page's cache key, file names and glossary terms, and each search bundle's key
  and file names (see builder.buildcache);
- the metadata of every file the build left in the site folder.

The next build takes a lesson as loaded when none of its files' metadata changed, as make
and git do (a file changed within stamp.RACY_NS of the last build is read again, since an
edit in the same clock tick can keep size and mtime); one whose lesson.md changed keeps
its validated front matter if that block reads as before, and its recording if that file
is unchanged. It skips a page or a search bundle whose key is unchanged and whose files
in the site still have the metadata the last build left them with. Anything else - the
builder, the templates, installed packages, course.yml, glossary.yml, any other file under
content/ outside lessons/ - drops the whole state, and the build is the ordinary one (with
the page cache). A build that fails saves nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

from .course import CourseMeta, GlossaryTerm, Lesson, Loaded
from .recording import Recording
from .rules import EXAMPLE_FILE, LESSON_FILE
from .stamp import RACY_NS, Snapshot, snapshot
from .status import INPUTS_FILE, LessonStatus

STATE_FILE = "build-state.pickle"
CHUNK_PREFIX = "build-state-lessons-"
CHUNK = 100  # lessons a file: a prose edit rewrites one file of lessons, not all of them
FORMAT = 5


@dataclass(frozen=True)
class LessonMemo:
    lesson: Lesson
    status: LessonStatus
    inputs: tuple[tuple[str, tuple[int, ...] | None], ...]  # (file, its metadata or None)
    part: tuple[str, str] | None  # its part of its page's key (buildcache.page_keys)


@dataclass(frozen=True)
class Output:
    """Files a page or a search bundle put in the site, and the key they were made from."""

    key: str
    names: tuple[str, ...]
    terms: tuple[str, ...] = ()  # glossary terms a lesson page uses


@dataclass
class BuildState:
    guard: str
    taken_ns: int
    meta: CourseMeta
    glossary: tuple[GlossaryTerm, ...]
    lessons: dict[str, LessonMemo]  # by folder name
    out: str = ""
    pages: dict[str, Output] = field(default_factory=dict)  # by lesson id
    bundles: dict[str, Output] = field(default_factory=dict)  # by search bundle id
    site: Snapshot = field(default_factory=dict)  # the site folder after the build
    facts: dict[str, str] = field(default_factory=dict)  # buildcache.facts()
    chunks: list[tuple[str, ...]] = field(default_factory=list)  # lesson files (see save)

    def loaded(self, content: Path, recordings: Path, seen: Snapshot) -> Loaded:
        """The lessons whose files are as they were, with the course metadata and glossary."""
        folders, records = f"{content}{os.sep}lessons{os.sep}", f"{recordings}{os.sep}"
        lessons = {
            name: memo.lesson
            for name, memo in self.lessons.items()
            if self._unchanged(memo, seen)
            and str(memo.lesson.folder) == folders + name
            and str(memo.status.path) == f"{records}{memo.lesson.id}.json"
        }
        earlier = {name: memo.lesson for name, memo in self.lessons.items() if name not in lessons}
        return Loaded(self.meta, self.glossary, lessons, earlier)

    def recordings(self, loaded: Loaded, seen: Snapshot) -> dict[str, Recording]:
        """The recordings of lessons `loaded` did not take from this state (their lesson
        changed) whose file is as it was, by lesson id."""
        settled = self.taken_ns - RACY_NS
        found = {}
        for name in loaded.earlier:
            memo = self.lessons[name]
            recording = memo.status.recording
            path = str(memo.status.path)
            meta = dict(memo.inputs).get(path)
            now = seen.get(path)
            if recording is not None and meta and tuple(now or ()) == meta and meta[0] < settled:
                found[memo.lesson.id] = recording
        return found

    def statuses(self, loaded: Loaded) -> dict[str, LessonStatus]:
        """The statuses of the lessons `loaded` took from this state."""
        return {lesson.id: self.lessons[name].status for name, lesson in loaded.lessons.items()}

    def parts(self, loaded: Loaded) -> dict[str, tuple[str, str]]:
        """The page-key parts of the lessons `loaded` took from this state (with their
        statuses: not valid once examples ran)."""
        return {
            lesson.id: part
            for name, lesson in loaded.lessons.items()
            if (part := self.lessons[name].part) is not None
        }

    def _unchanged(self, memo: LessonMemo, seen: Snapshot) -> bool:
        settled = self.taken_ns - RACY_NS
        for path, meta in memo.inputs:
            now = seen.get(path)
            if (tuple(now) if now else None) != meta or (meta and meta[0] >= settled):
                return False
        return True

    def trusted(self, out: Path, now: dict[str, tuple[int, ...]]) -> set[str]:
        """Site files that still hold exactly what the last build wrote."""
        if self.out != str(out.resolve()):
            return set()
        left = site_files(out, self.site)
        return {name for name, meta in now.items() if left.get(name) == meta}


def guard(content: Path, recordings: Path, seen: Snapshot) -> str:
    """A digest of every input a lesson's own files do not cover."""
    lessons, records = str(content / "lessons") + os.sep, str(recordings) + os.sep
    rest = sorted((p, m) for p, m in seen.items() if not p.startswith((lessons, records)))
    identity = (FORMAT, str(content.resolve()), str(recordings.resolve()), rest)
    return hashlib.sha256(repr(identity).encode()).hexdigest()


def load(cache: Path, expected_guard: str) -> BuildState | None:
    """The last build's state, if it was made from the same builder, packages and course
    (`expected_guard`, from `guard`)."""
    try:
        state = pickle.loads((cache / STATE_FILE).read_bytes())
        if not isinstance(state, BuildState) or state.guard != expected_guard:
            return None
        for number, names in enumerate(state.chunks):
            memos = pickle.loads(_chunk_file(cache, number).read_bytes())
            if not isinstance(memos, dict) or tuple(memos) != names:
                return None
            state.lessons.update(memos)
    except Exception:  # missing, damaged, or from another version: start afresh
        return None
    return state


def remember(
    lessons: list[Lesson],
    statuses: list[LessonStatus],
    recordings: Path,
    seen: Snapshot,
    parts: dict[str, tuple[str, str]],
) -> dict[str, LessonMemo]:
    """Each lesson as loaded, with the metadata of the files it was made from."""
    by_id = {status.lesson_id: status for status in statuses}
    sidecar = str(recordings / INPUTS_FILE)
    memos = {}
    for lesson in lessons:
        status = by_id[lesson.id]
        folder = f"{lesson.folder}{os.sep}"
        files = [folder + LESSON_FILE, folder + EXAMPLE_FILE, str(status.path)]
        files += [folder + name for name in lesson.meta.data]
        if not status.fresh:  # its message may quote the sidecar
            files.append(sidecar)
        inputs = tuple((path, _meta(seen.get(path))) for path in files)
        memos[lesson.folder.name] = LessonMemo(lesson, status, inputs, parts.get(lesson.id))
    return memos


def _meta(value: list[int] | None) -> tuple[int, ...] | None:
    return tuple(value) if value else None


def site_files(out: Path, site: Snapshot | None = None) -> dict[str, tuple[int, ...]]:
    """Metadata of every file in the site folder (or in its snapshot `site`), by name."""
    prefix = len(str(out)) + 1
    return {
        path[prefix:].replace(os.sep, "/"): tuple(meta)
        for path, meta in (snapshot([out]) if site is None else site).items()
        if len(meta) > 1 and path != str(out)
    }


def save(cache: Path, state: BuildState, last: BuildState | None = None) -> None:
    """Write `state`: its lessons in files of CHUNK lessons, each rewritten only when one of
    its lessons changed since `last` (the state this build started from), then the rest.
    Written last, the main file is what makes the others count (`forget` deletes it first)."""
    from .fsutil import write_atomic

    names = sorted(state.lessons)
    chunks = [tuple(names[i : i + CHUNK]) for i in range(0, len(names), CHUNK)]
    for number, chunk in enumerate(chunks):
        if not (
            last is not None
            and number < len(last.chunks)
            and last.chunks[number] == chunk
            and all(last.lessons.get(name) == state.lessons[name] for name in chunk)
        ):
            memos = {name: state.lessons[name] for name in chunk}
            write_atomic(_chunk_file(cache, number), pickle.dumps(memos, protocol=5), durable=False)
    for extra in cache.glob(f"{CHUNK_PREFIX}*.pickle"):
        if not extra.stem.removeprefix(CHUNK_PREFIX).isdigit() or int(
            extra.stem.removeprefix(CHUNK_PREFIX)
        ) >= len(chunks):
            extra.unlink(missing_ok=True)
    main = dataclasses.replace(state, lessons={}, chunks=chunks)
    write_atomic(cache / STATE_FILE, pickle.dumps(main, protocol=5), durable=False)


def _chunk_file(cache: Path, number: int) -> Path:
    return cache / f"{CHUNK_PREFIX}{number}.pickle"


def forget(cache: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (cache / STATE_FILE).unlink()
