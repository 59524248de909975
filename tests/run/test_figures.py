"""Figures as data (issue 57): the matplotlib figures a cell draws are recorded as panels, in
the example's own subprocess with the real matplotlib, and drawn by the builder's own charts
under the cell that drew them. One course (recorded and built once, a module fixture) covers
every artist kind, a grid of subplots, a `hide` cell's figure, a cell that closes its
figure, hostile labels and a re-record; the rest run one example each."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from builder.course.panel_data import PanelData
from builder.course.recording import ImagePanel, Recording, XYPanel, load
from builder.course.status import recording_path
from builder.course.validation import validate_json
from builder.panels import MAX_IMAGE, MAX_POINTS
from builder.render.figures import notes
from builder.review.changes import lesson_change
from builder.run.batch import record
from tests.helpers import build_cli
from tests.run.test_cells import LESSON, cell, run, summary, write

SETUP = """\
# %% setup hide
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
"""

PLOTS = (
    SETUP
    + """\
# %% lines
x = np.linspace(1, 2, 5)
plt.plot(x, x**2, label="square")
plt.step(x, x, label="step")
plt.fill_between(x, x - 0.1, x + 0.1, label="band")
plt.errorbar(x, x + 1, yerr=0.1, label="measured")
plt.axhline(2.5, label="target")
plt.axvline(1.5)
plt.title("Lines"); plt.xlabel("t"); plt.ylabel("v"); plt.legend()
plt.gca()
# %% logs
fig, (a, b) = plt.subplots(1, 2)
a.semilogy([1, 2, 3], [1, 10, 100])
b.loglog([1, 10, 100], [1, 10, 100], "o")
# %% points
plt.scatter([1, 2, 3], [3, 1, 2], label="</script><b>bold</b>\\x07bell")
plt.title("<script>alert(1)</script>")
# %% bars
fig, axes = plt.subplots(2, 2)
axes[0, 0].bar(["a", "b"], [1, 2], label="n")
axes[0, 1].barh(["c", "d"], [3, 4])
axes[1, 0].hist([1, 2, 2, 3, 3, 3], bins=3)
axes[1, 1].imshow(np.arange(200 * 100).reshape(200, 100))
fig
# %% matrix
plt.matshow(np.eye(3))
# %% hidden hide
plt.plot([0, 1], [1, 0])
plt.title("From a hidden cell")
# %% closes
plt.plot([0, 1], [0, 1])
plt.close()
print("closed")
# %% quiet
plt.plot([0, 1], [5, 6]);
# %% value
class Foo: pass
Foo()
"""
)

LESSON_MD = """\
---
id: {lesson}
slug: calm
title: Calm
arc: calm
order: 1
summary: Cells.
---
{{{{ cell lines }}}}

{{{{ cell logs }}}}

{{{{ cell points }}}}

{{{{ cell bars }}}}

{{{{ cell matrix }}}}

{{{{ cell closes }}}}

{{{{ cell quiet }}}}

{{{{ cell value }}}}

