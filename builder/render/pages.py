"""Course + recordings -> the site's pages other than lessons, and its static files, as
artifacts (builder.pipeline.make): the course home, arc pages, glossary, recordings page, search
page, 404 page, a redirect at each lesson's old address (`aliases:`), the sidebar's data
(static/nav.js), the style sheets and scripts, and the one-file `builder.py` a downloaded
example imports its panels from.

Each is made by a function of exactly its arguments, and keyed by them (Renderer.artifact),
so a prose edit re-renders none of them unless it changed what they are given (the glossary
page lists where each term is used).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup

from ..core.artifact import Artifact, Made, Parts, Searched, Trace
from ..core.observe import BUILDER, TEMPLATES, editor_file
from ..course.addresses import page_url
from ..course.files import read_file
from ..course.model import Course, GlossaryTerm
from ..course.recording import Recording
from ..course.status import LessonStatus
from . import printed, search, sitemap
from .highlight import stylesheet
from .lessons import SHIM
from .markup import code_spans
from .nav import NavItem, SiteHead, SiteNav, site_head
from .renderer import Renderer, page
from .theme import Theme

Used = dict[str, list[str]]  # glossary term -> the lessons whose pages use it


@dataclass(frozen=True)
class ChangesPage:
    """A page of what the recordings changed (builder.review.page): the What-changed page
    (`--since REV`) or an environment move's (course.yml `moves:`). `context(nav, *args)`
    makes its template's context; the home page links it with the words `link`."""

    name: str  # changes/index.html, moves/<slug>/index.html
    link: str
    context: Callable[..., dict[str, Any]]
    args: tuple[Any, ...]


@dataclass(frozen=True)
class GlossaryEntry:
    id: str
    term: str
    definition: Markup  # its `name`s in code font
    teacher: NavItem
    used_in: list[NavItem]  # the other lessons that use it, in course order


@dataclass(frozen=True)
class GlossaryLetter:
    """The terms that start with one letter (the glossary's A-Z index leads to each)."""

    id: str  # "letter-a"
    letter: str
    entries: list[GlossaryEntry]


@dataclass(frozen=True)
class RecordingRow:
    lesson: NavItem
    state: str
    detail: str
    recorded: str
    provenance: str
    environment: str
    content_hash: str
    panels: int | None
    seconds: str


def page_artifacts(
    course: Course,
    nav: SiteNav,
    statuses: list[LessonStatus],
    uses: TermUses,
    run_seconds: dict[str, float],
    renderer: Renderer,
    changes: tuple[ChangesPage, ...] = (),
    built: str = "",
) -> list[Artifact]:
    """Every page but the lessons', then the static files. `nav`: the course's navigation
    (`site_nav`); `uses`: the glossary terms each lesson page uses (`terms_used`);
    `run_seconds` is each example's last run time (the recordings page shows it);
    `changes` are the pages of what the recordings changed (`--since REV`, course.yml
    `moves:`); `built` is the revision the site is built from (the footer says it)."""
    lessons = course.lessons
    lesson_statuses = tuple(statuses[: len(lessons)])  # in course order, then the orphans
    seconds = tuple(run_seconds.get(x.id) for x in lessons)
    listings = [
        renderer.artifact("", _glossary, nav, course.glossary, uses),
        renderer.artifact("", _recordings, nav, lesson_statuses, seconds),
    ]
    listings += [
        renderer.artifact("", _context_page, x.name, "changes.html", nav, x.context, *x.args)
        for x in changes
    ]
    links = tuple((x.name, x.link) for x in changes)
    printable = (printed.PAGE,) if course.meta.print_page else ()
    return [
        *_navigation(course, nav, renderer, links, built),
        *listings,
        *_redirects(course, renderer),
        *sitemap.artifacts(nav, renderer, tuple(x.name for x in changes) + printable),
        *_static(renderer, nav.theme),
    ]


def _page(name: str, template: str, nav: SiteNav | SiteHead, context: dict[str, Any]) -> Made:
    return _made(name, *page(template, nav, name, **context))


def _context_page(
    name: str, template: str, nav: SiteNav, context: Callable[..., dict[str, Any]], *args: Any
) -> Made:
    """The page `name`, with the context that `context(nav, *args)` makes."""
    return _made(name, *page(template, nav, name, **context(nav, *args)))


def _made(name: str, html: bytes, parts: Parts | None) -> Made:
    return Made({name: html}, Trace(page=parts))


