"""A recording's panels (its `data`): bar panels, line and scatter panels with their
fitted lines, and images; the types pydantic validates a recording's panels by (builder/
course/recording.py holds the rest of the recording). `builder.panels` makes bar, line and
scatter panels; builder/run/figures.py makes panels of the matplotlib figures a cell drew,
each with `axes` (where it stood in its figure, its scales, limits and reference lines).
Every field added since the first recordings is optional, so schemaVersion stays 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from annotated_types import Interval, Len, MaxLen, MinLen

from .rules import (
    MAX_IMAGE,
    MAX_PANELS,
    finite_number,
    image_shape_fits,
    series_lengths_match,
    xy_lengths_match,
)
from .validation import STRICT, Check, Tagged

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

# Validated by pydantic (builder.course.validation), but not pydantic models: see there why.
Number = Annotated[int | float, Check(finite_number)]  # strict: no bool, no "1"
Text = Annotated[str, Len(1, 200)]


def _not_null(value: object) -> object:
    """An optional field (`timings`, `cells`, a cell's `value` and `raised`, a series'
    `fit`) is left out when there is none, never written as null."""
    if value is None:
        raise ValueError("is null: an optional field is left out when there is none")
    return value


T = TypeVar("T")
Maybe = Annotated[T | None, Check(_not_null, before=True)]  # optional: left out, never null


@dataclass(frozen=True)
class Reference:
    """A reference line across a captured axes (axhline: axis "y"; axvline: axis "x")."""

    __pydantic_config__ = STRICT

    axis: Literal["x", "y"]
    at: Number
    label: Maybe[Text] = None


@dataclass(frozen=True)
class Axes:
    """Where a captured panel stood in its matplotlib figure and how its axes were set:
    `figure` numbers the recording's figures (1-based; a figure's panels share it), `row`
    and `column` (0-based) place it in the figure's grid of `rows` x `columns` subplots."""

    __pydantic_config__ = STRICT

    figure: Annotated[int, Interval(ge=1)]
    rows: Annotated[int, Interval(ge=1, le=MAX_PANELS)]
    columns: Annotated[int, Interval(ge=1, le=MAX_PANELS)]
    row: Annotated[int, Interval(ge=0, le=MAX_PANELS)]
    column: Annotated[int, Interval(ge=0, le=MAX_PANELS)]
    xscale: Literal["linear", "log"]
    yscale: Literal["linear", "log"]
    xlim: Annotated[list[Number], Len(2, 2)]
    ylim: Annotated[list[Number], Len(2, 2)]
    references: list[Reference]


@dataclass(frozen=True)
class Series:
    __pydantic_config__ = STRICT

    label: Text
    y: list[Number]


@dataclass(frozen=True)
class BarPanel:
    __pydantic_config__ = STRICT

    kind: Literal["bar"]
    title: Text
    labels: Annotated[list[Text], MinLen(1)]
    ylabel: Text
    series: Annotated[list[Series], MinLen(1)]
    axes: Maybe[Axes] = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """The panel's own fields, then: every series has one value per label."""
        return Check(_lengths_match).__get_pydantic_core_schema__(source, handler)

    def values(self) -> dict[tuple[str, str], Number]:
        """Each value by its series and its label."""
        return {
            (s.label, label): y
            for s in self.series
            for label, y in zip(self.labels, s.y, strict=True)
        }


def _lengths_match(panel: BarPanel) -> BarPanel:
    series_lengths_match(panel.labels, [(s.label, s.y) for s in panel.series])
    return panel


@dataclass(frozen=True)
class Fit:
    """A line fitted to a scatter series' points by the run (builder.panels.scatter's fit):
    y = slope * x + intercept."""

    __pydantic_config__ = STRICT

    kind: Literal["linear"]
    slope: Number
    intercept: Number