The square at 2 is {{{{ value panel=1 series=square x=2 }}}}; the matrix's middle is
{{{{ value panel=9 row=2 column=2 }}}}.
"""


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """The plotting course, recorded and built once."""
    root = tmp_path_factory.mktemp("plots")
    course = write(root, PLOTS)
    (root / "content" / "lessons" / LESSON / "lesson.md").write_text(
        LESSON_MD.format(lesson=LESSON)
    )
    (root / "recordings").mkdir()
    report = record(list(course.lessons), root / "recordings")
    assert not report.failures, report.failures
    code, said = build_cli(root)
    assert code == 0, said
    return root, load(recording_path(root / "recordings", LESSON))


def by_cell(recording: Recording) -> dict[str, list[int]]:
    return {c.name: c.panels or [] for c in recording.cells or ()}


def test_every_artist_kind_is_recorded_as_data(plotted: tuple[Path, Recording]) -> None:
    _, recording = plotted
    cells = by_cell(recording)
    [lines] = [recording.panels[n - 1] for n in cells["lines"]]
    assert isinstance(lines, XYPanel) and lines.kind == "line"
    assert (lines.title, lines.xlabel, lines.ylabel) == ("Lines", "t", "v")
    series = {s.label: s for s in lines.series}
    assert series["square"].y == [1.0, 1.5625, 2.25, 3.0625, 4.0]
    assert series["step"].x is not None and len(series["step"].x) == 9  # its corners
    assert series["band"].mark == "band" and series["band"].low == pytest.approx(
        [0.9, 1.15, 1.4, 1.65, 1.9]
    )
    assert series["measured"].low == pytest.approx([1.9, 2.15, 2.4, 2.65, 2.9])
    assert lines.axes is not None
    assert [(r.axis, r.at, r.label) for r in lines.axes.references] == [
        ("y", 2.5, "target"),
        ("x", 1.5, None),
    ]
    semilogy, loglog = (recording.panels[n - 1] for n in cells["logs"])
    assert semilogy.axes and (semilogy.axes.xscale, semilogy.axes.yscale) == ("linear", "log")
    assert loglog.axes and (loglog.axes.xscale, loglog.axes.yscale) == ("log", "log")
    assert loglog.kind == "scatter"  # markers only: points
    assert (loglog.axes.row, loglog.axes.column, loglog.axes.columns) == (0, 1, 2)
    bar, barh, hist, image = (recording.panels[n - 1] for n in cells["bars"])
    assert (bar.kind, bar.labels, bar.series[0].y) == ("bar", ["a", "b"], [1.0, 2.0])  # type: ignore[union-attr]
    assert (barh.kind, barh.labels, barh.series[0].y) == ("bar", ["c", "d"], [3.0, 4.0])  # type: ignore[union-attr]
    assert hist.kind == "bar" and hist.series[0].y == [1.0, 2.0, 3.0]  # type: ignore[union-attr]
    assert isinstance(image, ImagePanel) and image.shape == [200, 100]
    assert (len(image.pixels), len(image.pixels[0])) == (MAX_IMAGE, MAX_IMAGE)
    assert image.axes and (image.axes.rows, image.axes.row, image.axes.column) == (2, 1, 1)
    [matrix] = [recording.panels[n - 1] for n in cells["matrix"]]
    assert isinstance(matrix, ImagePanel) and matrix.pixels[1] == [0.0, 1.0, 0.0]


def test_a_figure_is_its_cells_output_and_no_address_is_recorded(
    plotted: tuple[Path, Recording],
) -> None:
    """`plt.gca()` and `fig` as last expressions record the figure and no value; a `;`
    hides the value, not the figure (as in Jupyter); an object's repr loses its address."""
    root, recording = plotted
    runs = {c.name: c for c in recording.cells or ()}
    assert runs["lines"].value is None and runs["bars"].value is None
    assert by_cell(recording)["quiet"]
    assert runs["value"].value == "<__main__.Foo object>"
    text = recording_path(root / "recordings", LESSON).read_text()
    assert "0x" not in text
    site = "".join(p.read_text() for p in (root / "site").rglob("*.html"))
    assert not re.search(r"at 0x[0-9a-f]", site)


def test_closed_and_hidden_figures(plotted: tuple[Path, Recording]) -> None:
    """A cell that closes its figure records none; a `hide` cell's figure is recorded and
    shown with the panels the prose does not place; each cell has only its own figures."""
    root, recording = plotted
    cells = by_cell(recording)
    assert cells["closes"] == [] and cells["setup"] == []
    [hidden] = cells["hidden"]
    assert recording.panels[hidden - 1].title == "From a hidden cell"
    numbers = [n for name in cells for n in cells[name]]
    assert numbers == list(range(1, len(recording.panels) + 1))  # each once, in order
    page = (root / "site" / "l" / "calm" / "index.html").read_text()
    closing = page[page.index('class="more-panels"') :]
    assert f'id="panel-{hidden}"' in closing
    assert f'id="panel-{cells["lines"][0]}"' not in closing  # placed under its cell


def test_the_page_draws_the_figures_under_their_cells(plotted: tuple[Path, Recording]) -> None:
    root, recording = plotted
    page = (root / "site" / "l" / "calm" / "index.html").read_text()
    lines_cell = page.index('id="cell-lines"')
    assert lines_cell < page.index('id="panel-1"') < page.index('id="cell-logs"')
    assert page.count('<div class="panel-grid" data-columns="2">') == 2  # logs, bars
    charts = set(re.findall(r'(?:src|srcset)="\.\./\.\./(charts/[^"]+\.svg)"', page))
    assert len(charts) == 4 * len(recording.panels)  # the hidden one too, in the closing section
    assert all((root / "site" / c).is_file() for c in charts)
    assert any(c.endswith("-dark-narrow.svg") for c in charts)
    assert "Sampled evenly to 64 x 64 of the 200 x 100 values drawn." in page
    assert "A reference line at y = 2.5 (target)." in page
    assert 'The square at 2 is <span class="rv-mark"><data class="rv" value="4.0"' in page
    assert "panel 1 “Lines”, square, at t 2, in v" in page
    assert 'middle is\n<span class="rv-mark"><data class="rv" value="1.0"' in page


