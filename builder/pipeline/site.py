"""The site, made: every artifact of it (builder.pipeline.make) by key, in the order they were made:
the lesson pages and charts first, then the pages that list what the lessons use (the
glossary lists the terms each page uses), then the search bundles, made of what making the
pages left, and the printable course, keyed by the lesson pages' keys (`make_pages`, then
`with_search`: the preview makes these when the edits pause).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from ..core.artifact import Made, Searched, Trace
from ..course.model import Course
from ..course.rules import run_seconds
from ..course.status import LessonStatus
from ..render import pages, printed, search
from .keys import Keyed
from .make import Kept, make, taken_or_made
from .reuse import Reuse

if TYPE_CHECKING:
    from ..course.model import Move
    from ..review.moves import Compared  # only with --since, or course.yml's moves

Moves = tuple[tuple["Move", "Compared"], ...]  # each move of course.yml, and what it changed


@dataclass(frozen=True)
class Site:
    made: dict[str, Made]  # by artifact key
    keyed: Mapping[str, Keyed] = field(default_factory=dict)  # each artifact's, by key: how made

    def files(self) -> dict[str, bytes]:
        """The files this build made (the site holds the others already)."""
        return {n: data for m in self.made.values() if m.files for n, data in m.files.items()}

    def names(self) -> dict[str, str]:
        """Every file of the site, with the key of the artifact it came from."""
        return {name: key for key, m in self.made.items() for name in m.trace.names}

    def traces(self) -> dict[str, Trace]:
        """Each artifact's trace as the index keeps it: without the search text, most of a
        page's trace, which a build needs only for the bundles it makes again, and takes
        from the store's copy of the page (`with_search`)."""
        return {key: _unsearched(made.trace) for key, made in self.made.items()}

    def references(self, used: Iterable[str]) -> set[str]:
        """Every store key the site was made with, and `used`: what the store keeps."""
        uses = {key for made in self.made.values() for key in made.trace.uses}
        return {*self.made, *uses, *used}


def make_pages(
    course: Course,
    statuses: list[LessonStatus],
    sidecars: dict[str, Any],
    reuse: Reuse,
    kept: Kept,
    jobs: int,
    built: str,
    changes: Compared | None = None,
    moves: Moves = (),
) -> Site:
    """The site without its search bundles: what the preview shows first. `sidecars`:
    what each recording's sidecar says (builder.course.rules.read_inputs); `built`: the
    revision the footer says the site is built from (builder.review.git.built_from);
    `changes`: what the recordings changed since `--since`; `moves`: course.yml's moves."""
    assert reuse.memo.store is not None
    store, renderer, nav = reuse.memo.store, reuse.renderer(), reuse.nav(course)
    keyed = reuse.lessons(course, statuses, sidecars, renderer, nav)
    lessons = make(keyed, store, kept, jobs)
    used = reuse.kept(pages.terms_used(lessons.values()))
    seconds, changed = run_seconds(sidecars), _changes_pages(changes, moves)
    # what the other pages are made of besides the course's front matter, navigation and
    # statuses, as plain values: the index keeps them, and `check` unpickles no renderer nor
    # review (the What-changed and move pages by their digest: builder.pipeline.reuse
    # `Reuse.pages`); the renderer only makes them
    inputs = ((used.names, used.terms), seconds, reuse.digests.canonical(changed), built)
    artifacts = partial(
        pages.page_artifacts, course, nav, statuses, used, seconds, renderer, changed, built
    )
    others = reuse.pages(inputs, artifacts)
    made = lessons | make(others, store, kept, jobs)
    return Site(made, {artifact.key: artifact for artifact in (*keyed, *others)})


def with_search(
    site: Site, course: Course, statuses: list[LessonStatus], reuse: Reuse, kept: Kept, jobs: int
) -> Site:
    """The site, the search bundles that index its pages (made of what making each page
    left, `Trace.searched`) and the printable course (its lessons' prose rendered again,
    keyed by their pages' keys)."""
    assert reuse.memo.store is not None
    names, renderer, store = site.names(), reuse.renderer(), reuse.memo.store

    def found(name: str) -> Searched | None:
        """What a search finds on the page `name`: a page taken from the site has the
        index's trace, which keeps none; the store's copy of the page has it (or, where
        the store lost it, the page made again)."""
        key = names[name]
        if (searched := site.made[key].trace.searched) is None:
            searched = taken_or_made(site.keyed[key], store).trace.searched
        return searched

    bundles = search.bundle_artifacts(course, names, found, renderer)
    made = make(reuse.keyed(bundles), store, kept, jobs)
    if course.meta.print_page:
        nav = reuse.nav(course)
        whole = printed.print_artifact(course, statuses, nav, names, renderer)
        made |= make(reuse.keyed([whole]), store, kept, jobs)
    return Site(site.made | made, site.keyed)


def _unsearched(trace: Trace) -> Trace:
    return trace if trace.searched is None else replace(trace, searched=None)


def _changes_pages(changes: Compared | None, moves: Moves) -> tuple[pages.ChangesPage, ...]:
    """The makings of the What-changed page (`--since REV`) and of each move's page."""
    if changes is None and not moves:
        return ()
    from ..review.page import context

    since = (pages.ChangesPage("changes/index.html", "What changed", context, (changes,)),)
    return (
        *(since if changes else ()),
        *(pages.ChangesPage(f"{m.url}index.html", m.title, context, (c, m)) for m, c in moves),
    )
