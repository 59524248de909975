"""Recording through a real dask.distributed LocalCluster (processes, loopback only).

The examples' runs are the canned ones (tests/conftest.canned_run): a LocalCluster's worker
processes start with this process's sys.path, so they import the runners of this file by
name. The slow test at the end runs the real examples with JAX on the workers.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError, ExecutionError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.model import Lesson
from builder.pipeline.build import build, check
from builder.run.batch import record_stale
from builder.run.execute import Execution, Limits, Runner, run_example
from tests.helpers import ROOT, canned_run, copy_course, logged, make_paths

distributed = pytest.importorskip("distributed")


def slow_canned_run(lesson: Lesson, limits: Limits) -> Execution:
    """The canned run, two seconds long: long enough to kill its worker meanwhile."""
    time.sleep(2)
    return canned_run(lesson, limits)


def gpu_canned_run(lesson: Lesson, limits: Limits) -> Execution:
    """The canned run as a GPU worker's jax would report it."""
    return _on(canned_run(lesson, limits), {"backend": "gpu"})


def tpu_canned_run(lesson: Lesson, limits: Limits) -> Execution:
    """The canned run as a TPU worker's jax would report it."""
    return _on(canned_run(lesson, limits), {"backend": "tpu", "deviceKind": "TPU v5 lite"})


def _on(execution: Execution, machine: dict[str, str]) -> Execution:
    return Execution(
        execution.lesson_id,
        execution.outcome,
        execution.seconds,
        stdout=execution.stdout,
        panels=execution.panels,
        environment=execution.environment | machine,
    )


def fake_numpy(version: str) -> None:
    """On a worker: report another numpy than the one installed."""
    import builder.run.workers

    real = builder.run.workers.metadata.version
    builder.run.workers.installed_version = lambda name: version if name == "numpy" else real(name)


def _local_cluster(folder: Path, workers: int = 2, **options: Any) -> distributed.LocalCluster:
    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # its HTTP server on loopback, any port
        local_directory=folder,
        **options,
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[distributed.LocalCluster]:
    """Two workers, shared by the tests that leave them as they found them."""
    with _local_cluster(tmp_path_factory.mktemp("dask")) as local:
        yield local


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[distributed.LocalCluster]:
    """Two workers for one test, which kills one or changes what they report."""
    with _local_cluster(tmp_path / "dask") as local:
        yield local


def _record(
    paths: Paths, address: str, runner: object = canned_run, log: io.StringIO | None = None
):  # type: ignore[no-untyped-def]
    course = load_course(paths.content)
    statuses = check(paths).statuses
    with logged(log):
        return record_stale(course, statuses, paths, 1, runner=runner, dask=address)


def _without_stamp(path: Path) -> dict[str, object]:
    recording = json.loads(path.read_bytes())
    del recording["generatedAt"]
    return recording


def _sidecars(paths: Paths) -> set[Path]:
    """The sidecars there are: one written just before Ctrl-C may have no recording yet."""
    return {p.relative_to(paths.recordings) for p in (paths.recordings / "_inputs").glob("*")}


def _same_recordings(one: Path, other: Path) -> None:
    names = sorted(p.name for p in one.glob("*.json"))
    assert names == sorted(p.name for p in other.glob("*.json"))
    for name in names:
        assert _without_stamp(one / name) == _without_stamp(other / name), name
        assert (one / "_inputs" / name).is_file() and (other / "_inputs" / name).is_file()


def test_a_cluster_records_what_one_machine_records(
    cluster: distributed.LocalCluster, recorded: Paths, tmp_path: Path
) -> None:
    paths = copy_course(tmp_path / "remote", broken=False)
    log = io.StringIO()
    done = _record(paths, cluster.scheduler_address, log=log)
    assert sorted(done) == ["basics-01", "basics-02", "speed-01"]
    _same_recordings(paths.recordings, recorded.recordings)
    assert all(status.fresh for status in check(paths).statuses)
    assert "on 2 Dask worker(s)" in log.getvalue()
    assert "3/3 done, 0 running, 0 queued" in log.getvalue()


def test_a_worker_killed_mid_example_is_replaced_and_the_record_finishes(
    own_cluster: distributed.LocalCluster, recorded: Paths, tmp_path: Path
) -> None:
    paths = copy_course(tmp_path / "remote", broken=False)
    client = distributed.Client(own_cluster, set_as_default=False)
    pids = client.run(os.getpid)
    outcome: list[object] = []
    thread = threading.Thread(
        target=lambda: outcome.append(
            _record(paths, own_cluster.scheduler_address, slow_canned_run)
        )
    )
    thread.start()
    victim = _first_busy_worker(client)
    os.kill(pids[victim], signal.SIGKILL)
    thread.join(timeout=60)
    client.close()
    assert outcome and len(outcome[0]) == 3  # type: ignore[arg-type]
    _same_recordings(paths.recordings, recorded.recordings)


