"""Where a one-shot prose edit's time goes, stage by stage, in wall time: same run, each scale.

    python bench/stages.py                       # 1,000 and 10,000 lessons, 3 edits each
    python bench/stages.py --scales 1000 --runs 5
    python bench/stages.py --preview --scales 1000 --runs 12   # a preview refresh's instead

At each scale bench/generate.py writes a course, `site --no-execute` builds it, and then,
`--runs` times, one lesson's prose gets a line and `python -m builder site --no-execute`
runs; it gets another and the same build runs in a process whose Build stages are each
timed with perf_counter (inclusive: a stage's row holds the rows indented under it). Both
processes are timed from spawn to exit, as bench/run.py times them: the first row is the
figure bench/run.py and bench/floor.py report, the second says what the timers cost, and
the gap between it and `main` is the interpreter's start and the imports.

With --preview, the same course is opened by a preview's Session (builder/preview/session.py)
in one process, and each of `--runs` prose edits is one refresh, timed by the same timers
(`PREVIEW`: the refresh's Build stages), with a pause before it (`PAUSE`) as an author's
edits have: a refresh's figure, not a process's.

Why not a profiler: cProfile charges every Python call, and a build at 10,000 lessons makes
millions (unpickling the index: its reconstructors; the lessons' keys), so it multiplied
the index's share several times over (docs/benchmarks.md has the figures). A row here is
what the stage takes without a profiler: the collector off, as the CLI runs
(builder/__main__.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PY = sys.executable
SITE = ["site", "--no-execute", "--content", "content", "--recordings", "recordings"]
SITE += ["--out", "site", "--cache", ".cache"]
# (depth, row, module, what is timed): each an attribute of the module, or of a class in it.
STAGES = (
    (0, "observe the inputs and site/", "builder.pipeline.build", "observe"),
    (0, "the index's head (what a no-op compares)", "builder.pipeline.index", "Head.load"),
    (0, "compared with the head: not a no-op", "builder.pipeline.index", "Head.unchanged"),
    (0, "sweep killed builds' scratch folders", "builder.core.scratch", "sweep"),
    (0, "the paths that changed", "builder.pipeline.index", "Changes.observed"),
    (0, "the code's digest (every key is made with it)", "builder.pipeline.build", "code_digest"),
    (0, "the rest of the index: every lesson's entry", "builder.pipeline.index", "Index.load"),
    (1, "the site's traces", "builder.pipeline.traced", "Traced.load"),
    (0, "lessons, statuses, sidecars taken or read", "builder.pipeline.build", "Build.taken"),
    (0, "load the course", "builder.pipeline.build", "Build.load"),
    (0, "statuses", "builder.pipeline.build", "Build.status"),
    (0, "moved references", "builder.pipeline.build", "Build.shifted"),
    (0, "sidecars", "builder.pipeline.build", "Build.inputs"),
    (0, "the site files left intact", "builder.pipeline.make", "Kept.since"),
    (0, "pages", "builder.pipeline.build", "Build.pages"),
    (1, "navigation", "builder.pipeline.reuse", "Reuse.nav"),
    (1, "every lesson's keys", "builder.pipeline.reuse", "Reuse.lessons"),
    (2, "every lesson's unit", "builder.render.lessons", "units"),
    (1, "made, or taken from site/ and the store", "builder.pipeline.make", "make"),
    (1, "the other pages' keys", "builder.pipeline.reuse", "Reuse.keyed"),
    (0, "search bundles", "builder.pipeline.build", "Build.search"),
    (0, "publish", "builder.pipeline.build", "Build.publish"),
    (1, "the next index", "builder.pipeline.index", "Index.of"),
    (1, "write site/", "builder.pipeline.write", "write"),
    (1, "commit the store", "builder.core.store", "Store.commit"),
)


def child() -> None:
    """One `site` build in this process, each of STAGES timed; prints them as JSON."""
    import gc

    gc.disable()  # as builder/__main__.py's entry() runs a command
    spent: dict[str, float] = {}

    for _, _, module, what in STAGES:
        _timed(module, what, spent)
    from builder.__main__ import main
    from builder.pipeline import stages, write

    timed_write = write.write  # publish calls it by the name it imported
    assert vars(stages)["write"] is timed_write, "imported before it was timed: no row"

    started = time.perf_counter()
    code = main(SITE)
    spent["in the process"] = time.perf_counter() - started
    print(json.dumps({"code": code, "spent": spent}))


# A preview refresh's rows: (depth, row, module, what is timed), as STAGES.
PREVIEW = (
    (0, "the refresh (Session.refresh)", "builder.preview.session", "Session.refresh"),
    *(
        (depth + 1, label, module, what)
        for depth, label, module, what in STAGES
        if what.startswith(("Build.", "Reuse.", "units", "make"))
        and what not in ("Build.search", "Build.publish")
    ),
)
PAUSE = 0.3  # seconds before each edit of a --preview run


def child_preview(runs: int) -> None:
    """A preview's Session on the course in the working folder, started and settled, then
    `runs` prose edits, each one refresh with PREVIEW's rows timed; prints them as JSON."""
    from bench.generate import lesson_id

    spent: dict[str, float] = {}
    for _, _, module, what in (*PREVIEW[1:], PREVIEW[0]):  # the session imports them by name
        _timed(module, what, spent)
    from builder.core.observe import Paths
    from builder.pipeline.index import Changes
    from builder.preview import heap
    from builder.preview.session import Session

    paths = Paths(Path("content"), Path("recordings"), Path("site"), Path(".cache"))
    session = Session(paths, execute=False)
    session.start()
    session.settle()
    heap.kept()
    count = len(list(Path("content/lessons").iterdir()))
    lesson = Path("content/lessons") / lesson_id(count // 2) / "lesson.md"
    prose, edits = lesson.read_text(), []
    try:
        for n in range(runs):
            time.sleep(PAUSE)
            lesson.write_text(prose + f"\nEdit {n}.\n")
            spent.clear()
            with heap.paused():  # as the preview refreshes (builder/preview/serve.py)
                session.refresh(Changes.events(paths, [str(lesson.resolve())]))
            edits.append(dict(spent))
    finally:
        lesson.write_text(prose)
        session.close()
    print(json.dumps(edits))


def _timed(module: str, what: str, spent: dict[str, float]) -> None:
    """`what` (an attribute of `module`, or of a class in it) timed into `spent`."""
    import importlib

    owner: object = importlib.import_module(module)
    *outer, name = what.split(".")
    for part in outer:
        owner = getattr(owner, part)
    f = getattr(owner, name)

    @functools.wraps(f)
    def wrapper(*args: object, **kwargs: object) -> object:
        started = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            spent[what] = spent.get(what, 0.0) + time.perf_counter() - started

    setattr(owner, name, wrapper)


def measure_preview(count: int, runs: int, work: Path) -> dict[str, list[float]]:
    """Each PREVIEW row's times at `count` lessons, one a refresh."""
    from bench.generate import generate  # not in the measured process

    root = work / f"course-{count}"
    print(f"== {count} lessons: generating and building...", file=sys.stderr, flush=True)
    generate(count, root)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([PY, "-m", "builder", *SITE], cwd=root, env=env, check=True)
    child = ["-c", f"import bench.stages as s; s.child_preview({runs})"]
    done = subprocess.run([PY, *child], cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the preview failed:\n{done.stderr}")
    rows: dict[str, list[float]] = {}
    for edit in json.loads(done.stdout.strip().splitlines()[-1]):
        for what, took in edit.items():
            rows.setdefault(what, []).append(took)
    return rows


def preview_table(results: dict[int, dict[str, list[float]]]) -> str:
    counts = list(results)
    lines = [
        "| a preview refresh, median ms | " + " | ".join(f"{c:,} lessons" for c in counts) + " |",
        "|---" * (len(counts) + 1) + "|",
    ]
    for depth, label, _, what in PREVIEW:
        cells = [results[c].get(what, []) for c in counts]
        shown = [f"{statistics.median(v) * 1000:.1f}" if v else "not run" for v in cells]
        lines.append(f"| {'· ' * depth}{label} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def run_once(root: Path, timed: bool = True) -> tuple[float, dict[str, float]]:
    """The process's wall time, and what each stage took in it (`timed`; else a plain
    `python -m builder site`, the same build without the timers)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    command = ["-c", "import bench.stages as s; s.child()"] if timed else ["-m", "builder", *SITE]
    started = time.perf_counter()
    done = subprocess.run(
        [PY, *command],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the build failed:\n{done.stderr}")
    if not timed:
        return seconds, {}
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, said["spent"]


def measure(count: int, runs: int, work: Path) -> tuple[list[float], dict[str, list[float]]]:
    from bench.generate import generate, lesson_id  # not in the measured process

    root = work / f"course-{count}"
    print(f"== {count} lessons: generating and building...", file=sys.stderr, flush=True)
    generate(count, root)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):  # cold, then once more after the inputs settle (not racy)
        subprocess.run([PY, "-m", "builder", *SITE], cwd=root, env=env, check=True)
        time.sleep(2)
    lesson = root / "content" / "lessons" / lesson_id(count // 2) / "lesson.md"
    prose = lesson.read_text()
    walls: list[float] = []
    stages: dict[str, list[float]] = {}
    for n in range(runs):  # a plain build and a timed one by turns, each after an edit
        lesson.write_text(prose + f"\nEdit {n}.\n")
        walls.append(run_once(root, timed=False)[0])
        lesson.write_text(prose + f"\nEdit {n}, again.\n")
        seconds, spent = run_once(root)
        print(f"   edit {n}: {walls[-1]:.3f} s, timed {seconds:.3f} s", file=sys.stderr)
        for what, took in [("timed process", seconds), *spent.items()]:
            stages.setdefault(what, []).append(took)
    return walls, stages


def table(results: dict[int, tuple[list[float], dict[str, list[float]]]]) -> str:
    counts = list(results)
    lines = [
        "| a prose edit, median ms | " + " | ".join(f"{c:,} lessons" for c in counts) + " |",
        "|---" * (len(counts) + 1) + "|",
    ]

    def row(label: str, values: list[list[float]]) -> None:
        cells = [f"{statistics.median(v) * 1000:.0f}" if v else "" for v in values]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    row("`python -m builder site`, spawn to exit", [results[c][0] for c in counts])
    row("the same with the timers", [results[c][1].get("timed process", []) for c in counts])
    row("· in `main`", [results[c][1].get("in the process", []) for c in counts])
    for depth, label, _, what in STAGES:
        row("· " * (depth + 2) + label, [results[c][1].get(what, []) for c in counts])
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1000,10000", help="lesson counts, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="prose edits at each scale")
    parser.add_argument("--preview", action="store_true", help="a preview refresh's stages")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="coursestages-"))
    scales = list(map(int, args.scales.split(",")))
    try:
        if args.preview:
            refreshes = {n: measure_preview(n, args.runs, work) for n in scales}
        else:
            results = {n: measure(n, args.runs, work) for n in scales}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Load average after: {load}\n")
    print(preview_table(refreshes) if args.preview else table(results))


if __name__ == "__main__":
    main()
