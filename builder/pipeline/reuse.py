"""What a build takes whole from an earlier build, and what it makes again: the one place
that decides, lesson by lesson. The stages are pure (builder.course loads and validates,
builder.render says what each lesson is made from and what it makes); they are handed a
Cache for their expensive pure calls (`Memo`) and know nothing of this.

A one-shot build is seeded from its index (builder.pipeline.index): a lesson whose arguments
are `same` as those an earlier build remembered (the index's own objects, compared, not
digested: `Digests.same_as`), or have the key it remembered (`Digests.recall`), gets its
artifacts' keys back without making them. The preview is seeded from memory (`turn`): a lesson whose
arguments are the very objects of the last build has its artifacts as they were, told for
every lesson at once (`Digests.again_each`), and the navigation and what every lesson
shares stay the last build's objects while equal, so they are told by identity.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.artifact import Artifact, Made
from ..core.store import Store, digest
from .keys import Digests, Keyed

if TYPE_CHECKING:
    from ..course.model import Course, Lesson
    from ..course.status import LessonStatus
    from ..render.links import Target
    from ..render.nav import NavItem, SiteNav
    from ..render.renderer import Renderer

T = TypeVar("T")
# A lesson's artifacts, keyed: its page (with its notebook), its charts by file name.
KeyedLesson = tuple[Keyed, tuple[tuple[str, Keyed], ...]]


class Reuse:
    """The keys and cached values of one build (of the code `salt` digests), and, once
    `turn`ed (the preview, between builds), those of the build before it."""

    def __init__(self, store: Store | None = None, salt: str = "") -> None:
        self.memo = Memo(store, salt)
        self.digests = Digests(salt)

    @property
    def salt(self) -> str:
        return self.memo.salt

    def turn(self) -> None:
        """A preview's build begins: forget what the one before last made."""
        self.memo.turn()
        self.digests.turn()

    def renderer(self) -> Renderer:
        """A Renderer whose highlighted code and charts are kept in the store, and whose
        navigation entries and link targets are the last build's objects where the same."""
        from ..render.renderer import Renderer

        return Renderer(self.memo, self._items, self._targets)

    def _items(self, lessons: Sequence[Lesson], numbers: Sequence[str]) -> tuple[NavItem, ...]:
        from ..render.nav import item

        numbers = self.digests.kept(tuple(numbers), slot="numbers")  # made again: told in C
        return self.digests.again_each(item, lessons, numbers, slot="nav")

    def _targets(self, lessons: Sequence[Lesson]) -> tuple[Target, ...]:
        from ..render.links import target

        return self.digests.again_each(target, lessons, slot="links")

    @contextlib.contextmanager
    def templates(self) -> Iterator[None]:
        """Inside the block, the builder's own templates are compiled once for each code
        (`salt`) and kept in the store (Jinja's bytecode cache): a one-shot build takes
        them compiled. A course's own templates are compiled by the sandbox each time."""
        from ..render.markup import environment
        from .compiled import Compiled  # Jinja: not imported by `check`

        if self.memo.store is None:
            yield
            return
        builders = environment()
        builders.bytecode_cache = Compiled(self.memo.store, self.salt)
        try:
            yield
        finally:
            builders.bytecode_cache = None

    def key(self, artifact: Artifact) -> Keyed:
        """`artifact` keyed by its function, its arguments and the code."""
        fn, args, kind, label = artifact.fn, artifact.args, artifact.kind, artifact.label
        return Keyed(self.digests.key(fn, args, (kind, label)), artifact.make, kind, label)

    def keyed(self, artifacts: Iterable[Artifact]) -> list[Keyed]:
        return [self.key(artifact) for artifact in artifacts]

    def nav(self, course: Course, renderer: Renderer) -> SiteNav:
        """The course's navigation, the last build's object when the same."""
        from ..render.nav import site_nav

        return self.digests.kept(site_nav(course, renderer.items), slot="nav")

    def lessons(
        self,
        course: Course,
        statuses: list[LessonStatus],
        sidecars: dict[str, Any],
        renderer: Renderer,
    ) -> list[Keyed]:
        """Every lesson's artifacts, keyed, in the order a build makes them: as they were
        for a lesson whose arguments are the last build's objects, else `_lesson`'s."""
        from ..render import lessons as render
        from ..render.nav import item

        # each lesson's navigation entry, which its neighbours show: the last build's objects
        near = self.digests.again_each(item, course.lessons, slot="near")
        found = render.lesson_columns(course, statuses, sidecars, renderer, near)
        # the places in the course: ints made again each build, kept as the last build's
        places = [
            self.digests.kept(tuple(c), slot=("places", n))
            for n, c in enumerate(found[-render.PLACE :])
        ]
        columns: list[Sequence[Any]] = [*found[: -render.PLACE], *places]
        common = [self.digests.kept(render.Common.of(course, renderer), slot="lessons")]
        made = self.digests.again_each(
            self._lesson, common * len(columns[0]), *columns, slot="lessons"
        )
        return render.in_order(made)

    def _lesson(self, *row: Any) -> KeyedLesson:
        """A lesson's artifacts, keyed; or, when an earlier build made them from arguments
        of the same key, the keys it remembered, each made again only if neither the site
        nor the store holds it. Arguments `same` as those it remembered (what every lesson
        shares by its digest, made once a build) are not digested at all: an unchanged
        lesson's are the index's own objects (its lesson, its status) and values equal to
        the last build's. Else the key is digested from what the index kept digests of and
        what every lesson shares: one key a lesson, not two (page, charts)."""
        from ..render import lessons as render

        args = render.lesson_inputs(*row)
        label = args[1].id
        # what the index keeps of them: what every lesson shares by its digest (made once)
        kept = (self.digests.digest(args[0]), *args[1:])
        found = self.digests.same_as(label, kept)
        key, keys = found or (self.digests.key(render.of_lesson, args), None)
        keys = keys or self.digests.recall(label, key)
        if keys is not None:
            if found is None:  # the same key from other objects: compared next time
                self.digests.remember(label, key, keys, kept)
            page, charts = keys

            def again(key: str, which: str, kind: str) -> Keyed:
                return Keyed(key, partial(_made_again, args, which), kind, label)

            shown = tuple((name, again(k, name, "chart")) for name, k in charts)
            return again(page, "page", "page"), shown
        made = render.of_lesson(*args)
        keyed = self.key(made[0]), tuple((n, self.key(a)) for n, a in made[1])
        charts = tuple((name, chart.key) for name, chart in keyed[1])
        self.digests.remember(label, key, (keyed[0].key, charts), kept)
        return keyed


