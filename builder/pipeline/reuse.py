"""What a build takes whole from an earlier build, and what it makes again: the one place
that decides, lesson by lesson. The stages are pure (builder.course loads and validates,
builder.render says what each lesson is made from and what it makes); they are handed a
Cache for their expensive pure calls (`Memo`) and know nothing of this.

Each lesson's unit (builder.render.lessons.LessonUnit: what its artifacts are made from) is
remembered with its artifacts' keys (`Remembered`), kept in its index entry
(builder.pipeline.index) and, in the preview, from one refresh to the next. A lesson whose
lesson and status the build took from there (Build.taken: none of the paths they were read
from changed, so they are the entry's own values) and whose other parts equal the entry's
is known unchanged: its keys are taken, nothing of it digested. Any other lesson's key is
digested; when it is the key remembered, its keys are taken too, else its artifacts are
keyed one by one.

What every lesson was keyed with besides its own is remembered too (`Around`: the lessons'
front matter, the theme, the digest of what they share, the other pages' keys; in the
index, its lessons' order, that digest, the theme, the other pages' keys with what they
read and the digests of the links and the navigation, its entries holding the rest). When
the course's front matter and theme are as they were, no lesson's neighbours, place or
links changed: only the lessons whose lesson, status or sidecar is not the object keyed
last, and those whose anchored links lead to one of them, get a unit (`_stale`); the
navigation and the links are the last build's in the preview, and in any build the other
pages' keys too, when the statuses and what else those pages read are as they were
(`pages`). Any front matter changed: every lesson's unit, as above.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import astuple, dataclass, replace
from functools import cache, partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ..core.artifact import Artifact, Made
from ..core.store import Store, digest
from .keys import Digests, Keyed

if TYPE_CHECKING:
    from pathlib import Path

    from ..course.model import Course, Lesson
    from ..course.status import LessonStatus
    from ..render.lessons import Common, LessonUnit
    from ..render.links import Links
    from ..render.nav import SiteNav
    from ..render.renderer import Renderer

T = TypeVar("T")
# A lesson's artifacts, keyed: its page (with its notebook), its charts by file name.
KeyedLesson = tuple[Keyed, tuple[tuple[str, Keyed], ...]]
# Their keys: its page's, its charts' by file name.
LessonKeys = tuple[str, tuple[tuple[str, str], ...]]
# The other pages' inputs beside the course's front matter, its navigation and statuses (the
# glossary's term uses, the run times, the What-changed and move pages' digest, the revision
# built: plain values), and their artifacts' keys, kinds and labels: `Reuse.pages`.
PagesKeys = tuple[tuple[Any, ...], tuple[tuple[str, str, str], ...]]


@dataclass(frozen=True)
class Remembered:
    """What a lesson's artifacts were made from, and their keys: its lesson and status (the
    index entry's own), its unit's other parts with the digest of what every lesson shares
    (`around`: small values, compared with ==), the key of all of it, and its artifacts'."""

    lesson: Lesson
    status: LessonStatus
    around: tuple[Any, ...]
    key: str
    keys: LessonKeys


class Entry(Protocol):
    """What `Around.remembered` reads of an index entry (builder.pipeline.index.Entry)."""

    @property
    def lesson(self) -> Lesson: ...
    @property
    def status(self) -> LessonStatus | None: ...
    @property
    def sidecar(self) -> Any: ...
    @property
    def made(self) -> Remembered | None: ...


def fronts(course: Course) -> tuple[Any, ...]:
    """What the navigation, the links and the pages but the lessons' own read of every
    lesson: its front matter (its id is its folder's name), with course.yml and
    glossary.yml as loaded; compared with ==, which finds the very objects at once."""
    return (course.root, course.meta, course.glossary, tuple(x.meta for x in course.lessons))


