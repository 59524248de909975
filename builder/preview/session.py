"""The preview's build, kept in memory between edits (python -m builder serve).

A Session keeps one Build (builder/pipeline/build.py) between edits, with the course, every
lesson's status and every artifact it made. A batch of file events is a change-set
(builder.pipeline.index `Changes.events`), looked up in what each value was read from as a
one-shot build looks up the paths whose metadata changed:

    refresh   the changed lessons loaded again, their statuses, and the pages whose keys
              changed made again; every other artifact comes from memory -> the names of
              the site files that changed, served at once
    settle    when the edits pause: the search bundles, the printable course, the changed
              files written into site/ and the index, the same bytes `make site` leaves;
              put off, between its steps, by an edit that comes meanwhile

The served site is the session's memory, not site/: writing site/ and its index walks the
site and the inputs, which costs more than rendering one page, so it waits for a pause.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from ..core.artifact import Made, Parts
from ..core.observe import Paths
from ..core.store import Store
from ..course.model import Course
from ..course.status import LessonStatus
from ..pipeline.build import Build, build_lock, clock, observe, open_store, settings
from ..pipeline.index import Changes, Head
from ..pipeline.make import Kept
from ..pipeline.site import Site
from ..review.git import built_from

JOBS = 2  # forked workers only when many artifacts are missing (a template edit)


class Session:
    """The last build in memory (a Build kept between edits): `served` is the site as the
    browser gets it."""

    def __init__(self, paths: Paths, *, execute: bool) -> None:
        self.paths = paths
        self.settings = settings(execute, since="")
        self.build = Build(paths, open_store(paths))
        self.pages = Site({})  # the last refresh: every page and chart, no search bundles
        self.bundles: dict[str, Made] = {}  # the search bundles of the last settle
        self.on_disk: dict[str, str] = {}  # what site/ holds: file -> artifact key
        self.read_since = 0  # the file system's clock when the last refresh started reading
        self.built = ""  # the revision the footer says (git, asked at start and each settle)
        self.untold: list[str] = []  # files a put-off settle changed (a new revision's nav.js)
        self.unbuilt = Changes()  # what failed refreshes were told: read again until one builds

    @property
    def course(self) -> Course | None:
        return self.build.course

    @property
    def statuses(self) -> list[LessonStatus]:
        return self.build.statuses

    @property
    def store(self) -> Store:
        return self.build.store

    def start(self) -> list[str]:
        """The first build: what the last build's index holds and its files did not change
        taken from it, the rest read; the pages the site folder holds taken from it."""
        now = observe(self.paths, ())
        self.read_since = now.since
        run = self.build
        changes = run.begin(now, Head.load(run.store))  # the last build's index, as `site`'s
        kept = Kept.since(run.index, self.paths.out, now)
        self.built = built_from(self.paths.content)
        last = run.index.published
        self.on_disk = {n: last.files[n] for n in kept.intact if n in last.files} if last else {}
        return self._build(kept, changes)

    def refresh(self, changes: Changes) -> list[str]:
        """Build again after `changes` (a batch of file events: Changes.events), and what
        refreshes that failed since the last that built were told; the names of the site
        files that changed."""
        self.read_since = clock(self.paths)
        self.unbuilt = changes = self.unbuilt | changes
        if changes.code:
            self.build.rekey()
        kept = Kept(None, self.paths.out, frozenset(), self._held())
        built = self._build(kept, changes)
        self.unbuilt = Changes()
        return built

    def _build(self, kept: Kept, changes: Changes) -> list[str]:
        """The build's stages up to the pages (Build.run, publishing nothing): what it holds
        and `changes` leaves as it was is not read again."""
        self.build.reuse.turn()  # what the last build made is reused (builder.pipeline.reuse)
        pages = self.build.run(changes, kept, jobs=JOBS, built=self.built)
        assert pages is not None
        before, self.pages = self.pages.made, _filled(pages, self.paths.out)
        after = self.pages.made  # a key names its files: those of the keys gone or new changed
        return sorted(
            {
                n
                for k in before.keys() ^ after.keys()
                for n in (before.get(k) or after[k]).trace.names
            }
        )

    def _held(self) -> dict[str, Made]:
        return {**self.bundles, **self.pages.made}

    def served(self) -> dict[str, bytes]:
        """Every file of the site as it is served: the last refresh's pages, the last
        settle's search bundles and printable course."""
        made = self._held().values()
        return {name: data for m in made for name, data in (m.files or {}).items()}

    def parts(self) -> dict[str, Parts]:
        """Each page's parts, by its file's name, as `served` serves it."""
        made = self._held().values()
        return {m.trace.page.name: m.trace.page for m in made if m.trace.page is not None}

    def settle(self, edited: Callable[[], bool] = lambda: False) -> list[str] | None:
        """The search bundles, then site/ and the index as `make site` leaves them;
        the names of the search bundles' files that changed (the pages are served already).
        None, and nothing written, when `edited()` says an edit came meanwhile (asked
        between the steps): the edit is built first, as the author waits for it."""
        assert self.course is not None
        if edited():
            return None
        rebuilt = self.untold = sorted({*self.untold, *self._again_if_committed()})
        kept = Kept(None, self.paths.out, frozenset(), self._held())
        site = self.build.search(self.pages, kept, JOBS)
        if edited():
            return None
        names = site.names()
        files = {n: data for n, data in site.files().items() if self.on_disk.get(n) != names[n]}
        with build_lock(self.paths.cache):
            # Taken after reading: an input edited since the refresh began is not older
            # than read_since, so the next build does not trust it (the index's racy rule).
            now = replace(observe(self.paths, self.settings), since=self.read_since)
            if edited():
                return None
            self.build.publish(site, files, now)
        self.on_disk = names
        self.bundles = {k: m for k, m in site.made.items() if k not in self.pages.made}
        self.untold = []
        return sorted({*rebuilt, *(set(files) - set(self.pages.names()))})

    def _again_if_committed(self) -> list[str]:
        """The pages made again when the revision the footer says changed since the last
        build (a commit, or the first edit after one; git is asked here, not at each
        edit, as it costs a refresh more than the rest of it): the names of the files
        that changed."""
        built = built_from(self.paths.content)
        if built == self.built:
            return []
        self.built = built
        kept = Kept(None, self.paths.out, frozenset(), self._held())
        return self._build(kept, Changes())

    def close(self) -> None:
        self.build.store.close()


def _filled(site: Site, out: Path) -> Site:
    """The site with every artifact's files in memory: those the site folder held (the
    first build keeps them there) read from it."""
    made = {
        key: m if m.files is not None else Made(_read(out, m.trace.names), m.trace, m.errors)
        for key, m in site.made.items()
    }
    return Site(made, site.keyed)


def _read(out: Path, names: Iterable[str]) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in names}
