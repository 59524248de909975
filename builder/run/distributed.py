"""Record on a dask.distributed cluster: `record --dask tcp://HOST:PORT` (docs/recordings.md,
Recording beyond one machine).

The client sends each lesson as a `Task` (the loaded lesson whole, its cells among it, the
data files' bytes, the pinned versions: no shared file system is assumed), so the worker's
run is handed the very lesson a local run is and writes the same recording. A worker
compares its versions with the pins (`refusal`), stages the files in its own scratch folder
and calls the door a local run calls (`run_example`); only the client writes the recording,
atomically.

The harness is not shipped: a worker runs the builder it has, and one whose recording
harness hashes differently is refused like one whose jax differs, since shipping two files
into another version of the builder would record with a mix of both.

Lessons go only to the workers that passed the check, a list kept up to date while the
record runs (`Roster`): a worker that joins, or comes back under a new address, is checked
by a small task pinned to it. Dask runs a task again when its worker dies (a deterministic
example records the same); a lesson left with none of the workers it was sent to is sent
again (at most MAX_RESENDS times), and when no worker has passed for NO_WORKER_SECONDS what
is left fails as "lost its worker": a record never waits for a worker that will not come.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.console import clock
from ..core.errors import BuildError
from ..core.scratch import scratch
from ..course.files import read_file
from ..course.model import ACCELERATORS, Lesson
from ..course.rules import EXAMPLE_FILE
from .execute import Execution, Limits, Outcome, Runner
from .workers import Roster, _good_workers, _worker_name, expected_versions, refusal

if TYPE_CHECKING:
    from distributed import Client, Future

TICK_SECONDS = 1.0  # how often the workers are looked at
NO_WORKER_SECONDS = 60.0  # no worker that passed the check this long: what is left fails
MAX_RESENDS = 3  # a lesson sent again after its workers left; then it fails (as allowed-failures)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to run one lesson's example."""

    lesson: Lesson  # as the client loaded it (its folder is the client's: staged anew)
    data: dict[str, bytes]
    expected: dict[str, str]  # what `worker_versions` must say


def work(task: Task, runner: Runner) -> tuple[str, Execution]:
    """On the worker: check its versions, stage the files, run; (worker, execution)."""
    refused = refusal(task.expected)
    if refused:
        detail = f"worker {_worker_name()} refused: {refused}; nothing it ran is kept"
        return _worker_name(), Execution(task.lesson.id, Outcome.REFUSED, 0.0, detail=detail)
    with _staged(task) as lesson:
        return _worker_name(), runner(lesson, Limits(timeout=lesson.meta.timeout))


@contextlib.contextmanager
def _staged(task: Task) -> Iterator[Lesson]:
    """The lesson in a scratch folder laid out as content/lessons/<id>/ (what run_example
    reads, and what it checks stdout for absolute paths of): every other field, its cells
    among them, as the client loaded it."""
    lesson = task.lesson
    with scratch(f"task-{lesson.id}") as root:  # swept by the next build if killed
        folder = root / "content" / "lessons" / lesson.id
        folder.mkdir(parents=True)
        (folder / EXAMPLE_FILE).write_bytes(lesson.source)
        for name, data in task.data.items():
            (folder / name).write_bytes(data)
        yield replace(lesson, folder=folder)


def task_of(lesson: Lesson, expected: dict[str, str]) -> Task:
    """A lesson as a worker gets it. A CPU lesson is kept on jax's CPU backend (unless its
    own `env:` says otherwise): on a GPU worker jax would take the GPU, and the recording
    would no longer be the one a CPU machine makes."""
    meta = lesson.meta
    if lesson.accelerator is None:
        meta = replace(meta, env={"JAX_PLATFORMS": "cpu"} | dict(meta.env))
    data = {name: read_file(lesson.folder / name, None) for name in meta.data}
    return Task(replace(lesson, meta=meta), data, expected)


@contextlib.contextmanager
def connect(address: str, runner: Runner) -> Iterator[Cluster]:
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
        yield Cluster(client, runner, address, _good_workers(client))


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


@dataclass
class Cluster:
    """An executor (builder.run.batch.Executor) on a Dask cluster."""

    client: Client
    runner: Runner
    address: str
    roster: Roster

    @property
    def workers(self) -> list[str]:
        """The workers that passed the version check, now."""
        return self.roster.good

    @property
    def where(self) -> str:
        return f"on {len(self.workers)} Dask worker(s) at {self.address}"

    @property
    def slots(self) -> int:
        return max(1, sum(self._threads().values()))

    @property
    def accelerators(self) -> frozenset[str]:
        """'gpu' ('tpu') when a worker has the resource GPU (TPU) to run such lessons."""
        info = self.client.scheduler_info()["workers"]
        held = [info[w].get("resources", {}) for w in self.workers if w in info]
        return frozenset(k for k in ACCELERATORS if any(r.get(k.upper(), 0) >= 1 for r in held))

    def __call__(
        self, lessons: list[Lesson], seconds: dict[str, float]
    ) -> Iterator[tuple[Lesson, Execution, str]]:
        """Submit every lesson (the first the most urgent), hand back each as it ends."""
        expected = expected_versions()
        priority = {x.id: len(lessons) - i for i, x in enumerate(lessons)}

        def submit(lesson: Lesson) -> Future[Any]:
            return self._submit(lesson, expected, priority[lesson.id])

        futures = {submit(x): x for x in lessons}
        board = Board(self.client, futures, seconds, self._threads())
        try:
            yield from board.follow(Resender(self.roster, submit, board))
        finally:
            left = [f for f in [*board.futures, *self.roster.checking.values()] if not f.done()]
            if left and self.client.status == "running":
                self.client.cancel(left)

    def _submit(self, lesson: Lesson, expected: dict[str, str], priority: int) -> Future[Any]:
        return self.client.submit(
            work,
            task_of(lesson, expected),
            self.runner,
            key=f"record-{lesson.id}-{time.time_ns()}",
            priority=priority,
            resources={lesson.accelerator.upper(): 1} if lesson.accelerator else None,
            # Only the workers that passed the version check: with loose restrictions Dask's
            # work stealing hands a queued lesson to any idle worker, a refused one too.
            workers=list(self.workers),
            allow_other_workers=False,
            pure=False,
        )

    def _threads(self) -> dict[str, int]:
        """How many examples each worker runs at once."""
        info = self.client.scheduler_info()["workers"]
        return {w: int(info[w].get("nthreads", 1)) for w in self.workers if w in info}


