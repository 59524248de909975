"""Bar panels drawn with matplotlib as SVG, deterministically, cached by content.

matplotlib is imported only when a chart is actually drawn, never on a cache hit.
"""

from __future__ import annotations

import hashlib
import io
from functools import cache
from pathlib import Path
from typing import Any

from .fsutil import write_atomic
from .recording import BarPanel

PALETTE = ("#2b6cb0", "#dd6b20", "#2f855a", "#9b2c2c", "#6b46c1", "#975a16")
THEMES = {
    "light": {"text": "#1a202c", "grid": "#d5dbe3", "face": "none"},
    "dark": {"text": "#e2e8f0", "grid": "#3a4556", "face": "none"},
}


def chart_key(panel: BarPanel, theme: str) -> str:
    """What the SVG depends on: the panel's data, the theme, this file, matplotlib."""
    digest = hashlib.sha256()
    for part in (panel.model_dump_json(), theme, _own_source(), _matplotlib_version()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def bar_svg(panel: BarPanel, theme: str, cache_dir: Path | None) -> bytes:
    """The panel as SVG bytes, from the cache when this exact chart was drawn before."""
    cached = cache_dir / f"{chart_key(panel, theme)}.svg" if cache_dir else None
    if cached is not None and cached.exists():
        return cached.read_bytes()
    svg = draw(panel, theme)
    if cached is not None:
        write_atomic(cached, svg)
    return svg


def draw(panel: BarPanel, theme: str) -> bytes:
    plt = _pyplot()
    colors = THEMES[theme]
    with plt.rc_context(_rc(colors)):
        figure, axes = plt.subplots(figsize=(6.4, 3.2))
        _bars(axes, panel)
        axes.set_title(panel.title, loc="left", fontsize=11, fontweight="bold")
        axes.set_ylabel(panel.ylabel)
        if len(panel.series) > 1:
            axes.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(figure)
    return buffer.getvalue()


def _bars(axes: Any, panel: BarPanel) -> None:
    count = len(panel.series)
    width = 0.8 / count
    positions = range(len(panel.labels))
    for index, series in enumerate(panel.series):
        offsets = [x - 0.4 + width * (index + 0.5) for x in positions]
        bars = axes.bar(
            offsets, series.y, width, label=series.label, color=PALETTE[index % len(PALETTE)]
        )
        if len(panel.labels) * count <= 24:
            axes.bar_label(bars, labels=[_short(y) for y in series.y], fontsize=8, padding=2)
    axes.set_xticks(list(positions), panel.labels, rotation=_rotation(panel.labels))
    pad = 0.6 + max(0, 3 - len(panel.labels)) / 2  # few groups: narrower, centred bars
    axes.set_xlim(-pad, len(panel.labels) - 1 + pad)
    if all(isinstance(y, int) for series in panel.series for y in series.y):
        axes.yaxis.get_major_locator().set_params(integer=True)
    axes.margins(y=0.15)
    axes.spines[["top", "right"]].set_visible(False)
    axes.yaxis.grid(True)
    axes.set_axisbelow(True)


def _rotation(labels: list[str]) -> int:
    return 30 if sum(len(label) for label in labels) > 60 else 0


def _short(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def _rc(colors: dict[str, str]) -> dict[str, Any]:
    text = colors["text"]
    return {
        "svg.hashsalt": "course-builder",
        "svg.fonttype": "none",
        "font.family": "DejaVu Sans",
        "font.size": 9,
        "figure.facecolor": colors["face"],
        "axes.facecolor": colors["face"],
        "savefig.facecolor": colors["face"],
        "savefig.transparent": True,
        "text.color": text,
        "axes.labelcolor": text,
        "axes.edgecolor": colors["grid"],
        "xtick.color": text,
        "ytick.color": text,
        "grid.color": colors["grid"],
        "path.simplify": False,
    }


@cache
def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@cache
def _own_source() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@cache
def _matplotlib_version() -> str:
    from importlib import metadata

    return metadata.version("matplotlib")
