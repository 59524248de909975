"""The panels API an example calls: validated at the call, so the traceback points at it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from builder import panels


@pytest.fixture(autouse=True)
def _empty() -> None:
    panels.emitted.clear()


def test_a_valid_panel_keeps_ints_and_converts_numpy_scalars() -> None:
    panels.bar(
        "Memory",
        labels=["a", "b"],
        ylabel="bytes",
        series={"one": [np.int64(3), 4], "two": [np.float32(0.5), 1.25]},
    )
    assert panels.emitted == [
        {
            "kind": "bar",
            "title": "Memory",
            "labels": ["a", "b"],
            "ylabel": "bytes",
            "series": [{"label": "one", "y": [3, 4]}, {"label": "two", "y": [0.5, 1.25]}],
        }
    ]
    assert type(panels.emitted[0]["series"][0]["y"][0]) is int


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"series": {"s": [math.nan]}}, "nan is not finite"),
        ({"series": {"s": [math.inf]}}, "inf is not finite"),
        ({"series": {"s": [1, 2]}}, "series 's' has 2 values for 1 labels"),
        ({"series": {"s": []}}, "series 's' has 0 values for 1 labels"),
        ({"series": {}}, "needs at least one series"),
        ({"series": {"s": ["9"]}}, "'9' is text, not a number"),
        ({"series": {"s": [True]}}, "is a bool"),
        ({"labels": []}, "needs at least one label"),
        ({"labels": [""]}, "label must be a non-empty string"),
        ({"ylabel": ""}, "ylabel must be a non-empty string"),
        (
            {"labels": [str(i) for i in range(10_000)], "series": {"s": [1] * 10_000}},
            "10000 bars is more than 240",
        ),
    ],
)
def test_mistakes_raise_where_the_example_made_them(
    kwargs: dict[str, object], message: str
) -> None:
    call = {"labels": ["a"], "ylabel": "bytes", "series": {"s": [1]}} | kwargs
    with pytest.raises(panels.PanelError, match=None) as caught:
        panels.bar("Title", **call)  # type: ignore[arg-type]
    assert message in str(caught.value)
    assert panels.emitted == []
