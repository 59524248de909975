"""Course + recordings -> the site's pages other than lessons, and its static files, as
artifacts (builder.build.make): the course home, arc pages, glossary, recordings page, search
page, 404 page, a redirect at each lesson's old address (`aliases:`), the sidebar's data
(static/nav.js), the style sheets and scripts, and the one-file `builder.py` a downloaded
example imports its panels from.

Each key is the digest of what its page is made from, so a prose edit re-renders none of
them unless it changed what they show (the glossary page lists where each term is used).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..core.artifact import Artifact, Made
from ..core.observe import BUILDER, TEMPLATES, editor_file
from ..course.model import Course, GlossaryTerm, Lesson
from ..course.status import LessonStatus
from . import search
from .highlight import stylesheet
from .lessons import (
    SHIM,
    GlossaryEntry,
    RecordingRow,
    Renderer,
    SiteNav,
    item,
    page,
    site_nav,
)

# The "What changed" page (`--since REV`, builder.review.page): what it is made of, and
# its template's context.
ChangesPage = tuple[object, Callable[[], dict[str, Any]]]


def page_artifacts(
    course: Course,
    statuses: list[LessonStatus],
    terms_used: dict[str, list[str]],
    run_seconds: dict[str, float],
    renderer: Renderer,
    changes: ChangesPage | None = None,
    built: str = "",
) -> list[Artifact]:
    """Every page but the lessons', then the static files. `terms_used` lists, for each
    glossary term, the lessons whose pages use it (in course order, once per use);
    `run_seconds` is each example's last run time (the recordings page shows it);
    `changes` makes the "What changed" page (`--since REV`); `built` is the revision the
    site is built from (the footer says it)."""
    pages = _Pages.of(site_nav(course), renderer)
    listings = [
        pages.made(
            "glossary/index.html",
            "glossary.html",
            ([(t.id, t.term, t.definition, t.taught_in) for t in course.glossary], terms_used),
            partial(_glossary, course, terms_used),
        ),
        pages.made(
            "recordings/index.html",
            "recordings.html",
            _recordings_made_of(course, statuses, run_seconds),
            partial(_recordings, course, statuses, run_seconds),
        ),
    ]
    if changes:
        listings.append(pages.made("changes/index.html", "changes.html", *changes))
    return [
        *_navigation(course, pages, "changes/index.html" if changes else "", built),
        *listings,
        *_redirects(course, pages.nav, renderer),
        *_static(renderer),
    ]


@dataclass(frozen=True)
class _Pages:
    """Makes a page artifact whose key is the navigation and what its context is made of."""

    nav: SiteNav
    renderer: Renderer
    shared: str = ""  # the navigation's digest, taken once: it lists every lesson

    @classmethod
    def of(cls, nav: SiteNav, renderer: Renderer) -> _Pages:
        return cls(nav, renderer, renderer.key("page", repr(nav)))

    def made(
        self, name: str, template: str, made_of: Any, context: Callable[[], dict[str, Any]]
    ) -> Artifact:
        """`made_of`: everything `context()` is made from besides the navigation."""
        key = self.renderer.key(self.shared, name, template, repr(made_of))
        return Artifact(key, partial(_made_page, name, template, self.nav, context))

    def simple(self, name: str, template: str, **context: Any) -> Artifact:
        return self.made(name, template, sorted(context.items()), lambda: context)


def _made_page(
    name: str, template: str, nav: SiteNav, context: Callable[[], dict[str, Any]]
) -> Made:
    return Made({name: page(template, nav, **context())})


def _navigation(
    course: Course, pages: _Pages, changes_url: str = "", built: str = ""
) -> list[Artifact]:
    """The home, arc, search and 404 pages, and the sidebar's data; the home page links
    `changes_url`, the What-changed page, when this build makes one."""
    bundles = [search.bundle_folder(b) for b in search.bundles(course) if b]
    return [
        pages.simple(
            "index.html",
            "home.html",
            root="",
            title="Course",
            current="",
            description=course.meta.summary,
            note=course.meta.note,
            changes_url=changes_url,
        ),
        *(
            pages.simple(
                f"a/{arc.id}/index.html",
                "arc.html",
                root="../../",
                title=arc.title,
                current=f"arc:{arc.id}",
                arc=arc,
                description=arc.summary,
            )
            for arc in pages.nav.arcs
        ),
        pages.simple(
            "search/index.html",
            "search.html",
            root="../",
            title="Search",
            current="",
            merged=bundles,
            description="Full-text search over lessons and glossary.",
        ),
        pages.simple(
            "404.html",
            "404.html",
            root="",
            title="Page not found",
            current="",
            description="There is no page at this address.",
        ),
        # the sidebar's data, and the revision the site was built from (the footer says it):
        # in this one small file, so that a new commit re-renders no page
        pages.simple(
            "static/nav.js",
            "nav.js",
            data=_nav_data(pages.nav),
            built=Markup(json.dumps(built)),
            root="",
            current="",
        ),
    ]


def _redirects(course: Course, nav: SiteNav, renderer: Renderer) -> list[Artifact]:
    """A small page at each old address of a renamed lesson (its `aliases:`), sending the
    reader on to where it lives now, as mkdocs-redirects and Hugo's aliases do."""
    artifacts = []
    for lesson in course.lessons:
        target = f"../{lesson.slug}/index.html"  # from l/<alias>/ to l/<slug>/
        for old in lesson.alias_urls:
            name = f"{old}index.html"
            context = {"title": lesson.title, "slug": lesson.slug, "target": target}
            artifacts.append(
                Artifact(
                    renderer.key("redirect", name, repr(sorted(context.items())), nav.title),
                    partial(_page, name, "redirect.html", nav, context),
                )
            )
    return artifacts