def _made_again(args: tuple[Any, ...], which: str) -> Made:
    """A lesson's page or one of its charts (by its file's name), made."""
    from ..render.lessons import of_lesson

    page, panels = of_lesson(*args)
    return ({"page": page} | dict(panels))[which].make()


class Memo:
    """Pure calls' results (validated texts, highlighted code, charts) in the store, by the
    digest of the code (`salt`), the call's kind and its parts: the Cache the stages are
    handed (builder.course.validation); without a store, it just calls them. Its keys, and
    once `turn`ed (the preview) its values, are remembered for the next build: a refresh
    looks a key up rather than hashing a lesson's text again, and course.yml and
    glossary.yml are validated into the last build's objects, which keys tell by identity."""

    def __init__(self, store: Store | None = None, salt: str = "") -> None:
        self.store, self.salt = store, salt
        self.last: dict[tuple[str | bytes, ...], str] = {}
        self.now: dict[tuple[str | bytes, ...], str] = {}
        self.values: dict[str, Any] | None = None  # by key; None: not between builds
        self.values_last: dict[str, Any] = {}

    def key(self, kind: str, *parts: str | bytes) -> str:
        if self.values is None:  # not between builds: no key to look up
            return digest(self.salt, kind, *parts)
        wanted = (kind, *parts)
        found = self.now.get(wanted) or self.last.get(wanted) or digest(self.salt, kind, *parts)
        self.now[wanted] = found
        return found

    def __call__(self, kind: str, parts: tuple[str | bytes, ...], make: Callable[[], T]) -> T:
        if self.store is None:
            return make()
        key = self.key(kind, *parts)
        if self.values is None:
            return self.store.value(key, make)
        if key in self.values or key in self.values_last:
            self.store.use(key)  # kept in the store, as a read there keeps it
            found: T = self.values[key] if key in self.values else self.values_last[key]
        else:
            found = self.store.value(key, make)
        self.values[key] = found
        return found

    def turn(self) -> None:
        """A build begins: forget the keys (and values) the one before last made."""
        self.last, self.now = self.now, {}
        self.values_last, self.values = self.values or {}, {}
