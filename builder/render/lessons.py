"""Course + recordings -> the lesson pages and their charts, as artifacts (builder.pipeline.make).

For each lesson, what its artifacts are made from (`LessonUnit`, `units`) and what it makes
of them (`make`); each artifact is a function and exactly the values it is made from
(`Renderer.artifact`), so the same inputs give byte-identical files. The site's other pages
are builder/render/pages.py's; nothing here reads or writes site/.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from markdown_it.token import Token
from markupsafe import Markup

from ..core import machine
from ..core.artifact import Artifact, Made, Searched, Trace
from ..core.errors import ContentError, RenderError
from ..core.observe import RECORDED
from ..course.addresses import page_url
from ..course.files import read_file
from ..course.fingerprint import sha256
from ..course.model import Course, CourseMeta, Lesson
from ..course.recording import Panel, Recording
from ..course.status import LessonStatus
from . import anchors, charts, figures, notebook, offline, prose, reading
from . import marks as recorded
from .elsewhere import Elsewhere, elsewhere
from .links import Links
from .nav import NavItem, SiteHead, SiteNav, site_head
from .notebook import PAGE
from .notebook_prose import Prose
from .renderer import Renderer, page

SHIM = "static/builder.py"  # `from builder import panels` for a downloaded example
_IMPORTS_BUILDER = re.compile(rb"^[^\S\n]*(?:from\s+builder[\s.]|import\s+builder\b)", re.MULTILINE)


@dataclass(frozen=True)
class RunIt:
    """The "Run it yourself" block: what to download and the commands that run the example
    as it was recorded."""

    files: list[tuple[str, str]]  # (href, file name), all into one folder
    shim: bool  # the example imports `builder`: builder.py is one of the files
    install: str  # pip install with the recording's exact versions ("" if not recorded)
    command: str  # the lesson's env: settings, then python example.py
    cited_as: str  # the name positions in the recorded output use, if they cite the example
    answer: bool = False  # the example is a lab's answer: folded, like the solution
    stops_at: str = ""  # the first `raises` cell: a run by hand stops there (builder/cells.py)
    python: str = ""  # the Python the recording ran with ("3.11.7"; "" if unknown)
    minor: str = ""  # its minor version ("3.11"), which the venv is made with
    venv: str = "python3 -m venv .venv"  # the command that makes a venv with that Python
    accelerator: str = ""  # "TPU" for a `requires: tpu` lesson: it runs there and nowhere else


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
    run: RunIt
    edit_url: str  # the lesson's lesson.md where course.yml's source_url says ("": none)
    colab_url: str  # its notebook in Colab, where course.yml's colab_url says ("": none)
    report_url: str  # a new issue about it, where course.yml's issues_url says ("": none)
    machine: str  # "Recorded on: <CPU>, <cores> · <OS> · Python · jaxlib · XLA_FLAGS" ("": none)
    # its arc's number, its number in that arc, and how many the arc has: "3.5", "5 of 7"
    place: tuple[int, int, int] = (0, 0, 0)
    teaches: tuple[tuple[str, str], ...] = ()  # the glossary terms it teaches: (id, term)
    minutes: int = 0  # how long its prose takes to read (builder/render/reading.py)
    scripts: tuple[str, ...] = ()  # what its widgets need of static/ (prose.RenderedProse)


# A lesson's artifacts: its page (with its notebook), each of its panels' charts by file name.
LessonArtifacts = tuple[Artifact, tuple[tuple[str, Artifact], ...]]
A = TypeVar("A")


@dataclass(frozen=True)
class Common:
    """What every lesson's artifacts are made with besides its own."""

    head: SiteHead
    links: Links
    meta: CourseMeta
    root: Path
    renderer: Renderer

    @classmethod
    def of(cls, course: Course, renderer: Renderer, links: Links | None = None) -> Common:
        """`links`: Links.of(course), when made already."""
        links = Links.of(course) if links is None else links
        return cls(site_head(course), links, course.meta, course.root, renderer)


