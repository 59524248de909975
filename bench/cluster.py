"""Record a synthetic course locally (-j 2) and on a Dask LocalCluster, in the same run.

    python bench/cluster.py                 # 40 lessons sleeping 2 s; -j 2 vs 4 workers
    python bench/cluster.py --lessons 8 --seconds 1 --workers 2   # a quick look

Two measures, both against this run's own figures:

- real: every example through the real door (builder.run.execute.run_example: a subprocess per
  example, the harness, jax read for the environment), recorded with `-j JOBS` here and
  then on a LocalCluster of WORKERS single-thread workers; the speed-up is the ratio of the
  two wall times, and the two recordings folders must agree (all but generatedAt).
- scheduling: the same lessons on the same cluster with a runner that only sleeps, so the
  wall time above SECONDS x ceil(LESSONS / WORKERS) is Dask's own cost (submit, schedule,
  ship the task, hand back the execution), given per lesson.

Overhead per lesson in the real run = (wall x slots - the examples' own seconds) / lessons,
where the examples' seconds are what run_example measured around each subprocess.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from builder.core.observe import Paths  # noqa: E402
from builder.course.load import load_course  # noqa: E402
from builder.course.model import Lesson  # noqa: E402
from builder.course.rules import read_inputs, run_seconds  # noqa: E402
from builder.pipeline.build import check  # noqa: E402
from builder.run.batch import record_stale  # noqa: E402
from builder.run.execute import Execution, Limits, Outcome, run_example  # noqa: E402


def sleep_run(lesson: Lesson, limits: Limits) -> Execution:
    """A run that only takes the example's time: what is left of the wall time is Dask's."""
    seconds = float(lesson.meta.env["BENCH_SLEEP"])
    time.sleep(seconds)
    environment = {"backend": "cpu", "deviceCount": 1, "jax": "0.9.2"}
    environment |= {"numpy": "2.4.4", "matplotlib": "3.10.8"}
    return Execution(lesson.id, Outcome.OK, seconds, stdout="slept\n", environment=environment)


def make_course(root: Path, lessons: int, seconds: float) -> Paths:
    content = root / "content"
    (content / "lessons").mkdir(parents=True)
    (content / "course.yml").write_text(
        "title: Sleepers\nsummary: Examples that sleep.\n"
        "arcs:\n  - id: sleep\n    title: Sleep\n    summary: They sleep.\n"
    )
    for index in range(lessons):
        folder = content / "lessons" / f"sleep-{index:02d}"
        folder.mkdir()
        (folder / "lesson.md").write_text(
            f"---\nid: sleep-{index:02d}\nslug: s{index}\ntitle: Sleeper {index}\narc: sleep\n"
            f"order: {index}\nsummary: Sleeps.\nenv:\n  BENCH_SLEEP: '{seconds:g}'\n---\n"
            "{{ output }}\n"
        )
        (folder / "example.py").write_text(
            f"import time\n\ntime.sleep({seconds!r})\nprint('slept {index}')\n"
        )
    return Paths(content, root / "recordings", root / "site", root / ".cache")


def timed_record(paths: Paths, jobs: int, runner: object, dask: str | None) -> float:
    shutil.rmtree(paths.recordings, ignore_errors=True)
    course = load_course(paths.content)
    started = time.perf_counter()
    record_stale(
        course, check(paths).statuses, paths, jobs, runner=runner, dask=dask, log=io.StringIO()
    )  # type: ignore[arg-type]
    return time.perf_counter() - started


def same_recordings(one: Path, other: Path) -> bool:
    def body(path: Path) -> dict[str, object]:
        recording = json.loads(path.read_bytes())
        recording.pop("generatedAt")
        return dict(recording)

    names = sorted(p.name for p in one.glob("*.json"))
    return names == sorted(p.name for p in other.glob("*.json")) and all(
        body(one / name) == body(other / name) for name in names
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--jobs", type=int, default=2, help="local -j (default 2)")
    parser.add_argument("--workers", type=int, default=4, help="single-thread Dask workers")
    args = parser.parse_args()
    from distributed import LocalCluster

    root = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    try:
        paths = make_course(root / "course", args.lessons, args.seconds)
        local = timed_record(paths, args.jobs, run_example, None)
        local_own = sum(run_seconds(read_inputs(paths.recordings)).values())
        shutil.copytree(paths.recordings, root / "local-recordings")
        with LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",  # its HTTP server on loopback, any port
            local_directory=root / "dask",
        ) as cluster:
            address = cluster.scheduler_address
            remote = timed_record(paths, 1, run_example, address)
            remote_own = sum(run_seconds(read_inputs(paths.recordings)).values())
            same = same_recordings(root / "local-recordings", paths.recordings)
            sleeping = timed_record(paths, 1, sleep_run, address)
        report(args, local, local_own, remote, remote_own, same, sleeping)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def report(
    args: argparse.Namespace,
    local: float,
    local_own: float,
    remote: float,
    remote_own: float,
    same: bool,
    sleeping: float,
) -> None:
    n, w = args.lessons, args.workers
    ideal = args.seconds * math.ceil(n / w)
    print(f"{n} lessons, each example sleeping {args.seconds:g} s; {sys.executable}")
    print(f"  real examples, -j {args.jobs} here:        {local:7.2f} s wall")
    print(f"  real examples, {w} Dask workers:       {remote:7.2f} s wall")
    print(f"  speed-up (same run):                 {local / remote:7.2f}x")
    print(
        f"  overhead per lesson over the example's own time: -j {args.jobs} "
        f"{(local * args.jobs - local_own) / n * 1000:6.0f} ms, Dask "
        f"{(remote * w - remote_own) / n * 1000:6.0f} ms (own time: mean "
        f"{local_own / n:.2f} s here, {remote_own / n:.2f} s on workers)"
    )
    print(f"  recordings equal but generatedAt:    {same}")
    print(
        f"  scheduling only (sleeping runner):   {sleeping:7.2f} s wall for {ideal:.2f} s of "
        f"sleep per worker: {(sleeping - ideal) * w / n * 1000:.1f} ms per lesson of Dask's own"
    )


if __name__ == "__main__":
    sys.exit(main())
