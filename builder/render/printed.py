"""The whole course as one page to print (print/index.html): its title, a contents list,
then every lesson in course order, each arc's under its title, then the labs' solutions and
the glossary, as an artifact (builder.pipeline.make).

Each lesson's prose is rendered again, from its tokens, with the rules of this page
(builder/render/prose.py with a relocate.Move): its ids its own, its links to the lessons
the page holds leading there, its headings under the page's, and what its reveals hold (a
lab's solution) put apart, for the appendix. The page is keyed by the keys of the lesson
pages (`keys`: a lesson page's key says what its prose is made from), so a lesson edit makes
it again; each lesson's rendering is kept (the Renderer's cache) by its page's key, so that
edit renders one lesson's prose again, not the course's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from markupsafe import Markup

from ..core.artifact import Artifact, Made, Trace
from ..course.model import Course, GlossaryTerm
from ..course.status import LessonStatus
from . import anchors, figures, prose
from .links import Links
from .markup import code_spans
from .nav import NavItem, SiteNav
from .relocate import Move, place, prefix
from .renderer import Renderer, page

PAGE = "print/index.html"
TITLE = "The whole course"
ROOT = "../"
SHIFT = 2  # a lesson's h2 is an h4: under the arc's h2 and the lesson's h3
GLOSSARY = "_glossary"  # the glossary's place: its terms' ids start "_glossary--" (no slug's)


@dataclass(frozen=True)
class PrintedLesson:
    id: str  # its place in the page (relocate.place)
    answer: str  # its solution's place in the appendix
    number: str  # "2.3"
    title: str
    body: Markup
    solution: Markup  # what its reveals hold ("": none), in the appendix
    scripts: tuple[str, ...]  # what its widgets need of static/ (prose.RenderedProse)


@dataclass(frozen=True)
class PrintedArc:
    id: str
    title: str
    lessons: list[PrintedLesson]


@dataclass(frozen=True)
class PrintedTerm:
    id: str
    term: str
    definition: Markup
    teacher: NavItem
    at: str  # the teacher's place in the page


class Lessons:
    """The course's lessons and their statuses, with the key of each lesson's page (by its
    file in the site). As an argument, it is those keys: a key says what its page, and so
    its prose, is made from."""

    def __init__(
        self, keys: tuple[tuple[str, str], ...], course: Course, statuses: list[LessonStatus]
    ) -> None:
        self.keys, self.course, self.statuses = keys, course, statuses

    def __digest__(self) -> tuple[tuple[str, str], ...]:
        return self.keys


def print_artifact(
    course: Course,
    statuses: list[LessonStatus],
    nav: SiteNav,
    keys: Mapping[str, str],
    renderer: Renderer,
) -> Artifact:
    """The page, keyed by the navigation (titles, numbers, order), the glossary and the keys
    of the lesson pages (`keys`: the key of the artifact each site file came from)."""
    names = [f"{x.url}index.html" for arc in nav.arcs for x in arc.lessons]
    lessons = Lessons(tuple((n, keys[n]) for n in names), course, statuses)
    return renderer.artifact("", _printed, nav, lessons, course.glossary, renderer)


def _printed(
    nav: SiteNav, lessons: Lessons, glossary: tuple[GlossaryTerm, ...], renderer: Renderer
) -> Made:
    held = {f"{x.url}index.html": _slug(x) for x in nav.items().values()}
    held["glossary/index.html"] = GLOSSARY
    printer = _Printer(lessons, held, renderer)
    arcs = [
        PrintedArc(arc.id, arc.title, [printer.lesson(x) for x in arc.lessons]) for arc in nav.arcs
    ]
    by_id = nav.items()
    terms = [
        PrintedTerm(
            prefix(GLOSSARY) + t.id,
            t.term,
            code_spans(t.definition),
            by_id[t.taught_in],
            place(_slug(by_id[t.taught_in])),
        )
        for t in sorted(glossary, key=lambda t: t.term.casefold())
    ]
    shown = [x for arc in arcs for x in arc.lessons]
    context = {
        "root": ROOT,
        "title": TITLE,
        "current": "",
        "arcs": arcs,
        "terms": terms,
        "solved": [x for x in shown if x.solution],
        "scripts": sorted({name for x in shown for name in x.scripts}),
        "description": f"{nav.title}: every lesson in one page, to print or save as PDF.",
    }
    html, made = page("print.html", nav, PAGE, **context)
    return Made({PAGE: html}, Trace(page=made))


def _slug(x: NavItem) -> str:
    return x.url.removeprefix("l/").rstrip("/")  # l/<slug>/


class _Printer:
    """What renders each lesson's prose into the page (`held`: the pages it holds, each
    one's file -> its slug)."""

    def __init__(self, lessons: Lessons, held: dict[str, str], renderer: Renderer) -> None:
        self.lessons, self.held, self.renderer = lessons, held, renderer
        self.keys = dict(lessons.keys)
        self.digest = hashlib.sha256(repr(sorted(held.items())).encode()).hexdigest()
        self.statuses = {s.lesson_id: s for s in lessons.statuses}
        self.links = Links.of(lessons.course)

    @cached_property
    def linked(self) -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
        """The ids of the lessons each lesson's anchored links lead to (made on the first
        lesson that is rendered again)."""
        course = self.lessons.course
        ids = anchors.linked_ids(course, self.lessons.statuses, self.renderer.page_ids)
        return dict(zip((x.id for x in course.lessons), ids, strict=True))

    def lesson(self, x: NavItem) -> PrintedLesson:
        """Its prose rendered here, kept by its page's key and the pages this one holds
        (which its links may lead to): a lesson edit renders that lesson's alone again."""
        name = f"{x.url}index.html"
        move = Move(name, PAGE, self.held, SHIFT, f"lesson {x.number}")

        def render() -> tuple[str, str, tuple[str, ...]]:
            course, status = self.lessons.course, self.statuses[x.id]
            return _prose(course, status, self.links, self.linked[x.id], move, self.renderer)

        parts = (PAGE, str(SHIFT), name, self.keys[name], self.digest, x.number)
        body, solution, scripts = self.renderer.cache("printed-prose", parts, render)
        slug, shown = _slug(x), (Markup(body), Markup(solution))
        return PrintedLesson(place(slug), f"solution-{slug}", x.number, x.title, *shown, scripts)


def _prose(
    course: Course,
    status: LessonStatus,
    links: Links,
    linked: tuple[tuple[str, tuple[str, ...]], ...],
    move: Move,
    renderer: Renderer,
) -> tuple[str, str, tuple[str, ...]]:
    """A lesson's prose and its panels that the prose does not place, rendered into this
    page, what its reveals hold and the scripts it needs (its problems are its own page's
    to report)."""
    lesson = course.lesson(move.held[move.page])
    assert lesson is not None  # the page holds the course's lessons
    recording, size = status.recording, renderer.size
    rendered, _ = prose.render_prose(
        lesson, links, recording, ROOT, renderer.highlight, size, linked, moved=move
    )
    unplaced = figures.unplaced_panels(recording, rendered.placed_panels, ROOT, size, move)
    return str(Markup(rendered.html) + unplaced), rendered.solution, rendered.scripts
