"""Re-execute the lessons that are not fresh, several at once, and keep what succeeded.

Each successful run is written atomically as soon as it finishes, so Ctrl-C never loses
finished work; a failed run leaves that lesson's previous recording byte-for-byte intact.
Nothing is written once a file the builder owns changed without the builder writing it
(builder/run/guard.py): an example wrote outside its scratch folder.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core import machine
from ..core.console import Progress
from ..core.errors import BuildError, ExecutionError, RecordingError
from ..core.fsutil import check_writable, write_atomic
from ..core.observe import Paths
from ..course import fingerprint
from ..course.model import ACCELERATORS, Course, Lesson
from ..course.recording import dumps
from ..course.rules import MAX_PANELS, inputs_path, read_inputs, run_seconds
from ..course.status import LessonStatus, recording_path
from ..panels import MAX_BARS
from .environment import BUILDER_ROOT, child_environment
from .execute import Execution, Limits, Outcome, Runner, allow_runs, kill_all, run_example
from .guard import Watch
from .result import same_names, to_recording, undrawable

if TYPE_CHECKING:
    from .shard import Shard

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecordReport:
    executions: list[Execution]

    @property
    def failures(self) -> list[Execution]:
        return [execution for execution in self.executions if not execution.ok]


def lessons_to_run(
    course: Course,
    statuses: Iterable[LessonStatus],
    *,
    force: bool,
    only: Iterable[str] = (),
    waiting: bool = False,
) -> list[Lesson]:
    """The lessons `only` names, or every lesson with `force`, or those not fresh; a
    lesson that `requires: gpu` or `tpu` only with `waiting` (the executor may have one)."""
    wanted = set(only)
    due = {s.lesson_id for s in statuses if s.needs_run or (waiting and s.waiting)}
    chosen = [
        lesson
        for lesson in course.lessons
        if (lesson.id in wanted or lesson.slug in wanted if wanted else force or lesson.id in due)
    ]
    return [lesson for lesson in chosen if waiting or lesson.accelerator is None]


class Executor(Protocol):
    """Where examples run: this machine's processes (`Local`) or a Dask cluster
    (builder.run.distributed). It runs `lessons` in the order given, hands back each execution
    as it finishes, with a note for the progress line, and writes nothing."""

    @property
    def where(self) -> str:
        """'with -j 2', for the first line of a record."""

    @property
    def accelerators(self) -> frozenset[str]:
        """The backends of `requires:` ('gpu', 'tpu') whose lessons can run there."""

    @property
    def slots(self) -> int:
        """How many examples run there at once."""

    def __call__(
        self, lessons: list[Lesson], seconds: dict[str, float]
    ) -> Iterable[tuple[Lesson, Execution, str]]: ...


@dataclass(frozen=True)
class Local:
    """At most `jobs` examples at once, each in its own process on this machine."""

    jobs: int
    runner: Runner = run_example
    backend: Callable[[], str] = lambda: this_backend()

    @property
    def where(self) -> str:
        return f"with -j {self.jobs}"

    @property
    def accelerators(self) -> frozenset[str]:
        """The backend jax takes here, as the provenance probe sees it, if an accelerator."""
        return frozenset({self.backend()} & ACCELERATORS)

    @property
    def slots(self) -> int:
        return self.jobs

    def __call__(
        self, lessons: list[Lesson], seconds: dict[str, float]
    ) -> Iterable[tuple[Lesson, Execution, str]]:
        for lesson, execution in _run_all(lessons, self.runner, self.jobs):
            yield lesson, execution, ""


def this_backend() -> str:
    """The backend jax takes on this machine (its default environment), by the provenance
    probe; 'cpu', said in the log, when the probe cannot tell."""
    from .probe import ProbeError, measure

    try:
        return str(measure({}, sandbox=False)["backend"])
    except ProbeError as error:
        logger.warning("Cannot tell whether this machine has a GPU or TPU: %s", error)
        return "cpu"


def record(
    lessons: list[Lesson],
    recordings: Path,
    *,
    jobs: int = 1,
    runner: Runner = run_example,
    executor: Executor | None = None,
) -> RecordReport:
    """Run `lessons` (by default with at most `jobs` at once, here); write each success as
    it lands. A line for each, and a progress line estimated from the last run times."""
    renderer = fingerprint.renderer_hash()
    seconds = run_seconds(read_inputs(recordings))
    run = executor or Local(jobs, runner)
    watch = Watch.take(owned(lessons, recordings))
    order = longest_first(lessons, seconds)
    done: list[Execution] = []
    with Progress("recording", [x.id for x in order], run.slots, seconds) as progress:
        for lesson, execution, note in run(order, seconds):
            execution = _keep(lesson, execution, recordings, renderer, watch)
            done.append(execution)
            progress.step(lesson.id)
            logger.info("%s", _ran(len(done), len(lessons), execution, note))
    return RecordReport(done)


def owned(lessons: list[Lesson], recordings: Path) -> list[Path]:
    """The folders of the checkout the builder owns while examples run: the course, the
    recordings, the builder's code (its templates inside)."""
    courses = sorted({lesson.folder.parent.parent for lesson in lessons})
    return [*courses, recordings, BUILDER_ROOT / "builder"]


