"""Measure the builder on synthetic courses of 100 / 1,000 (/ 5,000) lessons.

    python bench/run.py            # 100 and 1,000 lessons, 3 runs each, plus execution
    python bench/run.py --quick    # 100 lessons, 1 run, one real example: a smoke test
    python bench/run.py --big      # also 5,000 lessons
    python bench/run.py --huge     # 1,000, then 5,000 (prose edit) and 10,000 lessons, as ratios
    python bench/run.py --scales 1000 --runs 5 --no-exec

Every figure is the median wall time of a `python -m builder ...` subprocess, interpreter
start included, against a course made by bench/generate.py in a scratch folder, run by a
copy of builder/ taken as the benchmark starts (editing the checkout meanwhile changes
no key). Peak memory is the largest resident set of one command (wait4's ru_maxrss). A
cold render is timed twice: from folders moved aside ("cold", as on a fresh clone), and
right after deleting the last build ("cold after clean", see after_clean). The baseline
is bench/baseline.py (markdown-it + Jinja2 + Pygments in one loop over the same pages),
measured in the same run, so ratios stay meaningful on a busy machine; so is Hugo, when
`hugo` is on PATH (or given as --hugo), over the same lesson bodies (bench/sites.py): cold,
and after one page's prose edit (a full rebuild: Hugo has no incremental one-shot build).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.generate import generate, lesson_id  # noqa: E402
from bench.sites import hugo_site  # noqa: E402

PY = sys.executable
HARNESS_LESSONS = ("jaxpr-01", "xla-01", "performance-01")
JOBS_LESSONS = ("jaxpr-01", "jaxpr-02", "xla-01", "xla-02", "performance-01", "performance-02")
CODE = "code"  # in the scratch folder: the builder that is measured (`frozen_code`)
RECENTLY_DELETED_S = 35  # ext4's recently_deleted(): 30 s, 35 s while the inode table is dirty


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mb: float
    code: int
    stderr: str


def run(command: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> Run:
    """One subprocess, timed from spawn to reap, with its own peak memory."""
    err = tempfile.TemporaryFile()  # noqa: SIM115 (the child writes into it; closed below)
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: exec the command with stdout dropped, stderr kept
        os.chdir(cwd)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(err.fileno(), 2)
        os.execve(command[0], command, _as_make_runs_it(env or os.environ.copy()))
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - started
    err.seek(0)
    text = err.read().decode("utf-8", "replace")
    err.close()
    return Run(seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), text)


def _as_make_runs_it(env: dict[str, str]) -> dict[str, str]:
    """The Makefile unexports PYTHONDONTWRITEBYTECODE (compiled modules are kept): so here."""
    return {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}


@dataclass
class Scale:
    root: Path
    count: int
    results: dict[str, list[Run]] = field(default_factory=dict)
    page_kib: float = 0.0
    hugo_kib: float = 0.0

    def builder(self, command: str, *extra: str) -> list[str]:
        paths = ["--content", "content", "--recordings", "recordings"]
        if command != "check":
            paths += ["--out", "site", "--cache", ".cache"]
        return [PY, "-m", "builder", command, *paths, *extra]

    def measure(
        self,
        name: str,
        command: list[str],
        before: Callable[[], None] | None = None,
        expect: int = 0,
        runs: int = 3,
    ) -> None:
        for _ in range(runs):
            if before:
                before()
            result = run(command, self.root, self.env())
            if result.code != expect:
                sys.exit(f"{name}: exit {result.code}, expected {expect}\n{result.stderr}")
            self.results.setdefault(name, []).append(result)

    def env(self) -> dict[str, str]:
        """This checkout's builder as it was when the benchmark began (`frozen_code`), not
        the one the venv's .pth names (/work/main's, say)."""
        return {**os.environ, "PYTHONPATH": str(self.root.parent / CODE)}

    def median(self, name: str) -> float:
        if name not in self.results:  # not measured at this scale (--huge)
            return math.nan
        return statistics.median(r.seconds for r in self.results[name])

    def written(self, name: str) -> int:
        if name not in self.results:
            return -1
        match = re.search(r"\((\d+) written", self.results[name][-1].stderr)
        return int(match[1]) if match else -1

    def peak(self) -> float:
        """The builder's (and the baseline's) peak memory: not Hugo's."""
        runs = (r for name, rs in self.results.items() if not name.startswith(HUGO) for r in rs)
        return max(r.peak_mb for r in runs)