@dataclass(frozen=True)
class Around:
    """What a build keyed its lessons with: the course's front matter (`fronts`), the
    theme, the digest of what every lesson shares, and each lesson's own (the lessons,
    their statuses and sidecars: builder.render.lessons `units`), and the other pages' keys
    (`Reuse.pages`); in the preview also the links and the navigation, which a one-shot
    build makes again (`remembered`)."""

    fronts: tuple[Any, ...]
    theme: tuple[str, ...]  # the Theme's fields: `check`, which unpickles it, imports no Jinja
    shared: bytes
    lessons: tuple[Lesson, ...]
    statuses: list[LessonStatus]  # in course order (then the orphans, in the preview)
    sidecars: dict[str, Any]
    links: Links | None = None
    nav: SiteNav | None = None
    known: tuple[bytes, ...] = ()  # the digests of the links and the navigation, as made
    pages: PagesKeys | None = None  # the other pages', when keyed with these (`Reuse.pages`)

    @classmethod
    def remembered(
        cls, root: Path, kept: tuple[Any, ...] | None, values: Any, entries: Mapping[str, Entry]
    ) -> Around | None:
        """The last build's, from its index: `kept` (`remembered_by`: its lessons' ids in
        course order, the shared digest, the theme), course.yml and glossary.yml as loaded
        (`values`) from `root`, and each lesson's entry (builder.pipeline.index.Entry); None
        when one is missing, or holds no status or keys."""
        if values is None or not _remembered(kept):
            return None
        assert kept is not None
        order, shared, theme, pages, *known = kept
        found = [
            e
            for n in order
            if (e := entries.get(n)) is not None and e.status is not None and e.made is not None
        ]
        if len(found) != len(order):
            return None
        lessons = tuple(e.lesson for e in found)
        front = (root, *values, tuple(x.meta for x in lessons))
        sidecars = {e.lesson.id: e.sidecar for e in found if e.sidecar is not None}
        statuses = [e.status for e in found if e.status is not None]
        return cls(
            front, theme, shared, lessons, statuses, sidecars, known=tuple(known), pages=pages
        )

    def remembered_by(self, digests: Digests) -> tuple[Any, ...]:
        """What the index keeps of it (its entries keep the rest), with the digests of its
        links and navigation (`digests` made them: found, not made again), and the other
        pages' keys."""
        made = [digests.digest(x) for x in (self.links, self.nav) if x is not None]
        return (tuple(x.id for x in self.lessons), self.shared, self.theme, self.pages, *made)


