"""Course + recordings -> every file of the site, in memory, as bytes.

Pure apart from reading templates and the chart cache: nothing here writes site/.
The same inputs give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from . import charts, highlight, prose, search
from .course import Arc, Course, GlossaryTerm, Lesson
from .errors import BuildError, raise_all
from .status import LessonStatus

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
THEMES = ("light", "dark")


LessonFiles = tuple[dict[str, bytes], list[str], list[BuildError]]
LessonMap = Callable[[Course, list[LessonStatus], Path | None], list[LessonFiles]]


@dataclass(frozen=True)
class NavItem:
    id: str
    title: str
    url: str
    summary: str
    label: str


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


@dataclass(frozen=True)
class LessonPage:
    title: str
    label: str
    arc_title: str
    arc_url: str
    body: Markup
    toc: list[tuple[int, str, str]]
    provenance: str
    notice: str
    prev: NavItem | None
    next: NavItem | None


@dataclass(frozen=True)
class GlossaryEntry:
    id: str
    term: str
    definition: str
    teacher: NavItem
    used_in: list[NavItem]


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


def render_site(
    course: Course,
    statuses: list[LessonStatus],
    chart_cache: Path | None,
    run_seconds: dict[str, float] | None = None,
    lesson_map: LessonMap | None = None,
    reuse: Callable[[str, str], bool] | None = None,
    lessons_done: Callable[[dict[str, bytes]], None] | None = None,
) -> dict[str, bytes]:
    """Every file of the site by its path inside the site; raises all render errors at once.

    `run_seconds` (from recordings/_inputs.json) feeds the recordings page only.
    `lesson_map` renders the lesson pages (default: `render_lessons`, one by one);
    builder.buildcache passes one that reuses cached pages and renders the rest in parallel.
    `reuse(name, key)` says whether the site already holds the page `name` as made from
    `key`, a hash of everything the template is given; such a page is left out.
    `lessons_done(files)` is called with the lesson pages' files before the other pages
    are rendered (builder.site starts indexing them for search then).
    """
    nav = _nav(course)
    files: dict[str, bytes] = {}
    errors: list[BuildError] = []
    terms_used: dict[str, list[str]] = {}
    rendered = (lesson_map or render_lessons)(course, statuses, chart_cache)
    for lesson, (lesson_files, used, lesson_errors) in zip(course.lessons, rendered, strict=True):
        files |= lesson_files
        errors += lesson_errors
        for term in used:
            terms_used.setdefault(term, []).append(lesson.id)
    raise_all(errors)
    if lessons_done is not None:
        lessons_done(dict(files))
    shared = _key(nav) if reuse else ""

    def page(name: str, template: str, **context: Any) -> None:
        if reuse is not None and reuse(name, _key(shared, template, sorted(context.items()))):
            return
        files[name] = _page(template, nav, **context)

    def big_page(name: str, template: str, made_of: Any, context: Callable[[], Any]) -> None:
        """A page whose context is costly to build: keyed by `made_of`, everything its
        `context()` is made from besides the navigation, and built only when rendered."""
        if reuse is not None and reuse(name, _key(shared, template, made_of)):
            return
        files[name] = _page(template, nav, **context())

    page(
        "index.html",
        "home.html",
        root="",
        title="Course",
        current="",
        description=course.meta.summary,
    )
    for arc in nav.arcs:
        page(
            f"a/{arc.id}/index.html",
            "arc.html",
            root="../../",
            title=arc.title,
            current=f"arc:{arc.id}",
            arc=arc,
            description=arc.summary,
        )
    big_page(
        "glossary/index.html",
        "glossary.html",
        ([(t.id, t.term, t.definition, t.taught_in) for t in course.glossary], terms_used),
        lambda: _glossary(course, terms_used),
    )
    big_page(
        "recordings/index.html",
        "recordings.html",
        _recordings_made_of(course, statuses, run_seconds),
        lambda: _recordings(course, statuses, run_seconds),
    )
    page(
        "search/index.html",
        "search.html",
        root="../",
        title="Search",
        current="",
        description="Full-text search over lessons and glossary.",
        merged=[search.bundle_folder(bundle) for bundle in search.bundles(course) if bundle],
    )
    page(
        "404.html",
        "404.html",
        root="",
        title="Page not found",
        current="",
        description="There is no page at this address.",
    )
    files |= _static()
    page("static/nav.js", "nav.js", data=_nav_data(nav), root="", current="")
    return files


def _key(*parts: Any) -> str:
    """A digest of `parts` by value. Not pickle: its bytes depend on which equal strings
    happen to be one object (its memo), and that differs between a build from nothing and
    one that took most lessons from the state, so keys differed for the same page."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def render_lessons(
    course: Course,
    statuses: list[LessonStatus],
    chart_cache: Path | None,
    indices: list[int] | None = None,
) -> list[LessonFiles]:
    """The files, glossary terms used and errors of each lesson (those at `indices`).

    What a lesson page shows is listed in builder/buildcache.py's page key: keep the two
    in step when a page starts showing something new.
    """
    nav = _nav(course)
    by_id = {status.lesson_id: status for status in statuses}
    lessons = course.lessons
    files = [
        _lesson_files(course, nav, lessons[i], i, by_id[lessons[i].id], chart_cache)
        for i in (range(len(lessons)) if indices is None else indices)
    ]
    charts.save_drawn()
    return files