def _record_in_background(
    paths: Paths, address: str, runner: object
) -> tuple[threading.Thread, list[object], io.StringIO]:
    """A record in a thread: (thread, [its result or the error it raised], its log)."""
    outcome: list[object] = []
    log = io.StringIO()

    def run() -> None:
        try:
            outcome.append(_record(paths, address, runner, log))
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)  # a hang must not hang pytest
    thread.start()
    return thread, outcome, log


def test_the_only_worker_restarted_by_its_nanny_gets_the_lessons_back(
    tmp_path: Path, recorded: Paths
) -> None:
    """The nanny brings the killed worker back under a new address; the lessons were pinned
    to the old one, and the record waited forever. The new worker is checked, then runs
    them: every lesson recorded, within a bounded time."""
    with _local_cluster(tmp_path / "dask", workers=1) as local:
        client = distributed.Client(local, set_as_default=False)
        [(first, pid)] = client.run(os.getpid).items()
        paths = copy_course(tmp_path / "remote", broken=False)
        thread, outcome, log = _record_in_background(
            paths, local.scheduler_address, slow_canned_run
        )
        _first_busy_worker(client)
        os.kill(pid, signal.SIGKILL)
        thread.join(timeout=90)
        restarted = set(client.scheduler_info()["workers"])
        client.close()
    assert not thread.is_alive(), "the record hung"
    assert [sorted(done) for done in outcome] == [["basics-01", "basics-02", "speed-01"]], outcome  # type: ignore[call-overload]
    assert first not in restarted and restarted
    said = log.getvalue()
    assert any(f"on {worker}" in said for worker in restarted), said
    _same_recordings(paths.recordings, recorded.recordings)


def test_a_lesson_whose_workers_keep_leaving_fails_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent again at most MAX_RESENDS times (0 here): the restarted worker passes, but the
    lessons that were pinned to the one killed fail as `lost its worker`, saying why."""
    import builder.run.distributed

    monkeypatch.setattr(builder.run.distributed, "MAX_RESENDS", 0)
    with _local_cluster(tmp_path / "dask", workers=1) as local:
        client = distributed.Client(local, set_as_default=False)
        [pid] = client.run(os.getpid).values()
        paths = copy_course(tmp_path / "remote", broken=False)
        thread, outcome, _ = _record_in_background(paths, local.scheduler_address, slow_canned_run)
        _first_busy_worker(client)
        os.kill(pid, signal.SIGKILL)
        thread.join(timeout=90)
        client.close()
    assert not thread.is_alive(), "the record hung"
    [error] = outcome
    assert isinstance(error, ExecutionError), error
    assert (
        "lost its worker: the workers it was sent to left the cluster (died, restarted or "
        in str(error)
    )
    assert "retired) 1 time(s)" in str(error)


def test_lessons_without_a_worker_fail_within_a_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The only worker leaves for good (retired): what it had not finished fails as `lost
    its worker`, saying why, once no worker has passed the check for NO_WORKER_SECONDS."""
    import builder.run.distributed

    monkeypatch.setattr(builder.run.distributed, "NO_WORKER_SECONDS", 3.0)
    with _local_cluster(tmp_path / "dask", workers=1) as local:
        client = distributed.Client(local, set_as_default=False)
        paths = copy_course(tmp_path / "remote", broken=False)
        thread, outcome, _ = _record_in_background(paths, local.scheduler_address, slow_canned_run)
        _first_busy_worker(client)
        started = time.monotonic()
        local.scale(0)
        thread.join(timeout=60)
        client.close()
    assert not thread.is_alive(), "the record hung"
    assert time.monotonic() - started < 30
    [error] = outcome
    assert isinstance(error, ExecutionError), error
    assert "lost its worker" in str(error)
    assert "no Dask worker that passed the version check for 3 s" in str(error)
    assert not list(paths.recordings.glob("**/*.tmp*"))


def _first_busy_worker(client: distributed.Client) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        busy = [w for w, keys in client.processing().items() if keys]
        if busy:
            time.sleep(0.5)  # inside the example's run
            return str(busy[0])
        time.sleep(0.05)
    raise AssertionError("no worker took a lesson")


