"""Recorded output as a terminal shows it: a carriage return overwrites the line, colour and
other control sequences take no room. The page and every reference to a line of output
(`line=`, `lines=`, `output=`, `match=`) use these, so they count the same lines."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def terminal_lines(stdout: str) -> list[str]:
    """Recorded stdout as a terminal leaves it on the screen, in lines (each with its "\n",
    the last perhaps without): ANSI codes take no room; a line ends at "\n" ("\r\n" is one)
    and only there; in a line, "\r" goes back to its start and what follows overwrites it
    character by character, so a progress bar shows its last state. The one reading of
    stdout for the page (`{{ output }}`) and every reference into it (`line=`, `lines=`,
    `output=`, `match=`, `from=`, `to=`), so a reference counts lines as the page shows them.
    The recording keeps stdout exactly as printed."""
    lines = _ANSI.sub("", stdout).replace("\r\n", "\n").split("\n")
    ends = ["\n"] * (len(lines) - 1) + [""]
    shown = [_overwritten(line) + end for line, end in zip(lines, ends, strict=True)]
    return shown if shown[-1] else shown[:-1]


def _overwritten(line: str) -> str:
    """What is left of `line` once each "\r" returned to its start (linear time: each
    earlier piece adds only what the later ones did not cover)."""
    if "\r" not in line:
        return line
    shown = ""
    for piece in reversed(line.split("\r")):
        if len(piece) > len(shown):
            shown += piece[len(shown) :]
    return shown


def clean_output(text: str) -> str:
    """Recorded stdout as a page shows it (after `terminal_lines`): no ANSI codes, control
    bytes made visible."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    return _CONTROL.sub(
        lambda m: chr(0x2400 + ord(m[0]) % 0x80 if m[0] != "\x7f" else 0x2421), text
    )