class Reuse:
    """The keys and cached values of one build (of the code `salt` digests), and, once
    `turn`ed (the preview, between builds), those of the build before it."""

    def __init__(self, store: Store | None = None, salt: str = "") -> None:
        self.memo = Memo(store, salt)
        self.digests = Digests(salt)
        self.made: dict[str, Remembered] = {}  # by lesson id: the index's, then this build's
        self.lessons_keyed: dict[str, KeyedLesson] = {}  # by lesson id: the last build's, as made
        self.last: dict[type, Any] = {}  # the last build's navigation, links, glossary uses
        self.around: Around | None = None  # what the last build keyed its lessons with

    @property
    def salt(self) -> str:
        return self.memo.salt

    def turn(self) -> None:
        """A preview's build begins: forget what the one before last made."""
        self.memo.turn()
        self.digests.turn()

    def renderer(self) -> Renderer:
        """A Renderer whose highlighted code and charts are kept in the store."""
        from ..render.renderer import Renderer

        return Renderer(self.memo)

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
        return Keyed(self.digests.key(fn, args), artifact.make, kind, label)

    def keyed(self, artifacts: Iterable[Artifact]) -> list[Keyed]:
        return [self.key(artifact) for artifact in artifacts]

    def pages(
        self, inputs: tuple[Any, ...], artifacts: Callable[[], list[Artifact]]
    ) -> list[Keyed]:
        """The site's pages but the lessons', keyed (after `lessons`): by the keys the last
        build made when `artifacts` reads what it read, its course's front matter, theme
        and statuses (`lessons` carries the keys over only then) and the rest (`inputs`,
        compared with ==, which finds the very objects at once); each page made again
        only if neither the site nor the store holds it."""
        now = self.around
        assert now is not None, "the lessons are keyed first"
        last = now.pages
        if last is not None and last[0] == inputs:
            made = cache(lambda: {k.key: k for k in self.keyed(artifacts())})
            keyed = [
                Keyed(k, partial(_page_again, made, k), kind, label) for k, kind, label in last[1]
            ]
        else:
            keyed = self.keyed(artifacts())
        keys = tuple((k.key, k.kind, k.label) for k in keyed)
        self.around = replace(now, pages=(inputs, keys))
        return keyed

    def nav(self, course: Course) -> SiteNav:
        """The course's navigation, the last build's when equal: when its lessons' front
        matter and its theme are as they were (`_as_before`), the preview's is not made
        again, nor a one-shot build's digested again."""
        from ..render.nav import site_nav
        from ..render.theme import Theme

        last = self._as_before(course, astuple(Theme.of(course)))
        if last is not None and last.nav is not None:
            return last.nav
        nav = self.kept(site_nav(course))
        if last is not None and last.known:  # equal to the one it digested
            self.digests.seed([(nav, last.known[1])])
        return nav

    def _as_before(self, course: Course, theme: tuple[str, ...]) -> Around | None:
        """How the last build keyed its lessons (`around`) when `course` has the front
        matter, and `theme` is, of the one it keyed: all that the navigation, the links,
        the digest of what every lesson shares, and the pages but the lessons' read of it."""
        last = self.around
        same = last is not None and last.theme == theme and last.fronts == fronts(course)
        return last if same else None

    def kept(self, value: T) -> T:
        """`value`, or the last build's value of its type when equal: its digest (made once
        an object) is not made again. Only for values of strings alone (the navigation, the
        links' targets, the glossary terms the pages use), which `==` tells apart as keys
        do."""
        last = self.last.get(type(value))
        if last is not None and last == value:
            return cast(T, last)
        self.last[type(value)] = value
        return value

    def lessons(
        self,
        course: Course,
        statuses: list[LessonStatus],
        sidecars: dict[str, Any],
        renderer: Renderer,
        nav: SiteNav,
    ) -> list[Keyed]:
        """Every lesson's artifacts, keyed, in the order a build makes them (`nav`: the
        course's navigation, whose entries the lessons' pages show of their neighbours)."""
        from ..render import lessons as render
        from ..render.links import Links

        last = self._as_before(course, astuple(nav.theme))
        links = (last.links if last is not None else None) or self.kept(Links.of(course))
        common = render.Common.of(course, renderer, links)
        if last is not None:  # what every lesson shares is as it was
            known = [(common, last.shared)]
            self.digests.seed(known + ([(links, last.known[0])] if last.known else []))
        shared = self.digests.digest(common)  # once a build: in every lesson's key
        only = self._stale(last, course, statuses, sidecars) if last is not None else None
        units = render.units(course, statuses, sidecars, common, nav, only)
        made = {unit.lesson.id: self._lesson(common, shared, unit) for unit in units}
        keyed = self.lessons_keyed
        for x in course.lessons:  # a one-shot build's lessons as the index remembered them
            if x.id not in made and x.id not in keyed:
                unit = partial(_unit, course, statuses, sidecars, common, nav, x.id)
                keyed[x.id] = self._taken(common, unit, x.id, self.made[x.id].keys)
        pages = last.pages if last is not None and last.statuses == statuses else None
        self.around = Around(
            fronts(course),
            astuple(nav.theme),
            shared,
            course.lessons,
            statuses,
            sidecars,
            links,
            nav,
            pages=pages,  # the other pages' keys, while what they read of the lessons is equal
        )
        return render.in_order(made.get(x.id) or keyed[x.id] for x in course.lessons)

    def _stale(
        self, last: Around, course: Course, statuses: list[LessonStatus], sidecars: dict[str, Any]
    ) -> set[str]:
        """The ids of the lessons whose units may differ from the last build's, when every
        lesson is keyed with what the last build's were (`last`, of the same lessons in the
        same order): those whose lesson, status or sidecar is not the object the last
        build keyed, and those whose pages link to one of them with an anchor (its ids are
        part of their units)."""
        lessons = course.lessons
        differ = map(operator.is_not, last.lessons, lessons)
        stale = {x.id for x in itertools.compress(lessons, differ)}
        statuses_differ = map(operator.is_not, last.statuses, statuses[: len(lessons)])
        stale.update(s.lesson_id for s in itertools.compress(statuses, statuses_differ))
        if sidecars != last.sidecars:  # == finds the very objects at once
            before = last.sidecars
            stale.update(
                n for n in sidecars.keys() | before.keys() if sidecars.get(n) is not before.get(n)
            )
        made = self.made
        linking = {
            n for n, m in made.items() if m.around[5] and any(i in stale for i, _ in m.around[5])
        }
        return stale | linking

    def _lesson(self, common: Common, shared: bytes, unit: LessonUnit) -> KeyedLesson:
        """A lesson's artifacts, keyed. One known unchanged (its lesson and status taken
        from the last build, the same objects, and its unit's other parts equal) is not
        digested: its artifacts are the last build's (the last refresh's, or taken by the
        keys the index remembered). Any other's unit is digested (`_digested`)."""
        label, keyed = unit.lesson.id, self.lessons_keyed
        last = self.made.get(label)
        around = (shared, unit.on, unit.python, unit.before, unit.after, unit.linked, unit.place)
        if (
            last is not None
            and last.lesson is unit.lesson
            and last.status is unit.status
            and last.around == around
        ):
            found = keyed.get(label)
            if found is None:
                found = keyed[label] = self._taken(common, lambda: unit, label, last.keys)
            return found
        found = keyed[label] = self._digested(common, unit, around, last)
        return found

    def _digested(
        self, common: Common, unit: LessonUnit, around: tuple[Any, ...], last: Remembered | None
    ) -> KeyedLesson:
        """A lesson's artifacts by the keys remembered when its unit's key is the one they
        were remembered with (a lesson read again as it was), else each keyed."""
        from ..render.lessons import make

        key = self.digests.key(make, (common, unit))
        if last is not None and last.key == key:
            self.made[unit.lesson.id] = Remembered(unit.lesson, unit.status, around, key, last.keys)
            return self._taken(common, lambda: unit, unit.lesson.id, last.keys)
        page, panels = make(common, unit)
        keyed = self.key(page), tuple((n, self.key(a)) for n, a in panels)
        keys = (keyed[0].key, tuple((name, chart.key) for name, chart in keyed[1]))
        self.made[unit.lesson.id] = Remembered(unit.lesson, unit.status, around, key, keys)
        return keyed

    def _taken(
        self, common: Common, unit: Callable[[], LessonUnit], label: str, keys: LessonKeys
    ) -> KeyedLesson:
        """A lesson's artifacts by their keys, each made again (of the unit `unit()` makes)
        only if neither the site nor the store holds it."""
        page, charts = keys

        def again(key: str, which: str, kind: str) -> Keyed:
            return Keyed(key, partial(_made_again, common, unit, which), kind, label)

        shown = tuple((name, again(k, name, "chart")) for name, k in charts)
        return again(page, "page", "page"), shown


