"""Line and scatter panels as an example emits them: validated at the call (in the example's
own process, at its line), the fit computed in the run, and a run's panels refused when a
chart could not draw them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from builder import panels
from builder.run.outcome import Outcome
from builder.run.result import same_names, undrawable
from tests.helpers import LESSON_ID, run


@pytest.fixture(autouse=True)
def _empty() -> None:
    panels.emitted.clear()
    panels.timing_panels.clear()


def test_a_line_panel_is_recorded_as_data() -> None:
    panels.line(
        "Loss",
        x=np.arange(3),
        xlabel="step",
        ylabel="loss",
        series={"adam": [np.float32(0.5), 0.25, 0.125]},
        timing=True,
    )
    assert panels.emitted == [
        {
            "kind": "line",
            "title": "Loss",
            "xlabel": "step",
            "ylabel": "loss",
            "x": [0, 1, 2],
            "series": [{"label": "adam", "y": [0.5, 0.25, 0.125]}],
        }
    ]
    assert type(panels.emitted[0]["x"][0]) is int
    assert panels.timing_panels == [1]


def test_a_scatter_panel_records_the_fit_the_run_computed() -> None:
    xs = [0, 1, 2, 3]
    panels.scatter(
        "Fit",
        x=xs,
        xlabel="x",
        ylabel="y",
        series={"data": [1, 3, 5, 7], "other": [0, 0.5, 1, 1.5]},
        fit="linear",
    )
    [panel] = panels.emitted
    assert panel["kind"] == "scatter"
    assert panel["series"][0]["fit"] == {"kind": "linear", "slope": 2.0, "intercept": 1.0}
    assert panel["series"][1]["fit"] == {"kind": "linear", "slope": 0.5, "intercept": 0.0}
    panels.scatter("No fit", x=xs, xlabel="x", ylabel="y", series={"d": [1, 2, 3, 4]})
    assert "fit" not in panels.emitted[1]["series"][0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"x": [1, math.nan]}, "x: nan is not finite"),
        ({"series": {"s": [1, math.inf]}}, "series 's': inf is not finite"),
        ({"series": {"s": [1]}}, "series 's' has 1 values for 2 x values"),
        ({"x": []}, "needs at least one x value"),
        ({"x": "12"}, "x must be a list of numbers, got str"),
        ({"x": 3}, "x must be a list of numbers, got int"),
        ({"x": [True, 2]}, "is a bool"),
        ({"series": {}}, "needs at least one series"),
        ({"series": [1, 2]}, "needs at least one series, as {label: [y, ...]}"),
        ({"series": {"s": "ab"}}, "series 's' must be a list of numbers, got str"),
        ({"xlabel": ""}, "xlabel must be a non-empty string"),
        ({"ylabel": "y" * 201}, "ylabel is longer than 200 characters"),
        ({"x": list(range(600)), "series": {"a": [0] * 600, "b": [0] * 600}}, "1200 points"),
    ],
)
@pytest.mark.parametrize("kind", ["line", "scatter"])
def test_mistakes_raise_where_the_example_made_them(
    kind: str, kwargs: dict[str, object], message: str
) -> None:
    call = {"x": [1, 2], "xlabel": "x", "ylabel": "y", "series": {"s": [1, 2]}} | kwargs
    with pytest.raises(panels.PanelError) as caught:
        getattr(panels, kind)("Title", **call)
    assert message in str(caught.value)
    assert panels.emitted == []


@pytest.mark.parametrize(
    ("x", "fit", "message"),
    [
        ([1, 1, 1], "linear", "series 's': no line fits its points: x is constant"),
        ([1], "linear", "no line fits its points"),
        ([1, 2, 3], "quadratic", "fit='quadratic': say one of ['linear'] or leave it out"),
    ],
)
def test_a_fit_that_cannot_be_made_raises(x: list[int], fit: str, message: str) -> None:
    with pytest.raises(panels.PanelError) as caught:
        panels.scatter("T", x=x, xlabel="x", ylabel="y", series={"s": [1] * len(x)}, fit=fit)
    assert message in str(caught.value)
    assert panels.emitted == []


def test_a_bad_line_panel_raises_at_the_examples_line(tmp_path: Path) -> None:
    """In the example's own process under the harness: the traceback names its line."""
    execution = run(
        tmp_path,
        """\
        from builder import panels
        print("computed")
        panels.line("T", x=[1, 2], xlabel="x", ylabel="y", series={"s": [1, float("nan")]})
        """,
    )
    assert execution.outcome is Outcome.RAISED
    assert execution.detail == "builder.panels.PanelError: series 's': nan is not finite"
    assert f'File "{LESSON_ID}-example", line 3, in <module>' in execution.stderr


def test_a_run_keeps_its_line_and_scatter_panels(tmp_path: Path) -> None:
    execution = run(
        tmp_path,
        """\
        from builder import panels
        panels.line("L", x=[1, 2], xlabel="x", ylabel="y", series={"s": [3, 4]})
        panels.scatter("S", x=[1, 2], xlabel="x", ylabel="y", series={"s": [3, 5]}, fit="linear")
        """,
    )
    assert execution.ok, execution.detail
    assert [p["kind"] for p in execution.panels] == ["line", "scatter"]
    assert execution.panels[1]["series"][0]["fit"] == {
        "kind": "linear",
        "slope": 2.0,
        "intercept": 1.0,
    }


def _xy(**change: object) -> dict[str, object]:
    series: dict[str, object] = {"label": "s", "y": [1, 2]}
    return {"kind": "line", "title": "T", "x": [1, 2], "series": [series]} | change


@pytest.mark.parametrize(
    ("panel", "where"),
    [
        (_xy(x=[1, 10**400]), "panel 1 ('T'), x value 2: a number of about 401 digits"),
        (_xy(series=[{"label": "s", "y": [1, -(10**400)]}]), "series 's', point 2"),
        (
            _xy(series=[{"label": "s", "y": [1, 2], "fit": {"slope": 10**400, "intercept": 0}}]),
            "series 's', its fit's slope",
        ),
    ],
)
def test_a_value_too_large_to_draw_is_refused_naming_where_it_is(
    panel: dict[str, object], where: str
) -> None:
    assert where in undrawable([panel])


def test_two_series_of_one_name_are_refused() -> None:
    panel = _xy(series=[{"label": "é", "y": [1, 2]}, {"label": "e\u0301", "y": [1, 2]}])
    assert "panel 1 ('T'): series " in same_names([panel])
    assert "are the same name (equal in Unicode)" in same_names([panel])
