"""Time builder/render/charts.py: the median cost of one panel's charts (both sizes, both themes).

    python bench/charts.py                    # this checkout, 20 runs per case
    python bench/charts.py --against HEAD~3   # also the chart modules as of a git revision
    python bench/charts.py --against /tmp/charts.py   # ... or another copy of charts.py
    python bench/charts.py --against f908249 --against main   # ... or several
    python bench/charts.py --cases xy         # only the line and scatter cases
    python bench/charts.py --cases typical,line-log   # ... or the cases named
    python bench/charts.py --svg /tmp/charts  # also write every case's SVGs there

A "panel" is what the site build asks for per bar panel: `sized_svgs(panel)`, the wide and
the narrow chart in both themes, no cache (a revision from before `sized_svgs`:
`bar_svgs(panel, size)` per size; from before the narrow size, `bar_svgs(panel)`, and from
before `bar_svgs`, `bar_svg(panel, theme, None)` per theme: the wide chart only). Each case
is drawn once to warm up (imports, fonts), then timed `--runs` times in CPU time (the machine
is shared); versions alternate within a run so whatever else runs slows both alike. The
cases are the shapes a chart must survive: the typical synthetic panel, 1 and 12 labels,
long labels, 3 series, huge and tiny values, negative values, a long title and y-label;
and beside the bars (`--cases xy`) a line panel, a line panel on log axes (xla-03's
first) and a scatter panel with a fitted line. A revision is the chart modules of
builder/render/ as of it (charts, chartlabels, chartplan, chartsvg, plots: those it has),
so a change to how lines are drawn is timed too; a file is charts.py alone, over this
checkout's others. A version that draws no line panels shows "-" for those cases.
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

import builder.render  # noqa: E402
from builder.course.recording import BarPanel, Panel, XYPanel  # noqa: E402
from builder.course.validation import validate_json  # noqa: E402
from builder.render import charts  # noqa: E402

# The modules a chart is drawn by, each after those it imports.
CHART_MODULES = ("chartlabels", "chartplan", "chartsvg", "plots", "charts")


def _panel(title: str, labels: list[str], ylabel: str, **series: list[Any]) -> BarPanel:
    raw = {
        "kind": "bar",
        "title": title,
        "labels": labels,
        "ylabel": ylabel,
        "series": [{"label": name, "y": y} for name, y in series.items()],
    }
    return validate_json(BarPanel, json.dumps(raw))


def _xy(kind: str, axes: tuple[str, str, str], x: list[Any], *series: dict[str, Any]) -> XYPanel:
    """A line or scatter panel; `axes`: its title, x label and y label."""
    title, xlabel, ylabel = axes
    raw = {"kind": kind, "title": title, "xlabel": xlabel, "ylabel": ylabel, "x": x}
    return validate_json(XYPanel, json.dumps({**raw, "series": list(series)}))


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
XY_CASES = {
    "line": _xy(
        "line",
        ("Training loss", "step", "loss (mean squared error)"),
        list(range(0, 200, 4)),
        {"label": "learning rate 0.1", "y": [2.5 / (1 + 0.05 * k) for k in range(0, 200, 4)]},
        {"label": "learning rate 0.01", "y": [2.5 / (1 + 0.01 * k) for k in range(0, 200, 4)]},
    ),
    "line-log": _xy(
        "line",
        (
            "Matmul flops: compiler estimate against the hand count 2n³",
            "n (square n×n matrices)",
            "GFLOP (floating-point operations, not per second)",
        ),
        [128, 256, 512, 1024],
        {"label": "cost_analysis flops", "y": [2 * n**3 / 1e9 for n in (128, 256, 512, 1024)]},
        {"label": "hand count 2n³", "y": [2 * n**3 / 1e9 for n in (128, 256, 512, 1024)]},
    ),
    "scatter-fit": _xy(
        "scatter",
        ("Measured against the fitted line", "input", "output"),
        [k / 4 for k in range(30)],
        {
            "label": "measured",
            "y": [1.07 + 1.95 * k / 4 + (0.3 if k % 3 else -0.4) for k in range(30)],
            "fit": {"kind": "linear", "slope": 1.95, "intercept": 1.07},
        },
    ),
}
ALL_CASES: dict[str, Panel] = {**CASES, **XY_CASES}
GROUPS = {"bars": list(CASES), "xy": list(XY_CASES), "all": list(ALL_CASES)}


def case_names(text: str) -> list[str]:
    """`--cases`: names and groups (bars, xy, all) separated by commas, each case once."""
    names: list[str] = []
    for word in filter(None, (w.strip() for w in text.split(","))):
        if word not in GROUPS and word not in ALL_CASES:
            known = ", ".join([*GROUPS, *ALL_CASES])
            raise argparse.ArgumentTypeError(f"no case {word!r}; the cases: {known}")
        names += [n for n in GROUPS.get(word, [word]) if n not in names]
    if not names:
        raise argparse.ArgumentTypeError("name a case or a group (bars, xy, all)")
    return names


def sources(revision: str) -> dict[str, str]:
    """The chart modules' sources as of a git revision, those it has; or a file as charts.py."""
    if Path(revision).is_file():
        return {"charts": Path(revision).read_text()}
    found = {}
    for name in CHART_MODULES:
        command = ["git", "show", f"{revision}:builder/render/{name}.py"]
        shown = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0:
            found[name] = shown.stdout
        elif name == "charts":
            sys.exit(f"bench/charts.py: {revision}: {shown.stderr.strip()}")
    return found


