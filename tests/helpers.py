"""What the tests share: the fixture course's paths, canned runs, a hostile course written
from examples, the command line, process checks. Test modules import from here, never
from each other."""

from __future__ import annotations

import contextlib
import io
import json
import os
import posixpath
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.model import Course, FrontMatter, Lesson
from builder.course.recording import BarPanel, dumps, loads
from builder.course.status import LessonStatus
from builder.run.execute import (
    Execution,
    Limits,
    Outcome,
    Runner,
    run_example,
)

ROOT = Path(__file__).resolve().parent.parent


HERE = Path(__file__).resolve().parent


FIXTURE_COURSE = HERE / "fixture_course"


REFERENCE = HERE / "fixtures" / "performance-05.recording.json"


BROKEN = "speed-02"


CANNED = HERE / "fixtures" / "fixture-course-recordings"


def canned_run(lesson: Lesson, limits: Limits) -> Execution:
    """What the fixture course's example printed and emitted when it really ran (kept in
    tests/fixtures/fixture-course-recordings/, checked against real runs by a slow test),
    handed back without executing anything: the fast tests need no JAX."""
    return canned_as(lesson.id, lesson.id)


def canned_as(lesson_id: str, source: str) -> Execution:
    """The canned run of the fixture lesson `source`, as lesson `lesson_id`'s."""
    recorded = json.loads((CANNED / f"{source}.json").read_text("utf-8"))
    return Execution(
        lesson_id,
        Outcome.OK,
        0.0,
        stdout=recorded["stdout"],
        panels=recorded["data"]["panels"],
        environment=recorded["environment"],
        cells=recorded.get("cells"),
    )


class CountingRunner:
    """A runner (by default the real one), counting which lessons it was asked to execute."""

    def __init__(self, runner: Runner = run_example) -> None:
        self.calls: list[str] = []
        self.runner = runner

    def __call__(self, lesson: Lesson, limits: Limits) -> Execution:
        self.calls.append(lesson.id)
        return self.runner(lesson, limits)


def make_paths(root: Path) -> Paths:
    return Paths(root / "content", root / "recordings", root / "site", root / ".cache")


CELLS_LESSON = HERE / "fixtures" / "cells-lesson" / "basics-03"  # an example in cells
PLOTS_LESSON = HERE / "fixtures" / "plots-lesson" / "basics-04"  # line and scatter panels


def plots_course(root: Path) -> Paths:
    """A course in `root` of the one lesson with line and scatter panels (the fixture
    course's course.yml; no glossary: its terms are taught in lessons it has not)."""
    paths = make_paths(root)
    (paths.content / "lessons").mkdir(parents=True)
    shutil.copy(FIXTURE_COURSE / "course.yml", paths.content / "course.yml")
    shutil.copytree(PLOTS_LESSON, paths.content / "lessons" / PLOTS_LESSON.name)
    return paths


CONSTRUCTS_COURSE = HERE / "fixtures" / "constructs-course"  # every construct of issue 41


def constructs_course(root: Path) -> Paths:
    """A copy in `root` of the course whose two lessons use every prose construct issue 41
    added (math, line, scatter and bar panels, callouts, checked and api links), unrecorded:
    its examples are plain Python, so recording it runs no JAX."""
    paths = make_paths(root)
    shutil.copytree(CONSTRUCTS_COURSE, paths.content)
    return paths


def copy_course(root: Path, *, broken: bool = True, cells: bool = False) -> Paths:
    """The fixture course in `root` (without its broken lesson unless `broken`; with a
    lesson in cells, basics-03, with `cells`)."""
    paths = make_paths(root)
    shutil.copytree(FIXTURE_COURSE, paths.content)
    if not broken:
        shutil.rmtree(paths.content / "lessons" / BROKEN)
    if cells:
        shutil.copytree(CELLS_LESSON, paths.content / "lessons" / CELLS_LESSON.name)
    return paths


def synthetic_copy(template: Path, root: Path) -> Paths:
    """A copy in `root` of the synthetic course bench/generate.py wrote in `template` (its
    content/ and recordings/: nothing executes), with where its site and cache go."""
    paths = make_paths(root)
    shutil.copytree(template / "content", paths.content)
    shutil.copytree(template / "recordings", paths.recordings)
    return paths


def wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The racy rule's clock read as the wall clock, which runs ahead of the file system's
    by up to a tick: a file written before a build observed it is never racy, so a test
    that is not about the racy rule sees only the changes it makes."""
    from builder.core import observe

    monkeypatch.setattr(observe, "clock", lambda cache, roots: time.time_ns())


def assert_like_a_clean_build(paths: Paths, scratch: Path) -> None:
    """The site `paths` holds is, byte for byte, the one a build from nothing makes (in
    `scratch`) of the same inputs."""
    from builder.pipeline.build import build

    clean = Paths(paths.content, paths.recordings, scratch / "clean", scratch / "clean-cache")
    build(clean, execute=False, jobs=2)
    assert snapshot(paths.out) == snapshot(clean.out)


def load_errors(paths: Paths) -> str:
    """What loading the course at `paths` reports (it must fail)."""

    with pytest.raises(BuildError) as caught:
        load_course(paths.content)
    return str(caught.value)


Edit = Callable[[Path, str, str], None]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


COURSE_YML = """\
title: Hostile course
summary: Lessons that misbehave on purpose.
arcs:
  - id: hostile
    title: Hostile
    summary: Misbehaving examples.
"""


def write_course(root: Path, examples: dict[str, str], env: dict[str, str] | None = None) -> None:
    content = root / "content"
    (content / "lessons").mkdir(parents=True)
    (content / "course.yml").write_text(COURSE_YML)
    for order, (lesson_id, source) in enumerate(sorted(examples.items()), start=1):
        folder = content / "lessons" / lesson_id
        folder.mkdir()
        settings = "".join(f"\n  {k}: {v!r}" for k, v in (env or {}).items())
        folder.joinpath("lesson.md").write_text(
            f"---\nid: {lesson_id}\nslug: s{order}\ntitle: Lesson {order}\narc: hostile\n"
            f"order: {order}\nsummary: Number {order}.\n"
            + (f"env:{settings}\n" if settings else "")
            + "---\nProse.\n\n{{ output }}\n"
        )
        folder.joinpath("example.py").write_text(textwrap.dedent(source))


def cli(root: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "builder",
        *args,
        "--content",
        str(root / "content"),
        "--recordings",
        str(root / "recordings"),
        "--out",
        str(root / "site"),
        "--cache",
        str(root / ".cache"),
    ]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def edit_panels(path: Path, change: Callable[[BarPanel], BarPanel]) -> None:
    """The recording at `path` with each of its panels changed by `change`, as a re-record
    would leave it."""
    recording = loads(path.read_bytes(), path)
    data = replace(recording.data, panels=[change(panel) for panel in recording.panels])
    path.write_bytes(dumps(replace(recording, data=data)))


def scaled(panel: BarPanel) -> BarPanel:
    """The panel with every value ten times what it was: another drawing."""
    return replace(panel, series=[replace(s, y=[y * 10 for y in s.y]) for s in panel.series])


CHART_LINK = re.compile(r'<(?:img|source) [^>]*?(?:src|srcset)="([^"]*\.svg)"')


def charts_shown(site: Path, page: str) -> list[str]:
    """The chart files the site's `page` shows (every theme and size), by their path from
    the site's root, in the order the page names them."""
    return charts_named((site / page).read_text(), page)


def charts_named(html: str, page: str) -> list[str]:
    """The chart files that `html`, the site's `page`, names, from the site's root."""
    folder = posixpath.dirname(page)
    return [posixpath.normpath(posixpath.join(folder, src)) for src in CHART_LINK.findall(html)]


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make `folder` unwritable even for root (chattr +i), or skip where that is impossible."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip(
            "running as root where chattr +i is unavailable: cannot make a folder read-only"
        )
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


LESSON_ID = "hostile-01"


def make_lesson(
    root: Path, source: str, *, timeout: float = 60, env: dict[str, str] | None = None
) -> Lesson:
    folder = root / "lessons" / LESSON_ID
    folder.mkdir(parents=True, exist_ok=True)
    data = textwrap.dedent(source).encode()
    (folder / "example.py").write_bytes(data)
    meta = FrontMatter(
        id=LESSON_ID,
        slug="hostile",
        title="Hostile",
        arc="hostile",
        order=1,
        summary="Misbehaves on purpose.",
        timeout=timeout,
        env=env or {},
    )
    return Lesson(meta=meta, folder=folder, body="", body_line=1, source=data)


def run(root: Path, source: str, **settings: object) -> Execution:
    lesson = make_lesson(root, source, **settings)  # type: ignore[arg-type]
    return run_example(lesson, Limits(timeout=lesson.meta.timeout))