def _navigation(
    course: Course,
    nav: SiteNav,
    renderer: Renderer,
    changes: tuple[tuple[str, str], ...] = (),
    built: str = "",
) -> list[Artifact]:
    """The home, arc, search and 404 pages, and the sidebar's data; the home page links
    `changes` (each page's file and the link's words), the pages of what the recordings
    changed that this build makes."""
    bundles = [search.bundle_folder(b) for b in search.bundles(course)]
    meta = course.meta
    root = urlsplit(meta.site_url).path.rstrip("/") + "/" if meta.site_url else ""  # for 404
    missing = {"site_root": root, "site_folders": top_folders(course)}
    more: dict[str, Any] = {"note": meta.note, "audience": meta.audience, "changes": changes}
    more["print_page"] = meta.print_page
    home = _context("", "Course", "", meta.summary, **more)
    arcs = [
        (arc.id, _context("../../", arc.title, f"arc:{arc.id}", arc.summary, arc=arc))
        for arc in nav.arcs
    ]
    # the sidebar's data, and the revision the site was built from (the footer says it): in
    # this one small file, so that a new commit re-renders no page
    data = {"data": nav.data, "built": Markup(json.dumps(built))}
    script = {**data, "search": Markup(json.dumps(bundles)), "root": "", "current": ""}
    pages = [
        ("index.html", "home.html", home),
        *((f"a/{arc}/index.html", "arc.html", context) for arc, context in arcs),
        ("search/index.html", "search.html", _context("../", "Search", "", SEARCH)),
        ("404.html", "404.html", _context("", "Page not found", "", NOT_FOUND, **missing)),
        ("static/nav.js", "nav.js", script),
    ]
    return [renderer.artifact("", _page, name, tpl, nav, context) for name, tpl, context in pages]


# The site's top folders a reader's address may lead into, besides its lessons' (404.html).
FOLDERS = ("a", "glossary", "search", "print", "moves", "recordings", "charts", "static")


def top_folders(course: Course) -> list[str]:
    """The folders at the site's root that hold its pages and files: what tells the 404
    page, served at /course/l/old-slug/, that its root is /course/."""
    return sorted({*FOLDERS, *(x.url.split("/")[0] for x in course.lessons)})


SEARCH = "Full-text search over lessons and glossary."
NOT_FOUND = "There is no page at this address."
GLOSSARY = "Every term of the course and where it is taught."
RECORDINGS = "Every lesson's recording at a glance."


def _context(root: str, title: str, current: str, description: str, **more: Any) -> dict[str, Any]:
    """What every page's template is given (its way to the site's root, its title, the
    navigation entry it is, its description), and `more`."""
    return {"root": root, "title": title, "current": current, "description": description, **more}


def _redirects(course: Course, renderer: Renderer) -> list[Artifact]:
    """A small page at each old address of a renamed lesson (its `aliases:`), sending the
    reader on to where it lives now, as mkdocs-redirects and Hugo's aliases do."""
    head = site_head(course)
    artifacts = []
    for lesson in (x for x in course.lessons if x.meta.aliases):  # few: the rest cost nothing
        target = f"../{lesson.slug}/index.html"  # from l/<alias>/ to l/<slug>/
        # its canonical address: the lesson's, absolute when the site's address is known
        moved = page_url(head.url, f"{lesson.url}index.html") if head.url else target
        for old in lesson.alias_urls:
            context = {"title": lesson.title, "slug": lesson.slug, "target": target, "moved": moved}
            artifacts.append(
                renderer.artifact("", _page, f"{old}index.html", "redirect.html", head, context)
            )
    return artifacts


@dataclass(frozen=True)
class TermUses:
    """The glossary terms the lesson pages use, as two columns in the order the pages were
    made (course order): each page's file names and its terms."""

    names: tuple[tuple[str, ...], ...]
    terms: tuple[tuple[str, ...], ...]


def terms_used(made: Iterable[Made]) -> TermUses:
    """The terms each made page uses (those that use none left out)."""
    using = [result for result in made if result.trace.terms]
    names = tuple(result.trace.names or tuple(result.files or ()) for result in using)
    return TermUses(names, tuple(result.trace.terms for result in using))


def _used(nav: SiteNav, uses: TermUses) -> Used:
    """For each glossary term, the lessons whose pages use it, in course order, a lesson
    once per use."""
    by_page = {f"{x.url}index.html": x.id for x in nav.items().values()}
    used: Used = {}
    for names, terms in zip(uses.names, uses.terms, strict=True):
        for lesson in (by_page[n] for n in names if n in by_page):
            for term in terms:
                used.setdefault(term, []).append(lesson)
    return used


def _static(renderer: Renderer, theme: Theme) -> list[Artifact]:
    """templates/static/ as it is, the course's static files over it by name, and the
    highlighting's style sheet (Pygments' version is in every key)."""
    folder = sorted((TEMPLATES / "static").iterdir())
    own = {f"static/{p.name}": p for p in folder if p.is_file() and not editor_file(p.name)}
    files = own | theme.static()
    return [
        *(renderer.artifact("", _file, name, read_file(p, None)) for name, p in files.items()),
        renderer.artifact("", _stylesheet),
        renderer.artifact("", _shim),
    ]


def _file(name: str, data: bytes) -> Made:
    return Made({name: data})


def _stylesheet() -> Made:
    return Made({"static/pygments.css": stylesheet().encode()})


def _shim() -> Made:
    return Made({SHIM: shim()})  # builder/ is in every key


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


