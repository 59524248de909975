"""Lesson pages cached by what they are made of, and the rest rendered on every core.

A lesson page (its HTML and chart SVGs) is kept in `.cache/pages/` under a key that hashes
everything the page can show:

- the builder's code, the templates and the versions of the packages that render;
- the course title and arcs, the glossary, and every lesson's id and slug (links, cards);
- the lesson itself (front matter, prose, example source), its status and recording;
- its neighbours (prev/next) and the titles of its arc's lessons.

So an edit always changes the key of every page that shows it, and an entry is only ever
served for the exact inputs it was made from. Pages with render errors are never stored.
Misses are rendered in forked worker processes when there are enough of them to pay.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from .course import Course
from .errors import BuildError
from .render import LessonFiles, render_lessons
from .stamp import BUILDER, TEMPLATES
from .status import LessonStatus

RENDER_PACKAGES = ("jinja2", "markdown-it-py", "mdit-py-plugins", "pygments", "matplotlib")
MIN_PER_WORKER = 16  # below this many misses a worker costs more than it saves


class LessonCache:
    """`render.LessonMap`: each lesson's files, from the cache or rendered."""

    def __init__(self, cache_dir: Path, jobs: int | None = None) -> None:
        self.folder = cache_dir / "pages"
        self.jobs = jobs or os.cpu_count() or 1
        self.hits = 0
        self.rendered = 0

    def __call__(
        self, course: Course, statuses: list[LessonStatus], chart_cache: Path | None
    ) -> list[LessonFiles]:
        keys = page_keys(course, statuses)
        results: list[LessonFiles | None] = [self._load(key) for key in keys]
        misses = [i for i, result in enumerate(results) if result is None]
        self.hits, self.rendered = len(keys) - len(misses), len(misses)
        for index, result in zip(
            misses, self._render(course, statuses, chart_cache, misses), strict=True
        ):
            results[index] = result
            if not result[2]:
                self._store(keys[index], result)
        self._prune(set(keys))
        return [result for result in results if result is not None]

    def _render(
        self,
        course: Course,
        statuses: list[LessonStatus],
        chart_cache: Path | None,
        misses: list[int],
    ) -> list[LessonFiles]:
        workers = min(self.jobs, len(misses) // MIN_PER_WORKER)
        if workers < 2:
            return render_lessons(course, statuses, chart_cache, misses)
        chunks = [misses[i::workers] for i in range(workers)]
        _forked.update(course=course, statuses=statuses, chart_cache=chart_cache)
        try:
            with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
                parts = list(pool.map(_render_chunk, chunks))
        finally:
            _forked.clear()
        by_index = {
            i: r
            for chunk, part in zip(chunks, parts, strict=True)
            for i, r in zip(chunk, part, strict=True)
        }
        return [_revive(by_index[i]) for i in misses]

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.pickle"

    def _load(self, key: str) -> LessonFiles | None:
        try:
            files, terms = pickle.loads(self._path(key).read_bytes())
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            return None
        return files, terms, []

    def _store(self, key: str, result: LessonFiles) -> None:
        from .fsutil import write_atomic

        write_atomic(
            self._path(key), pickle.dumps((result[0], result[1]), protocol=5), durable=False
        )

    def _prune(self, keep: set[str]) -> None:
        """Keep only the entries this build used: the cache stays one build's size."""
        if not self.folder.is_dir():
            return
        for path in self.folder.glob("*/*.pickle"):
            if path.stem not in keep:
                path.unlink(missing_ok=True)


def cached_search(
    files: dict[str, bytes],
    cache_dir: Path,
    index: Callable[[dict[str, bytes], Path], dict[str, bytes]],
) -> dict[str, bytes]:
    """The search bundle for these pages, reused while no page's HTML changed.

    Pagefind reads only the HTML pages, so their bytes (and Pagefind's version) are the key.
    An empty bundle (no Pagefind installed) is never stored.
    """
    pages = sorted(name for name in files if name.endswith(".html"))
    key = _digest(
        _version("pagefind-bin"), *(f"{name}\0{_bytes_digest(files[name])}" for name in pages)
    )
    stored = cache_dir / "search-bundle.pickle"
    try:
        saved_key, bundle = pickle.loads(stored.read_bytes())
        if saved_key == key:
            return dict(bundle)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):
        pass
    bundle = index(files, cache_dir / "search")
    if bundle:
        from .fsutil import write_atomic

        write_atomic(stored, pickle.dumps((key, bundle), protocol=5), durable=False)
    return bundle