def alive(pid: int) -> bool:
    """True while `pid` is a running (not zombie) process."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def wait_gone(pid: int) -> bool:
    """Give the kernel a moment to reap a killed orphan; no timing is asserted."""
    for _ in range(200):
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def ends_with(builder: subprocess.Popen[Any], pid: int) -> bool:
    """SIGKILL `builder` alone (as the OOM killer does): whether `pid`, a process it
    started, ended with it (else it is killed here)."""
    builder.kill()
    builder.wait()
    if wait_gone(pid):
        return True
    os.kill(pid, signal.SIGKILL)
    return False


def lesson_md(tmp_path: Path, lesson_id: str = "calm-01") -> Path:
    return tmp_path / "content" / "lessons" / lesson_id / "lesson.md"


def set_front(tmp_path: Path, field: str, value: str, lesson_id: str = "calm-01") -> None:
    path = lesson_md(tmp_path, lesson_id)
    text = re.sub(rf"^{field}: .*$", f"{field}: {value}", path.read_text(), flags=re.M)
    path.write_text(text)


@contextlib.contextmanager
def logged(said: io.StringIO | None = None) -> Iterator[io.StringIO]:
    """What the builder logs while the block runs, into `said` (plain lines, as the CLI
    shows them when piped)."""
    from builder.core.console import console

    said = io.StringIO() if said is None else said
    with console(said):
        yield said


def build_cli(root: Path, *extra: str) -> tuple[int, str]:
    """`python -m builder render` in this process: the exit code, and what it said on
    stderr besides the closing "Built ..." line."""
    from builder.__main__ import main

    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main([*cli(root, "render")[3:], *extra])
    said = stderr.getvalue().splitlines(keepends=True)
    return code, "".join(line for line in said if not line.startswith("Built "))


def killed_at(build: Callable[[], object], write: int) -> bool:
    """Run `build` in a forked child that is killed (SIGKILL) at its `write`-th rename;
    False when it finished before that."""
    pid = os.fork()
    if pid == 0:  # the child: count renames, die at the chosen one
        real, count = os.replace, [0]

        def replace(*args: object, **kwargs: object) -> None:
            count[0] += 1
            if count[0] == write:
                os.kill(os.getpid(), signal.SIGKILL)
            real(*args, **kwargs)  # type: ignore[arg-type]

        os.replace = replace  # type: ignore[assignment]
        try:
            build()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


# git as the tests run it: a fixed author and date, no user or system configuration
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_AUTHOR_DATE": "2026-10-20T09:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-10-20T09:00:00+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True)


# Each construct builder/render/foreign.py refuses: (Markdown, what the error says it is,
# what it says to write instead). The site refuses each; `import` notes each.
FOREIGN_SYNTAX = [
    (
        "See {func}`jax.jit` here.",
        "{func}`jax.jit` is a Sphinx role",
        "write `jax.jit` (a code span)",
    ),
    ("See {py:func}`~jax.numpy.dot`.", "Sphinx role", "write `dot` (a code span)"),
    (
        "Read {ref}`the guide <sharp-bits>`.",
        "{ref}`the guide <sharp-bits>`",
        "[the guide](#heading-id)",
    ),
    ("A {term}`jaxpr` here.", "{term}`jaxpr` is a Sphinx role", "write [[jaxpr]]"),
    ("A {term}`traced programs <jaxpr>`.", "Sphinx role", "write [[traced programs|jaxpr]]"),
    ("It is {glue:text}`speedup`.", "Sphinx role", "write {{ value ... }}"),
    ("(sharp-bits)=", "(sharp-bits)= is a MyST target", "delete it: a heading is its own anchor"),
    (
        "```{note} Read this\nBody.\n```",
        "```{note} Read this is a MyST directive",
        'write !!! note "Read this"',
    ),
    ("~~~{caution}\nBody.\n~~~", "~~~{caution} is a MyST directive", 'write !!! warning "Warning"'),
    (
        "```{code-cell} python\nx = 1\n```",
        "MyST directive",
        "write a cell of example.py (# %% NAME)",
    ),
    ("```{toctree}\na\n```", "MyST directive", "delete it: the site makes its own navigation"),
    (":::{tip} Quick\nBody.\n:::", ":::{tip} Quick is a MyST directive", 'write !!! tip "Quick"'),
    ("::: {.callout-warning}\nBody.\n:::", "MyST directive", 'write !!! warning "Warning"'),
    (
        "::::{tab-set}\n:::{tab-item} A\nx\n:::\n::::",
        "::::{tab-set}",
        "write it as prose, or as a callout",
    ),
    (":::{figure} plot.png\n:::", "MyST directive", "write ![alt text](file.png)"),
]


def rendered(course: Course, statuses: list[LessonStatus], cache: Path) -> dict[str, bytes]:
    """Every page and chart of `course` with these statuses (no search bundles), made by the
    build's own render stage (builder.pipeline.site.make_pages) with a store in `cache`: for
    a course or status made in memory, which no content folder holds."""
    from builder.core.store import Store
    from builder.pipeline.make import Kept
    from builder.pipeline.reuse import Reuse
    from builder.pipeline.site import make_pages

    with contextlib.closing(Store(cache, lambda message: None)) as store:
        kept = Kept(None, cache / "site", frozenset())
        return make_pages(course, statuses, {}, Reuse(store, "tests"), kept, 1, "").files()