def longest_first(lessons: list[Lesson], seconds: dict[str, float]) -> list[Lesson]:
    """Start the examples that took longest last time first (never-run ones before all):
    in course order, the longest example can start last and run alone at the end while the
    other slots sit idle."""
    # stable: ties keep course order
    return sorted(lessons, key=lambda x: seconds.get(x.id, float("inf")), reverse=True)


def _run_all(
    lessons: list[Lesson], runner: Runner, jobs: int
) -> Iterable[tuple[Lesson, Execution]]:
    allow_runs()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures: dict[Future[Execution], Lesson] = {
            pool.submit(runner, lesson, Limits(timeout=lesson.meta.timeout)): lesson
            for lesson in lessons
        }
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: futures[f].id):
                    yield futures[future], future.result()
        except BaseException:
            for future in pending:
                future.cancel()
            kill_all()
            raise


def _keep(
    lesson: Lesson,
    execution: Execution,
    recordings: Path,
    renderer: str,
    watch: Watch,
) -> Execution:
    if not execution.ok:
        return execution
    backend = execution.environment.get("backend")
    if lesson.accelerator and backend != lesson.accelerator:
        said = f"it `requires: {lesson.accelerator}`, but jax ran it on {backend!r}"
        detail = f"{said}; nothing was kept"
        return Execution(lesson.id, Outcome.WRONG_DEVICE, execution.seconds, detail=detail)
    if len(execution.panels) > MAX_PANELS:
        detail = f"{len(execution.panels)} panels is more than the {MAX_PANELS} a lesson may emit"
        return Execution(lesson.id, Outcome.TOO_MANY_PANELS, execution.seconds, detail=detail)
    problem = undrawable(execution.panels) or same_names(execution.panels)
    if problem:
        return Execution(lesson.id, Outcome.BAD_PANEL, execution.seconds, detail=problem)
    changed = watch.changed()
    if changed:
        detail = (
            f"{changed} while examples ran, and the builder did not write it: an example "
            "wrote outside its scratch folder (or someone edited it meanwhile); nothing more "
            "is recorded in this run"
        )
        return Execution(lesson.id, Outcome.TAMPERED, execution.seconds, detail=detail)
    inputs = fingerprint.lesson_inputs(lesson)
    try:
        recording = to_recording(lesson, execution, fingerprint.content_hash(inputs), renderer)
    except RecordingError as error:
        return Execution(lesson.id, Outcome.HARNESS, execution.seconds, detail=error.problem)
    sidecar = {
        "contentHash": recording.contentHash,
        "inputs": inputs,
        "seconds": round(execution.seconds, 2),
        # where it ran, for the page that shows its timings (not in the recording)
        "machine": machine.facts(child_environment(lesson, recordings)),
    }
    with contextlib.suppress(OSError):  # it only sharpens messages; never fatal
        # first: a recording on disk has its sidecar, whenever Ctrl-C comes
        write_atomic(inputs_path(recordings, lesson.id), _sidecar_bytes(sidecar), root=recordings)
        watch.wrote(inputs_path(recordings, lesson.id))
    path = recording_path(recordings, lesson.id)
    try:
        write_atomic(path, dumps(recording), root=recordings)  # _inputs/ a link: not followed
        watch.wrote(path)
    except OSError as error:
        detail = f"the run succeeded but {path} could not be written: {error.strerror}"
        return Execution(lesson.id, Outcome.NOT_SAVED, execution.seconds, detail=detail)
    return execution


def _sidecar_bytes(sidecar: dict[str, Any]) -> bytes:
    return (json.dumps(sidecar, indent=2, sort_keys=True) + "\n").encode()


def _ran(count: int, total: int, execution: Execution, note: str = "") -> str:
    """'  [ 3/19] ok   performance-05          12.3s  on tcp://...': one run, as it lands."""
    mark = "ok  " if execution.ok else "FAIL"
    return (
        f"  [{count:>{len(str(total))}}/{total}] {mark} {execution.lesson_id:<20} "
        f"{execution.seconds:6.1f}s"
        + ("" if execution.ok else f"  {execution.outcome}")
        + (f"  {note}" if note else "")
    )


def failure_summary(failures: list[Execution], course: Course) -> str:
    """One summary for all failed runs: which lesson, why, and what to do next."""
    lines = [f"{len(failures)} example(s) failed; their previous recordings are untouched:"]
    for execution in failures:
        lesson = course.lesson(execution.lesson_id)
        path = lesson.example_path if lesson else execution.lesson_id
        lines.append(f"\n  {execution.lesson_id} ({path}): {execution.outcome}: {execution.detail}")
        lines += [f"    | {line}" for line in _tail(execution.stderr)]
        lines.append(f"    -> {_advice(execution, lesson)}")
    lines.append("\nFix the examples, then run `make record` (only what is not fresh re-runs).")
    return "\n".join(lines)


def _tail(text: str, count: int = 12) -> list[str]:
    return text.rstrip().splitlines()[-count:]