@dataclass(frozen=True)
class LessonUnit:
    """What a lesson's artifacts are made from besides what every lesson's are (`Common`):
    the lesson (its data files by their digests), its status, the machine its recording ran
    on and the Python it ran with (as its sidecar says them), the navigation entries of the
    lessons before and after it (what its page shows of them: a prose edit of one changes
    neither), the ids of the lessons its anchored links lead to (so renaming a heading
    re-renders the pages that link to it, and no other), and its place in the course: its
    arc's number (among the arcs that have lessons, as the sidebar counts), its number in
    that arc and the arc's size (the page says "Lesson 3.2 (2 of 4 in Tracing)")."""

    lesson: Lesson
    status: LessonStatus
    on: str = ""
    python: str = ""
    before: NavItem | None = None
    after: NavItem | None = None
    linked: tuple[tuple[str, tuple[str, ...]], ...] = ()
    place: tuple[int, int, int] = (0, 0, 0)


def units(
    course: Course,
    statuses: list[LessonStatus],
    sidecars: dict[str, Any] | None,
    common: Common,
    nav: SiteNav,
    only: Collection[str] | None = None,
) -> list[LessonUnit]:
    """Each lesson's unit (of those in `only`, by id, when given), in course order;
    `sidecars`: what each recording's sidecar says, by lesson id
    (builder.course.rules.read_inputs); `nav`: the course's navigation (the lessons before
    and after each are its entries)."""
    by_id, lessons, sidecars = {s.lesson_id: s for s in statuses}, course.lessons, sidecars or {}
    entries, places, last = nav.items(), nav.places, len(lessons) - 1
    at = [n for n, x in enumerate(lessons) if only is None or x.id in only]
    chosen = [lessons[n] for n in at]
    linked = anchors.linked_ids(course, statuses, common.renderer.page_ids, lessons=chosen)
    return [
        LessonUnit(
            x,
            by_id[x.id],
            *_ran(by_id[x.id], sidecars),
            entries[lessons[n - 1].id] if n > 0 else None,
            entries[lessons[n + 1].id] if n < last else None,
            ids,
            places[x.id],
        )
        for n, x, ids in zip(at, chosen, linked, strict=True)
    ]


def _ran(status: LessonStatus, sidecars: dict[str, Any]) -> tuple[str, str]:
    """The machine the lesson's recording ran on, as its page says it (builder/core/
    machine.py), and the Python version it ran with, which Run it yourself names."""
    if status.recording is None:
        return "", ""
    facts = machine.of(sidecars.get(status.lesson_id))
    return machine.sentence(facts), machine.python(facts)


def unrecorded_problems(
    course: Course, statuses: list[LessonStatus], lessons: Iterable[Lesson]
) -> list[RenderError]:
    """Every problem of `lessons`' prose that no recording can change (foreign syntax, a
    dangling link, a glossary term or a cell that does not exist, a bad placement): each
    rendered as its page would be before its recording is made (`pending`), where a recorded
    mark checks nothing of the run. What a build about to record them reports first."""
    pending = {lesson.id for lesson in lessons}
    ids = anchors.linked_ids(course, statuses, Renderer().page_ids, pending)
    linked, links = dict(zip((x.id for x in course.lessons), ids, strict=True)), Links.of(course)
    return [
        error
        for lesson in course.lessons
        if lesson.id in pending
        for error in prose.render_prose(
            lesson, links, None, "../../", linked=linked[lesson.id], pending=True
        )[1]
    ]


def in_order(made: Iterable[tuple[A, tuple[tuple[str, A], ...]]]) -> list[A]:
    """Each lesson's page, then the charts of its panels that no lesson before it shows
    (one artifact a drawing, its files shared by every page that shows it)."""
    artifacts: list[A] = []
    shown: set[str] = set()  # the charts so far, by their file's name
    for lesson_page, panels in made:
        artifacts.append(lesson_page)
        for name, chart in panels:
            if name not in shown:
                shown.add(name)
                artifacts.append(chart)
    return artifacts


def make(common: Common, unit: LessonUnit) -> LessonArtifacts:
    """A lesson's page (with its notebook), and each of its panels' charts by file name."""
    lesson, status = unit.lesson, unit.status
    meta, renderer = common.meta, common.renderer
    page = renderer.artifact(
        "page",
        _lesson_page,
        common.head,
        common.links,
        lesson,
        status,
        meta,
        (unit.before, unit.after),
        elsewhere(meta, common.root, lesson, status.recording),
        renderer,
        unit.on,
        unit.linked,
        unit.place,
        unit.python,
        label=lesson.id,
    )
    return page, _chart_artifacts(lesson, status, renderer)


