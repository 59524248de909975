"""What a recording must not keep: this machine's absolute paths and the builder's secrets.

Pure functions over what an example printed and emitted, used by builder/run/execute.py after
each run: `leaked` is the one check, over every string the recording would keep.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

MIN_SECRET = 8  # shorter values ("1", "true", "x86_64") turn up in honest output
NAMED_LEVELS = 3  # how deep a message names the place of a string: "series[0].label"


def leaked(recorded: dict[str, Any], folders: Iterable[Path], secrets: dict[str, str]) -> str:
    """Why what a run recorded cannot be kept, or "": the one check of every string a
    recording keeps from the run (`recorded`: stdout, each panel, the environment, walked
    to the last string of every list and object), for an absolute path of this machine
    (one of `folders`, as given and resolved, or `HOME`: it makes the recording
    machine-specific and publishes the machine's layout) and for a value of `secrets`."""
    paths = machine_paths(folders)
    for place, text in strings(recorded):
        path = next((path for path in paths if path in text), None)
        if path is not None:
            return f"{place} contains the absolute path {path!r}; show paths relative to the cwd"
        name = next((name for value, name in secrets.items() if value in text), None)
        if name is not None:
            return (
                f"{place} contains the value of the builder's environment variable {name}, "
                "which the example was not given; a recording is committed and "
                "published: print only what the example computes"
            )
    return ""


def machine_paths(folders: Iterable[Path]) -> list[str]:
    """`folders` as given and resolved, and `HOME` (unless it is `/`), longest first."""
    home = os.path.expanduser("~")
    candidates = {str(path) for folder in folders for path in (folder, folder.resolve())}
    candidates |= {home} if len(home) > 1 else set()
    return sorted(candidates, key=lambda path: (-len(path), path))


def strings(places: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every string in `places`' values, in order, each with where it is: ("stdout", ...),
    ("panel 1 (labels[2])", ...), named to the third level. A loop, not recursion, and
    names that stop growing: the example chooses how deep its panels nest."""
    todo: list[tuple[str, str, int, Any]] = [(name, "", 0, item) for name, item in places.items()]
    todo.reverse()
    while todo:
        name, inner, depth, value = todo.pop()
        if isinstance(value, str):
            yield (f"{name} ({inner.lstrip('.')})" if inner else name), value
            continue
        if isinstance(value, dict):
            items = [(f".{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            items = [(f"[{index}]", item) for index, item in enumerate(value)]
        else:
            continue
        named = depth < NAMED_LEVELS
        todo.extend(
            (name, inner + step if named else inner, depth + 1, item)
            for step, item in reversed(items)
        )


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
