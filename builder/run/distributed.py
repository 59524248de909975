"""Record on a dask.distributed cluster: `record --dask tcp://HOST:PORT`.

The client sends each lesson as a `Task`: its front matter, its example's bytes, its data
files' bytes and the versions this checkout pins; nothing assumes a shared file system. A
worker first compares its own versions with the pins (`refusal`), then stages the files in
a scratch folder of its own and calls the door a local run calls (`run_example`: the same
clean environment, timeout, process-group kill and output cap); the `Execution` comes back
and only the client writes the recording, atomically, as a local run does.

The harness is not shipped: the worker must import this builder to run it, so it runs the
checkout it has, and a worker whose recording harness (builder/run/harness.py, panels.py) hashes
differently from the client's is refused like one whose jax differs. Shipping two files into
another version of the builder would record with a mix of both.

A worker that dies mid-example is replaced by Dask, which runs the task again on another
worker that passed the check (Dask's `allowed-failures`, 3 by default, then the lesson
fails as "lost its worker"): a second run of a deterministic example gives the same
recording. A worker that joins or restarts under a new address during a record gets none
of its lessons: they were checked against the workers there were when it started.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..core.errors import BuildError
from ..core.escape import write_control
from ..core.observe import NOT_INSTALLED
from ..course.model import FrontMatter, Lesson
from ..course.rules import EXAMPLE_FILE, LOCK_FILE, lock_pins, read_file
from .execute import Execution, Limits, Outcome, Runner

if TYPE_CHECKING:
    from distributed import Client, Future

GUARDED = ("jax", "jaxlib", "numpy", "matplotlib")
HARNESS = "harness"  # the key of the recording harness's hash among the versions
TICK_SECONDS = 1.0  # how often the live progress line is redrawn


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to run one lesson's example."""

    meta: FrontMatter
    source: bytes
    data: dict[str, bytes]
    expected: dict[str, str]  # what `worker_versions` must say


def expected_versions() -> dict[str, str]:
    """This checkout's pins (requirements.lock), its Python (major.minor) and the hash of its
    recording harness: what a worker must have."""
    from ..course.fingerprint import renderer_hash

    pins = lock_pins(LOCK_FILE)
    versions = {name: pins.get(name, NOT_INSTALLED) for name in GUARDED}
    return versions | {"python": _python(), HARNESS: renderer_hash()}


def worker_versions() -> dict[str, str]:
    """The same, as installed where this runs (jax is not imported)."""
    from ..course.fingerprint import renderer_hash

    versions = {name: installed_version(name) for name in GUARDED}
    return versions | {"python": _python(), HARNESS: renderer_hash()}


def installed_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def _python() -> str:
    return "{}.{}".format(*sys.version_info[:2])  # a micro release does not change a number


def refusal(expected: dict[str, str]) -> str:
    """'' when this worker has the expected versions; else what differs, in one line."""
    have = worker_versions()
    wrong = [name for name in expected if have.get(name) != expected[name]]
    if not wrong:
        return ""
    said = [
        f"its recording harness differs ({have.get(name, '?')[:12]}, here {expected[name][:12]})"
        if name == HARNESS
        else f"{name} {have.get(name)} (pinned {expected[name]})"
        for name in wrong
    ]
    return ", ".join(said)


def _worker_name() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:  # not in a worker (called by hand)
        return "(this process)"


def work(task: Task, runner: Runner) -> tuple[str, Execution]:
    """On the worker: check its versions, stage the files, run; (worker, execution)."""
    refused = refusal(task.expected)
    if refused:
        detail = f"worker {_worker_name()} refused: {refused}; nothing it ran is kept"
        return _worker_name(), Execution(task.meta.id, Outcome.REFUSED, 0.0, detail=detail)
    with _staged(task) as lesson:
        return _worker_name(), runner(lesson, Limits(timeout=lesson.meta.timeout))