def _data(lesson: Lesson) -> dict[str, bytes]:
    """The data files the page offers for download beside the example, by their site names:
    the bytes the lesson's digests (in the page's key) name, or an error when one changed
    since the lesson was loaded (build again)."""
    files = {}
    for name, digest in lesson.data:
        files[f"{lesson.url}{name}"] = data = read_file(lesson.folder / name, None)
        if sha256(data) != digest:
            problem = "changed while the build was reading the course"
            raise ContentError(problem, path=lesson.folder / name, hint="build again")
    return files


def run_it(lesson: Lesson, recording: Recording | None, root: str, python: str = "") -> RunIt:
    """The block's files and commands; `python`: the version the recording ran with
    (machine.python), which the venv line names."""
    example = recorded.EXAMPLE_FILE
    shim = bool(_IMPORTS_BUILDER.search(lesson.source))
    files = [(example, example), *((name, name) for name in lesson.meta.data)]
    if shim:
        files.append((f"{root}{SHIM}", "builder.py"))
    install = ""
    cited = ""
    if recording is not None:
        env = recording.environment
        pins = {"jax": env.jax, "numpy": env.numpy, "matplotlib": env.matplotlib}
        install = "pip install " + " ".join(_pin(p, pins[p], lesson) for p in RECORDED)
        name = f"{lesson.id}-example"
        cited = name if f"{name}:" in recording.stdout else ""
    settings = [f"{key}={shlex.quote(value)}" for key, value in lesson.meta.env.items()]
    command = " ".join([*settings, "python", example])
    stops_at = next((cell.name for cell in lesson.cells if cell.raises is not None), "")
    minor = ".".join(python.split(".")[:2])
    venv = f"python{minor or '3'} -m venv .venv"
    return RunIt(
        files,
        shim,
        install,
        command,
        cited,
        stops_at=stops_at,
        python=python,
        minor=minor,
        venv=venv,
        accelerator=(lesson.accelerator or "").upper(),
    )


def _pin(package: str, version: str, lesson: Lesson) -> str:
    """`jax==0.10.2`; for a `requires: tpu` lesson jax's TPU build, `"jax[tpu]==0.10.2"`
    (quoted: a shell would read the brackets as a pattern), which brings the TPU runtime."""
    if package == "jax" and lesson.accelerator == "tpu":
        return f'"jax[tpu]=={version}"'
    return f"{package}=={version}"


def _chart_artifacts(
    lesson: Lesson, status: LessonStatus, renderer: Renderer
) -> tuple[tuple[str, Artifact], ...]:
    """Each panel's chart, in both themes and sizes, by its file's name: keyed by what it
    draws (not the title), as its files are named (figures.chart_file)."""
    artifacts = []
    for panel in status.recording.panels if status.recording else []:
        drawn = charts.drawn(panel)
        chart = renderer.artifact("chart", _chart, drawn, renderer, label=lesson.id)
        artifacts.append((figures.chart_file(drawn, "light"), chart))
    return tuple(artifacts)


def _notebook(
    meta: CourseMeta,
    lesson: Lesson,
    recording: Recording | None,
    links: Links,
    tokens: tuple[Token, ...],
) -> dict[str, bytes]:
    """The lesson as a notebook: its prose (cut from `tokens`, the parse its page was
    rendered from) between its code cells, with their recorded outputs
    (builder/render/notebook.py)."""
    files = tuple(name for _, name in run_it(lesson, recording, "").files[1:])  # all but .py
    settings = tuple(f"{key}={shlex.quote(value)}" for key, value in lesson.meta.env.items())
    made = notebook.example_notebook(
        lesson.url,
        lesson.title,
        meta.title,
        lesson.source,
        (files, settings),
        recording.stdout if recording else None,
        figures.provenance(recording) if recording else "",
        page_url(site, f"{lesson.url}index.html") if (site := meta.site_url) else PAGE,
        lesson.cells,
        tuple(recording.cells or ()) if recording else (),
        Prose(lesson, tokens, links, recording, meta.site_url or ""),
    )
    return made.files or {}


