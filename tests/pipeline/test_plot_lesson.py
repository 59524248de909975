"""A lesson with line and scatter panels end to end, through the real subprocess and real
JAX: recorded as data, checked fresh, rendered with every chart file its page names, its
values placed in the prose; a damaged recording of it is refused naming the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.observe import Paths
from builder.pipeline.build import build
from tests.helpers import plots_course

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    paths = plots_course(tmp_path_factory.mktemp("plots"))
    build(paths, execute=True, jobs=1)
    return paths


def _args(paths: Paths) -> list[str]:
    return ["--content", str(paths.content), "--recordings", str(paths.recordings)]


def test_the_run_records_its_lines_points_and_fit_as_data(built: Paths) -> None:
    raw = json.loads((built.recordings / "basics-04.json").read_text())
    assert raw["schemaVersion"] == 1
    line, scatter, tiny = raw["data"]["panels"]
    assert (line["kind"], scatter["kind"], tiny["kind"]) == ("line", "scatter", "line")
    assert line["x"] == list(range(21)) and line["series"][0]["y"][0] == 18.0
    fit = scatter["series"][0]["fit"]
    assert fit["kind"] == "linear" and abs(fit["slope"] - 2) < 0.05
    assert abs(fit["intercept"] - 1) < 0.1
    assert main(["check", *_args(built)]) == 0


def test_the_page_shows_each_panel_in_both_themes_and_sizes(built: Paths) -> None:
    page = (built.out / "l" / "lines-and-points" / "index.html").read_text()
    assert [int(n) for n in re.findall(r'<figure class="panel" id="panel-(\d)"', page)] == [1, 2, 3]
    files = re.findall(r'(?:src|srcset)="\.\./\.\./(charts/[^"]+\.svg)"', page)
    assert len(set(files)) == 12  # 3 panels x light, dark x wide, narrow
    for name in files:
        svg = (built.out / name).read_text()
        assert svg.startswith("<?xml") and "<text" in svg
    assert 'alt="Line chart, Loss while descending: loss against step' in page
    assert 'alt="Scatter plot, Points and the line fitted to them: output against input' in page
    assert '<th scope="col">step</th><th scope="col">learning rate 0.1</th>' in page
    assert re.search(r"After ten steps the loss is <span[^>]*><data[^>]*>0\.2075</data>", page)
    assert re.search(r"The fitted slope is <span[^>]*><data[^>]*>1\.999</data>", page)
    assert any("ratio (×10⁻⁵)" in (built.out / name).read_text() for name in files)


def test_a_damaged_line_panel_is_refused_naming_the_file(built: Paths, tmp_path: Path) -> None:
    raw = json.loads((built.recordings / "basics-04.json").read_text())
    raw["data"]["panels"][0]["series"][0]["y"].pop()
    bad = tmp_path / "basics-04.json"
    bad.write_text(json.dumps(raw, indent=2))
    assert main(["validate", str(bad)]) == 1
