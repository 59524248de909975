"""What a chart's text says: the scale (linear or log), its ticks and their labels, every
bar's value label in one precision, and label lines wrapped at spaces; and the axes of a
line or scatter chart, which span its data (`data_axis`).

No tick or value label takes an SI prefix below 1 ("468n", "5m"): a chart's numbers are
mostly ratios, counts and sizes, for which "n" or "m" is no unit, so small values are
counted in a power of ten said once on the axis' label; large ones take k, M, G, T.

Pure functions of the panel, with no matplotlib but its tick chooser (imported when a
linear scale is chosen); builder/render/charts.py draws what they say.
"""

from __future__ import annotations

import math
import textwrap

from ..course.recording import BarPanel, Number

LOG_RATIO = 100  # one positive value this many times another: a log scale (1% shows nothing)
MARGIN = 0.05  # a line or scatter chart's air beyond its data, a share of the axis' span
# Large values take a prefix; values below 0.001 are counted in a power of ten instead, said
# once (SI's "n" or "µ" is no unit of a ratio, and "468n" reads as a count of n).
SCALES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
SMALL = 1e-3
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def values(panel: BarPanel) -> list[Number]:
    return [y for series in panel.series for y in series.y]


def log_scale(panel: BarPanel) -> bool:
    """Whether the chart is drawn on a log scale: every value positive, and the largest at
    least LOG_RATIO times the smallest, so that a linear scale would flatten the small
    ones to nothing."""
    return is_log(values(panel))


def is_log(vs: list[Number]) -> bool:
    return min(vs) > 0 and max(vs) >= LOG_RATIO * min(vs)


def exponent(panel: BarPanel) -> int:
    return power_of(values(panel))


def power_of(vs: list[Number]) -> int:
    """The power of ten a linear axis counts in when all its values are below SMALL (0 when
    they are not): its ticks and values are then plain numbers, and `factor` says it."""
    top = max(abs(v) for v in vs)
    if is_log(vs) or top == 0 or top >= SMALL:
        return 0
    return math.floor(math.log10(top))


def factor(panel: BarPanel) -> str:
    """What the value axis' label adds: " (×10⁻⁷)" for a panel counted in 10⁻⁷, else ""."""
    return factor_of(values(panel))


def factor_of(vs: list[Number]) -> str:
    power = power_of(vs)
    return f" (×{_power(power)})" if power else ""


def _power(power: int) -> str:
    return "10" + str(power).translate(_SUPERSCRIPT)


def y_axis(panel: BarPanel) -> tuple[tuple[float, float], list[float], list[str]]:
    """The y-axis' limits, ticks and tick labels."""
    ys = values(panel)
    if log_scale(panel):
        ylim, ticks = log_ylim(ys)
        return ylim, ticks, [short(t) for t in ticks]
    ylim = linear_ylim(ys)
    ticks = linear_ticks(ylim, all(isinstance(y, int) for y in ys))
    unit = 10.0 ** exponent(panel)
    return ylim, ticks, tick_labels([t / unit for t in ticks])


def log_ylim(ys: list[Number]) -> tuple[tuple[float, float], list[float]]:
    """From the decade at or below the smallest value to the one at or above the largest
    (and air for its label), with a tick at each decade."""
    low = 10.0 ** math.floor(math.log10(min(ys) / 2))  # the smallest bar still shows
    high = 10.0 ** math.ceil(math.log10(max(ys)) + 0.08)
    ticks = [10.0**k for k in range(round(math.log10(low)), round(math.log10(high)) + 1)]
    return (low, high), ticks


def linear_ylim(ys: list[Number]) -> tuple[float, float]:
    """From zero to the data, with 15% of air for the value labels on the far side."""
    low, high = min(0, *ys), max(0, *ys)
    span = (high - low) or 1.0
    return (
        low - 0.15 * span if low < 0 else 0.0,
        high + 0.15 * span if high > 0 or low == 0 else 0.0,
    )


def data_axis(
    vs: list[Number], bins: int = 5, log: bool | None = None
) -> tuple[tuple[float, float], list[float], list[str], bool]:
    """A line or scatter chart's axis: limits that span the data with MARGIN of air each
    side (not from zero: a line's shape is in its changes), its ticks, their labels counted
    in the power of ten `factor_of` says, and whether it is a log scale. On a log scale the
    air is a share of the logarithm's span, the same on both sides as drawn, and the ticks
    are the decades inside the limits (a ratio of LOG_RATIO spans two at least); `log`:
    the scale a captured figure set (its values that are not positive are not drawn)."""
    if log:
        vs = [v for v in vs if v > 0] or [1]
    if is_log(vs) if log is None else log:
        air = (max(vs) / min(vs)) ** MARGIN
        low, high = min(vs) / air, max(vs) * air
        decades = range(math.ceil(math.log10(low)), math.floor(math.log10(high)) + 1)
        ticks = [10.0**k for k in decades]
        return (low, high), ticks, [short(t) for t in ticks], True
    low, high = float(min(vs)), float(max(vs))
    span = (high - low) or abs(high) or 1.0
    limits = (low - MARGIN * span, high + MARGIN * span)
    ticks = linear_ticks(limits, all(isinstance(v, int) for v in vs), bins)
    unit = 10.0 ** power_of(vs)
    return limits, ticks, tick_labels([t / unit for t in ticks]), False