def test_hostile_labels_are_escaped(plotted: tuple[Path, Recording]) -> None:
    root, recording = plotted
    [points] = [recording.panels[n - 1] for n in by_cell(recording)["points"]]
    assert points.series[0].label == "</script><b>bold</b> bell"  # no control character
    page = (root / "site" / "l" / "calm" / "index.html").read_text()
    assert "<script>alert(1)</script>" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\x07" not in page
    svgs = [p.read_text() for p in (root / "site" / "charts").glob("*.svg")]
    assert not any("<script" in svg or "\x07" in svg for svg in svgs)


def test_a_re_record_of_an_unchanged_plotting_lesson_is_same(
    plotted: tuple[Path, Recording], tmp_path: Path
) -> None:
    root, _ = plotted
    path = recording_path(root / "recordings", LESSON)
    before = path.read_bytes()
    course = write(tmp_path, PLOTS)
    (tmp_path / "recordings").mkdir()
    assert not record(list(course.lessons), tmp_path / "recordings").failures
    after = recording_path(tmp_path / "recordings", LESSON).read_bytes()
    change = lesson_change(LESSON, before, after, "before", "after")
    assert change.category in ("same", "timing"), change


# -- one example each ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "artist"),
    [
        ("fig = plt.figure(); fig.add_subplot(projection='3d').plot([0, 1], [0, 1], [0, 1])",
         "a 3d axes"),
        ("plt.contour(np.eye(3))", "the QuadContourSet"),
        ("plt.plot([0, 1]); plt.annotate('peak', (0, 1))", "the Annotation 'peak'"),
        ("plt.gca().add_patch(matplotlib.patches.Circle((0, 0), 1))", "the Circle"),
        ("plt.imshow(np.zeros((2, 2, 3)))", "an image of shape [2, 2, 3] (RGB?)"),
    ],
    ids=["3d", "contour", "annotation", "patch", "rgb"],
)  # fmt: skip
def test_an_uncapturable_artist_is_an_error_naming_the_cell(
    tmp_path: Path, code: str, artist: str
) -> None:
    said, path = summary(tmp_path, SETUP + f"# %% drawn\n{code}\n")
    assert f"{LESSON}: cell 'drawn': {artist}" in said, said
    assert "cannot be recorded as a chart" in said
    assert "`# %% drawn nofigure` keeps its figures off the page" in said
    assert not path.exists()


def test_nofigure_keeps_a_cells_figures_out(tmp_path: Path) -> None:
    execution = run(tmp_path, SETUP + "# %% drawn nofigure\nplt.contour(np.eye(3))\n")
    assert "panels" not in cell(execution, "drawn") and execution.panels == []


def test_fifty_figures_in_one_cell(tmp_path: Path) -> None:
    source = SETUP + "# %% many\nfor k in range(50):\n    plt.figure(); plt.plot([0, k])\n"
    execution = run(tmp_path, source)
    assert cell(execution, "many")["panels"] == list(range(1, 51))
    assert [p["series"][0]["y"] for p in execution.panels][49] == [0.0, 49.0]
    assert [p["axes"]["figure"] for p in execution.panels] == list(range(1, 51))


def test_a_million_points_are_sampled_and_say_so(tmp_path: Path) -> None:
    source = SETUP + "# %% big\nplt.plot(np.arange(10**6), np.arange(10**6) * 2.0)\n"
    execution = run(tmp_path, source)
    [series] = execution.panels[0]["series"]
    assert len(series["y"]) == MAX_POINTS and series["of"] == 10**6
    assert execution.panels[0]["x"][-1] == 999_999.0 and series["y"][-1] == 1_999_998.0
    panel = validate_json(PanelData, json.dumps({"kind": "panels", "panels": execution.panels}))
    assert "series 1: 1,000 of the 1,000,000 points drawn." in notes(panel.panels[0])


def test_without_matplotlib_nothing_is_imported(tmp_path: Path) -> None:
    execution = run(tmp_path, "# %% check\nimport sys\n'matplotlib' in sys.modules\n")
    assert cell(execution, "check")["value"] == "False"


def test_an_example_without_cells_records_its_figures(tmp_path: Path) -> None:
    source = textwrap.dedent(SETUP.split("\n", 1)[1]) + "plt.bar([1, 2], [3, 4])\n"
    execution = run(tmp_path, source)
    assert [p["kind"] for p in execution.panels] == ["bar"]
