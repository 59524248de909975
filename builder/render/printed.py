"""The whole course as one page to print (print/index.html): its title, a contents list,
then every lesson in course order, each arc's under its title, as artifacts
(builder.pipeline.make).

Each lesson's body is its page's, as rendered (builder/render/relocate.py moves it), with
its figures and recorded output: the page is made from the lesson pages' bytes and keyed
by their keys, as a search bundle is (builder/render/search.py), so a lesson edit makes it
again and nothing is rendered twice; each lesson's moved body is kept (the Renderer's
cache) by its page's key, so that edit moves one body again, not the course's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from markupsafe import Markup

from ..core.artifact import Artifact, Made, Trace
from .nav import NavItem, SiteNav
from .relocate import Move, moved_body, place
from .renderer import Renderer, page
from .search import Pages

PAGE = "print/index.html"
TITLE = "The whole course"
SHIFT = 2  # a lesson's h2 is an h4: under the arc's h2 and the lesson's h3


@dataclass(frozen=True)
class PrintedLesson:
    id: str  # its place in the page (relocate.place)
    number: str  # "2.3"
    title: str
    body: Markup


@dataclass(frozen=True)
class PrintedArc:
    id: str
    title: str
    lessons: list[PrintedLesson]


def print_artifact(
    nav: SiteNav, keys: Mapping[str, str], read: Callable[[str], bytes], renderer: Renderer
) -> Artifact:
    """The page, keyed by the navigation (titles, numbers, order) and the keys of the
    lesson pages it holds (`keys`: the key of the artifact each site file came from), and
    made from their bytes (`read(name)`)."""
    names = [f"{x.url}index.html" for arc in nav.arcs for x in arc.lessons]
    pages = Pages(tuple((n, keys[n]) for n in names), read)
    return renderer.artifact("", _printed, nav, pages, renderer)


def _printed(nav: SiteNav, pages: Pages, renderer: Renderer) -> Made:
    held = {f"{x.url}index.html": _slug(x.url) for arc in nav.arcs for x in arc.lessons}
    keys = dict(pages.keys)
    course = hashlib.sha256(repr(sorted(held.items())).encode()).hexdigest()

    def lesson(x: NavItem) -> PrintedLesson:
        """Its body moved, kept by its page's key and the lessons the page holds (which
        its links may lead to): a lesson edit moves that lesson's body alone again."""
        name = f"{x.url}index.html"
        move = Move(name, PAGE, held, SHIFT)
        parts = (PAGE, str(SHIFT), name, keys[name], course)
        body = renderer.cache("moved-body", parts, lambda: str(moved_body(pages.read(name), move)))
        return PrintedLesson(place(held[name]), x.number, x.title, Markup(body))

    arcs = [PrintedArc(arc.id, arc.title, [lesson(x) for x in arc.lessons]) for arc in nav.arcs]
    context = {"root": "../", "title": TITLE, "current": "", "arcs": arcs}
    description = f"{nav.title}: every lesson in one page, to print or save as PDF."
    html, parts = page("print.html", nav, PAGE, description=description, **context)
    return Made({PAGE: html}, Trace(page=parts))


def _slug(url: str) -> str:
    return url.removeprefix("l/").rstrip("/")  # l/<slug>/