def load_revision(revision: str) -> ModuleType:
    """builder/render/charts.py as of a git revision (or a file), as a builder module whose
    sibling chart modules are the revision's too (this checkout's where it has none). Each
    is executed under its real name, in place of this checkout's while the next ones import
    it, and this checkout's are put back after."""
    package = builder.render
    saved = {name: sys.modules.get(f"builder.render.{name}") for name in CHART_MODULES}
    loaded: dict[str, ModuleType] = {}
    try:
        for name, source in sources(revision).items():
            real = f"builder.render.{name}"
            spec = importlib.util.spec_from_loader(real, loader=None)
            assert spec is not None
            module = importlib.util.module_from_spec(spec)
            module.__file__ = str(ROOT / "builder" / "render" / f"{name}.py")
            sys.modules[real] = module  # dataclasses look their module up
            setattr(package, name, module)  # `from . import plots` reads the package first
            exec(compile(source, f"{revision}:builder/render/{name}.py", "exec"), module.__dict__)
            loaded[name] = module
    finally:
        for name, module in saved.items():
            if module is not None:
                sys.modules[f"builder.render.{name}"] = module
                setattr(package, name, module)
    return loaded["charts"]


def draws(module: ModuleType, panel: Panel) -> bool:
    """Whether the version draws the panel: line and scatter panels need its plots."""
    return not isinstance(panel, XYPanel) or hasattr(module, "plots")


def svgs(module: ModuleType, panel: Panel) -> dict[str, bytes]:
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


def one_panel(module: ModuleType, panel: Panel) -> float:
    start = time.process_time()
    svgs(module, panel)
    return time.process_time() - start


def with_new_text(panel: Panel, run: int) -> Panel:
    """The panel with every string (title, labels, axis labels, series) made new for this run."""
    series = [replace(s, label=f"{s.label} {run}") for s in panel.series]
    if isinstance(panel, XYPanel):
        xy = {"xlabel": f"{panel.xlabel} {run}", "ylabel": f"{panel.ylabel} {run}"}
        return replace(panel, series=series, **xy)  # type: ignore[arg-type]
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
    parser.add_argument(
        "--cases",
        type=case_names,
        default=GROUPS["all"],
        help="names or groups (bars, xy, all), comma-separated; default all",
    )
    args = parser.parse_args()
    versions = {**{rev: load_revision(rev) for rev in args.against}, "this checkout": charts}
    new = ", every string new" if args.new_text else ""
    print(f"median CPU ms per panel (wide + narrow, light + dark), {args.runs} runs{new}")
    print(f"{'case':<15}" + "".join(f"{name:>16}" for name in versions) + "    ratio")
    for case in args.cases:
        panel = ALL_CASES[case]
        timing = {name: module for name, module in versions.items() if draws(module, panel)}
        times: dict[str, list[float]] = {name: [] for name in timing}
        for module in timing.values():
            one_panel(module, panel)
        for run in range(args.runs):
            timed = with_new_text(panel, run) if args.new_text else panel
            for name, module in timing.items():
                times[name].append(one_panel(module, timed))
        medians = {name: statistics.median(t) * 1000 for name, t in times.items()}
        shown = [f"{medians[name]:16.1f}" if name in medians else f"{'-':>16}" for name in versions]
        first = next(iter(versions))
        ratio = ""
        if len(versions) > 1 and first in medians:
            ratio = f"{medians[first] / medians['this checkout']:8.1f}x"
        print(f"{case:<15}" + "".join(shown) + ratio)
        if args.svg:
            args.svg.mkdir(parents=True, exist_ok=True)
            for theme, svg in svgs(charts, panel).items():
                (args.svg / f"{case}-{theme}.svg").write_bytes(svg)


if __name__ == "__main__":
    main()
