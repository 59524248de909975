"""`{{ value panel=N ... }}` on a line or scatter panel: a point by its x (or its number
where x values repeat), a fitted line's slope and intercept; a reference to nothing fails
naming the lesson's file and line and what exists."""

from __future__ import annotations

from dataclasses import replace

import pytest

from builder.course.model import Course
from builder.course.recording import Fit, Recording, XYPanel, XYSeries, load
from tests.helpers import FIXTURE_COURSE, REFERENCE
from tests.render.test_prose import _render

LINE = XYPanel(
    "line",
    "Loss",
    "step",
    "loss",
    [0, 10, 20],
    [XYSeries("adam", [1.5, 0.25, 0.125]), XYSeries("sgd", [1.5, 0.75, 0.5])],
)
SCATTER = XYPanel(
    "scatter",
    "Fit",
    "input",
    "output",
    [1.0, 2.0, 2.0, 3.5],
    [XYSeries("measured", [3.0, 5.0, 5.5, 8.0], Fit("linear", 2.0, 1.0))],
)


@pytest.fixture(scope="module")
def recorded() -> Recording:
    reference = load(REFERENCE)
    data = replace(reference.data, panels=[*reference.panels, LINE, SCATTER])
    return replace(reference, data=data)


@pytest.mark.parametrize(
    ("markdown", "value", "source"),
    [
        (
            '{{ value panel=3 series="sgd" x=10 }}',
            "0.75",
            "panel 3 “Loss”, sgd, at step 10, in loss",
        ),
        ('{{ value panel=3 series="adam" point=3 }}', "0.125", "adam, at step 20"),
        ("{{ value panel=4 x=3.5 }}", "8", "panel 4 “Fit”, measured, at input 3.5, in output"),
        ("{{ value panel=4 point=3 }}", "5.5", "at input 2"),
        ('{{ value panel=4 fit=slope fmt=".1f" }}', "2.0", "measured, the linear fit&#39;s slope"),
        ("{{ value panel=4 fit=intercept }}", "1", "the linear fit&#39;s intercept"),
    ],
)
def test_a_point_or_a_fit_is_placed_with_where_it_came_from(
    course: Course, recorded: Recording, markdown: str, value: str, source: str
) -> None:
    html, errors = _render(course, recorded, f"It was {markdown}.\n")
    assert errors == []
    assert f">{value}</data>" in html
    assert source in html


@pytest.mark.parametrize(
    ("markdown", "message"),
    [
        ("{{ value panel=3 x=10 }}", "give series= one of ['adam', 'sgd']"),
        (
            '{{ value panel=3 series="adam" x=15 }}',
            "panel 3 has no x 15; its x values: ['0', '10', '20']",
        ),
        ('{{ value panel=3 series="adam" x=ten }}', "panel 3 has no x ten"),
        ('{{ value panel=3 series="adam" point=4 }}', "panel 3 has points 1 to 3"),
        ('{{ value panel=3 series="adam" label="0" }}', "panel 3 is a line panel: say x=VALUE"),
        ("{{ value panel=4 x=2 }}", "points 2, 3 share that x; say point=N"),
        ('{{ value panel=3 series="adam" fit=slope }}', "series 'adam' has no fitted line"),
        ("{{ value panel=4 fit=curvature }}", "say fit=slope or fit=intercept"),
    ],
)
def test_a_reference_to_nothing_fails_naming_file_line_and_what_exists(
    course: Course, recorded: Recording, markdown: str, message: str
) -> None:
    _, errors = _render(course, recorded, "Intro.\n\n" + markdown + "\n")
    assert len(errors) == 1
    assert message in errors[0]
    assert errors[0].startswith(f"{FIXTURE_COURSE}/lessons/basics-01/lesson.md: line 12:")