@dataclass(frozen=True)
class XYSeries:
    """One series of a line or scatter panel: a y value per x value, and on a scatter panel
    the line fitted to its points, if the example asked for one."""

    __pydantic_config__ = STRICT

    label: Text
    y: list[Number]
    fit: Maybe[Fit] = None
    # Captured from a figure (builder/run/figures.py): the series' own x values where they
    # are not the panel's; how it is drawn where that is not the panel's kind; a band's lower
    # edge or error bars' ends; and how many points the run drew, where `y` holds a sample.
    x: Maybe[list[Number]] = None
    mark: Maybe[Literal["line", "points", "band"]] = None
    low: Maybe[list[Number]] = None
    high: Maybe[list[Number]] = None
    of: Maybe[Annotated[int, Interval(ge=1)]] = None

    def bounds(self) -> dict[str, list[Number]]:
        """The series' band or error bars, by name: `low`, `high`, where it has them."""
        return {k: v for k, v in (("low", self.low), ("high", self.high)) if v is not None}

    def xs(self, panel: XYPanel) -> list[Number]:
        """The x values of the series' points."""
        return panel.x if self.x is None else self.x


@dataclass(frozen=True)
class XYPanel:
    """A line or scatter panel: x values every series shares, a y value per x in each."""

    __pydantic_config__ = STRICT

    kind: Literal["line", "scatter"]
    title: Text
    xlabel: Text
    ylabel: Text
    x: Annotated[list[Number], MinLen(1)]
    series: Annotated[list[XYSeries], MinLen(1)]
    axes: Maybe[Axes] = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """The panel's own fields, then: every series has one value per x, a fit only on a
        scatter panel."""
        return Check(_xy_lengths_match).__get_pydantic_core_schema__(source, handler)

    def values(self) -> dict[tuple[str, str], Number]:
        """Each value by its series and where it is: a point's x (`x=3`, and its number
        where x values repeat), a fitted line's `fit slope` and `fit intercept`."""
        found = {
            (s.label, at): y
            for s in self.series
            for at, y in zip(_point_names(s.xs(self)), s.y, strict=True)
        }
        for s in self.series:
            if s.fit is not None:
                found[s.label, "fit slope"] = s.fit.slope
                found[s.label, "fit intercept"] = s.fit.intercept
        return found


def _point_names(xs: list[Number]) -> list[str]:
    repeated = len(set(xs)) < len(xs)
    return [f"x={x:g}" + (f" (point {n})" if repeated else "") for n, x in enumerate(xs, 1)]


def _xy_lengths_match(panel: XYPanel) -> XYPanel:
    xy_lengths_match(
        panel.kind,
        [(s.label, s.y, s.fit is not None, s.xs(panel), s.bounds()) for s in panel.series],
    )
    return panel


@dataclass(frozen=True)
class ImagePanel:
    """An image a cell drew (imshow, matshow): its values row by row, at most MAX_IMAGE a
    side (a larger array is sampled evenly: `shape` is the array the run drew)."""

    __pydantic_config__ = STRICT

    kind: Literal["image"]
    title: Text
    xlabel: Text
    ylabel: Text
    pixels: Annotated[list[Annotated[list[Number], Len(1, MAX_IMAGE)]], Len(1, MAX_IMAGE)]
    shape: Annotated[list[Annotated[int, Interval(ge=1)]], Len(2, 2)]
    axes: Maybe[Axes] = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """The panel's own fields, then: every row as long, no more rows than `shape`."""
        return Check(_image_fits).__get_pydantic_core_schema__(source, handler)

    def values(self) -> dict[tuple[str, str], Number]:
        """Each value by where it is: ("image", "row R column C"), 1-based."""
        return {
            ("image", f"row {r} column {c}"): v
            for r, row in enumerate(self.pixels, 1)
            for c, v in enumerate(row, 1)
        }


def _image_fits(panel: ImagePanel) -> ImagePanel:
    image_shape_fits([len(row) for row in panel.pixels], panel.shape)
    return panel


Panel = Annotated[BarPanel | XYPanel | ImagePanel, Tagged("kind")]  # told apart by `kind`


@dataclass(frozen=True)
class PanelData:
    __pydantic_config__ = STRICT

    kind: Literal["panels"]
    panels: Annotated[list[Panel], MaxLen(MAX_PANELS)]