ALL = ("cold", "no-op", "prose edit", "check", "example edit", "cold after clean")
HUGE = {5000: ("prose edit",), 10000: ("cold", "no-op", "prose edit", "check")}


def frozen_code(work: Path) -> None:
    """A copy of builder/ in the scratch folder, which the builds measured run: its code is
    an input of every build (in every key), so an edit to this checkout during a long run
    (10,000 lessons: minutes a build) made the next build make every artifact again."""
    shutil.rmtree(work / CODE, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "builder", work / CODE / "builder", ignore=ignore)


def bench_scale(
    count: int,
    runs: int,
    work: Path,
    measures: tuple[str, ...] = ALL,
    distinct: bool = False,
    hugo: str | None = None,
) -> Scale:
    """The figures `measures` names (and the baseline, and with `hugo` Hugo's) at `count`
    lessons; `distinct`: no two lessons' charts alike (bench/generate.py --distinct-charts)."""
    root = work / f"course-{count}"
    shutil.rmtree(root, ignore_errors=True)
    print(f"\n== {count} lessons: generating...", file=sys.stderr, flush=True)
    generate(count, root, distinct)
    scale = Scale(root, count)
    site = scale.builder("site", "--no-execute")
    trash = work / "trash"
    trash.mkdir(exist_ok=True)

    def empty() -> None:
        """Move the last run's files aside (deleted when the benchmark ends): deleting them
        here would make this run's file creations slower (see `after_clean`)."""
        for name in ("site", ".cache", "baseline", *HUGO_OUTPUTS):
            if (root / name).exists():
                (root / name).rename(trash / f"{count}-{name.replace('/', '-')}-{next(moved)}")

    moved = itertools.count()
    if measures == ALL:  # --huge's larger scales are compared with 1,000 lessons instead
        baseline = [PY, str(ROOT / "bench/baseline.py"), "content", "baseline"]
        scale.measure("baseline", baseline, empty, runs=runs)
        if hugo:
            bench_hugo(scale, hugo, empty, runs)
    print("   cold...", file=sys.stderr, flush=True)
    if "cold" in measures:
        scale.measure("cold", site, empty, runs=runs)
    else:
        run(site, root, scale.env())
    time.sleep(2)  # inputs written within 2 s of a build are racy (read again): settle
    run(site, root, scale.env())
    if "no-op" in measures:
        scale.measure("no-op", site, runs=runs)
    lesson = root / "content" / "lessons" / lesson_id(count // 2) / "lesson.md"
    prose = lesson.read_text()
    edits = iter(range(1000))
    scale.measure(
        "prose edit", site, lambda: lesson.write_text(prose + f"\nEdit {next(edits)}.\n"), runs=runs
    )
    lesson.write_text(prose)
    if "check" in measures:
        scale.measure("check", scale.builder("check"), runs=runs)
    if "example edit" not in measures:
        return scale
    example = lesson.parent / "example.py"
    source = example.read_text()
    scale.measure(
        "example edit",
        scale.builder("render"),
        lambda: example.write_text(source + f"# edit {next(edits)}\n"),
        runs=runs,
    )
    scale.measure("check (stale)", scale.builder("check"), expect=1, runs=runs)
    example.write_text(source)
    page = root / "site" / "l" / f"s{lesson_id(0)}" / "index.html"
    scale.page_kib = page.stat().st_size / 1024
    if "cold after clean" in measures:
        after_clean(scale, site, runs)
    return scale


HUGO = "hugo"  # in a scale's folder: the Hugo site of its lessons
HUGO_OUTPUTS = (f"{HUGO}/public", f"{HUGO}/resources", f"{HUGO}/cache")


def bench_hugo(scale: Scale, hugo: str, empty: Callable[[], None], runs: int) -> None:
    """`hugo` over the same lesson bodies (bench/sites.py), each page highlighted: cold (an
    empty public/, no resources/ or file cache), and after one page's prose edit, which
    Hugo, with no incremental one-shot build, rebuilds whole into the public/ it left."""
    dest = scale.root / HUGO
    pages = hugo_site(dest, scale.root / "content")
    command = [hugo, "--quiet", "--source", str(dest), "--cacheDir", str(dest / "cache")]
    print("   hugo...", file=sys.stderr, flush=True)
    scale.measure("hugo cold", command, empty, runs=runs)
    page = pages / f"{lesson_id(scale.count // 2)}.md"
    body, edits = page.read_text(), iter(range(1000))

    def edit() -> None:
        page.write_text(body + f"\nEdit {next(edits)}.\n")

    scale.measure("hugo edit", command, edit, runs=runs)
    page.write_text(body)
    scale.hugo_kib = (dest / "public" / "l" / lesson_id(0) / "index.html").stat().st_size / 1024


def after_clean(scale: Scale, site: list[str], runs: int) -> None:
    """A cold render right after deleting the last build's site/ and .cache/, as
    `make clean && make site` does. On ext4 without a journal (this machine's disk) each
    new inode is checked against those deleted in the last 30 s, so every file created
    then costs more: measured apart from "cold", which starts from folders moved aside.
    Measured last; main() waits those 30 s out before the next scale."""

    def clean() -> None:
        for name in ("site", ".cache"):
            shutil.rmtree(scale.root / name, ignore_errors=True)

    print("   cold after clean...", file=sys.stderr, flush=True)
    scale.measure("cold after clean", site, clean, runs=runs)


def report_scales(scales: list[Scale]) -> None:
    names = ["cold", "cold after clean", "no-op", "prose edit", "example edit", "check"]
    names += ["check (stale)"]
    base = scales[0]
    print("\nMedian wall seconds, `python -m builder ...` subprocess incl. interpreter start")
    header = "| lessons | baseline | " + " | ".join(names)
    print(header + " | peak MB | page KiB |")
    print("|" + "---|" * (len(names) + 4))
    for scale in scales:
        cells = [f"{scale.median(n):.2f}" for n in names]
        print(
            f"| {scale.count} | {scale.median('baseline'):.2f} | "
            + " | ".join(cells)
            + f" | {scale.peak():.0f} | {scale.page_kib:.1f} |"
        )
    print("\nRatios")
    for scale in scales:
        b = scale.median("baseline")
        grow = ", ".join(
            f"{n} x{scale.median(n) / base.median(n):.1f}" for n in ("cold", "no-op", "prose edit")
        )
        print(
            f"- {scale.count}: cold / baseline = {scale.median('cold') / b:.2f}; "
            f"pages written by a prose edit: {scale.written('prose edit')}; "
            f"by an example edit: {scale.written('example edit')}"
            + (f"; growth vs {base.count}: {grow}" if scale is not base else "")
        )
    report_hugo(scales)


def report_hugo(scales: list[Scale]) -> None:
    """The builder against Hugo over the same pages, timed in the same run."""
    timed = [s for s in scales if "hugo cold" in s.results]
    if timed:
        print("\nAgainst Hugo, same pages, same run (median wall seconds; builder / hugo)")
    for scale in timed:
        cold, edit = scale.median("hugo cold"), scale.median("hugo edit")
        print(
            f"- {scale.count}: cold {scale.median('cold'):.2f} / hugo {cold:.2f} = "
            f"{scale.median('cold') / cold:.2f}; prose edit {scale.median('prose edit'):.2f} "
            f"/ hugo (a full rebuild) {edit:.2f} = {scale.median('prose edit') / edit:.2f}; "
            f"page {scale.page_kib:.1f} KiB / hugo's {scale.hugo_kib:.1f} KiB"
        )


def report_huge(scales: list[Scale]) -> None:
    """Each larger scale's figures beside the 1,000-lesson ones, as ratios."""
    base = next((s for s in scales if s.count == 1000), None)
    if base is None:
        return
    print("\nGrowth against 1,000 lessons (median wall seconds; ratio to the 1,000 figure)")
    print("| lessons | cold | no-op | prose edit | check | peak MB |\n|---|---|---|---|---|---|")
    for scale in scales:
        cells = [
            f"{scale.median(n):.2f} ({scale.median(n) / base.median(n):.2f}x)"
            if n in scale.results
            else ""
            for n in ("cold", "no-op", "prose edit", "check")
        ]
        print(f"| {scale.count} | " + " | ".join(cells) + f" | {scale.peak():.0f} |")


def bench_harness(lessons: tuple[str, ...], runs: int) -> None:
    """Bare `python example.py` against the same example through builder.run.execute."""
    from builder.course.load import load_course
    from builder.run.execute import Limits, run_example

    course = load_course(ROOT / "content")
    print(f"\nHarness overhead (median of {runs}): bare `python example.py` vs run_example")
    print("| lesson | bare s | harness s | overhead |\n|---|---|---|---|")
    for key in lessons:
        lesson = course.lesson(key)
        assert lesson is not None, key
        bare, timed = [], []
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "example.py").write_bytes(lesson.source)
            env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
            for _ in range(runs):  # alternately, so that a drift of the machine hits both
                bare.append(run([PY, "example.py"], Path(scratch), env).seconds)
                started = time.perf_counter()
                assert run_example(lesson, Limits(timeout=600)).ok
                timed.append(time.perf_counter() - started)
        b, h = statistics.median(bare), statistics.median(timed)
        print(f"| {key} | {b:.2f} | {h:.2f} | {100 * (h / b - 1):+.1f}% |")