def _chart(panel: Panel, renderer: Renderer) -> Made:
    """The chart in each theme, wide and for a phone, in the files figures.chart_file names."""
    files: dict[str, bytes] = {}
    for size, svgs in renderer.chart(panel).items():
        narrow = size == "narrow"
        files |= {figures.chart_file(panel, t, narrow): svgs[t] for t in charts.THEMES}
    return Made(files)


def _lesson_page(
    head: SiteHead,
    links: Links,
    lesson: Lesson,
    status: LessonStatus,
    meta: CourseMeta,
    near: tuple[NavItem | None, NavItem | None],
    links_out: Elsewhere,
    renderer: Renderer,
    on: str = "",
    linked: tuple[tuple[str, tuple[str, ...]], ...] = (),
    place: tuple[int, int, int] = (0, 0, 0),
    python: str = "",
) -> Made:
    """A lesson's page, its example, its data files and its notebook: made from these
    arguments (the data files' bytes read as their digests in `lesson` name them), the
    prose parsed once for the page and the notebook."""
    recording = status.recording
    arc = next(arc for arc in meta.arcs if arc.id == lesson.meta.arc)
    root = "../../"
    rendered, errors = prose.render_prose(
        lesson, links, recording, root, renderer.highlight, renderer.size, linked
    )
    unplaced = figures.unplaced_panels(recording, rendered.placed_panels, root, renderer.size)
    body = Markup(rendered.html) + unplaced
    content = LessonPage(
        title=lesson.title,
        label=lesson.title,  # the breadcrumb's last step: readers know titles, not ids
        arc_title=arc.title,
        arc_url=f"a/{lesson.meta.arc}/",
        body=body,
        toc=rendered.toc,
        provenance=figures.provenance(recording) if recording else "Not recorded yet",
        notice="" if status.fresh else _notice(status),
        prev=near[0],
        next=near[1],
        run=replace(run_it(lesson, recording, root, python), answer=rendered.reveals),
        edit_url=links_out.edit,
        colab_url=links_out.colab,
        report_url=links_out.report,
        machine=on,
        place=place,
        teaches=links.taught_in(lesson.id),
        minutes=reading.reading_minutes(rendered.words),
        scripts=rendered.scripts,
    )
    html, parts = page(
        "lesson.html",
        head,
        path=f"{lesson.url}index.html",
        root=root,
        title=lesson.title,
        current=lesson.id,
        page=content,
        description=lesson.meta.summary,
    )
    files = {
        f"{lesson.url}index.html": html,
        f"{lesson.url}{recorded.EXAMPLE_FILE}": lesson.source,  # the code figures' download link
        **_data(lesson),  # and the data files it reads, beside it as when it was recorded
        **_notebook(meta, lesson, recording, links, rendered.tokens),
    }
    searched = _searched(lesson.title, content.teaches, rendered, recording)
    trace = Trace(terms=tuple(rendered.terms), page=parts, searched=searched)
    return Made(files, trace, tuple(errors))


def _searched(
    title: str,
    teaches: tuple[tuple[str, str], ...],
    rendered: prose.RenderedProse,
    recording: Recording | None,
) -> Searched:
    """What a search finds on a lesson's page: the sentence saying what it teaches, its prose
    as rendered, then the panels the prose does not place (figures.unplaced_panels)."""
    terms = [term for _, term in teaches]
    listed = [", ".join(terms[:-1]), terms[-1]] if len(terms) > 1 else terms
    said = f"Teaches {' and '.join(listed)}." if terms else ""
    panels = recording.panels if recording else ()
    unplaced = [p.title for n, p in enumerate(panels, 1) if n not in rendered.placed_panels]
    more = " ".join(["Recorded panels", *unplaced]) if unplaced else ""
    return Searched(title, ", ".join(terms), offline.sections(rendered.found, said, more))


def _notice(status: LessonStatus) -> str:
    if status.waiting:
        return (
            f"this lesson {status.state} to be recorded ({status.detail}). What it shows "
            "is from an earlier run, if any; record it there (docs/recordings.md)."
        )
    if status.recording is None:
        return f"this lesson's recording is {status.state} ({status.detail}). Run `make record`."
    return (
        f"this lesson's recording is {status.state}: {status.detail}. What it shows is from an "
        "earlier run; run `make record` to bring it up to date."
    )
