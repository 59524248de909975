"""Lesson pages cached by what they are made of, and the rest rendered on every core.

A lesson page (its HTML and chart SVGs) is kept in the "pages" table of `.cache/cache.sqlite`
(builder.store) under a key that hashes everything the page can show:

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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import highlight, store
from .course import Course
from .errors import BuildError
from .render import LessonFiles, render_lessons
from .rules import dist_info_versions
from .stamp import BUILDER, TEMPLATES
from .state import Output
from .status import LessonStatus

RENDER_PACKAGES = ("jinja2", "markdown-it-py", "mdit-py-plugins", "pygments", "matplotlib")
MIN_PER_WORKER = 16  # below this many misses a worker costs more than it saves


class LessonCache:
    """`render.LessonMap`: each lesson's files, from the cache or rendered.

    A page whose key and files in the site are what the last build left (`last`, `trusted`:
    see builder.state) is not even loaded: it comes back with no files, its names go to
    `kept`, and the site keeps the files it has.
    """

    def __init__(
        self,
        cache_dir: Path,
        jobs: int | None = None,
        last: dict[str, Output] | None = None,
        trusted: set[str] | None = None,
        known: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.file = cache_dir / store.FILE
        self.jobs = jobs or os.cpu_count() or 1
        self.last = last or {}
        self.trusted = trusted or set()
        self.hits = 0
        self.rendered = 0
        self.kept: set[str] = set()
        # by lesson id, or by the name of a page that is not a lesson's, for the next build
        self.outputs: dict[str, Output] = {}
        self.page_keys: dict[str, str] = {}  # page name -> its key
        self.known = known or {}  # lesson id -> its part of the key (see page_keys)
        self.parts: dict[str, tuple[str, str]] = {}

    def __call__(
        self, course: Course, statuses: list[LessonStatus], chart_cache: Path | None
    ) -> list[LessonFiles]:
        keys, self.parts = page_keys(course, statuses, self.known)
        results: list[LessonFiles | None] = []
        for lesson, key in zip(course.lessons, keys, strict=True):
            self.page_keys[f"{lesson.url}index.html"] = key
            last = self.last.get(lesson.id)
            if last and last.key == key and self.trusted.issuperset(last.names):
                self.kept.update(last.names)
                self.outputs[lesson.id] = last
                results.append(({}, list(last.terms), []))
            else:
                results.append(self._load(key))
        misses = [i for i, result in enumerate(results) if result is None]
        self.hits, self.rendered = len(keys) - len(misses), len(misses)
        for index, rendered in zip(
            misses, self._render(course, statuses, chart_cache, misses, keys), strict=True
        ):
            results[index] = rendered
        for lesson, key, result in zip(course.lessons, keys, results, strict=True):
            if result is not None and result[0]:
                self.outputs[lesson.id] = Output(key, tuple(sorted(result[0])), tuple(result[1]))
        if self.last:  # drop the entries of lessons this build replaced (a page other than a
            # lesson's is remembered under its own file name, and never stored here)
            lessons = {out.key for name, out in self.last.items() if name not in out.names}
            store.delete(self.file, "pages", lessons - set(keys))
        else:  # no state to go on: keep only what this build used
            store.keep_only(self.file, "pages", keys)
        return [result for result in results if result is not None]

    def reuse_page(self, name: str, key: str) -> bool:
        """`render_site`'s `reuse`: is the site's `name` still the page made from `key`?"""
        self.page_keys[name] = key
        last = self.last.get(name)
        self.outputs[name] = Output(key, (name,))
        if last and last.key == key and name in self.trusted:
            self.kept.add(name)
            return True
        return False

    def _render(
        self,
        course: Course,
        statuses: list[LessonStatus],
        chart_cache: Path | None,
        misses: list[int],
        keys: list[str],
    ) -> list[LessonFiles]:
        """Render the pages at `misses` and store them under their `keys` (in the workers
        that rendered them, when there are workers)."""
        workers = min(self.jobs, len(misses) // MIN_PER_WORKER)
        if workers < 2:
            results = render_lessons(course, statuses, chart_cache, misses)
            self._store_all([keys[i] for i in misses], results)
            return results
        from concurrent.futures import ProcessPoolExecutor  # not imported by a small edit
        from multiprocessing import get_context

        chunks = [misses[i::workers] for i in range(workers)]
        _warm_up(statuses)
        store.close()  # SQLite connections must not cross fork(): each worker opens its own
        _forked.update(
            course=course, statuses=statuses, chart_cache=chart_cache, keys=keys, cache=self
        )
        try:
            with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
                parts = list(pool.map(_render_chunk, chunks))
        finally:
            _forked.clear()
        by_index: dict[int, Portable] = {}
        for chunk, (part, blocks) in zip(chunks, parts, strict=True):
            by_index.update(zip(chunk, part, strict=True))
            highlight.adopt(blocks)
        return [_revive(by_index[i]) for i in misses]

    def _load(self, key: str) -> LessonFiles | None:
        data = store.get(self.file, "pages", key)
        try:
            files, terms = pickle.loads(data) if data is not None else (None, None)
        except (ValueError, EOFError, TypeError, pickle.UnpicklingError):
            return None
        if not isinstance(files, dict) or not isinstance(terms, list):
            return None
        return files, terms, []

    def _store_all(self, keys: list[str], results: list[LessonFiles]) -> None:
        """Keep each page that rendered without errors."""
        store.put(
            self.file,
            "pages",
            {
                key: pickle.dumps((files, terms), protocol=5)
                for key, (files, terms, errors) in zip(keys, results, strict=True)
                if not errors
            },
        )


@dataclass
class SearchFiles:
    files: dict[str, bytes] = field(default_factory=dict)  # bundles to write
    kept: set[str] = field(default_factory=set)  # bundle files the site already holds
    outputs: dict[str, Output] = field(default_factory=dict)  # by bundle id, for the next build


def search_bundles(
    course: Course,
    files: dict[str, bytes],
    lesson_keys: dict[str, str],
    paths: Any,
    index: Callable[[dict[str, str], Callable[[str], bytes], Path], dict[str, bytes]],
    last: dict[str, Output],
    trusted: set[str],
    which: set[str] | None = None,
) -> SearchFiles:
    """Every search bundle of the site (see builder.search.bundles), each rebuilt only when
    one of its pages changed.

    A bundle's key hashes its pages: a lesson page by its page key (its HTML is a function
    of it), any other page by its bytes. A bundle with the key of the last build whose files
    are untouched in the site is kept as it is; one with a key in `.cache/search/` is taken
    from there; the rest are indexed by Pagefind, several at once, from copies of their pages
    that are rewritten only when a page's key changed. Pages not in `files` (the ones
    LessonCache kept) are read from the site, where they are known to be unchanged.
    An empty bundle (no Pagefind installed) is never stored. `which` limits the work to
    those bundles (and leaves `.cache/search/` unpruned).
    """
    from .search import UI, bundle_folder, bundles

    result = SearchFiles()
    version = _version("pagefind-bin")
    todo: dict[str, tuple[str, dict[str, str]]] = {}
    for bundle, names in bundles(course).items():
        if which is not None and bundle not in which:
            continue
        pages = {n: lesson_keys.get(n) or _bytes_digest(files[n]) for n in names}
        key = _digest(version, bundle, *(f"{n}\0{page}" for n, page in pages.items()))
        previous = last.get(bundle)
        if previous and previous.key == key and trusted.issuperset(previous.names):
            result.kept.update(previous.names)
            result.outputs[bundle] = previous
            continue
        stored = _stored_bundle(paths.cache, bundle, key)
        if stored is not None:
            _add(result, bundle, key, stored)
        else:
            todo[bundle] = (key, pages)

    def read(name: str) -> bytes:  # a page LessonCache kept is unchanged in the site
        return files[name] if name in files else (paths.out / name).read_bytes()

    def make(bundle: str) -> dict[str, bytes]:
        made = index(todo[bundle][1], read, paths.cache / "search" / (bundle or "_site"))
        return {
            f"{bundle_folder(bundle)}{name}": data
            for name, data in made.items()
            if not bundle or not name.startswith(UI)
        }

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:  # Pagefind runs outside the GIL
        made = dict(zip(todo, pool.map(make, todo), strict=True))
    for bundle, bundle_files in made.items():
        key = todo[bundle][0]
        if bundle_files:
            from .fsutil import write_atomic

            write_atomic(  # the key first, alone: a miss reads only that (see _stored_bundle)
                _bundle_path(paths.cache, bundle),
                pickle.dumps(key, protocol=5) + pickle.dumps(bundle_files, protocol=5),
                durable=False,
            )
        _add(result, bundle, key, bundle_files)
    if which is None:
        prune_search(paths.cache, set(bundles(course)))
    return result


def merge_search(*parts: SearchFiles) -> SearchFiles:
    merged = SearchFiles()
    for part in parts:
        merged.files |= part.files
        merged.kept |= part.kept
        merged.outputs |= part.outputs
    return merged


def _add(result: SearchFiles, bundle: str, key: str, bundle_files: dict[str, bytes]) -> None:
    result.files |= bundle_files
    if bundle_files:
        result.outputs[bundle] = Output(key, tuple(sorted(bundle_files)))


def _bundle_path(cache_dir: Path, bundle: str) -> Path:
    return cache_dir / "search" / f"{bundle or '_site'}.pickle"


def _stored_bundle(cache_dir: Path, bundle: str, key: str) -> dict[str, bytes] | None:
    """The bundle stored for `key`, reading the rest of the file only when its key matches."""
    try:
        with open(_bundle_path(cache_dir, bundle), "rb") as file:
            if pickle.load(file) != key:
                return None
            stored = pickle.load(file)
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):
        return None
    return dict(stored) if isinstance(stored, dict) else None


def prune_search(cache_dir: Path, keep: set[str]) -> None:
    """Forget the bundles of `.cache/search/` that are not among `keep`."""
    for path in (cache_dir / "search").glob("*.pickle"):
        if path.stem not in keep and not (path.stem == "_site" and "" in keep):
            path.unlink(missing_ok=True)


# -- keys ----------------------------------------------------------------------------------


def page_keys(
    course: Course,
    statuses: list[LessonStatus],
    known: dict[str, tuple[str, str]] | None = None,
) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """One key per lesson, in course order, and each lesson's own part of it by id.

    A lesson's own part hashes its front matter, prose, example, status and recording (and,
    separately, its front matter alone, which its neighbours show); `known` holds the parts
    of lessons builder.state took unchanged from the last build.
    """
    by_id = {status.lesson_id: status for status in statuses}
    shared = _digest(code_digest(), _course_digest(course))
    arcs = _arc_titles(course)
    known = known or {}
    parts = {}
    for lesson in course.lessons:
        part = known.get(lesson.id)
        if part is None:
            status = by_id[lesson.id]
            meta = repr(lesson.meta)  # by value: dataclasses show every field
            recording = repr(status.recording) if status.recording else ""
            own = _digest(
                meta,
                lesson.body,
                lesson.source.decode("utf-8", "replace"),
                f"{status.state}\0{status.detail}",
                recording,
            )
            part = own, _digest(meta)
        parts[lesson.id] = part
    lessons = course.lessons
    keys = []
    for index, lesson in enumerate(lessons):
        neighbours = [
            parts[lessons[i].id][1] if 0 <= i < len(lessons) else "" for i in (index - 1, index + 1)
        ]
        keys.append(_digest(shared, parts[lesson.id][0], *neighbours, arcs[lesson.meta.arc]))
    return keys, parts


# The code digest and package versions the last build worked out, from builder.state: they
# hold while its guard does (it covers builder/, templates/ and the site-packages folders).
_known_facts: dict[str, str] = {}


def assume(facts: dict[str, str]) -> None:
    """Take `facts` (from `facts()` of a build with the same code and packages) as known."""
    _known_facts.clear()
    _known_facts.update(facts)
    code_digest.cache_clear()


def facts() -> dict[str, str]:
    """What `assume` takes: the code digest and the versions of the packages keys name."""
    names = (*RENDER_PACKAGES, "pagefind-bin")
    return {"code": code_digest(), **{f"version {name}": _version(name) for name in names}}


@cache
def code_digest() -> str:
    """The builder's own code, the templates and the rendering packages' versions."""
    if "code" in _known_facts:
        return _known_facts["code"]
    parts: list[str] = []
    for folder, pattern in ((BUILDER, "*.py"), (TEMPLATES, "**/*")):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                parts += [str(path.relative_to(folder)), _file_digest(path)]
    parts += [_version(name) for name in RENDER_PACKAGES]
    return _digest(*parts)


def package_version(name: str) -> str:
    """'name==version' (or 'name missing') of an installed package."""
    return _version(name)


def _version(name: str) -> str:
    if f"version {name}" in _known_facts:
        return _known_facts[f"version {name}"]
    fast = dist_info_versions((name,))  # importlib.metadata costs 25-50 ms to import
    if fast is not None:
        return f"{name}=={fast[name]}"
    from importlib import metadata

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
    glossary = [repr(term) for term in course.glossary]
    return _digest(repr(course.meta), *index, *glossary)


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


def _warm_up(statuses: list[LessonStatus]) -> None:
    """Import matplotlib and load its fonts once, before forking: each worker would spend
    ~0.9 s of CPU on it. Drawing one chart does it through the same code the workers run."""
    from . import charts

    panel = next(
        (s.recording.panels[0] for s in statuses if s.recording and s.recording.panels), None
    )
    if panel is not None:
        charts.draw(panel, "light")
        charts.chart_key(panel, "light")  # what a key is made of, worked out once too


def _render_chunk(indices: list[int]) -> tuple[list[Portable], dict[str, str]]:
    """A worker's pages, and the code blocks it highlighted (for the parent's store)."""
    results = render_lessons(
        _forked["course"], _forked["statuses"], _forked["chart_cache"], indices
    )
    _forked["cache"]._store_all([_forked["keys"][i] for i in indices], results)
    pages = [(files, terms, [_portable(e) for e in errors]) for files, terms, errors in results]
    return pages, highlight.made()


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


def cached_entries(cache_dir: Path) -> list[str]:
    """The keys of the stored pages (for tests and tools)."""
    return sorted(store.keys(cache_dir / store.FILE, "pages"))
