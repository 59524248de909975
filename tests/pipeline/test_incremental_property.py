"""Incremental equals clean, as a property: random sequences of edits to a copy of the
fixture course (prose, example, data file, recording, template, glossary, course.yml, a
lesson added, renamed or deleted, the site touched, a build killed part-way; prose and a
recording edited in place with their size and mtime kept, git's racy case), each followed
by an incremental build that must equal, byte for byte, a build from nothing of the same
inputs (a fresh --out and --cache). Nothing executes: builds render from the recordings,
and a re-record takes the fixture's canned runs.

Bounded for the suite (derandomized, a few short sequences); `PROPERTY_LONG=1` runs a long,
random profile (200 sequences of 25 edits; `PROPERTY_LONG=N`: N sequences) with its
failures kept in .hypothesis/ (gitignored).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from builder.core import observe
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.model import Lesson
from builder.course.recording import dumps, loads
from builder.course.status import State, course_status
from builder.pipeline.build import build
from builder.pipeline.index import Changes
from builder.preview.session import Session
from builder.render import markup, printed, search
from builder.run.execute import Execution, Limits
from tests.helpers import (
    CANNED,
    FIXTURE_COURSE,
    canned_as,
    canned_run,
    copy_course,
    killed_at,
    make_paths,
)

LONG = int(os.environ.get("PROPERTY_LONG", "0") or 0)  # how many sequences (1: 200)
PROFILE = (
    settings(max_examples=200 if LONG == 1 else LONG, stateful_step_count=25, deadline=None)
    if LONG
    else settings(
        max_examples=4,
        stateful_step_count=6,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
)
LINKED = {"basics-01", "basics-02"}  # linked to, or teaching a term: kept, slugs and all
SENTENCES = (
    "A new sentence.",
    "It uses a [[jaxpr]] again.",
    "See [the first lesson](lesson:basics-01).",
    "## A new section\n\nWith `code` in it.",
    "```python\nprint('shown, not run')\n```",
)


def files(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def runner(lesson: Lesson, limits: Limits) -> Execution:
    """The canned run of the fixture lesson, or of basics-02 for a lesson added as its copy."""
    source = lesson.id if (CANNED / f"{lesson.id}.json").exists() else "basics-02"
    return canned_as(lesson.id, source)


@contextlib.contextmanager
def own_templates(folder: Path) -> Iterator[Path]:
    """A copy of builder/render/templates/ that every builder module reads instead (so that a test may
    edit it): each module's TEMPLATES, and the cached Jinja environment, point at it."""
    original = observe.TEMPLATES
    shutil.copytree(original, folder)
    modules = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("builder") and getattr(m, "TEMPLATES", None) == original
    ]
    for module in modules:
        module.TEMPLATES = folder  # type: ignore[attr-defined]
    markup._environment.cache_clear()
    try:
        yield folder
    finally:
        for module in modules:
            module.TEMPLATES = original  # type: ignore[attr-defined]
        markup._environment.cache_clear()