def _page_again(keyed: Callable[[], dict[str, Keyed]], key: str) -> Made:
    """A page but a lesson's, by its key, made again: of the artifacts `keyed` makes."""
    return keyed()[key].make()


def _made_again(common: Common, unit: Callable[[], LessonUnit], which: str) -> Made:
    """A lesson's page or one of its charts (by its file's name), made."""
    from ..render.lessons import make

    page, panels = make(common, unit())
    return ({"page": page} | dict(panels))[which].make()


def _remembered(kept: object) -> bool:
    """Whether `kept` has the shape `Around.remembered_by` gives: nothing in the store can
    fail a build (a damaged or foreign row is a build that keys every lesson)."""
    if not isinstance(kept, tuple) or len(kept) not in (4, 6):
        return False
    order, shared, theme, pages, *known = kept
    return (
        isinstance(order, tuple)
        and all(isinstance(name, str) for name in order)
        and isinstance(theme, tuple)
        and all(isinstance(x, bytes) for x in (shared, *known))
        and (pages is None or _pages_keys(pages))
    )


def _pages_keys(pages: object) -> bool:
    """Whether `pages` has the shape of `Around.pages`: inputs, then (key, kind, label)s."""
    if not isinstance(pages, tuple) or len(pages) != 2 or not isinstance(pages[0], tuple):
        return False
    keys = pages[1]
    return isinstance(keys, tuple) and all(
        isinstance(k, tuple) and len(k) == 3 and all(isinstance(x, str) for x in k) for k in keys
    )


def _unit(
    course: Course,
    statuses: list[LessonStatus],
    sidecars: dict[str, Any],
    common: Common,
    nav: SiteNav,
    lesson: str,
) -> LessonUnit:
    """One lesson's unit (by id), made when its artifact must be made again."""
    from ..render.lessons import units

    return units(course, statuses, sidecars, common, nav, {lesson})[0]


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
