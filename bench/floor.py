"""What a one-shot rebuild after a prose edit cannot go below, beside what it takes: same run.

    python bench/floor.py                       # 1,000 and 5,000 lessons, 5 runs each
    python bench/floor.py --scales 1000,5000,10000
    python bench/floor.py --scales 1000 --runs 3

`python -m builder site` after a one-line prose edit is a new process. Before it renders
anything it starts an interpreter, imports what it needs, and observes every input and site
file (the walk: the edit is found by the files' metadata, as git's index finds it). Those
parts are measured here on their own, each the median wall time of a subprocess
(bench/run.py's `run`), in the same run as the baseline loop and the builder's own no-op and
prose edit, at each scale:

    start               python -c pass
    no-op imports       python -c "import builder.__main__, builder.pipeline.build"
    rebuild imports     the same and builder.pipeline.stages (Jinja2, markdown-it and the
                        builder's stages: what rendering a page needs)
    no-op               `site` with nothing changed: the start, the no-op imports, the walk

    floor = no-op + (rebuild imports - no-op imports)

and, beside it, what this design's index costs a build that is not a no-op, whatever it
changes (`index`): in a new process with the rebuild imports made and the head loaded (the
no-op's, in the floor already), the time the process itself takes to read the rest of the
index as a build does (the site's row and traces, every lesson's entry unpickled:
builder.pipeline.index `Index.load`) and to pickle the rows a build writes again (`rows`:
the head and the site's row), writing nothing. A prose edit that takes every lesson from
the index pays it whatever else it does: issue 60's bar at 10,000 lessons (floor + 0.5 s)
is measured against it rather than assumed.

The floor renders, looks up and writes nothing: it is what this builder's one-shot rebuild
pays before any work that grows with the course beyond the walk. The edited page's search
bundle is the builder's own work since issue 60 (no Pagefind run): above the floor. Against
#27's bars it prints the floor as a ratio of the baseline (the bar: a prose edit <= 0.1x),
and how much of a 5,000-lesson prose edit's allowance (1.2x the 1,000-lesson one) the walk's
growth alone takes.
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.generate import generate, lesson_id  # noqa: E402
from bench.run import PY, RECENTLY_DELETED_S, Scale, frozen_code, run  # noqa: E402

NOOP_IMPORTS = "import builder.__main__, builder.pipeline.build"
REBUILD_IMPORTS = NOOP_IMPORTS + ", builder.pipeline.stages"
PROSE_BAR, FLAT, FLAT_AT = 0.1, 1.2, 5000  # #27: <= 0.1x at 1,000; at 5,000 <= 1.2x that
ABSOLUTE_AT, ABSOLUTE_S = 10000, 0.5  # and at 10,000 a no-op and a prose edit under 0.5 s
PARTS = ("start", "no-op imports", "rebuild imports", "no-op")
INDEX = f"""import gc, os, sys, time; gc.disable()
{REBUILD_IMPORTS}
from pathlib import Path
from builder.core.store import Store
from builder.pipeline.index import Head, Index, code_digest, index_salt
from builder.pipeline.keys import Digests
store = Store(Path(".cache"), print)
head = Head.load(store)
salt = index_salt(code_digest(head.versions), head.versions)
started = time.perf_counter()
index = Index.load(store, head, head.seen, salt, Digests(), False)
index.rows()
print(time.perf_counter() - started if index.entries else "no entries", file=sys.stderr)
os._exit(0)  # as builder/__main__.py ends: no teardown of what it loaded
"""


def measure_scale(count: int, runs: int, work: Path) -> Scale:
    root = work / f"course-{count}"
    print(f"\n== {count} lessons: generating and building...", file=sys.stderr, flush=True)
    generate(count, root)
    scale = Scale(root, count)
    site = scale.builder("site", "--no-execute")
    if count == 1000:  # each run into a new folder: creating files where some were just
        for n in range(runs):  # deleted costs more (bench/run.py's after_clean)
            baseline = [PY, str(ROOT / "bench/baseline.py"), "content", f"baseline-{n}"]
            scale.measure("baseline", baseline, runs=1)
    run(site, root, scale.env())  # the cold render
    time.sleep(2)  # inputs written within 2 s of a build are racy (read again): settle
    run(site, root, scale.env())
    for _ in range(runs):  # the parts, interleaved with the builder's figures
        scale.measure("start", [PY, "-c", "pass"], runs=1)
        scale.measure("no-op imports", [PY, "-c", NOOP_IMPORTS], runs=1)
        scale.measure("rebuild imports", [PY, "-c", REBUILD_IMPORTS], runs=1)
        scale.measure("no-op", site, runs=1)
        measure_index(scale)
    lesson = root / "content" / "lessons" / lesson_id(count // 2) / "lesson.md"
    prose, edits = lesson.read_text(), iter(range(1000))

    def edit() -> None:
        lesson.write_text(prose + f"\nEdit {next(edits)}.\n")

    scale.measure("prose edit", site, edit, runs=runs)
    return scale


def floor(scale: Scale) -> float:
    m = scale.median
    return m("no-op") + m("rebuild imports") - m("no-op imports")


def measure_index(scale: Scale) -> None:
    """One `index` figure: the seconds the INDEX process says it took."""
    found = run([PY, "-c", INDEX], scale.root, scale.env())
    said = (found.stderr.strip().splitlines() or ["nothing"])[-1]
    try:
        seconds = float(said) if found.code == 0 else math.nan
    except ValueError:
        seconds = math.nan  # "no entries": an index of other code, or none
    if math.isnan(seconds):
        sys.exit(f"index: exit {found.code}, said {said!r}\n{found.stderr}")
    scale.results.setdefault("index", []).append(replace(found, seconds=seconds))


def report(scales: list[Scale]) -> None:
    base = scales[0]
    baseline = base.median("baseline")
    print(f"\nMedian wall seconds; baseline loop at {base.count} lessons: {baseline:.2f} s")
    names = (*PARTS, "floor", "prose edit")
    print("| lessons | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1))
    for scale in scales:
        cells = [scale.median(n) for n in PARTS] + [floor(scale), scale.median("prose edit")]
        print(f"| {scale.count} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    print(f"\nAs ratios of the baseline loop (a prose edit's bar at 1,000 lessons: {PROSE_BAR}x)")
    for scale in scales:
        print(
            f"- {scale.count}: floor {floor(scale) / baseline:.3f}x, "
            f"no-op {scale.median('no-op') / baseline:.3f}x, "
            f"prose edit {scale.median('prose edit') / baseline:.3f}x"
        )
    for scale in scales:
        above = scale.median("prose edit") - floor(scale)
        index = scale.median("index")
        print(
            f"- {scale.count}: the prose edit above its floor (the builder's work): {above:.3f} s,"
            f" of which the index read and its rows pickled (`index`) {index:.3f} s, the rest"
            f" {above - index:.3f} s"
        )
    for scale in scales[1:]:
        walk = scale.median("no-op") - base.median("no-op")
        if scale.count == FLAT_AT:
            allowance = (FLAT - 1) * PROSE_BAR * baseline
            print(
                f"- the walk's growth from {base.count} to {scale.count} lessons (no-op against "
                f"no-op): {walk:.3f} s; a prose edit within {FLAT}x of a {base.count}-lesson one "
                f"at the {PROSE_BAR}x bar may grow by {allowance:.3f} s in all"
            )
        if scale.count == ABSOLUTE_AT:
            print(
                f"- {scale.count}: floor {floor(scale):.3f} s, no-op "
                f"{scale.median('no-op'):.3f} s, against the bar of {ABSOLUTE_S} s for either"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="1000,5000", help="lesson counts, the first 1000")
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    args = parser.parse_args()
    scales = [int(x) for x in args.scales.split(",")]
    if scales[0] != 1000:
        sys.exit("the first scale must be 1000: the bars are stated against it")
    work = Path(tempfile.mkdtemp(prefix="coursefloor-"))
    try:
        frozen_code(work)
        measured: list[Scale] = []
        for count in scales:
            if measured:  # out of the shadow of the last scale's file creations
                time.sleep(RECENTLY_DELETED_S)
            measured.append(measure_scale(count, args.runs, work))
        report(measured)
        print(f"\n(medians of {args.runs}; spread of the prose edit: ", end="")
        print(", ".join(f"{s.count}: {_spread(s, 'prose edit')}" for s in measured) + ")")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _spread(scale: Scale, name: str) -> str:
    times = [r.seconds for r in scale.results[name]]
    return f"{min(times):.3f}-{max(times):.3f} s (stdev {statistics.pstdev(times):.3f})"


if __name__ == "__main__":
    main()