def test_a_worker_with_other_versions_is_refused_and_runs_nothing(
    own_cluster: distributed.LocalCluster, recorded: Paths, tmp_path: Path
) -> None:
    client = distributed.Client(own_cluster, set_as_default=False)
    odd, good = sorted(client.scheduler_info()["workers"])
    client.run(fake_numpy, "1.26.0", workers=[odd])
    paths = copy_course(tmp_path / "remote", broken=False)
    log = io.StringIO()
    _record(paths, own_cluster.scheduler_address, log=log)
    said = log.getvalue()
    assert f"worker {odd} refused: numpy 1.26.0 (pinned 2.4.4)" in said
    assert f"on {odd}" not in said and said.count(f"on {good}") == 3
    _same_recordings(paths.recordings, recorded.recordings)

    client.run(fake_numpy, "1.26.0")  # now both differ: nothing runs, nothing is written
    again = copy_course(tmp_path / "again", broken=False)
    with pytest.raises(BuildError, match="no worker of the Dask cluster can record"):
        _record(again, own_cluster.scheduler_address)
    assert not again.recordings.exists() or not list(again.recordings.glob("*.json"))
    client.close()


def last_one_hangs_run(lesson: Lesson, limits: Limits) -> Execution:
    """The canned run, but speed-01 (the last of the three) runs for a minute: a Ctrl-C
    sent once the first recording lands always comes while the record is still running."""
    if lesson.id == "speed-01":
        time.sleep(60)
    return canned_run(lesson, limits)


def test_ctrl_c_keeps_what_finished_and_leaves_nothing_queued(
    own_cluster: distributed.LocalCluster, recorded: Paths, tmp_path: Path
) -> None:
    import _thread

    paths = copy_course(tmp_path / "remote", broken=False)

    def at_the_first_recording() -> None:
        _wait_for(lambda: list(paths.recordings.glob("*.json")), 120)
        _thread.interrupt_main()

    # interrupt_main() does nothing where SIGINT is ignored (pytest started in the background
    # by a non-interactive shell, as `nohup make test &` does): Ctrl-C raises here, as in a
    # terminal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    landed = threading.Thread(target=at_the_first_recording)
    try:
        landed.start()
        with pytest.raises(KeyboardInterrupt):
            _record(paths, own_cluster.scheduler_address, last_one_hangs_run)
        landed.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    kept = list(paths.recordings.glob("*.json"))
    assert 1 <= len(kept) < 3 and "speed-01.json" not in {p.name for p in kept}
    files = [p.relative_to(paths.recordings) for p in paths.recordings.rglob("*") if p.is_file()]
    sidecars = {Path("_inputs") / p.name for p in kept}
    assert sidecars <= set(files) <= sidecars | {Path(p.name) for p in kept} | _sidecars(paths)
    with distributed.Client(own_cluster, set_as_default=False) as client:
        # nothing queued: at most the hanging example still runs (Dask cannot stop it)
        _wait_for(lambda: sum(map(len, client.processing().values())) <= 1, 10)
    record_stale(load_course(paths.content), check(paths).statuses, paths, 2, runner=canned_run)
    _same_recordings(paths.recordings, recorded.recordings)


def test_a_task_on_a_worker_with_other_versions_runs_nothing(tmp_path: Path) -> None:
    """What a worker that joined after the check does: `work` checks again, first."""
    from builder.run.distributed import Task, task_of, work
    from builder.run.workers import expected_versions

    lesson = load_course(copy_course(tmp_path, broken=False).content).lessons[0]
    task = task_of(lesson, expected_versions())
    odd = Task(task.lesson, task.data, task.expected | {"jax": "0.4.1"})
    calls: list[str] = []
    _, execution = work(odd, lambda lesson, limits: calls.append(lesson.id))  # type: ignore[arg-type,func-returns-value]
    assert calls == [] and execution.outcome.name == "REFUSED"
    assert (
        f"refused: jax {version('jax')} (pinned 0.4.1); nothing it ran is kept" in execution.detail
    )
    assert work(task, canned_run)[1].ok