class Course(RuleBasedStateMachine):
    """A copy of the recorded fixture course, edited step by step."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="property-"))
        shutil.copytree(_recorded(), self.root / "course")
        self.paths = make_paths(self.root / "course")
        self.templates = contextlib.ExitStack()
        self.template_folder = self.templates.enter_context(own_templates(self.root / "templates"))
        self.steps = 0
        self.added = 0
        self.log: list[str] = []
        # the preview, over the same inputs with its own site and cache, told what changed
        site, cache = self.root / "preview-site", self.root / "preview-cache"
        self.preview = Paths(self.paths.content, self.paths.recordings, site, cache)
        self.session: Session | None = None
        self.seen = self.inputs()

    def teardown(self) -> None:
        if self.session is not None:
            self.session.close()
        self.templates.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- the inputs -------------------------------------------------------------------

    def lessons(self) -> list[str]:
        return sorted(p.name for p in (self.paths.content / "lessons").iterdir() if p.is_dir())

    def lesson_md(self, lesson: str) -> Path:
        return self.paths.content / "lessons" / lesson / "lesson.md"

    def pick(self, data: st.DataObject, among: list[str]) -> str:
        return str(data.draw(st.sampled_from(sorted(among))))

    def note(self, what: str) -> None:
        self.log.append(what)

    # -- edits ------------------------------------------------------------------------

    @rule(data=st.data(), sentence=st.sampled_from(SENTENCES))
    def prose(self, data: st.DataObject, sentence: str) -> None:
        lesson = self.pick(data, self.lessons())
        path = self.lesson_md(lesson)
        path.write_text(path.read_text() + f"\n{sentence}\n")
        self.note(f"prose {lesson}")

    @rule(data=st.data())
    def prose_keeping_size_and_mtime(self, data: st.DataObject) -> None:
        """A same-length edit, its mtime put back: only the content says it changed."""
        lesson = self.pick(data, self.lessons())
        path = self.lesson_md(lesson)
        before, text = path.stat(), path.read_text()
        changed = re.sub(r"[aeiou]", lambda m: "aeiou"[("aeiou".index(m[0]) + 1) % 5], text[-40:])
        path.write_text(text[:-40] + changed)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.note(f"prose (same size and mtime) {lesson}")

    @rule(data=st.data())
    def recording_keeping_size_and_mtime(self, data: st.DataObject) -> None:
        """git's racy case for a recording: a digit of its date changed in place, its mtime
        put back. Only its ctime (and, within the last build's tick, the racy rule of the
        build's index) says it changed; the status taken from the index must not hide it."""
        recordings = sorted(p.stem for p in self.paths.recordings.glob("*.json"))
        if not recordings:
            return
        path = self.paths.recordings / f"{self.pick(data, recordings)}.json"
        before, text = path.stat(), path.read_text()
        date = re.search(r'"generatedAt": "(\d)', text)
        assert date is not None
        digit = str((int(date[1]) + 1) % 10)
        path.write_text(text[: date.start(1)] + digit + text[date.end(1) :])
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        self.note(f"recording (same size and mtime) {path.stem}")

    @rule(data=st.data())
    def title(self, data: st.DataObject) -> None:
        lesson = self.pick(data, self.lessons())
        path = self.lesson_md(lesson)
        path.write_text(re.sub(r"(?m)^title: ", "title: New ", path.read_text(), count=1))
        self.note(f"title {lesson}")

    @rule(data=st.data())
    def example(self, data: st.DataObject) -> None:
        lesson = self.pick(data, self.lessons())
        path = self.paths.content / "lessons" / lesson / "example.py"
        path.write_text(path.read_text() + "\nprint('more')\n")
        self.note(f"example {lesson}")

    @rule(data=st.data())
    def line_on_top(self, data: st.DataObject) -> None:
        """A line added at the top of an example: every line below moves (in cells, every
        cell's numbering; a whole-file example is shown whole)."""
        lesson = self.pick(data, self.lessons())
        path = self.paths.content / "lessons" / lesson / "example.py"
        path.write_text("# a line on top\n" + path.read_text())
        self.note(f"line on top {lesson}")

    @precondition(lambda self: (self.paths.content / "lessons" / "speed-01").is_dir())
    @rule(number=st.integers(0, 99))
    def data_file(self, number: int) -> None:
        path = self.paths.content / "lessons" / "speed-01" / "numbers.txt"
        path.write_text(path.read_text() + f"{number}\n")
        self.note("data file speed-01")

    @rule(data=st.data(), scale=st.sampled_from([0.5, 2, 10]))
    def recording_edited(self, data: st.DataObject, scale: float) -> None:
        """A recording changed as a re-record would change it: when, and its numbers."""
        recordings = sorted(p.stem for p in self.paths.recordings.glob("*.json"))
        if not recordings:
            return
        lesson = self.pick(data, recordings)
        path = self.paths.recordings / f"{lesson}.json"
        recording = loads(path.read_bytes(), path)
        panels = [
            replace(p, series=[replace(s, y=[y * scale for y in s.y]) for s in p.series])
            for p in recording.panels
        ]
        recording = replace(
            recording,
            generatedAt=f"2027-0{int(scale) % 9 + 1}-01T00:00:00+00:00",
            data=replace(recording.data, panels=panels),
        )
        path.write_bytes(dumps(recording))
        self.note(f"recording edited {lesson}")

    @rule(data=st.data())
    def recording_deleted(self, data: st.DataObject) -> None:
        recordings = sorted(p.stem for p in self.paths.recordings.glob("*.json"))
        if recordings:
            lesson = self.pick(data, recordings)
            (self.paths.recordings / f"{lesson}.json").unlink()
            self.note(f"recording deleted {lesson}")

    @rule()
    def re_record(self) -> None:
        """`make site`: what is not fresh runs (canned), then the site (this build's
        settings differ from the check's: it is compared on the next build)."""
        with contextlib.suppress(BuildError):
            build(self.paths, execute=True, jobs=1, runner=runner)
        self.note("re-recorded")

    @rule(which=st.sampled_from(["base.html", "static/style.css"]))
    def template(self, which: str) -> None:
        path = self.template_folder / which
        text = path.read_text()
        if which.endswith(".css"):
            path.write_text(text + f"\n/* edit {self.steps} */\n")
        else:
            path.write_text(text.replace("</body>", f"<!-- edit {self.steps} --></body>", 1))
        self.note(f"template {which}")

    @rule(n=st.integers(0, 1))
    def glossary(self, n: int) -> None:
        path = self.paths.content / "glossary.yml"
        text = path.read_text().split("definition: ")
        text[n + 1] = f"Now {self.steps}: " + text[n + 1]
        path.write_text("definition: ".join(text))
        self.note(f"glossary term {n}")

    @rule(field=st.sampled_from(["title: ", "summary: ", "    title: "]))
    def course_yml(self, field: str) -> None:
        path = self.paths.content / "course.yml"
        path.write_text(path.read_text().replace(field, f"{field}New ", 1))
        self.note(f"course.yml {field.strip()}")

    @rule(arc=st.sampled_from(["basics", "speed"]), order=st.integers(0, 9))
    def lesson_added(self, arc: str, order: int) -> None:
        self.added += 1
        lesson = f"{arc}-{50 + self.added}"
        folder = self.paths.content / "lessons" / lesson
        shutil.copytree(FIXTURE_LESSON, folder)
        text = (folder / "lesson.md").read_text()
        text = text.replace("id: basics-02", f"id: {lesson}").replace("arc: basics", f"arc: {arc}")
        text = text.replace("slug: no-panels", f"slug: added-{self.added}")
        (folder / "lesson.md").write_text(text.replace("order: 2", f"order: {order}"))
        self.note(f"lesson added {lesson}")

    @rule(data=st.data(), alias=st.booleans())
    def renamed(self, data: st.DataObject, alias: bool) -> None:
        """A new slug, the old one kept as an alias (a redirect) or dropped."""
        candidates = [x for x in self.lessons() if x not in LINKED]
        if not candidates:
            return
        lesson = self.pick(data, candidates)
        path = self.lesson_md(lesson)
        text = path.read_text()
        old = re.search(r"(?m)^slug: (\S+)", text)
        assert old is not None
        text = text.replace(old[0], f"slug: {old[1]}-{self.steps}", 1)
        if alias and "aliases:" not in text:
            text = text.replace("\n---\n", f"\naliases: [{old[1]}]\n---\n", 1)
        path.write_text(text)
        self.note(f"renamed {lesson} (alias: {alias})")

    @rule(data=st.data())
    def lesson_deleted(self, data: st.DataObject) -> None:
        candidates = [x for x in self.lessons() if x not in LINKED]
        if candidates:
            lesson = self.pick(data, candidates)
            shutil.rmtree(self.paths.content / "lessons" / lesson)
            self.note(f"lesson deleted {lesson}")

    @rule(data=st.data(), delete=st.booleans())
    def site_touched(self, data: st.DataObject, delete: bool) -> None:
        """A file of the site edited or deleted by hand: the next build puts it back. (Any
        file: the list of the builder's files is in the cache, not in the site.)"""
        names = sorted(files(self.paths.out))
        if names:
            path = self.paths.out / self.pick(data, names)
            path.unlink() if delete else path.write_bytes(b"edited by hand")
            self.note(f"site file {'deleted' if delete else 'edited'} {path.name}")

    @rule(data=st.data(), write=st.integers(1, 12), sentence=st.sampled_from(SENTENCES))
    def killed(self, data: st.DataObject, write: int, sentence: str) -> None:
        """An edit, then a build killed at its `write`-th rename (or finished before)."""
        self.prose(data, sentence)
        was = killed_at(lambda: build(self.paths, execute=False, jobs=1), write)
        self.note(f"build killed at write {write}: {was}")

    # -- the property -----------------------------------------------------------------

    @invariant()
    def incremental_equals_clean(self) -> None:
        self.steps += 1
        clean = Paths(
            self.paths.content,
            self.paths.recordings,
            self.root / f"clean-{self.steps}",
            self.root / f"clean-cache-{self.steps}",
        )
        incremental, from_nothing = _built(self.paths), _built(clean)
        assert incremental == from_nothing, f"after: {'; '.join(self.log)}"
        if not incremental:
            assert files(self.paths.out) == files(clean.out), f"after: {'; '.join(self.log)}"
        self.preview_equals_clean(clean.out, from_nothing)
        shutil.rmtree(clean.out, ignore_errors=True)
        shutil.rmtree(clean.cache, ignore_errors=True)

    def preview_equals_clean(self, clean: Path, failed: str) -> None:
        """The preview, refreshed with the files the step changed (as its file events
        name them), fails when a clean build does, and else serves the clean build's pages."""
        now = self.inputs()
        touched = [
            name for name in now.keys() | self.seen.keys() if now.get(name) != self.seen.get(name)
        ]
        self.seen = now
        try:
            if self.session is None or self.session.course is None:  # a failed start: again
                self.session = self.session or Session(self.preview, execute=False)
                self.session.start()
            else:
                self.session.refresh(Changes.events(self.preview, touched))
        except BuildError as error:
            assert failed, f"the preview failed ({error}) after: {'; '.join(self.log)}"
            return
        assert not failed, f"the preview built, a clean build failed, after: {'; '.join(self.log)}"
        built, served, pages = files(clean), self.session.served(), self.session.pages.names()
        found = {name: served.get(name) for name in pages}
        assert found == {name: built.get(name) for name in pages}, f"after: {'; '.join(self.log)}"
        # made at the settle, of what making the pages left: the search bundles and the
        # printable course
        settled = (f"{search.MERGED}/", printed.PAGE)
        assert all(name.startswith(settled) for name in built.keys() - pages.keys())

    def inputs(self) -> dict[str, bytes]:
        """Every input file's bytes, by path (what a file event would name)."""
        folders = (self.paths.content, self.paths.recordings, self.template_folder)
        return {str(f / name): data for f in folders for name, data in files(f).items()}


def _built(paths: Paths) -> str:
    """Build; what failed (the message), or "" if nothing did."""
    try:
        build(paths, execute=False, jobs=1)
    except BuildError as error:
        return str(error)
    return ""


FIXTURE_LESSON = FIXTURE_COURSE / "lessons" / "basics-02"
_RECORDED: list[Path] = []


def _recorded() -> Path:
    """The fixture course without its broken lesson, with its lesson in cells, recorded
    from the canned runs, once."""
    if not _RECORDED:
        root = Path(tempfile.mkdtemp(prefix="property-recorded-"))
        paths = copy_course(root, broken=False, cells=True)
        build(paths, execute=True, jobs=1, runner=canned_run)
        shutil.rmtree(paths.out)
        shutil.rmtree(paths.cache)
        statuses = course_status(load_course(paths.content), paths.recordings)
        assert all(s.state is State.FRESH for s in statuses)
        _RECORDED.append(root)
    return _RECORDED[0]


TestIncrementalEqualsClean = Course.TestCase
TestIncrementalEqualsClean.settings = PROFILE
