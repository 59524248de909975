"""The Dask workers a record may use: each checked for this checkout's versions (the pins,
the recording harness, the interpreter) by a task pinned to it before any lesson runs there,
and kept up to date while the record runs (a worker that joins or comes back from a restart
is checked in turn)."""

from __future__ import annotations

import logging
import sys
import time
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ..core.errors import BuildError
from ..core.observe import GUARDED, NOT_INSTALLED
from ..course.rules import LOCK_FILE, lock_pins

if TYPE_CHECKING:
    from distributed import Client, Future


logger = logging.getLogger(__name__)
HARNESS = "harness"  # the key of the recording harness's hash among the versions


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


def _good_workers(client: Client) -> Roster:
    """The workers whose versions are this checkout's; one line for each that is not. Only
    the workers that answered the check: one that joins meanwhile is checked by the roster."""
    expected = expected_versions()
    answers = client.run(refusal, expected)
    refused = {w: why for w, why in answers.items() if why}
    for worker, why in sorted(refused.items()):
        logger.info("worker %s refused: %s", worker, why)
    good = sorted(set(answers) - set(refused))
    if not good:
        raise BuildError(
            f"no worker of the Dask cluster can record: {len(refused)} refused, none left",
            hint="install this checkout's pinned versions (requirements.lock) on the workers",
        )
    return Roster(client, expected, good, set(refused))


class Roster:
    """The workers that passed the version check, kept up to date during a record: a new
    address (a worker that joined, or came back from a restart) is checked by a task pinned
    to it, and joins the list when it passes; an address the scheduler no longer has leaves
    it."""

    def __init__(
        self, client: Client, expected: dict[str, str], good: list[str], refused: set[str]
    ) -> None:
        self.client, self.expected = client, expected
        self.good, self.refused = good, refused
        self.checking: dict[str, Future[Any]] = {}
        self.alone_since: float | None = None  # since when no worker has passed

    def refresh(self) -> list[str]:
        """Look at the scheduler's workers now; the lines to print (workers refused)."""
        try:
            workers = self.client.scheduler_info().get("workers")
        except (OSError, TimeoutError):  # the scheduler went away: the futures will say so
            return []
        if self.client.status != "running" or workers is None:  # so did it (a cached answer)
            return []
        live = set(workers)
        self.good = [w for w in self.good if w in live]
        self.refused &= live
        for address in sorted(live - set(self.good) - self.refused - set(self.checking)):
            self.checking[address] = self.client.submit(
                refusal,
                self.expected,
                key=f"check-{address}-{time.time_ns()}",
                priority=1 << 30,  # before any lesson
                workers=[address],
                allow_other_workers=False,
                pure=False,
            )
        said = [self._answer(address, live) for address in sorted(self.checking)]
        self.good.sort()
        if self.good:
            self.alone_since = None
        elif self.alone_since is None:
            self.alone_since = time.monotonic()
        return [line for line in said if line]

    def _answer(self, address: str, live: set[str]) -> str:
        """Take in a check that ended (or whose worker left); a line when it refused."""
        future = self.checking[address]
        if address not in live:
            future.cancel()
        elif not future.done():
            return ""
        del self.checking[address]
        if address not in live:
            return ""
        try:
            why = str(future.result())
        except Exception as error:  # the check itself failed there: the worker cannot record
            why = f"its version check failed ({type(error).__name__}: {error})"
        if why:
            self.refused.add(address)
            return f"worker {address} refused: {why}"
        self.good.append(address)
        return ""

    def alone_for(self) -> float:
        """Seconds since the last worker that had passed left (0 while there is one)."""
        return 0.0 if self.alone_since is None else time.monotonic() - self.alone_since