def test_a_scheduler_that_is_down_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dask

    paths = copy_course(tmp_path, broken=False)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    args = ["record", "--content", str(paths.content), "--recordings", str(paths.recordings)]
    args += ["--cache", str(paths.cache), "--dask", f"tcp://127.0.0.1:{port}"]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert main(args) == 1
    error = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in error
    assert "Traceback" not in error
    assert not list(paths.recordings.glob("**/*.json"))
    assert main([*args[:-1], "tcp://127.0.0.1"]) == 1  # not an address at all
    assert "--dask 'tcp://127.0.0.1' is not a scheduler address: missing port" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("tls://127.0.0.1:8786", "tls:// without dask's TLS settings"),
        ("ws://127.0.0.1:8786", "ws:// is not supported"),
        ("inproc://127.0.0.1/1/2", "inproc:// is not supported"),
        ("ucx://127.0.0.1:8786", "ucx:// is not supported"),
        ("tcp://tls://127.0.0.1:8786", "tcp://tls:// is not supported"),
        ("127.0.0.1", "is not a scheduler address: missing port"),
    ],
)
def test_an_address_this_client_cannot_speak_to_fails_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, said: str
) -> None:
    """tls:// without TLS settings was a TypeError after a minute of retries."""
    paths = copy_course(tmp_path, broken=False)
    args = ["record", "--content", str(paths.content), "--recordings", str(paths.recordings)]
    started = time.monotonic()
    assert main([*args, "--cache", str(paths.cache), "--dask", address]) == 1
    assert time.monotonic() - started < 10
    error = capsys.readouterr().err
    assert f"error: --dask {address!r}" in error and said in error
    assert "tcp://HOST:PORT" in error and "Traceback" not in error


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return key, cert


def test_tls_with_dask_tls_settings_is_tried_and_broken_settings_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dask

    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed: no certificate to try")
    key, cert = _self_signed(tmp_path)
    paths = copy_course(tmp_path / "course", broken=False)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        address = f"tls://127.0.0.1:{free.getsockname()[1]}"
    args = ["record", "--content", str(paths.content), "--recordings", str(paths.recordings)]
    args += ["--cache", str(paths.cache), "--dask", address]
    tls = {
        "distributed.comm.tls.ca-file": str(cert),
        "distributed.comm.tls.client.cert": str(cert),
        "distributed.comm.tls.client.key": str(key),
    }
    with dask.config.set({**tls, "distributed.comm.timeouts.connect": "1s"}):
        assert main(args) == 1
    assert f"cannot reach the Dask scheduler at {address}" in capsys.readouterr().err
    with dask.config.set({**tls, "distributed.comm.tls.ca-file": str(tmp_path / "none.pem")}):
        assert main(args) == 1
    error = capsys.readouterr().err
    assert "error: dask's TLS settings cannot be used" in error and "Traceback" not in error


def test_a_lost_scheduler_keeps_what_finished_and_a_rerun_finishes_the_rest(
    tmp_path: Path, recorded: Paths
) -> None:
    """A scheduler and a worker of their own (not a LocalCluster): the scheduler is killed
    once the first recording has landed. The client tries to reconnect for the connect
    timeout (30 s by default; 2 s here), then gives its futures up."""
    import dask

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{free.getsockname()[1]}"
    env = os.environ | {"PYTHONPATH": str(ROOT)}  # the builder, and tests.helpers' runners
    port = address.rsplit(":", 1)[1]
    scheduler = _start(env, "dask_scheduler", "--host", "127.0.0.1", "--port", port)
    worker = _start(env, "dask_worker", address, "--nthreads", "1", "--no-nanny")
    try:
        paths = copy_course(tmp_path / "remote", broken=False)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                with distributed.Client(address, timeout=20) as client:
                    client.wait_for_workers(1, timeout=20)
                _record(paths, address, slow_canned_run)
            except BaseException as error:
                failure.append(error)

        thread = threading.Thread(target=run)
        with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
            thread.start()
            _wait_for(lambda: failure or len(list(paths.recordings.glob("*.json"))) >= 1, 40)
            assert not failure, str(failure[0])
            scheduler.kill()
            thread.join(timeout=60)
        assert not thread.is_alive()
    finally:
        for process in (scheduler, worker):
            process.kill()
            process.wait()
    assert failure and isinstance(failure[0], ExecutionError), failure
    assert "lost its worker" in str(failure[0]) and "connection" in str(failure[0])
    kept = sorted(p.name for p in paths.recordings.glob("*.json"))
    assert 1 <= len(kept) < 3
    assert not list(paths.recordings.glob("**/*.tmp*")) and not list(paths.recordings.glob("**/.*"))
    statuses = check(paths).statuses
    assert sum(s.fresh for s in statuses) == len(kept)
    record_stale(load_course(paths.content), statuses, paths, 2, runner=canned_run)
    _same_recordings(paths.recordings, recorded.recordings)


