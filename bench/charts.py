"""Time builder/render/charts.py: the median cost of one panel's charts (both sizes, both themes).

    python bench/charts.py                    # this checkout, 20 runs per case
    python bench/charts.py --against HEAD~3   # also builder/render/charts.py as of a git revision
    python bench/charts.py --against /tmp/charts.py   # ... or another copy of the file
    python bench/charts.py --against f908249 --against main   # ... or several
    python bench/charts.py --svg /tmp/charts  # also write every case's SVGs there

A "panel" is what the site build asks for per bar panel: `sized_svgs(panel)`, the wide and
the narrow chart in both themes, no cache (a revision from before `sized_svgs`:
`bar_svgs(panel, size)` per size; from before the narrow size, `bar_svgs(panel)`, and from
before `bar_svgs`, `bar_svg(panel, theme, None)` per theme: the wide chart only). Each case
is drawn once to warm up (imports, fonts), then timed `--runs` times in CPU time (the machine
is shared); versions alternate within a run so whatever else runs slows both alike. The
cases are the shapes a chart must survive: the typical synthetic panel, 1 and 12 labels,
long labels, 3 series, huge and tiny values, negative values, a long title and y-label.
The timed runs redraw the same panel, which flatters a version that caches text measurements
or layouts per process (builder/render/charts.py before `bar_svgs` did; `bar_svgs` keeps nothing
between calls but matplotlib's own font caches): `--new-text` gives every run's panel
strings never drawn before (a build where no two panels share a title or label; tick and
value labels still repeat).

A revision older than the recording types' move from pydantic models to dataclasses
(builder/course/validation.py) cannot be loaded: it asked a panel for pydantic's JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from builder.course.recording import BarPanel  # noqa: E402
from builder.course.validation import validate_json  # noqa: E402
from builder.render import charts  # noqa: E402


def _panel(title: str, labels: list[str], ylabel: str, **series: list[Any]) -> BarPanel:
    raw = {
        "kind": "bar",
        "title": title,
        "labels": labels,
        "ylabel": ylabel,
        "series": [{"label": name, "y": y} for name, y in series.items()],
    }
    return validate_json(BarPanel, json.dumps(raw))


CASES = {
    "typical": _panel(
        "Residuals saved for the backward pass",
        ["plain", "remat"],
        "saved arrays",
        residuals=[7, 3],
    ),
    "one-label": _panel("Compile once", ["jit"], "ms (wall clock)", time=[1808.2028]),
    "twelve-labels": _panel(
        "Twelve steps",
        [f"step {i}" for i in range(1, 13)],
        "equations",
        count=[3, 7, 12, 20, 31, 45, 60, 78, 99, 120, 150, 192],
    ),
    "long-labels": _panel(
        "Allocations in the buffer assignment",
        [
            "preallocated temp allocation #0",
            "parameter allocation, entry computation",
            "output tuple",
            "constant allocation (folded)",
            "maybe-live-out allocation",
        ],
        "KiB",
        size=[2048.0, 1024.0, 8.0, 0.5, 64.0],
    ),
    "three-series": _panel(
        "Top-level equations against trip count",
        ["1", "4", "16", "64"],
        "jaxpr equations (top level)",
        python_loop=[3, 12, 48, 192],
        fori_loop=[5, 5, 5, 5],
        scan=[6, 6, 6, 6],
    ),
    "huge-values": _panel(
        "Bytes the executable holds at once",
        ["donated", "not donated", "twice"],
        "bytes (compiler estimate)",
        argument=[1479409664, 4587536, 2958819328],
        temp=[1048576, 262144, 4325392],
    ),
    "tiny-values": _panel(
        "What remat did not change: gradient error against the hand-written gradient",
        ["plain", "remat", "remat (policy)"],
        "max |dW - dW_hand| / max |dW_hand| (ratio, float32 on the CPU)",
        error=[4.6792327052498845e-07, 4.1e-07, 0.0],
    ),
    "negative": _panel(
        "Change against the baseline", ["a", "b", "c", "d"], "ms", delta=[-12.5, 3.25, 0.0, 40.1]
    ),
}


def load_revision(revision: str) -> ModuleType:
    """builder/render/charts.py as of a git revision (or a file), as a builder module."""
    if Path(revision).is_file():
        source = Path(revision).read_text()
    else:
        command = ["git", "show", f"{revision}:builder/render/charts.py"]
        source = subprocess.run(
            command, cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
    spec = importlib.util.spec_from_loader(f"builder._charts_{len(source)}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "builder.render"
    module.__file__ = str(ROOT / "builder" / "render" / "charts.py")
    sys.modules[spec.name] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:builder/render/charts.py", "exec"), module.__dict__)
    return module


def svgs(module: ModuleType, panel: BarPanel) -> dict[str, bytes]:
    """The panel's charts per size and theme, through whichever API the module has."""
    if hasattr(module, "sized_svgs"):
        sized = module.sized_svgs(panel)
        return {f"{theme}-{size}": svg for size, t in sized.items() for theme, svg in t.items()}
    if hasattr(module, "NARROW"):
        sizes = {"wide": module.WIDE, "narrow": module.NARROW}
        return {
            f"{theme}-{name}": svg
            for name, size in sizes.items()
            for theme, svg in module.bar_svgs(panel, size).items()
        }
    if hasattr(module, "bar_svgs"):
        return module.bar_svgs(panel)  # type: ignore[no-any-return]
    getattr(module, "_light", {}).clear()  # it kept the last panels' charts: start cold
    return {theme: module.bar_svg(panel, theme, None) for theme in ("light", "dark")}


def one_panel(module: ModuleType, panel: BarPanel) -> float:
    start = time.process_time()
    svgs(module, panel)
    return time.process_time() - start


def with_new_text(panel: BarPanel, run: int) -> BarPanel:
    """The panel with every string (title, labels, y-label, series) made new for this run."""
    series = [replace(s, label=f"{s.label} {run}") for s in panel.series]
    update = {
        "title": f"{panel.title} {run}",
        "labels": [f"{label} {run}" for label in panel.labels],
        "ylabel": f"{panel.ylabel} {run}",
        "series": series,
    }
    return replace(panel, **update)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--against", metavar="REV", action="append", default=[], help="also time this revision"
    )
    parser.add_argument("--svg", type=Path, help="write each case's SVGs here")
    parser.add_argument("--new-text", action="store_true", help="no string drawn twice")
    args = parser.parse_args()
    versions = {**{rev: load_revision(rev) for rev in args.against}, "this checkout": charts}
    new = ", every string new" if args.new_text else ""
    print(f"median CPU ms per panel (wide + narrow, light + dark), {args.runs} runs{new}")
    print(f"{'case':<15}" + "".join(f"{name:>16}" for name in versions) + "    ratio")
    for case, panel in CASES.items():
        times: dict[str, list[float]] = {name: [] for name in versions}
        for module in versions.values():
            one_panel(module, panel)
        for run in range(args.runs):
            timed = with_new_text(panel, run) if args.new_text else panel
            for name, module in versions.items():
                times[name].append(one_panel(module, timed))
        medians = [statistics.median(t) * 1000 for t in times.values()]
        ratio = f"{medians[0] / medians[-1]:8.1f}x" if len(medians) > 1 else ""
        print(f"{case:<15}" + "".join(f"{m:16.1f}" for m in medians) + ratio)
        if args.svg:
            args.svg.mkdir(parents=True, exist_ok=True)
            for theme, svg in svgs(charts, panel).items():
                (args.svg / f"{case}-{theme}.svg").write_bytes(svg)


if __name__ == "__main__":
    main()
