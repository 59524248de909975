"""Course + recordings -> the lesson pages and their charts, as artifacts (builder.build.make).

Each artifact is a function and exactly the values it is made from (`Renderer.artifact`),
keyed by their digest and the code's (templates and package versions included); making it
reads nothing else, so the same inputs give byte-identical files. The site's other
pages are builder/render/pages.py's; nothing here reads or writes site/.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..core import machine
from ..core.artifact import Artifact, Made, Trace
from ..core.observe import RECORDED
from ..course.addresses import page_url
from ..course.files import read_file
from ..course.model import Arc, Course, CourseMeta, Lesson
from ..course.recording import BarPanel, Recording
from ..course.status import LessonStatus, State
from . import charts, figures, notebook, prose
from . import marks as recorded
from .links import Links
from .nav import NavItem, SiteHead, item, site_head
from .notebook import PAGE
from .renderer import Renderer, page

SHIM = "static/builder.py"  # `from builder import panels` for a downloaded example
_IMPORTS_BUILDER = re.compile(rb"^\s*(?:from\s+builder[\s.]|import\s+builder\b)", re.MULTILINE)


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
    machine: str  # "Recorded on: <CPU>, <cores> · <OS> · Python · jaxlib · XLA_FLAGS" ("": none)


# A lesson's artifacts: its page, each of its panels' charts by file name, its notebook.
LessonArtifacts = tuple[Artifact, tuple[tuple[str, Artifact], ...], Artifact]
# What a build remembers of them (Digests.remember): their keys, in the same places.
LessonKeys = tuple[str, tuple[tuple[str, str], ...], str]


@dataclass(frozen=True)
class Common:
    """What every lesson's artifacts are made with besides its own: digested once a build."""

    head: SiteHead
    links: Links
    meta: CourseMeta
    root: Path
    renderer: Renderer


def lesson_artifacts(
    course: Course,
    statuses: list[LessonStatus],
    renderer: Renderer,
    sidecars: dict[str, Any] | None = None,
) -> list[Artifact]:
    """Each lesson's page, then the charts of its panels that no lesson before it shows
    (one artifact a drawing, its files shared by every page that shows it), then its
    notebook; `sidecars`: what each recording's sidecar says (the machine it ran on,
    builder/core/machine.py). A lesson whose arguments are those of the last build (the
    preview's: builder.core.artifact.Digests.again_each) has its artifacts as they were,
    told by identity with the other lessons' in one call, not a call a lesson; one whose
    arguments have the key an earlier build remembered (`_lesson`) has their keys."""
    digests = renderer.memo.digests
    # The last build's objects when they are the same (so that each lesson's arguments are
    # compared by identity).
    links = Links.of(course, renderer.targets)
    common = Common(site_head(course), links, course.meta, course.root, renderer)
    common = digests.kept(common, slot="lessons")
    by_id = {status.lesson_id: status for status in statuses}
    lessons = course.lessons
    made = digests.again_each(
        _lesson,
        [common] * len(lessons),
        lessons,
        [by_id[x.id] for x in lessons],
        [(sidecars or {}).get(x.id) for x in lessons],
        [None, *lessons[:-1]],  # the lesson before each
        [*lessons[1:], None],  # and after
        slot="lessons",
    )
    artifacts: list[Artifact] = []
    shown: set[str] = set()  # the charts made so far, by their file's name
    for lesson_page, panels, book in made:
        artifacts.append(lesson_page)
        for name, chart in panels:
            if name not in shown:
                shown.add(name)
                artifacts.append(chart)
        artifacts.append(book)
    return artifacts


def _lesson(
    common: Common,
    lesson: Lesson,
    status: LessonStatus,
    sidecar: Any,
    before: Lesson | None,
    after: Lesson | None,
) -> LessonArtifacts:
    """`_of_lesson`, given what the lesson's artifacts read besides it and its status: its
    data files, the machine its recording ran on (from its sidecar), and the navigation
    entries of the lessons before and after it (what the page shows of them: a prose edit
    of one changes neither). Or, when an earlier build made them from arguments of the
    same key (builder.build.index keeps what each build remembers), artifacts of those
    keys, each made again only if neither the site nor the store holds it. The key is
    digested from what the index kept digests of (the lesson, its status) and the common
    arguments (once a build): a one-shot prose edit makes one key a lesson, not three
    (page, charts, notebook) from all their arguments."""
    on = machine.sentence(machine.of(sidecar)) if status.recording else ""
    near = (item(before) if before else None, item(after) if after else None)
    args = (common, lesson, _data(lesson), status, on, *near)
    digests = common.renderer.memo.digests
    key = digests.key(_of_lesson, args)
    keys: LessonKeys | None = digests.recall(lesson.id, key)
    if keys is not None:
        page_key, chart_keys, book_key = keys
        return (
            _again(page_key, "page", args, "page"),
            tuple((name, _again(k, "chart", args, name)) for name, k in chart_keys),
            _again(book_key, "notebook", args, "notebook"),
        )
    made = _of_lesson(*args)
    lesson_page, panels, book = made
    chart_keys = tuple((name, chart.key) for name, chart in panels)
    digests.remember(lesson.id, key, (lesson_page.key, chart_keys, book.key))
    return made


