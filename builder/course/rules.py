"""The rules lessons and recordings follow that the JSON Schemas cannot say (the types in
model.py and recording.py call them as pydantic validators); reading the files they come
from is builder/course/files.py. Standard library only.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..cells import NAME  # the harness's names of cells, checked again on a recording
from ..core.errors import ContentError
from ..core.observe import NOT_INSTALLED, RECORDED
from ..panels import (
    MAX_BARS,
    MAX_POINTS,
)  # the harness's bounds, checked again on a recording
from ..panels import (
    MAX_IMAGE as MAX_IMAGE,
)
from .files import Reads, json_files, read_file, read_text, reading, shallow_json

SCHEMA_VERSION = 1
MAX_RECORDING_BYTES = 20 * 1024 * 1024
MAX_LESSON_BYTES = 256 * 1024  # many times the longest real lesson
MAX_DRAWABLE = 1e300  # a panel value's size: floats end at 1.8e308; a margin for the axes
MAX_PANELS = 128  # a lesson's panels, each a chart on its page (the course's most is 4)
LESSON_ID_PATTERN = r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
CELL_NAME_PATTERN = f"^{NAME.pattern}$"
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ENV_NAME_PATTERN = re.compile(r"^[A-Z_][A-Z0-9_]*$")
INTERPRETER_ENV = frozenset({"PYTHONHOME", "PYTHONPLATLIBDIR"})  # refused in a lesson's env:
DATA_NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)
# Unicode's control characters (Cc) but tab and newline: NUL, BEL, ESC in a title or an
# address made sitemap.xml ill-formed XML and reached the reader's terminal and notebook.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
DEFAULT_TIMEOUT = 120.0
LESSON_FILE = "lesson.md"
EXAMPLE_FILE = "example.py"
INPUTS_DIR = "_inputs"  # recordings/_inputs/<lessonId>.json: one small file per lesson
LOCK_FILE = Path(__file__).resolve().parents[2] / "requirements.lock"


# -- recordings ------------------------------------------------------------------------------


def finite_number(value: object) -> int | float:
    """A panel value: an int or float, not a bool, not NaN or infinite, and small enough to
    draw (an int of 400 digits passed as finite, then failed the render: OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"must be a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    if not drawable(value):
        raise ValueError(f"must be at most {MAX_DRAWABLE:g} in size to be drawn")
    return value


def drawable(value: int | float) -> bool:
    """A number a chart can draw: its size at most MAX_DRAWABLE (never converted to float
    first: a huge int overflows)."""
    return -MAX_DRAWABLE <= value <= MAX_DRAWABLE


def same_name(text: str) -> str:
    """What two names that are the same name have in common: Unicode-equal (NFC and NFD
    spellings of "é"), any case; canonical caseless matching, as Unicode defines it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def iso_with_timezone(value: str) -> str:
    """generatedAt: an ISO 8601 date and time that carries a timezone."""
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO 8601 date and time") from None
    if stamp.tzinfo is None:
        raise ValueError("must carry a timezone, such as +00:00")
    return value


def series_lengths_match(labels: list[Any], series: list[tuple[str, list[Any]]]) -> None:
    """Every series of a bar panel has one value per label, and the panel has at most
    MAX_BARS bars (panels.bar's own bound: a recording made by hand with 100,000 labels
    would hold the render for minutes)."""
    if len(labels) * len(series) > MAX_BARS:
        raise ValueError(
            f"{len(labels)} labels x {len(series)} series is {len(labels) * len(series)} bars, "
            f"more than {MAX_BARS} in one panel"
        )
    for label, ys in series:
        if len(ys) != len(labels):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(labels)} labels")


def xy_lengths_match(
    kind: str, series: list[tuple[str, list[Any], bool, list[Any], dict[str, list[Any]]]]
) -> None:
    """Every series of a line or scatter panel has one value per x value (its own x, or the
    panel's) and as many of each of its other lists, the panel has at most MAX_POINTS
    points (panels.line's own bound), and only a scatter panel has a fit."""
    points = sum(len(ys) for _, ys, _, _, _ in series)
    if points > MAX_POINTS:
        raise ValueError(f"{points} points is more than {MAX_POINTS} in one panel")
    for label, ys, fitted, x, more in series:
        if len(ys) != len(x):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(x)} x values")
        for name, values in more.items():
            if len(values) != len(ys):
                raise ValueError(
                    f"series {label!r} has {len(values)} {name} values for {len(ys)} y values"
                )
        if fitted and kind != "scatter":
            raise ValueError(f"series {label!r} has a fit: only a scatter panel's series do")


def image_shape_fits(widths: list[int], shape: list[int]) -> None:
    """An image panel's rows are all as long, and no more of them (nor longer) than the
    array the run drew (`shape`: its rows and columns)."""
    if len(set(widths)) > 1:
        raise ValueError(f"image rows differ in length: {sorted(set(widths))}")
    if len(widths) > shape[0] or widths[0] > shape[1]:
        raise ValueError(f"{len(widths)} x {widths[0]} values is more than its shape {shape}")


def expected_versions(installed: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Per pinned package, the version recordings must have been made with, and whence it
    comes: the installed version, or, where the package is not installed (CI's light
    install of requirements-check.txt), the version requirements.lock pins."""
    missing = {name for name in RECORDED if installed.get(name, NOT_INSTALLED) == NOT_INSTALLED}
    pins = lock_pins(LOCK_FILE) if missing else {}
    return {
        name: (pins[name], "pinned in requirements.lock")
        if name in missing and name in pins
        else (installed.get(name, NOT_INSTALLED), "installed")
        for name in RECORDED
    }


def lock_pins(path: Path) -> dict[str, str]:
    """`name==version` lines of a requirements file, by lower-case name; {} when it is not
    there. Read through the input door (`read_text`): a link, a FIFO or a device there is a
    ContentError naming it (a committed `requirements.lock -> /dev/zero` filled `check`'s
    memory, a FIFO hung it)."""
    lines = read_text(path, missing="").splitlines()
    pairs = [line.split("#")[0].strip().partition("==") for line in lines]
    return {name.strip().lower(): version.strip() for name, eq, version in pairs if eq}


def inputs_path(recordings: Path, lesson_id: str) -> Path:
    return recordings / INPUTS_DIR / f"{lesson_id}.json"


def read_inputs(
    recordings: Path, kept: Mapping[str, Any] | None = None, reads: Reads | None = None
) -> dict[str, Any]:
    """What each recording's sidecar remembers (its inputs and run time), by lesson id;
    those in `kept` (read before, unchanged since: builder.pipeline.index) are not read;
    `reads`: where the input door notes what each is read from, by lesson id.

    One file per lesson, so that shards of a record (`--shard K/N`) never rewrite a file
    that another shard writes too: merging them is copying files. It only sharpens
    messages ("the example changed") and the recordings page; losing it loses nothing that
    matters, so a damaged one is ignored rather than fatal.
    """
    folder = recordings / INPUTS_DIR
    names = [] if folder.is_symlink() else json_files(folder)
    kept = kept or {}

    def read(stem: str) -> dict[str, Any] | None:
        with reading(reads, stem):
            return _sidecar(folder / f"{stem}.json", reads)

    found = {(stem := n[:-5]): kept.get(stem) or read(stem) for n in names}
    return {lesson: data for lesson, data in found.items() if data is not None}


def read_input(
    recordings: Path, lesson_id: str, reads: Reads | None = None
) -> dict[str, Any] | None:
    """One lesson's sidecar (`read_inputs`), or None."""
    return _sidecar(inputs_path(recordings, lesson_id), reads)


def _sidecar(path: Path, reads: Reads | None) -> dict[str, Any] | None:
    if path.parent.is_symlink():  # read as every input is: never through a link
        return None
    try:
        data = json.loads(shallow_json(read_file(path, MAX_RECORDING_BYTES, reads=reads), path))
    except (OSError, ValueError, ContentError):
        return None
    return data if isinstance(data, dict) else None


def run_seconds(sidecars: dict[str, Any]) -> dict[str, float]:
    """How long each example ran when it was last recorded, from `read_inputs`."""
    return {
        lesson: float(entry["seconds"])
        for lesson, entry in sidecars.items()
        if isinstance(entry, dict) and isinstance(entry.get("seconds"), int | float)
    }


# -- lessons ---------------------------------------------------------------------------------


# the files beside a lesson's page on the site (its charts are in the site's charts/ folder)
PAGE_FILE = re.compile(r"index\.html|example\.ipynb")


def plain_data_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """`data:` names files beside the example, never a path or the example itself; the site
    offers them for download beside the lesson's page, so never one of the page's files."""
    for name in names:
        if not DATA_NAME_PATTERN.fullmatch(name) or name == EXAMPLE_FILE:
            raise ValueError(f"{name!r} must be a plain file name beside the example")
        if PAGE_FILE.fullmatch(name):
            raise ValueError(f"{name!r} is the name of a file of the lesson's page on the site")
    return names


def env_names(env: dict[str, str]) -> dict[str, str]:
    """`env:` keys are environment variable names, none of which moves the interpreter's
    own library (the example runs in the harness, on the project's interpreter). The rest
    reach only the example's process (builder/run/execute.py `child_environment`)."""
    for name in env:
        if not ENV_NAME_PATTERN.match(name):
            raise ValueError(f"{name!r} is not an environment variable name")
        if name in INTERPRETER_ENV:
            raise ValueError(
                f"{name} would make the example's interpreter load another standard library "
                "(it ends before the example starts); an example runs on the project's "
                "Python: leave it out"
            )
    return env


def paired_backticks(text: str) -> str:
    """A glossary definition marks a name to be set in code font as `name` (the one markup
    it has): every backtick opens or closes one."""
    if text.count("`") % 2:
        raise ValueError(
            "has an odd number of backticks: a name in code font is marked at both ends, "
            "as `jax.jit`"
        )
    return text


def control_problem(text: str) -> str:
    """What is wrong with `text` when it holds a control character (tab and newline are
    text), else ""."""
    if not (found := CONTROL.search(text)):
        return ""
    return (
        f"holds the control character \\x{ord(found[0]):02x} at character {found.start() + 1}, "
        "which no page, sitemap or notebook can show: remove it"
    )