@contextlib.contextmanager
def _staged(task: Task) -> Iterator[Lesson]:
    """The lesson in a scratch folder laid out as content/lessons/<id>/ (what run_example
    reads, and what it checks stdout for absolute paths of)."""
    root = Path(tempfile.mkdtemp(prefix=f"course-task-{task.meta.id}-"))
    try:
        folder = root / "content" / "lessons" / task.meta.id
        folder.mkdir(parents=True)
        (folder / EXAMPLE_FILE).write_bytes(task.source)
        for name, data in task.data.items():
            (folder / name).write_bytes(data)
        yield Lesson(meta=task.meta, folder=folder, body="", body_line=1, source=task.source)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def task_of(lesson: Lesson, expected: dict[str, str]) -> Task:
    """A lesson as a worker gets it. A CPU lesson is kept on jax's CPU backend (unless its
    own `env:` says otherwise): on a GPU worker jax would take the GPU, and the recording
    would no longer be the one a CPU machine makes."""
    meta = lesson.meta
    if not lesson.needs_gpu:
        meta = replace(meta, env={"JAX_PLATFORMS": "cpu"} | dict(meta.env))
    data = {name: read_file(lesson.folder / name, None) for name in meta.data}
    return Task(meta, lesson.source, data, expected)


@contextlib.contextmanager
def connect(address: str, runner: Runner, log: TextIO) -> Iterator[Cluster]:
    """A client of the scheduler at `address`, its workers checked; closed on the way out."""
    from distributed import Client

    _check_address(address)  # before a Client is half made of it
    try:
        client = Client(address, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise BuildError(
            f"cannot reach the Dask scheduler at {address}: {error}",
            hint="start it (dask scheduler), check the address, or record here with -j N",
        ) from None
    with client:
        yield Cluster(client, runner, log, address, _good_workers(client, log))


def _check_address(address: str) -> None:
    """A scheduler address this client can speak to, or a BuildError at once: tcp://, or
    tls:// when dask's TLS settings give a client certificate (without them a Client
    retries for a minute and then fails with a TypeError)."""
    from distributed.comm.addressing import get_address_host_port, parse_address

    scheme = parse_address(address)[0]
    if not (scheme == "tcp" or (scheme == "tls" and _tls_configured())):
        said = "without dask's TLS settings" if scheme == "tls" else "is not supported"
        raise BuildError(
            f"--dask {address!r}: {scheme}:// {said}; tcp:// is, and tls:// with TLS settings",
            hint="give it as tcp://HOST:PORT; for tls:// set distributed.comm.tls.ca-file, "
            ".client.cert and .client.key in dask's config (or DASK_DISTRIBUTED__COMM__TLS__* "
            "variables)",
        )
    try:
        get_address_host_port(address)
    except ValueError as error:
        raise BuildError(
            f"--dask {address!r} is not a scheduler address: {error}",
            hint="give it as tcp://HOST:PORT, as `dask scheduler` prints it",
        ) from None


def _tls_configured() -> bool:
    """Dask's config gives a TLS client context (a CA file and a certificate)."""
    from distributed.security import Security

    try:
        return Security().get_connection_args("client")["ssl_context"] is not None
    except (OSError, ValueError) as error:  # ssl.SSLError is an OSError
        raise BuildError(
            f"dask's TLS settings cannot be used: {error}",
            hint="check the files distributed.comm.tls.ca-file, .client.cert and .client.key "
            "name in dask's config",
        ) from None


def _good_workers(client: Client, log: TextIO) -> list[str]:
    """The workers whose versions are this checkout's; one line for each that is not."""
    refused = {w: why for w, why in client.run(refusal, expected_versions()).items() if why}
    for worker, why in sorted(refused.items()):
        print(f"worker {worker} refused: {why}", file=log)
    good = sorted(set(client.scheduler_info()["workers"]) - set(refused))
    if not good:
        raise BuildError(
            f"no worker of the Dask cluster can record: {len(refused)} refused, none left",
            hint="install this checkout's pinned versions (requirements.lock) on the workers",
        )
    return good


@dataclass
class Cluster:
    """An executor (builder.run.batch.Executor) on a Dask cluster."""

    client: Client
    runner: Runner
    log: TextIO
    address: str
    workers: list[str]

    @property
    def where(self) -> str:
        return f"on {len(self.workers)} Dask worker(s) at {self.address}"

    @property
    def gpu(self) -> bool:
        info = self.client.scheduler_info()["workers"]
        return any(info[w].get("resources", {}).get("GPU", 0) >= 1 for w in self.workers)

    def __call__(
        self, lessons: list[Lesson], seconds: dict[str, float]
    ) -> Iterator[tuple[Lesson, Execution, str]]:
        """Submit every lesson (the first the most urgent), hand back each as it ends."""
        expected = expected_versions()
        futures = {self._submit(x, expected, len(lessons) - i): x for i, x in enumerate(lessons)}
        board = Board(self.client, futures, seconds, self._threads(), self.log)
        try:
            yield from board.follow()
        finally:
            self.client.cancel([f for f in futures if not f.done()])

    def _submit(self, lesson: Lesson, expected: dict[str, str], priority: int) -> Future[Any]:
        return self.client.submit(
            work,
            task_of(lesson, expected),
            self.runner,
            key=f"record-{lesson.id}-{time.time_ns()}",
            priority=priority,
            resources={"GPU": 1} if lesson.needs_gpu else None,
            # Only the workers that passed the version check: with loose restrictions Dask's
            # work stealing hands a queued lesson to any idle worker, a refused one too.
            workers=self.workers,
            allow_other_workers=False,
            pure=False,
        )

    def _threads(self) -> dict[str, int]:
        """How many examples each worker runs at once."""
        info = self.client.scheduler_info()["workers"]
        return {w: int(info[w].get("nthreads", 1)) for w in self.workers if w in info}


class Board:
    """Follows the futures: hands back each execution, with a progress note for its line,
    and on a terminal redraws a live line (done / running / queued, elapsed, time left)."""

    def __init__(
        self,
        client: Client,
        futures: dict[Future[Any], Lesson],
        seconds: dict[str, float],
        threads: dict[str, int],
        log: TextIO,
    ) -> None:
        self.client, self.futures, self.log, self.threads = client, futures, log, threads
        known = [seconds[x.id] for x in futures.values() if x.id in seconds]
        untimed = sum(known) / len(known) if known else 0.0
        self.estimate = {x.id: seconds.get(x.id, untimed) for x in futures.values()}
        self.timed = bool(known)  # else no estimate: nothing was timed before
        self.started = time.monotonic()
        self.live = log.isatty()

    def follow(self) -> Iterator[tuple[Lesson, Execution, str]]:
        finished: queue.Queue[Future[Any]] = queue.Queue()
        for future in self.futures:
            future.add_done_callback(finished.put)
        pending = set(self.futures)
        while pending:
            try:
                future = finished.get(timeout=TICK_SECONDS)
            except queue.Empty:
                self._draw(pending)
                continue
            pending.discard(future)
            lesson = self.futures[future]
            worker, execution = _outcome(future, lesson)
            self._clear()
            yield lesson, execution, f"on {worker} · {self._summary(pending)}"
            self._draw(pending)
        self._clear()

    def _summary(self, pending: set[Future[Any]]) -> str:
        """'12/40 done, 4 running, 24 queued · 1:02 elapsed, ~1:30 left'. A worker is sent
        more tasks than it runs at once: running is at most its number of threads."""
        keys = {f.key for f in pending}
        running = sum(
            min(len(keys & set(held)), self.threads.get(worker, 1))
            for worker, held in _processing(self.client).items()
        )
        done = len(self.futures) - len(pending)
        said = (
            f"{done}/{len(self.futures)} done, {running} running, "
            f"{len(pending) - running} queued · {_clock(time.monotonic() - self.started)} elapsed"
        )
        if not self.timed:
            return said
        slots = max(1, sum(self.threads.values()))
        return (
            said
            + f", ~{_clock(sum(self.estimate[self.futures[f].id] for f in pending) / slots)} left"
        )

    def _draw(self, pending: set[Future[Any]]) -> None:
        if self.live and pending:
            write_control(self.log, f"\r\033[K  {self._summary(pending)}")
            self.log.flush()

    def _clear(self) -> None:
        if self.live:
            write_control(self.log, "\r\033[K")


def _processing(client: Client) -> dict[str, Any]:
    try:
        return dict(client.processing())
    except (OSError, TimeoutError):  # the scheduler went away: the futures will say so
        return {}


def _outcome(future: Future[Any], lesson: Lesson) -> tuple[str, Execution]:
    """The worker's (address, execution), or a failed execution saying what went wrong."""
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    def lost(detail: str) -> tuple[str, Execution]:
        return "no worker", Execution(lesson.id, Outcome.LOST, 0.0, detail=detail)

    try:
        worker, execution = future.result()
    except KilledWorker:
        return lost("the Dask workers running it died, again and again (KilledWorker)")
    except (FutureCancelledError, OSError, TimeoutError) as error:
        return lost(f"the connection to the Dask scheduler was lost ({type(error).__name__})")
    except Exception as error:  # raised on the worker: the builder there, not the example
        detail = f"the Dask task failed on the worker: {type(error).__name__}: {error}"
        return "a worker", Execution(lesson.id, Outcome.HARNESS, 0.0, detail=detail)
    return str(worker), execution


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds + 0.5), 60)
    return f"{minutes}:{rest:02d}"