# -- keys ----------------------------------------------------------------------------------


def page_keys(course: Course, statuses: list[LessonStatus]) -> list[str]:
    """One key per lesson, in course order."""
    by_id = {status.lesson_id: status for status in statuses}
    shared = _digest(code_digest(), _course_digest(course))
    arcs = _arc_titles(course)
    lessons = course.lessons
    keys = []
    for index, lesson in enumerate(lessons):
        status = by_id[lesson.id]
        recording = status.recording.model_dump_json() if status.recording else ""
        neighbours = [
            lessons[i].meta.model_dump_json() if 0 <= i < len(lessons) else ""
            for i in (index - 1, index + 1)
        ]
        keys.append(
            _digest(
                shared,
                lesson.meta.model_dump_json(),
                lesson.body,
                lesson.source.decode("utf-8", "replace"),
                f"{status.state}\0{status.detail}",
                recording,
                *neighbours,
                arcs[lesson.meta.arc],
            )
        )
    return keys


@cache
def code_digest() -> str:
    """The builder's own code, the templates and the rendering packages' versions."""
    parts: list[str] = []
    for folder, pattern in ((BUILDER, "*.py"), (TEMPLATES, "**/*")):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                parts += [str(path.relative_to(folder)), _file_digest(path)]
    parts += [_version(name) for name in RENDER_PACKAGES]
    return _digest(*parts)


def _version(name: str) -> str:
    try:
        return f"{name}=={metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return f"{name} missing"


def _file_digest(path: Path) -> str:
    return _bytes_digest(path.read_bytes())


def _bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _course_digest(course: Course) -> str:
    index = [f"{x.id}\0{x.slug}\0{x.meta.arc}" for x in course.lessons]
    glossary = [term.model_dump_json() for term in course.glossary]
    return _digest(course.meta.model_dump_json(), *index, *glossary)


def _arc_titles(course: Course) -> dict[str, str]:
    titles: dict[str, list[str]] = {arc.id: [] for arc in course.meta.arcs}
    for lesson in course.lessons:
        titles.setdefault(lesson.meta.arc, []).append(f"{lesson.id}\0{lesson.title}")
    return {arc: _digest(*items) for arc, items in titles.items()}


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0\1")
    return digest.hexdigest()


# -- workers -------------------------------------------------------------------------------

# Set just before the pool forks: workers read the course from their copy of this memory
# instead of having it pickled to them.
_forked: dict[str, Any] = {}

Portable = tuple[dict[str, bytes], list[str], list[tuple[str, str | None, str, str]]]


def _render_chunk(indices: list[int]) -> list[Portable]:
    results = render_lessons(
        _forked["course"], _forked["statuses"], _forked["chart_cache"], indices
    )
    return [(files, terms, [_portable(e) for e in errors]) for files, terms, errors in results]


def _portable(error: BuildError) -> tuple[str, str | None, str, str]:
    return type(error).__name__, error.path, error.problem, error.hint


def _revive(result: Portable) -> LessonFiles:
    from . import errors

    files, terms, problems = result
    revived: list[BuildError] = []
    for name, path, problem, hint in problems:
        kind = getattr(errors, name, BuildError)
        revived.append(kind(problem, path=path, hint=hint))
    return files, terms, revived


def cached_entries(cache_dir: Path) -> Iterator[Path]:
    """The stored pages (for tests and `make clean`-like tools)."""
    yield from sorted((cache_dir / "pages").glob("*/*.pickle"))