def _item(lesson: Lesson) -> NavItem:
    return NavItem(lesson.id, lesson.title, lesson.url, lesson.meta.summary, lesson.id.upper())


_navs: list[tuple[Course, SiteNav]] = []  # the last course's, kept with it (not by id)


def _nav(course: Course) -> SiteNav:
    if _navs and _navs[0][0] is course:
        return _navs[0][1]
    by_arc = course.by_arc()
    arcs = [
        NavArc(arc.id, arc.title, arc.summary, [_item(x) for x in by_arc[arc.id]])
        for arc in course.meta.arcs
    ]
    nav = SiteNav(course.meta.title, course.meta.summary, [arc for arc in arcs if arc.lessons])
    _navs[:] = [(course, nav)]
    return nav


def _lesson_files(
    course: Course,
    nav: SiteNav,
    lesson: Lesson,
    index: int,
    status: LessonStatus,
    chart_cache: Path | None,
) -> tuple[dict[str, bytes], list[str], list[BuildError]]:
    recording = status.recording
    rendered, errors = prose.render_prose(lesson, course, recording, root="../../")
    body = rendered.html
    unplaced = [
        n
        for n in range(1, len(recording.panels) + 1 if recording else 1)
        if n not in rendered.placed_panels
    ]
    if recording and unplaced:
        body += (
            '<section class="more-panels"><h2>Recorded panels</h2>'
            + "".join(prose.figure_html(recording, n) for n in unplaced)
            + "</section>"
        )
    lessons = course.lessons
    page = LessonPage(
        title=lesson.title,
        label=lesson.id.upper(),
        arc_title=_arc(course, lesson).title,
        arc_url=f"a/{lesson.meta.arc}/",
        body=Markup(body),
        toc=rendered.toc,
        provenance=prose.provenance(recording) if recording else "Not recorded yet",
        notice="" if status.fresh else _notice(status),
        prev=_item(lessons[index - 1]) if index > 0 else None,
        next=_item(lessons[index + 1]) if index + 1 < len(lessons) else None,
    )
    base = f"l/{lesson.slug}/"
    files = {
        f"{base}index.html": _page(
            "lesson.html",
            nav,
            root="../../",
            title=lesson.title,
            current=lesson.id,
            page=page,
            description=lesson.meta.summary,
        )
    }
    files[f"{base}{prose.EXAMPLE_FILE}"] = lesson.source  # the code figures' download link
    for number, panel in enumerate(recording.panels if recording else [], start=1):
        for theme in THEMES:
            name = prose.panel_file(number, theme)
            files[f"{base}{name}"] = charts.bar_svg(panel, theme, chart_cache)
    return files, rendered.terms, list(errors)


def _arc(course: Course, lesson: Lesson) -> Arc:
    return next(a for a in course.meta.arcs if a.id == lesson.meta.arc)


def _notice(status: LessonStatus) -> str:
    if status.recording is None:
        return f"this lesson's recording is {status.state} ({status.detail}). Run `make record`."
    return (
        f"this lesson's recording is {status.state}: {status.detail}. What it shows is from an "
        "earlier run; run `make record` to bring it up to date."
    )


def _glossary(course: Course, terms_used: dict[str, list[str]]) -> dict[str, Any]:
    """The glossary page's context."""
    by_id = {lesson.id: lesson for lesson in course.lessons}  # not a scan per term

    def entry(term: GlossaryTerm) -> GlossaryEntry:
        teacher = by_id[term.taught_in]
        # terms_used lists users in course order, a lesson once per use: keep the first.
        used = [_item(by_id[x]) for x in dict.fromkeys(terms_used.get(term.id, ()))]
        return GlossaryEntry(term.id, term.term, term.definition, _item(teacher), used)

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
        return RecordingRow(_item(lesson), status.state, status.detail, "", "", "", "", None, run)
    env = recording.environment
    return RecordingRow(
        lesson=_item(lesson),
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


def _static() -> dict[str, bytes]:
    static = TEMPLATES / "static"
    files = {f"static/{p.name}": p.read_bytes() for p in sorted(static.iterdir()) if p.is_file()}
    files["static/pygments.css"] = highlight.stylesheet().encode()
    return files


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


_compiled: list[Path] = []  # where Jinja2 keeps compiled templates, if anywhere


def keep_compiled_templates(folder: Path | None) -> None:
    """Keep compiled templates in `folder` (Jinja2 checks each against its source), or
    nowhere: a build that renders a few pages would spend a third of its rendering
    compiling templates."""
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    _compiled[:] = [folder] if folder is not None else []
    _environment.cache_clear()


@cache
def _environment() -> Environment:
    from jinja2 import FileSystemBytecodeCache

    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        bytecode_cache=FileSystemBytecodeCache(str(_compiled[0])) if _compiled else None,
    )


def _page(template: str, nav: SiteNav, **context: Any) -> bytes:
    html = _environment().get_template(template).render(site=nav, **context)
    return html.encode("utf-8")
