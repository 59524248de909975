"""What a page shows of the course besides itself: the navigation (the sidebar's data, the
home and arc pages' cards) and, on a lesson page, the course's title, theme and address."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
        """Every lesson's entry, by lesson id."""
        return {x.id: x for arc in self.arcs for x in arc.lessons}


@dataclass(frozen=True)
class SiteHead:
    """What a page shows of the course besides itself, but for the home page (base.html):
    its title. A lesson page is made with this, not the whole navigation (the sidebar is
    static/nav.js), so that renaming one lesson re-renders none of the others."""

    title: str
    theme: Theme = NO_THEME
    url: str = ""  # course.yml's site_url ("": not said)


def site_nav(course: Course, entry: Callable[[Lesson, str], NavItem] | None = None) -> SiteNav:
    """`entry`: what makes each lesson's NavItem (Renderer.item keeps the last build's)."""
    made = entry or item
    by_arc = course.by_arc()
    shown = [arc for arc in course.meta.arcs if by_arc[arc.id]]
    arcs = [
        NavArc(
            arc.id,
            arc.title,
            arc.summary,
            [made(x, f"{a}.{n}") for n, x in enumerate(by_arc[arc.id], start=1)],
        )
        for a, arc in enumerate(shown, start=1)
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