def linear_ticks(ylim: tuple[float, float], integer: bool, bins: int = 5) -> list[float]:
    """matplotlib's tick chooser, kept to the ticks inside the limits."""
    from matplotlib.ticker import MaxNLocator

    low, high = ylim
    slack = (high - low) * 1e-9
    locator = MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10], integer=integer)
    return [float(t) for t in locator.tick_values(low, high) if low - slack <= t <= high + slack]


def tick_labels(ticks: list[float]) -> list[str]:
    """Short labels in one scale and one precision: 1.5G, 256k, 0.25."""
    top = max(abs(t) for t in ticks)
    scale, suffix = _scale(top)
    scaled = [t / scale for t in ticks]
    decimals = next(  # as many as tell the ticks apart (1.0001 and 1.0002: four)
        (d for d in range(7) if all(abs(round(s, d) - s) < 1e-9 * max(1, abs(s)) for s in scaled)),
        6,
    )
    return ["0" if s == 0 else f"{s:,.{decimals}f}".replace("-", "−") + suffix for s in scaled]


def value_labels(panel: BarPanel) -> tuple[tuple[str, ...], ...]:
    """Every bar's label in one precision: on a log scale three significant digits each;
    else one scale (k, M, ...) from the largest value, and the decimals that give it three
    significant digits, fewer if every value is exact with fewer."""
    ys = values(panel)
    top = max(abs(v) for v in ys)
    if all(float(v).is_integer() for v in ys) and top < 1e4:  # counts: exact
        return tuple(tuple(f"{int(y):,}".replace("-", "−") for y in s.y) for s in panel.series)
    if log_scale(panel):
        return tuple(tuple(significant(y) for y in s.y) for s in panel.series)
    unit = 10.0 ** exponent(panel)
    scale, suffix = _scale(top / unit)
    scale *= unit
    scaled = [v / scale for v in ys]
    biggest = max(abs(v) for v in scaled) or 1.0
    decimals = min(3, max(0, 2 - math.floor(math.log10(biggest))))
    while decimals and all(abs(round(v, decimals - 1) - v) < 1e-9 * max(1, abs(v)) for v in scaled):
        decimals -= 1

    def text(y: Number) -> str:
        shown = "0" if y == 0 else f"{y / scale:,.{decimals}f}" + suffix
        return shown.replace("-", "−")

    return tuple(tuple(text(y) for y in s.y) for s in panel.series)


def short(value: Number) -> str:
    """A tick label: exact when short, else three significant digits with a suffix, or
    a power of ten (10⁻⁴) below SMALL."""
    scale, suffix = _scale(abs(value))
    if 0 < abs(value) < SMALL:
        power = math.floor(math.log10(abs(value)))
        mantissa = f"{value / 10.0**power:.3g}"
        text = _power(power) if mantissa == "1" else f"{mantissa}×{_power(power)}"
    elif scale == 1 and float(value).is_integer():
        text = f"{int(value):,}"
    elif scale == 1:
        text = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    else:
        text = f"{value / scale:.3g}{suffix}"
    return text.replace("-", "−")


def significant(value: Number) -> str:
    """Three significant digits, trailing zeros kept (0.00980, 28.0, 1.24k, 4.68×10⁻⁷)."""
    scale, suffix = _scale(abs(value))
    if scale == 1 and abs(value) >= 1000:  # 2,048, not 2.05e+03
        return f"{value:,.0f}".replace("-", "−")
    if 0 < abs(value) < SMALL:
        power = math.floor(math.log10(abs(value)))
        return f"{value / 10.0**power:#.3g}×{_power(power)}".replace("-", "−")
    shown = f"{value / scale:#.3g}".rstrip(".") + suffix
    return shown.replace("-", "−")


def _scale(magnitude: float) -> tuple[float, str]:
    """A prefix for values of 10,000 and more (k, M, ...); none below."""
    return next(((s, x) for s, x in SCALES if magnitude >= s and magnitude >= 1e4), (1.0, ""))


def wrap(text: str, columns: float) -> str:
    """`text` broken at spaces into lines of at most `columns` characters (a longer word
    stays whole); matplotlib measures and places the lines."""
    return "\n".join(textwrap.wrap(text, max(int(columns), 1), break_long_words=False)) or text


def lines(text: str) -> int:
    return text.count("\n") + 1


def longest(text: str) -> int:
    """The longest line's length in characters."""
    return max(len(line) for line in text.split("\n"))
