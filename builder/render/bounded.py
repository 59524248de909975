"""What a lesson's references ask of its recording, bounded whatever the author typed.

A regex (`output=`, `match=`, `from=`, `to=`) runs on RE2, in time linear in the text it
searches: Python's `re` backtracks, and `^(a+)+$` against a line of 32 `a` and a `!` is
exponential in the line there. Patterns are at most MAX_PATTERN characters and a page's
references search at most MAX_SEARCHED characters of recorded output in all. A format
(`fmt=`) has a bounded width and precision and makes at most MAX_SHOWN characters:
`fmt="999999999d"` would ask Python for a gigabyte of spaces. Each failure is a ValueError
that says why; builder/render/marks.py names the lesson, the line and the reference.
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_PATTERN = 1000  # characters; the course's longest is under 100
MAX_SEARCHED = 64 * 2**20  # characters of recorded output a page's references search
MAX_SHOWN = 64  # characters a formatted value may take; also the largest width, precision
FORMATS = "d e E f F g G %"  # "n" is left out: it depends on the machine's locale
# Python's format spec mini-language, for a number: [[fill]align][sign][z][#][0][width]
# [grouping][.precision][type]
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?([deEfFgG%]?)", re.DOTALL)


def compile_pattern(text: str) -> Any:
    """`text` as an RE2 pattern in which `^` and `$` match at every line (re.MULTILINE);
    RE2 has no backreferences or lookaround, the features that need backtracking."""
    import re2  # google-re2; imported where a page needs it (check renders nothing)

    if len(text) > MAX_PATTERN:
        raise ValueError(f"is {len(text):,} characters long, over the {MAX_PATTERN:,} limit")
    options = re2.Options()
    options.log_errors = False  # RE2 would print each mistake on stderr as well
    options.max_mem = 8 * 2**20  # the compiled program's size: a{1000}{1000} is refused
    try:
        return re2.compile("(?m)" + text, options)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        reason = reason.replace("(?m)" + text, text)  # quote the pattern as the author wrote it
        raise ValueError(f"{reason} (RE2 syntax: no backreferences or lookaround)") from None


def format_value(value: float | str, spec: str) -> str:
    """`value` (a panel's number, or text a pattern found) shown as `spec` asks: a format
    spec of FORMATS or "bytes" (binary units)."""
    number = _number(value)
    if spec == "bytes":
        shown = format_bytes(number)
    else:
        shown = format(_whole(number) if spec.endswith("d") else number, _checked(spec))
    if len(shown) > MAX_SHOWN:
        raise ValueError(f"it makes {len(shown)} characters: use an 'e' or 'g' format")
    return shown


def _checked(spec: str) -> str:
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ValueError(f"a format is a Python format spec of type {FORMATS}, or bytes")
    for digits in (match[1], match[2]):
        if digits and (len(digits) > 3 or int(digits) > MAX_SHOWN):
            raise ValueError(f"a width or precision is at most {MAX_SHOWN}")
    return spec


def _number(value: float | str) -> int | float:
    """A number, exactly: "123456789012345678901" stays an int (a float would round it)."""
    number: int | float
    if isinstance(value, str):
        try:
            number = int(value)
        except ValueError:
            number = float(value)  # ValueError: not a number; big ints end here as floats
    else:
        number = value
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError("it is not a finite number")
    return number


def _whole(number: int | float) -> int:
    if isinstance(number, float) and not number.is_integer():
        raise ValueError("it is not a whole number: use '.0f' to round it")
    return int(number)


def format_bytes(number: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(number) < 1024 or unit == "GiB":
            return f"{number:.0f} B" if unit == "B" else f"{number:.1f} {unit}"
        number /= 1024
    raise AssertionError("unreachable")