def _again(key: str, kind: str, args: tuple[Any, ...], which: str) -> Artifact:
    """An artifact remembered by its key, made by `_made_again` if it must be made."""
    return Artifact(key, partial(_made_again, args, which), kind, args[1].id)


def _made_again(args: tuple[Any, ...], which: str) -> Made:
    """A lesson's page, its notebook, or one of its charts (by its file's name), made."""
    lesson_page, panels, book = _of_lesson(*args)
    return ({"page": lesson_page, "notebook": book} | dict(panels))[which].make()


def _of_lesson(
    common: Common,
    lesson: Lesson,
    data: tuple[tuple[str, bytes], ...],
    status: LessonStatus,
    on: str,
    before: NavItem | None,
    after: NavItem | None,
) -> LessonArtifacts:
    """A lesson's page, each of its panels' charts by file name, and its notebook; `data`:
    the data files the page offers (read by the caller: an argument, as all it reads);
    `on`: the machine its recording ran on, as the page says it (builder/core/machine.py);
    `before` and `after`: the entries of the lessons the page links to as the previous and
    the next (a prose edit of one changes neither)."""
    meta, renderer = common.meta, common.renderer
    page = renderer.artifact(
        "page",
        _lesson_page,
        common.head,
        common.links,
        lesson,
        data,
        status,
        next(arc for arc in meta.arcs if arc.id == lesson.meta.arc),
        (before, after),
        _edit_url(meta, common.root, lesson),
        renderer,
        on,
        label=lesson.id,
    )
    panels = _chart_artifacts(lesson, status, renderer)
    return page, panels, _notebook_artifact(meta, lesson, status, renderer)


def _data(lesson: Lesson) -> tuple[tuple[str, bytes], ...]:
    """The data files the page offers for download beside the example."""
    return tuple((n, read_file(lesson.folder / n, None)) for n in lesson.meta.data)


def run_it(lesson: Lesson, recording: Recording | None, root: str) -> RunIt:
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
        install = "pip install " + " ".join(f"{p}=={pins[p]}" for p in RECORDED)
        name = f"{lesson.id}-example"
        cited = name if f"{name}:" in recording.stdout else ""
    settings = [f"{key}={shlex.quote(value)}" for key, value in lesson.meta.env.items()]
    command = " ".join([*settings, "python", example])
    return RunIt(files, shim, install, command, cited)


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


def _notebook_artifact(
    meta: CourseMeta, lesson: Lesson, status: LessonStatus, renderer: Renderer
) -> Artifact:
    """The example as a notebook with its recorded output (builder/render/notebook.py),
    made from exactly what it shows: a prose edit does not make it again."""
    recording = status.recording
    files = tuple(name for _, name in run_it(lesson, recording, "").files[1:])  # all but .py
    settings = tuple(f"{key}={shlex.quote(value)}" for key, value in lesson.meta.env.items())
    return renderer.artifact(
        "notebook",
        notebook.example_notebook,
        lesson.url,
        lesson.title,
        meta.title,
        lesson.source,
        (files, settings),
        recording.stdout if recording else None,
        figures.provenance(recording) if recording else "",
        page_url(site, f"{lesson.url}index.html") if (site := meta.site_url) else PAGE,
        label=lesson.id,
    )


def _chart(panel: BarPanel, renderer: Renderer) -> Made:
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
    data: tuple[tuple[str, bytes], ...],
    status: LessonStatus,
    arc: Arc,
    near: tuple[NavItem | None, NavItem | None],
    edit_url: str,
    renderer: Renderer,
    on: str = "",
) -> Made:
    """A lesson's page, its example and its data files: made from these arguments alone."""
    recording = status.recording
    root = "../../"
    rendered, errors = prose.render_prose(
        lesson, links, recording, root, renderer.highlight, renderer.size
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
        run=replace(run_it(lesson, recording, root), answer=rendered.reveals),
        edit_url=edit_url,
        machine=on,
    )
    html = page(
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
        # and the data files it reads, beside it as when it was recorded
        **{f"{lesson.url}{name}": file for name, file in data},
    }
    return Made(files, Trace(terms=tuple(rendered.terms)), tuple(errors))


def _edit_url(meta: CourseMeta, root: Path, lesson: Lesson) -> str:
    base = meta.source_url
    if not base:
        return ""
    return f"{base}/{lesson.lesson_path.relative_to(root).as_posix()}"


def _notice(status: LessonStatus) -> str:
    if status.state is State.NEEDS_GPU:
        return (
            f"this lesson needs a GPU machine to be recorded ({status.detail}). What it shows "
            "is from an earlier run, if any; record it on a Dask cluster with a GPU worker."
        )
    if status.recording is None:
        return f"this lesson's recording is {status.state} ({status.detail}). Run `make record`."
    return (
        f"this lesson's recording is {status.state}: {status.detail}. What it shows is from an "
        "earlier run; run `make record` to bring it up to date."
    )