def _page(name: str, template: str, nav: SiteNav, context: dict[str, Any]) -> Made:
    return Made({name: page(template, nav, **context)})


def terms_used(course: Course, made: Iterable[Made]) -> dict[str, list[str]]:
    """For each glossary term, the lessons whose pages use it, in course order."""
    by_page = {f"{lesson.url}index.html": lesson.id for lesson in course.lessons}
    used: dict[str, list[str]] = {}
    for result in made:
        names = result.trace.names or tuple(result.files or ())
        for lesson in (by_page[n] for n in names if n in by_page):
            for term in result.trace.terms:
                used.setdefault(term, []).append(lesson)
    return used


def _static(renderer: Renderer) -> list[Artifact]:
    """templates/static/ as it is (the code digest in every key covers it), and the
    highlighting's style sheet."""
    folder = sorted((TEMPLATES / "static").iterdir())
    files = [p for p in folder if p.is_file() and not editor_file(p.name)]
    return [
        *(
            Artifact(
                renderer.key("static", p.name),
                partial(_file, f"static/{p.name}", p),
            )
            for p in files
        ),
        Artifact(
            renderer.key("static", "pygments.css"),
            lambda: Made({"static/pygments.css": stylesheet().encode()}),
        ),
        Artifact(renderer.key("static", SHIM), lambda: Made({SHIM: shim()})),
    ]


def shim() -> bytes:
    """builder.py: builder/panels.py as the recordings were made with, and a name that lets
    `from builder import panels` find it, so that a downloaded example runs on its own."""
    panels = (BUILDER / "panels.py").read_bytes()
    return (
        b"# builder.py, from the course site: put it beside a downloaded example.py, which\n"
        b"# says `from builder import panels`. It is the course's builder/panels.py as it is,\n"
        b"# and the two lines at the end: `panels.bar(...)` checks a chart's numbers and drops\n"
        b"# them, as when an example is run by hand in the course's repository.\n"
        + panels.rstrip(b"\n")
        + b"\n\n\nimport sys as _sys  # noqa: E402\n\n"
        + b"panels = _sys.modules[__name__]  # `from builder import panels` gets this module\n"
    )