def bench_jobs(lessons: tuple[str, ...], work: Path, runs: int) -> None:
    """Record a copy of a few real lessons with -j 1 and -j 2, alternately, `runs` times
    each. The first -j 1 run leaves the run times that later runs schedule by (longest
    first), as an author's earlier recordings do."""
    import yaml

    root = work / "jobs"
    shutil.rmtree(root, ignore_errors=True)
    content = root / "content"
    (content / "lessons").mkdir(parents=True)
    shutil.copy(ROOT / "content" / "course.yml", content)
    terms = yaml.safe_load((ROOT / "content" / "glossary.yml").read_text())
    kept = [t for t in terms if t["taught_in"] in lessons]
    (content / "glossary.yml").write_text(yaml.safe_dump(kept))
    for key in lessons:
        shutil.copytree(ROOT / "content" / "lessons" / key, content / "lessons" / key)
    times: dict[int, list[float]] = {1: [], 2: []}
    for jobs in (1, 2) * runs:
        command = [
            PY,
            "-m",
            "builder",
            "record",
            "--force",
            "-j",
            str(jobs),
            "--content",
            "content",
            "--recordings",
            "recordings",
            "--cache",
            ".cache",
        ]
        result = run(command, root, {**os.environ, "PYTHONPATH": str(ROOT)})
        if result.code:
            sys.exit(f"record -j {jobs} failed:\n{result.stderr}")
        times[jobs].append(result.seconds)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(
        f"\nRecording {len(lessons)} real lessons (median of {runs}): -j 1 {one:.1f} s, "
        f"-j 2 {two:.1f} s, speedup x{one / two:.2f} on {os.cpu_count()} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 lessons, 1 run, 1 example")
    parser.add_argument("--big", action="store_true", help="also 5,000 lessons")
    parser.add_argument(
        "--huge",
        action="store_true",
        help="1,000 lessons, then 5,000 (prose edit) and 10,000 (cold, no-op, prose edit, "
        "check, memory), as ratios to the 1,000 figures",
    )
    parser.add_argument("--scales", help="comma-separated lesson counts, e.g. 100,1000")
    parser.add_argument("--runs", type=int, help="runs per figure (median)")
    parser.add_argument("--no-exec", action="store_true", help="skip harness and -j figures")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temp folder)")
    parser.add_argument("--hugo", help="the hugo to time beside the builder (default: on PATH)")
    parser.add_argument(
        "--distinct-charts",
        action="store_true",
        help="courses whose charts all differ (by default 21 drawings, whatever the size)",
    )
    args = parser.parse_args()
    scales = [100] if args.quick else [100, 1000] + ([5000] if args.big else [])
    if args.huge:
        scales = [1000, 5000, 10000]
    if args.scales:
        scales = [int(x) for x in args.scales.split(",")]
    runs = args.runs or (1 if args.quick else 3)
    hugo = shutil.which(args.hugo or "hugo")
    if args.hugo and hugo is None:
        sys.exit(f"--hugo {args.hugo}: no such executable")
    work = args.work or Path(tempfile.mkdtemp(prefix="coursebench-"))
    try:
        frozen_code(work)
        measured = []
        for count in scales:
            if measured:  # out of the shadow of the last scale's deletions (after_clean)
                time.sleep(RECENTLY_DELETED_S)
            measures = HUGE.get(count, ALL) if args.huge else ALL
            scale = bench_scale(count, runs, work, measures, args.distinct_charts, hugo)
            measured.append(scale)
        report_scales(measured)
        report_huge(measured)
        if not args.no_exec:
            bench_harness(HARNESS_LESSONS[:1] if args.quick else HARNESS_LESSONS, runs)
            bench_jobs(JOBS_LESSONS[:2] if args.quick else JOBS_LESSONS, work, runs)
    finally:
        shutil.rmtree(work if not args.work else work / "trash", ignore_errors=True)


if __name__ == "__main__":
    main()
