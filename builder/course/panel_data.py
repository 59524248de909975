"""A recording's panels (its `data`): bar panels, and line and scatter panels with their
fitted lines; the types pydantic validates a recording's panels by (builder/course/
recording.py holds the rest of the recording). `builder.panels` is what makes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from annotated_types import Len, MaxLen, MinLen

from .rules import MAX_PANELS, finite_number, series_lengths_match, xy_lengths_match
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
    fit: Annotated[Fit | None, Check(_not_null, before=True)] = None


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

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """The panel's own fields, then: every series has one value per x, a fit only on a
        scatter panel."""
        return Check(_xy_lengths_match).__get_pydantic_core_schema__(source, handler)

    def values(self) -> dict[tuple[str, str], Number]:
        """Each value by its series and where it is: a point's x (`x=3`, and its number
        where x values repeat), a fitted line's `fit slope` and `fit intercept`."""
        repeated = len(set(self.x)) < len(self.x)
        names = [
            f"x={x:g}" + (f" (point {n})" if repeated else "") for n, x in enumerate(self.x, 1)
        ]
        found = {(s.label, at): y for s in self.series for at, y in zip(names, s.y, strict=True)}
        for s in self.series:
            if s.fit is not None:
                found[s.label, "fit slope"] = s.fit.slope
                found[s.label, "fit intercept"] = s.fit.intercept
        return found


def _xy_lengths_match(panel: XYPanel) -> XYPanel:
    xy_lengths_match(panel.kind, panel.x, [(s.label, s.y, s.fit is not None) for s in panel.series])
    return panel


Panel = Annotated[BarPanel | XYPanel, Tagged("kind")]  # told apart by `kind`


@dataclass(frozen=True)
class PanelData:
    __pydantic_config__ = STRICT

    kind: Literal["panels"]
    panels: Annotated[list[Panel], MaxLen(MAX_PANELS)]