def _glossary(nav: SiteNav, glossary: tuple[GlossaryTerm, ...], uses: TermUses) -> Made:
    """The glossary page: each term, the lesson that teaches it, the lessons that use it."""
    by_id, terms_used = nav.items(), _used(nav, uses)

    def entry(term: GlossaryTerm) -> GlossaryEntry:
        # terms_used lists users in course order, a lesson once per use: keep the first;
        # the lesson that teaches it is said already.
        users = dict.fromkeys(terms_used.get(term.id, ()))
        used = [by_id[x] for x in users if x != term.taught_in]
        definition = code_spans(term.definition)
        return GlossaryEntry(term.id, term.term, definition, by_id[term.taught_in], used)

    entries = sorted((entry(t) for t in glossary), key=lambda e: e.term.casefold())
    context = _context("../", "Glossary", "", GLOSSARY, letters=_by_letter(entries))
    made = _page("glossary/index.html", "glossary.html", nav, context)
    return replace(made, trace=replace(made.trace, searched=_glossary_searched(entries)))


def _glossary_searched(entries: list[GlossaryEntry]) -> Searched:
    """What a search finds on the glossary page (templates/glossary.html): each term is a
    section, its definition and the lessons that teach and use it its text."""

    def said(entry: GlossaryEntry) -> str:
        used = ", ".join(item.title for item in entry.used_in)
        elsewhere = f"also used in {used}" if used else "not used in other lessons yet"
        return f"{entry.definition.striptags()} Taught in {entry.teacher.title} · {elsewhere}"

    terms = tuple((e.id, e.term, said(e)) for e in entries)
    return Searched("Glossary", "", (("", "", "Glossary"), *terms))


def _by_letter(entries: list[GlossaryEntry]) -> list[GlossaryLetter]:
    """Sorted entries grouped by their first letter ("#" for a term that starts otherwise)."""
    letters: dict[str, list[GlossaryEntry]] = {}
    for entry in entries:
        first = entry.term[:1].upper()
        letters.setdefault(first if first.isalpha() and first.isascii() else "#", []).append(entry)
    return [
        GlossaryLetter("letter-" + ("other" if x == "#" else x.lower()), x, found)
        for x, found in sorted(letters.items(), key=lambda item: (item[0] == "#", item[0]))
    ]


def _recordings(
    nav: SiteNav, statuses: tuple[LessonStatus, ...], seconds: tuple[float | None, ...]
) -> Made:
    """The recordings page: a row for each lesson (its status, its last run time), in
    course order."""
    items = nav.items()
    rows = zip(statuses, seconds, strict=True)
    shown = [_recording_row(items[status.lesson_id], status, s) for status, s in rows]
    on, env = _shared(shown, "provenance"), _shared(shown, "environment")
    # what every row shares is said once above the table rather than on every row
    shown = [replace(row, provenance="" if on else row.provenance) for row in shown]
    shown = [replace(row, environment="" if env else row.environment) for row in shown]
    context = _context("../", "Recordings", "", RECORDINGS, rows=shown, on=on, env=env)
    return _page("recordings/index.html", "recordings.html", nav, context)


def _shared(rows: list[RecordingRow], field: str) -> str:
    """What every recording ran on ("CPU, 1 device") or with ("jax 0.9.2 · ..."), `field`,
    when it is the same for all of them ("" when not, or when none is recorded): a course
    of CPU and TPU lessons shares its packages, not its instrument."""
    said = {getattr(row, field) for row in rows if row.recorded}
    return said.pop() if len(said) == 1 else ""


def _instrument(recording: Recording) -> str:
    """'CPU', 'TPU v5 lite', 'GPU, 8 devices': the device's kind where it is known, and how
    many only where more than one (a column of a table that must fit a laptop; each
    lesson's page says it whole)."""
    env = recording.environment
    kind = env.deviceKind or recording.device
    return kind if env.deviceCount == 1 else f"{kind}, {recording.device_count}"


def _recording_row(lesson: NavItem, status: LessonStatus, seconds: float | None) -> RecordingRow:
    recording = status.recording
    run = f"{seconds:.2f} s" if isinstance(seconds, int | float) else "unknown"
    if recording is None:
        return RecordingRow(lesson, status.state, status.detail, "", "", "", "", None, run)
    env = recording.environment
    return RecordingRow(
        lesson=lesson,
        state=status.state,
        detail=status.detail,
        recorded=_minute(recording.generatedAt),
        provenance=_instrument(recording),
        environment=f"jax {env.jax} · numpy {env.numpy} · matplotlib {env.matplotlib}",
        content_hash=recording.contentHash,
        panels=len(recording.panels),
        seconds=run,
    )


def _minute(stamp: str) -> str:
    """'2026-11-29T08:49:29.747889+00:00' -> '2026-11-29 08:49 UTC' (the recording keeps all)."""
    moment = datetime.fromisoformat(stamp).astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")