def _advice(execution: Execution, lesson: Lesson | None) -> str:
    timeout = lesson.meta.timeout if lesson else 0
    advice: dict[Outcome, str] = {
        Outcome.TIMEOUT: f"make it faster, or raise `timeout:` ({timeout:g} s now) in lesson.md",
        Outcome.TOO_MUCH_OUTPUT: "print less: a recording keeps what a reader can read",
        Outcome.RAISED: "run it by hand with .venv/bin/python example.py and fix the error",
        Outcome.EXITED: "an example must finish with exit status 0",
        Outcome.BAD_OUTPUT: "print text that reads the same on every machine",
        Outcome.TOO_MANY_PANELS: f"chart what the prose discusses (at most {MAX_PANELS} "
        f"panels, each of up to {MAX_BARS} bars), and print the rest, or split the lesson",
        Outcome.BAD_PANEL: "scale the values (say the unit in ylabel), or print the number "
        "instead of charting it",
        Outcome.HARNESS: "let the example end normally: no os._exit, no killing its own "
        "process, no writing the harness's files; run it by hand to see what happens",
        Outcome.ESCAPED: "wait for every process the example starts before it ends; find "
        "and stop the one still running (ps -ef)",
        Outcome.TAMPERED: "an example may write only in its working (scratch) folder: find "
        "the one that wrote the file, restore the file (git status), then run `make record`; "
        "`--sandbox` makes the checkout read-only to examples",
        Outcome.BAD_DATA: "keep data files as regular files in the lesson folder, not links",
        Outcome.WRONG_DEVICE: "record it where jax takes the backend its `requires:` names: "
        "on such a machine (check that jax.default_backend() says so there), or on a Dask "
        "worker started with --resources GPU=1 (TPU=1)",
        Outcome.REFUSED: "install this checkout's pinned versions on that worker "
        "(requirements.lock), or leave it out of the cluster",
        Outcome.LOST: "run the same command again: only what is not fresh re-runs",
        Outcome.NOT_SAVED: "make recordings/ writable (and check the disk is not full), "
        "then run `make record`",
    }
    return advice.get(execution.outcome, "see the message above")


def record_stale(
    course: Course,
    statuses: list[LessonStatus],
    paths: Paths,
    jobs: int,
    force: bool = False,
    runner: Runner | None = None,
    only: tuple[str, ...] = (),
    dask: str | None = None,
    shard: Shard | None = None,
) -> tuple[str, ...]:
    """Re-execute what is not fresh (or everything with force), here or on the Dask
    cluster at `dask`, all of it or one `shard`; raise if any run failed."""
    from .execute import course_runner, run_example  # only a build that may execute needs it

    unknown = sorted(set(only) - {x.id for x in course.lessons} - {x.slug for x in course.lessons})
    if unknown:
        raise BuildError(
            f"no lesson in {paths.content} has the id or slug {', '.join(unknown)}",
            hint="`python -m builder check --json` lists every lesson id",
        )
    due = lessons_to_run(course, statuses, force=force, only=only, waiting=True)
    if not due:
        return ()  # and no cluster to reach
    chosen = course_runner(runner or run_example, course.meta.sandbox)
    with _executor(dask, jobs, chosen) as executor:
        lessons = _runnable(due, executor, paths, shard)
        return _record(course, lessons, paths, executor) if lessons else ()


def _runnable(
    due: list[Lesson], executor: Executor, paths: Paths, shard: Shard | None
) -> list[Lesson]:
    """Of the lessons due, those the executor can run (a `requires: gpu` or `tpu` one only
    where jax has that backend, asked only when one is due), and of those, this shard's."""
    wanted = {x.accelerator for x in due} - {None}
    kinds = executor.accelerators if wanted else frozenset()
    lessons = [lesson for lesson in due if lesson.accelerator in (None, *kinds)]
    for kind in sorted(wanted - kinds, key=str):
        names = ", ".join(x.id for x in due if x.accelerator == kind)
        need = f"a {str(kind).upper()} machine (requires: {kind})"
        logger.info("Not recorded here, they need %s: %s", need, names)
    if shard is None:
        return lessons
    mine = shard.pick(lessons, run_seconds(read_inputs(paths.recordings)))
    logger.info("Shard %s: %d of the %d lesson(s) to record.", shard, len(mine), len(lessons))
    return mine


def _record(
    course: Course, lessons: list[Lesson], paths: Paths, executor: Executor
) -> tuple[str, ...]:
    check_writable(paths.recordings)
    logger.info("Recording %d lesson(s) %s:", len(lessons), executor.where)
    report = record(lessons, paths.recordings, executor=executor)
    if report.failures:
        raise ExecutionError(failure_summary(report.failures, course))
    return tuple(execution.lesson_id for execution in report.executions)


@contextlib.contextmanager
def _executor(dask: str | None, jobs: int, runner: Runner) -> Iterator[Executor]:
    """This machine's processes, or a connection to the Dask cluster at `dask`."""
    if dask is None:
        yield Local(jobs, runner)
        return
    from .distributed import connect  # dask is imported only with --dask

    with connect(dask, runner) as cluster:
        yield cluster
