"""What a page shows of the course besides itself: the navigation (the sidebar's data, the
home and arc pages' cards) and, on a lesson page, the course's title, theme and address."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from itertools import islice

from markupsafe import Markup

from ..course.model import Course, Lesson
from .theme import NO_THEME, Theme


@dataclass(frozen=True)
class NavItem:
    id: str
    title: str
    url: str
    summary: str
    label: str  # the lesson's id, for maintainers' pages (recordings, what changed)
    number: str = ""  # its place in the course, "2.3": third of the second arc (cards)


@dataclass(frozen=True)
class NavArc:
    id: str
    title: str
    summary: str
    lessons: list[NavItem]


@dataclass(frozen=True)
class SiteNav:
    title: str
    summary: str
    arcs: list[NavArc]
    theme: Theme = NO_THEME
    url: str = ""  # course.yml's site_url: where the site is published ("": not said)

    def items(self) -> dict[str, NavItem]:
        """Every lesson's entry, by lesson id (made once a navigation: not to be changed)."""
        return self._items

    @cached_property
    def _items(self) -> dict[str, NavItem]:
        return {x.id: x for arc in self.arcs for x in arc.lessons}

    @cached_property
    def places(self) -> dict[str, tuple[int, int, int]]:
        """Each lesson's place, by lesson id: its arc's number (among the arcs that have
        lessons, as the sidebar counts), its number in that arc, and the arc's size (made
        once a navigation: not to be changed)."""
        return {
            x.id: (a, n, len(arc.lessons))
            for a, arc in enumerate(self.arcs, start=1)
            for n, x in enumerate(arc.lessons, start=1)
        }

    @cached_property
    def data(self) -> Markup:
        """The sidebar as data for static/nav.js, rendered once: pages stay the same size
        however long the course (made once a navigation: a build that keeps the last
        build's navigation, as the preview does, does not make it again)."""
        arcs = [
            {
                "id": arc.id,
                "title": arc.title,
                "url": f"a/{arc.id}/",
                "lessons": [
                    {"id": x.id, "number": x.number, "title": x.title, "url": x.url}
                    for x in arc.lessons
                ],
            }
            for arc in self.arcs
        ]
        return Markup(json.dumps(arcs, ensure_ascii=True, separators=(",", ":"), sort_keys=True))


@dataclass(frozen=True)
class SiteHead:
    """What a page shows of the course besides itself, but for the home page (base.html):
    its title. A lesson page is made with this, not the whole navigation (the sidebar is
    static/nav.js), so that renaming one lesson re-renders none of the others."""

    title: str
    theme: Theme = NO_THEME
    url: str = ""  # course.yml's site_url ("": not said)


def site_nav(course: Course) -> SiteNav:
    by_arc = course.by_arc()
    shown = [arc for arc in course.meta.arcs if by_arc[arc.id]]
    lessons = [x for arc in shown for x in by_arc[arc.id]]
    sizes = [len(by_arc[arc.id]) for arc in shown]
    numbers = [f"{a}.{n}" for a, size in enumerate(sizes, start=1) for n in range(1, size + 1)]
    made = map(item, lessons, numbers)
    arcs = [
        NavArc(arc.id, arc.title, arc.summary, list(islice(made, size)))
        for arc, size in zip(shown, sizes, strict=True)
    ]
    meta = course.meta
    return SiteNav(meta.title, meta.summary, arcs, Theme.of(course), meta.site_url or "")


def site_head(course: Course) -> SiteHead:
    """What every page's head shows of the course (its title, theme and address)."""
    return SiteHead(course.meta.title, Theme.of(course), course.meta.site_url or "")


def item(lesson: Lesson, number: str = "") -> NavItem:
    return NavItem(
        lesson.id, lesson.title, lesson.url, lesson.meta.summary, lesson.id.upper(), number
    )