def _start(env: dict[str, str], command: str, *args: str) -> subprocess.Popen[bytes]:
    """A Dask command of the CLI (`dask scheduler`, `dask worker`) in its own process."""
    module = f"distributed.cli.{command}"
    return subprocess.Popen(
        [sys.executable, "-m", module, *args, "--dashboard-address", "127.0.0.1:0"],
        env=env,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(condition: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize(("kind", "run"), [("gpu", gpu_canned_run), ("tpu", tpu_canned_run)])
def test_an_accelerator_lesson_goes_only_to_such_a_worker_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, run: Runner
) -> None:
    """`requires: gpu` and `requires: tpu`, one mechanism: a worker with the resource."""
    paths = copy_course(tmp_path / "course", broken=False)
    lesson_md = paths.content / "lessons" / "basics-02" / "lesson.md"
    front = f"\nrequires: {kind}\n---\n"
    lesson_md.write_text(lesson_md.read_text().replace("\n---\n", front, 1))
    with logged() as log:
        record_stale(load_course(paths.content), check(paths).statuses, paths, 2, runner=canned_run)
    said = f"need a {kind.upper()} machine (requires: {kind}): basics-02"
    assert said in log.getvalue()
    assert not (paths.recordings / "basics-02.json").exists()
    where = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    where += ["--cache", str(paths.cache)]
    assert main(["check", "--format", "github", *where]) == 0
    assert "::warning file=" in capsys.readouterr().out
    assert main(["check", *where]) == 0
    other = {"gpu": "TPU", "tpu": "GPU"}[kind]  # a worker with the other accelerator
    with _local_cluster(tmp_path / "other", workers=1, resources={other: 1}) as elsewhere:
        assert _record(paths, elsewhere.scheduler_address, run) == ()
    with _local_cluster(tmp_path / "dask", workers=1, resources={kind.upper(): 1}) as cluster:
        assert _record(paths, cluster.scheduler_address, run) == ("basics-02",)
    recording = json.loads((paths.recordings / "basics-02.json").read_bytes())
    assert recording["provenance"] == f"recorded_{kind}_computation"
    assert recording["environment"]["backend"] == kind
    assert all(status.fresh for status in check(paths).statuses)
    build(paths, execute=False, jobs=1)
    page = (paths.out / "recordings" / "index.html").read_text()
    assert f"{kind.upper()}, 1 device" in page and "CPU, 1 device" in page
    device_lesson = load_course(paths.content).lesson("basics-02")
    assert device_lesson is not None
    lesson = (paths.out / device_lesson.url / "index.html").read_text()
    assert f"Recorded {kind.upper()} computation" in lesson


@pytest.mark.slow
def test_real_examples_on_workers_record_the_bytes_a_local_run_records(
    cluster: distributed.LocalCluster, tmp_path: Path
) -> None:
    here = copy_course(tmp_path / "here", broken=False)
    there = make_paths(tmp_path / "there")
    shutil.copytree(here.content, there.content)
    course = load_course(here.content)
    record_stale(course, check(here).statuses, here, 2, runner=run_example)
    _record(there, cluster.scheduler_address, run_example)
    _same_recordings(here.recordings, there.recordings)


@pytest.mark.slow
def test_a_lesson_in_cells_recorded_on_a_worker_is_byte_for_byte_the_local_one(
    cluster: distributed.LocalCluster, tmp_path: Path
) -> None:
    """A real scheduler and workers on loopback, the real runner: the cells lesson's
    recording (it lost its `cells` on a worker once) is the local one's bytes, its
    generatedAt aside, and check calls it fresh."""
    here = copy_course(tmp_path / "here", broken=False, cells=True)
    there = make_paths(tmp_path / "there")
    shutil.copytree(here.content, there.content)
    course, address = load_course(here.content), cluster.scheduler_address
    for paths, dask in ((here, None), (there, address)):
        cells = [x for x in check(paths).statuses if x.lesson_id == "basics-03"]
        record_stale(course, cells, paths, 1, runner=run_example, dask=dask)
    name = "basics-03.json"
    local, remote = (_stamped_aside(p.recordings / name) for p in (here, there))
    assert b'"cells": [' in remote and remote == local
    assert {s.lesson_id: str(s.state) for s in check(there).statuses}["basics-03"] == "fresh"


def _stamped_aside(path: Path) -> bytes:
    """The recording's bytes with its generatedAt (the one field that tells runs apart here:
    the example prints no time) blanked."""
    return re.sub(rb'"generatedAt": "[^"]*"', b'"generatedAt": ""', path.read_bytes())
