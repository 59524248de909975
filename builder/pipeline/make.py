"""Make the site's artifacts, taking from the store and the site whatever is already made.

An artifact (builder.core.artifact) is some files of the site, the pure function that makes
them (builder.render) and its arguments, here with their digest (Keyed, builder.pipeline.keys).
This is the only place that makes them (builder.pipeline.reuse decides what they are):

- an artifact whose files the site folder still holds exactly as the last build wrote them
  under the same key is kept as it is (its bytes are not even read: the index says
  which files it made and what else making it left, `Trace`);
- else one the store holds under its key is taken from there;
- else it is made: in forked worker processes when there are many (a cold build), which
  send back each artifact as they make it, and kept in the store unless making it reported
  errors. This process is the store's only writer: it commits what the workers send as it
  comes (every SPILL_BYTES) and when they are done, so a build stopped after that (killed,
  or failing in a later stage) has lost none of it, and neither process holds two copies
  of the site's bytes.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.artifact import Made
from ..core.console import TICK_SECONDS, Progress
from ..core.errors import BuildError, raise_all
from ..core.lineage import orphaned
from ..core.observe import Observed
from ..core.store import Store
from .index import Index, Published
from .keys import Keyed

MIN_PER_WORKER = 24  # fewer misses than this a worker are made in this process
SPILL_BYTES = 32 * 2**20  # what workers sent, committed once this much is pending


@dataclass(frozen=True)
class Kept:
    """What the last build left in the site folder that this one may keep, and what the
    preview (builder.preview.session) holds in memory from its last build, files and all."""

    last: Published | None
    out: Path
    intact: frozenset[str]  # site files untouched since the last build wrote them
    held: Mapping[str, Made] = field(default_factory=dict)  # by artifact key

    @classmethod
    def since(cls, index: Index, out: Path, now: Observed) -> Kept:
        last, head = index.published, index.head
        intact = frozenset(head.intact(out, now)) if last and head else frozenset()
        return cls(last, out, intact)

    def made(self, artifact: Keyed) -> Made | None:
        if artifact.key in self.held:
            return self.held[artifact.key]
        trace = self.last.traces.get(artifact.key) if self.last else None
        if self.last is None or trace is None:
            return None
        for name in trace.names:
            if self.last.files.get(name) != artifact.key or name not in self.intact:
                return None
        return Made(None, trace)


def make(artifacts: Sequence[Keyed], store: Store, kept: Kept, jobs: int) -> dict[str, Made]:
    """Every artifact made (or kept, or taken from the store), in order, in forked processes
    when there are many; raises every error that making them reported, together."""
    made: list[Made | None] = [kept.made(a) or _stored(store, a.key) for a in artifacts]
    missing = [i for i, found in enumerate(made) if found is None]
    fresh = _render(artifacts, missing, store, jobs) if missing else {}
    for i in missing:
        made[i] = fresh[i] if i in fresh else _make_one(artifacts[i], store)
    raise_all([error for result in made if result for error in result.errors])
    return {a.key: result for a, result in zip(artifacts, made, strict=True) if result}


def taken_or_made(artifact: Keyed, store: Store) -> Made:
    """The artifact as the store holds it, or made (and stored) when the store does not."""
    return _stored(store, artifact.key) or _make_one(artifact, store)


def _stored(store: Store, key: str) -> Made | None:
    """The artifact the store holds under `key`, or None (none, damaged, of another version)."""
    import pickle

    data = store.get(key)
    try:
        found = pickle.loads(data) if data is not None else None
    except Exception:  # damaged, or from another version: make it again
        return None
    return found if isinstance(found, Made) else None


def _make_one(artifact: Keyed, store: Store) -> Made:
    """Make it, with the store keys it used, and keep it unless it reported errors."""
    import pickle

    with store.recording() as used:
        made = artifact.make()
    files = made.files or {}
    trace = replace(made.trace, names=tuple(files), uses=tuple(sorted(used)))
    made = Made(files, trace, made.errors)
    if files and not made.errors:
        store.put(artifact.key, pickle.dumps(made, protocol=5))
    return made


def _render(
    artifacts: Sequence[Keyed], missing: list[int], store: Store, jobs: int
) -> dict[int, Made]:
    """The `missing` artifacts made, in workers when there are many, with a progress line
    (done/total, whose page or chart is being made, elapsed, and the time left at this pace)."""
    workers = min(jobs, len(missing) // MIN_PER_WORKER)
    names = [artifacts[i].label for i in missing]
    with Progress("rendering", names, max(1, workers)) as progress:
        if workers > 1:
            return _in_workers(artifacts, missing, store, workers, progress)
        made = {}
        for n, i in enumerate(missing):
            made[i] = _make_one(artifacts[i], store)
            progress.step(done=n + 1)
        return made


def _in_workers(
    artifacts: Sequence[Keyed],
    missing: list[int],
    store: Store,
    workers: int,
    progress: Progress,
) -> dict[int, Made]:
    """Make the `missing` artifacts in `workers` forked processes, which read the course
    from their copy of this one's memory.

    The first artifact (a lesson's page) is made here first, so that the workers inherit
    what making it loaded (compiled templates, the Markdown parser, Pygments' lexers)
    instead of each loading it again; the rest wait by kind (`Queues`). Each worker sends
    back every artifact as soon as it is made: what it added to the store (the artifact
    pickled once, and what making it stored) or, when it is not to be stored, what it
    made. This process commits it all (see `_receive`): workers that commit themselves
    wait on each other.
    """
    results = {i: _make_one(artifacts[i], store) for i in missing[:1]}
    queues = Queues.of(artifacts, missing[1:])
    store.commit()  # what this process found so far, for the workers to read
    store.close()  # no connection across fork(): a worker opens its own
    from multiprocessing import get_context  # a cold build only

    context = get_context("fork")
    taken = [context.Value("q", 0) for _ in queues.kinds]  # how many of each the workers took
    pipes, processes = [], []
    for n in range(workers):
        receive, send = context.Pipe(duplex=False)
        work = (artifacts, queues.turned(n), taken, store, send, os.getpid())
        process = context.Process(target=_worker, args=work)
        process.start()
        send.close()
        pipes.append(receive)
        processes.append(process)
    try:
        _receive(pipes, artifacts, store, results, progress)
    except BaseException as error:
        for process in processes:  # one may be waiting to send what nobody will read
            process.kill()
        if isinstance(error, EOFError):
            raise BuildError("a rendering worker died; run the build again") from None
        raise
    finally:
        for process in processes:
            process.join()
    store.commit()  # kept, whatever happens to the rest of this build
    return results


def _receive(
    pipes: list[Any],
    artifacts: Sequence[Keyed],
    store: Store,
    results: dict[int, Made],
    progress: Progress,
) -> None:
    """Each artifact the workers send, into `results` (until each sends None: it is done),
    what they stored into the store, committed whenever SPILL_BYTES of it are pending:
    neither the workers nor this process hold the pickled bytes of more than that."""
    from multiprocessing.connection import wait

    waiting, pending = list(pipes), 0
    while waiting:
        ready = wait(waiting, timeout=TICK_SECONDS / 4)
        for receive in [pipe for pipe in waiting if pipe in ready]:
            sent = receive.recv()
            if sent is None:
                waiting.remove(receive)
            else:
                pending += _received(sent, artifacts, store, results)
        if pending > SPILL_BYTES:
            store.commit()
            pending = 0
        progress.step(done=len(results))


@dataclass(frozen=True)
class Queues:
    """Artifacts waiting to be made, by kind (in the order each kind first comes), each
    kind's in order; `taken[k]` counts those of `kinds[k]` that workers took.

    Each worker takes the next artifact not yet taken of the kind it prefers (the kinds in
    turn: with two workers, one prefers pages, the other charts), then of the others once
    none is left (a chart costs twice what a page does: fixed shares would leave one idle).
    So one worker loads matplotlib while the others render pages, and another loads it
    only once no page is left; loaded before the workers start, it would leave every core
    but one idle meanwhile."""

    kinds: tuple[tuple[int, list[int]], ...]  # (its counter's number, its artifacts)

    @classmethod
    def of(cls, artifacts: Sequence[Keyed], indices: list[int]) -> Queues:
        by_kind: dict[str, list[int]] = {}
        for i in indices:
            by_kind.setdefault(artifacts[i].kind, []).append(i)
        return cls(tuple(enumerate(by_kind.values())))

    def turned(self, n: int) -> Queues:
        """The same queues, as worker `n` asks them: from the kind `n` prefers on."""
        at = n % len(self.kinds) if self.kinds else 0
        return Queues(self.kinds[at:] + self.kinds[:at])

    def take(self, taken: Sequence[Any]) -> int | None:
        """The next artifact not yet taken, of the first kind that has one; None: all are."""
        for counter, waiting in self.kinds:
            with taken[counter].get_lock():
                n: int = taken[counter].value
                if n < len(waiting):
                    taken[counter].value = n + 1
                    return waiting[n]
        return None


def _received(sent: Any, artifacts: Sequence[Keyed], store: Store, results: dict[int, Made]) -> int:
    """One artifact a worker made, into `results`, and what it stored into this store;
    the bytes of that."""
    import pickle

    if isinstance(sent, BaseException):
        raise sent
    i, unkept, added = sent
    for key, data in added.items():
        store.put(key, data)
    key = artifacts[i].key
    results[i] = unkept if unkept is not None else pickle.loads(added[key])
    return sum(map(len, added.values()))


def _worker(
    artifacts: Sequence[Keyed],
    queues: Queues,
    taken: Sequence[Any],
    store: Store,
    send: Any,
    parent: int,
) -> None:
    orphaned(parent)  # no lock of the build's held here, and no life after the builder's
    # The CLI runs with the cyclic collector off (builder/__main__.py); a worker makes a
    # matplotlib figure per chart, each a web of cycles: collect them, but never walk the
    # course and everything else inherited from the parent (frozen).
    gc.freeze()
    gc.enable()
    sent: set[str] = set()  # what making an artifact stored (a chart's SVGs) is sent once
    try:
        while (i := queues.take(taken)) is not None:
            made = _make_one(artifacts[i], store)
            data = store.pending.pop(artifacts[i].key, None)  # None: errors, or no files
            new = (k for k in made.trace.uses if k in store.pending and k not in sent)
            added = {k: store.pending[k] for k in new}
            sent.update(added)
            if data is not None:
                added[artifacts[i].key] = data
            send.send((i, made if data is None else None, added))
        send.send(None)
    except Exception as error:  # the parent raises it
        send.send(error)
    send.close()
    os._exit(0)  # nothing of the parent's to flush or tear down
