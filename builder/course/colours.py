"""course.yml's `colours:`: the accent (links, focus rings, highlights) in light and dark
mode, as #rrggbb, each readable on the page background it is shown on.

Readable: a contrast ratio of at least 4.5 against the site's background (WCAG AA for
body text, which links are), so a course cannot choose an accent its readers cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from .validation import FORBID, Check, Pattern

LIGHT_BACKGROUND = "#fdfdfc"  # --bg in builder/render/templates/static/style.css
DARK_BACKGROUND = "#12161d"
MIN_CONTRAST = 4.5


def contrast(one: str, other: str) -> float:
    """WCAG's contrast ratio of two #rrggbb colours, from 1 to 21."""
    lighter, darker = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _luminance(colour: str) -> float:
    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(colour[i : i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _readable_on(background: str, mode: str) -> Check:
    def check(colour: str) -> str:
        ratio = contrast(colour, background)
        if ratio < MIN_CONTRAST:
            raise ValueError(
                f"{colour} on the {mode} background {background} has a contrast of "
                f"{ratio:.1f}:1; links need {MIN_CONTRAST}:1: choose a "
                f"{'darker' if mode == 'light' else 'lighter'} colour"
            )
        return colour

    return Check(check)


Hex = Pattern(r"^#[0-9a-fA-F]{6}$")


@dataclass(frozen=True)
class Colours:
    """Each optional: what is not given keeps the builder's colour."""

    __pydantic_config__ = FORBID

    accent: Annotated[str, Hex, _readable_on(LIGHT_BACKGROUND, "light")] | None = None
    accent_dark: Annotated[str, Hex, _readable_on(DARK_BACKGROUND, "dark")] | None = None