class Board:
    """Follows the futures: hands back each execution, with a progress note for its line
    (done / running / queued, elapsed, time left)."""

    def __init__(
        self,
        client: Client,
        futures: dict[Future[Any], Lesson],
        seconds: dict[str, float],
        threads: dict[str, int],
    ) -> None:
        self.client, self.futures, self.threads = client, futures, threads
        known = [seconds[x.id] for x in futures.values() if x.id in seconds]
        untimed = sum(known) / len(known) if known else 0.0
        self.estimate = {x.id: seconds.get(x.id, untimed) for x in futures.values()}
        self.timed = bool(known)  # else no estimate: nothing was timed before
        self.started = time.monotonic()
        self.finished: queue.Queue[Future[Any]] = queue.Queue()
        self.pending: set[Future[Any]] = set()
        for future in futures:
            self._watch(future)

    def follow(self, resender: Resender) -> Iterator[tuple[Lesson, Execution, str]]:
        """Each execution as it lands; every TICK_SECONDS the resender looks at the workers
        (and may hand back lessons that can no longer run)."""
        looked = time.monotonic()
        while self.pending:
            try:
                future: Future[Any] | None = self.finished.get(timeout=TICK_SECONDS)
            except queue.Empty:
                future = None
            if time.monotonic() - looked >= TICK_SECONDS:
                looked = time.monotonic()
                for lesson, execution in resender.step():
                    yield self._landed(lesson, execution, "no worker")
            if future in self.pending:
                self.pending.discard(future)
                lesson = self.futures[future]
                worker, execution = _outcome(future, lesson)
                yield self._landed(lesson, execution, worker)

    def _watch(self, future: Future[Any]) -> None:
        self.pending.add(future)
        future.add_done_callback(self.finished.put)

    def replace(self, old: Future[Any], new: Future[Any]) -> None:
        """`new` runs the lesson `old` did (sent again): follow it instead."""
        self.futures[new] = self.futures.pop(old)
        self.pending.discard(old)
        self._watch(new)

    def _landed(
        self, lesson: Lesson, execution: Execution, worker: str
    ) -> tuple[Lesson, Execution, str]:
        return lesson, execution, f"on {worker} · {self._summary(self.pending)}"

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
            f"{len(pending) - running} queued · {clock(time.monotonic() - self.started)} elapsed"
        )
        if not self.timed:
            return said
        slots = max(1, sum(self.threads.values()))
        return (
            said
            + f", ~{clock(sum(self.estimate[self.futures[f].id] for f in pending) / slots)} left"
        )


class Resender:
    """Keeps every unfinished lesson on a worker that can run it. Each step: the roster looks
    at the workers; a lesson none of whose workers is left is sent again to those that passed
    now (a worker its nanny restarted under a new address among them, once checked), at most
    MAX_RESENDS times; when no worker has passed for NO_WORKER_SECONDS, every lesson left
    fails, saying so."""

    def __init__(
        self, roster: Roster, submit: Callable[[Lesson], Future[Any]], board: Board
    ) -> None:
        self.roster, self.submit, self.board = roster, submit, board
        self.sent_to = {future: frozenset(roster.good) for future in board.pending}
        self.resent: dict[str, int] = {}

    def step(self) -> Iterator[tuple[Lesson, Execution]]:
        for line in self.roster.refresh():
            logger.info("%s", line)
        good = frozenset(self.roster.good)
        for future in [f for f in self.board.pending if not self.sent_to[f] & good]:
            if self.roster.alone_for() > NO_WORKER_SECONDS:
                yield self._give_up(
                    future,
                    f"no Dask worker that passed the version check for {NO_WORKER_SECONDS:g} s "
                    "(they died or left, or came back and were refused)",
                )
            elif good and self.resent.get(self.board.futures[future].id, 0) >= MAX_RESENDS:
                yield self._give_up(
                    future,
                    "the workers it was sent to left the cluster (died, restarted or retired) "
                    f"{MAX_RESENDS + 1} time(s)",
                )
            elif good:
                self._resend(future, good)

    def _resend(self, old: Future[Any], good: frozenset[str]) -> None:
        lesson = self.board.futures[old]
        self.resent[lesson.id] = self.resent.get(lesson.id, 0) + 1
        new = self.submit(lesson)
        self.sent_to[new] = good
        self.board.replace(old, new)
        old.cancel()

    def _give_up(self, future: Future[Any], why: str) -> tuple[Lesson, Execution]:
        self.board.pending.discard(future)
        future.cancel()
        lesson = self.board.futures[future]
        return lesson, Execution(lesson.id, Outcome.LOST, 0.0, detail=why)


def _processing(client: Client) -> dict[str, Any]:
    if client.status != "running":  # the scheduler went away: the futures will say so
        return {}
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
