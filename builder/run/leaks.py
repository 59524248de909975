"""What a recording must not keep: this machine's absolute paths and the builder's secrets.

Pure functions over an example's output, used by builder/run/execute.py after each run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MIN_SECRET = 8  # shorter values ("1", "true", "x86_64") turn up in honest output


def leaked_path(stdout: str, folders: Iterable[Path]) -> str:
    """Why stdout cannot be kept when it holds one of `folders` (as given and resolved) or
    `HOME`: an absolute path of this machine makes the recording machine-specific; or ""."""
    home = os.path.expanduser("~")
    candidates = {str(path) for folder in folders for path in (folder, folder.resolve())}
    candidates |= {home} if len(home) > 1 else set()
    leak = next((path for path in sorted(candidates) if path in stdout), None)
    if leak is None:
        return ""
    return f"stdout contains the absolute path {leak!r}; print paths relative to the cwd"


def builder_secrets(child: dict[str, str]) -> dict[str, str]:
    """The builder's environment variables the example was not given, by value: the
    example can still read them (from /proc/<parent>/environ, as the same user), so what it
    prints is checked for them. Values shorter than MIN_SECRET are left out."""
    given = set(child.values())
    return {
        value: name
        for name, value in sorted(os.environ.items())
        if len(value) >= MIN_SECRET and value not in given
    }


def redact(text: str, secrets: dict[str, str]) -> str:
    """`text` with each secret value replaced by the name of its variable, as `$NAME`."""
    for value, name in secrets.items():
        text = text.replace(value, f"${name}")
    return text


def leaked_secret(places: dict[str, str], secrets: dict[str, str]) -> str:
    """Which place holds which variable's value (never the value itself), or ""."""
    for place, text in places.items():
        for value, name in secrets.items():
            if value in text:
                return (
                    f"{place} contains the value of the builder's environment variable {name}, "
                    "which the example was not given; a recording is committed and "
                    "published: print only what the example computes"
                )
    return ""


def texts(value: Any) -> str:
    """Every string in a panel's data, one a line."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    return "\n".join(texts(item) for item in value) if isinstance(value, list) else ""