def _file(name: str, path: Path) -> Made:
    return Made({name: path.read_bytes()})


def _glossary(course: Course, terms_used: dict[str, list[str]]) -> dict[str, Any]:
    """The glossary page's context."""
    by_id = {lesson.id: lesson for lesson in course.lessons}  # not a scan per term

    def entry(term: GlossaryTerm) -> GlossaryEntry:
        teacher = by_id[term.taught_in]
        # terms_used lists users in course order, a lesson once per use: keep the first.
        used = [item(by_id[x]) for x in dict.fromkeys(terms_used.get(term.id, ()))]
        return GlossaryEntry(term.id, term.term, term.definition, item(teacher), used)

    entries = sorted((entry(t) for t in course.glossary), key=lambda e: e.term.casefold())
    return {
        "root": "../",
        "title": "Glossary",
        "current": "",
        "entries": entries,
        "description": "Every term of the course and where it is taught.",
    }


def _recordings(
    course: Course, statuses: list[LessonStatus], seconds: dict[str, float] | None
) -> dict[str, Any]:
    """The recordings page's context."""
    by_id = {status.lesson_id: status for status in statuses}
    rows = [_recording_row(x, by_id[x.id], (seconds or {}).get(x.id)) for x in course.lessons]
    return {
        "root": "../",
        "title": "Recordings",
        "current": "",
        "rows": rows,
        "description": "Every lesson's recording at a glance.",
    }


def _recordings_made_of(
    course: Course, statuses: list[LessonStatus], seconds: dict[str, float] | None
) -> list[tuple[Any, ...]]:
    """Every value `_recording_row` shows, for each lesson in course order (its navigation
    entry aside): the recordings page's key, without formatting 1,000 dates to get it."""
    by_id = {status.lesson_id: status for status in statuses}
    made_of: list[tuple[Any, ...]] = []
    for lesson in course.lessons:
        status, run = by_id[lesson.id], (seconds or {}).get(lesson.id)
        recording = status.recording
        if recording is None:
            made_of.append((lesson.id, str(status.state), status.detail, run))
            continue
        env = recording.environment
        made_of.append(
            (
                lesson.id,
                str(status.state),
                status.detail,
                run,
                recording.generatedAt,
                recording.provenance,
                env.deviceCount,
                env.jax,
                env.numpy,
                env.matplotlib,
                recording.contentHash,
                len(recording.panels),
            )
        )
    return made_of


def _recording_row(lesson: Lesson, status: LessonStatus, seconds: float | None) -> RecordingRow:
    recording = status.recording
    run = f"{seconds:.2f} s" if isinstance(seconds, int | float) else "unknown"
    if recording is None:
        return RecordingRow(item(lesson), status.state, status.detail, "", "", "", "", None, run)
    env = recording.environment
    return RecordingRow(
        lesson=item(lesson),
        state=status.state,
        detail=status.detail,
        recorded=_minute(recording.generatedAt),
        provenance=f"{recording.device}, {env.deviceCount} device"
        + ("s" if env.deviceCount != 1 else ""),
        environment=f"jax {env.jax} · numpy {env.numpy} · matplotlib {env.matplotlib}",
        content_hash=recording.contentHash,
        panels=len(recording.panels),
        seconds=run,
    )


def _minute(stamp: str) -> str:
    """'2026-11-29T08:49:29.747889+00:00' -> '2026-11-29 08:49 UTC' (the recording keeps all)."""
    moment = datetime.fromisoformat(stamp).astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _nav_data(nav: SiteNav) -> Markup:
    """The sidebar as data for static/nav.js, rendered once: pages stay the same size however
    long the course."""
    arcs = [
        {
            "id": arc.id,
            "title": arc.title,
            "url": f"a/{arc.id}/",
            "lessons": [{"id": x.id, "title": x.title, "url": x.url} for x in arc.lessons],
        }
        for arc in nav.arcs
    ]
    return Markup(json.dumps(arcs, ensure_ascii=True, separators=(",", ":"), sort_keys=True))
