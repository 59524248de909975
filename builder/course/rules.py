"""The rules lessons and recordings follow that the JSON Schemas cannot say (the types in
course.py and recording.py call them as pydantic validators), and reading the files they
come from. Standard library only, PyYAML when a YAML file must be parsed.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from array import array
from collections.abc import Mapping
from datetime import datetime
from itertools import accumulate
from pathlib import Path
from typing import Any

from ..core.errors import BuildError, ContentError
from ..core.observe import NOT_INSTALLED
from ..panels import MAX_BARS  # the harness's bound on a panel, checked again on a recording

SCHEMA_VERSION = 1
MAX_RECORDING_BYTES = 20 * 1024 * 1024
MAX_LESSON_BYTES = 256 * 1024  # the longest lesson of the course is 10 KiB
MAX_SOURCE_BYTES = 1024 * 1024  # an example, course.yml, glossary.yml
MAX_JSON_DEPTH = 64  # arrays and objects inside each other; a recording needs 7
READ_CHUNK = 16 * 1024 * 1024  # a data file has no limit: read in chunks, never a buffer of it all
MAX_DRAWABLE = 1e300  # a panel value's size: floats end at 1.8e308; a margin for the axes
MAX_PANELS = 32  # a lesson's panels, each a chart on its page (the course's most is 4)
LESSON_ID_PATTERN = r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ENV_NAME_PATTERN = re.compile(r"^[A-Z_][A-Z0-9_]*$")
INTERPRETER_ENV = frozenset({"PYTHONHOME", "PYTHONPLATLIBDIR"})  # refused in a lesson's env:
DATA_NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)
DEFAULT_TIMEOUT = 120.0
LESSON_FILE = "lesson.md"
EXAMPLE_FILE = "example.py"
INPUTS_DIR = "_inputs"  # recordings/_inputs/<lessonId>.json: one small file per lesson
PINNED_PACKAGES = ("jax", "numpy", "matplotlib")
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
    ran the render for over 200 s)."""
    if len(labels) * len(series) > MAX_BARS:
        raise ValueError(
            f"{len(labels)} labels x {len(series)} series is {len(labels) * len(series)} bars, "
            f"more than {MAX_BARS} in one panel"
        )
    for label, ys in series:
        if len(ys) != len(labels):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(labels)} labels")


def expected_versions(installed: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Per pinned package, the version recordings must have been made with, and whence it
    comes: the installed version, or, where the package is not installed (CI's light
    install of requirements-check.txt), the version requirements.lock pins."""
    missing = {
        name for name in PINNED_PACKAGES if installed.get(name, NOT_INSTALLED) == NOT_INSTALLED
    }
    pins = lock_pins(LOCK_FILE) if missing else {}
    return {
        name: (pins[name], "pinned in requirements.lock")
        if name in missing and name in pins
        else (installed.get(name, NOT_INSTALLED), "installed")
        for name in PINNED_PACKAGES
    }


def lock_pins(path: Path) -> dict[str, str]:
    """`name==version` lines of a requirements file, by lower-case name; {} if unreadable."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError:
        return {}
    pairs = [line.split("#")[0].strip().partition("==") for line in lines]
    return {name.strip().lower(): version.strip() for name, eq, version in pairs if eq}


def inputs_path(recordings: Path, lesson_id: str) -> Path:
    return recordings / INPUTS_DIR / f"{lesson_id}.json"


def read_inputs(recordings: Path, kept: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What each recording's sidecar remembers (its inputs and run time), by lesson id;
    those in `kept` (read before, unchanged since: builder.build.index) are not read.

    One file per lesson, so that shards of a record (`--shard K/N`) never rewrite a file
    that another shard writes too: merging them is copying files. It only sharpens
    messages ("the example changed") and the recordings page; losing it loses nothing that
    matters, so a damaged one is ignored rather than fatal.
    """
    folder = recordings / INPUTS_DIR
    paths = [] if folder.is_symlink() else sorted(folder.glob("*.json"), key=str)
    kept = kept or {}
    found = {path.stem: kept.get(path.stem) or _sidecar(path) for path in paths}
    return {lesson: data for lesson, data in found.items() if data is not None}


def read_input(recordings: Path, lesson_id: str) -> dict[str, Any] | None:
    """One lesson's sidecar (`read_inputs`), or None."""
    return _sidecar(inputs_path(recordings, lesson_id))


def _sidecar(path: Path) -> dict[str, Any] | None:
    if path.parent.is_symlink():  # read as every input is: never through a link
        return None
    try:
        data = json.loads(shallow_json(read_file(path, MAX_RECORDING_BYTES), path))
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


_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1, +1, -1, -1 as signed


def shallow_json(
    data: bytes, path: Path | str, error: type[BuildError] = ContentError, hint: str = ""
) -> bytes:
    """`data`, refused with `error` naming the file when its arrays and objects nest deeper
    than MAX_JSON_DEPTH: every JSON the builder reads with Python's parser passes here
    first (100,000 nested arrays made `json.loads` raise RecursionError in check, validate,
    render and diff). Strings are cut out first, so brackets in text do not count; the
    scan is linear and runs only where the fast parser (pydantic-core's) refused the file."""
    steps = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKET).translate(_DEPTH_STEP)
    deepest = max(accumulate(array("b", steps)), default=0)
    if deepest > MAX_JSON_DEPTH:
        raise error(
            f"nests arrays and objects {deepest} deep, over the {MAX_JSON_DEPTH} limit",
            path=path,
            hint=hint or "a file nested this deep is a mistake",
        )
    return data


def _shallow_yaml(text: str, path: Path | str) -> None:
    """Flow collections (`[`, `{`) nested deeper than MAX_JSON_DEPTH refused before PyYAML
    reads them: 50,000 of them crashed the interpreter (SIGSEGV) in libyaml's loader. Every
    bracket counts, quoted or not (a false alarm needs 65 unclosed brackets in one value),
    and a closing one never goes below zero, so closers in a string cannot hide openers."""
    steps = text.encode("utf-8", "surrogateescape").translate(None, _NOT_BRACKET)
    if steps.count(b"[") + steps.count(b"{") <= MAX_JSON_DEPTH:
        return  # the common case: a few brackets at most
    depths = accumulate(array("b", steps.translate(_DEPTH_STEP)), lambda d, s: max(0, d + s))
    deepest = max(depths, default=0)
    if deepest > MAX_JSON_DEPTH:
        raise ContentError(
            f"nests lists and mappings {deepest} deep, over the {MAX_JSON_DEPTH} limit",
            path=path,
            hint="a file nested this deep is a mistake",
        )


# -- lessons ---------------------------------------------------------------------------------


PAGE_FILE = re.compile(r"index\.html|panel-\d+(?:-[a-z]+)?\.svg")  # beside it on the site


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


def read_text(path: Path | str, limit: int = MAX_SOURCE_BYTES, hint: str = "") -> str:
    """A content file as text (UTF-8, an optional BOM dropped); errors name the file."""
    try:
        data = read_file(path, limit, hint=hint)
    except FileNotFoundError:
        raise ContentError("is missing", path=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ContentError(
            f"is not UTF-8 (invalid byte at offset {error.start})",
            path=path,
            hint="save the file as UTF-8",
        ) from None


def read_file(
    path: Path | str,
    limit: int | None,
    error: type[BuildError] = ContentError,
    hint: str = "",
) -> bytes:
    """The bytes of the regular file at `path` (`open_input`), at most `limit` of them (None:
    a data file, whatever its size); anything else is `error` naming the file.
    FileNotFoundError is left to the caller."""
    fd = open_input(path, error)
    try:
        size = os.fstat(fd).st_size
        within = limit is None or size <= limit
        data = _read_at_most(fd, (size if limit is None else limit) + 1) if within else b""
    finally:
        os.close(fd)
    if limit is not None and (size > limit or len(data) > limit):
        size = max(size, len(data))
        problem = f"is {_size(size)}, over the {_size(limit, 0)} limit"
        raise error(problem, path=path, hint=hint or "a file this large is a mistake")
    return data


def open_input(path: Path | str, error: type[BuildError] = ContentError) -> int:
    """The one door to every file of the course (content/ and recordings/): a descriptor of
    the regular file at `path`, or `error` naming it. FileNotFoundError is left to the caller.

    Never through a symbolic link (`example.py -> ../../../.git/config` published CI's
    token; `-> /proc/self/environ`, the builder's environment), and opened without waiting
    and checked before it is read: a FIFO waited forever for a writer, and /dev/zero filled
    the memory. The folders leading to it are checked by `input_folder` when they are
    listed, so from the course's folders down nothing is read through a link. A hard link
    cannot be told from the file itself (and a git checkout never holds one).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as failure:  # a link (ELOOP); a socket cannot be opened at all (ENXIO)
        if os.path.islink(path):
            raise error(linked(path), path=path, hint=LINK_HINT) from None
        raise error(_not_readable(path, failure), path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise error(
            f"is {_file_kind(mode)}, not a regular file",
            path=path,
            hint="replace it with an ordinary file",
        )
    return fd


LINK_HINT = "replace the link with the file or folder it points to (a copy, not a link)"


def linked(path: Path | str) -> str:
    """What is wrong with a symbolic link where the course has a file or folder."""
    try:
        target = os.readlink(path)
    except OSError:  # gone since
        target = "?"
    return f"is a symbolic link (to {_quoted(target)}), and links in the course are not followed"


def _quoted(text: str) -> str:
    """A name as the author wrote it, or its repr when it holds anything unprintable."""
    return text if text.isprintable() else repr(text)


def input_folder(path: Path, error: type[BuildError] = ContentError) -> Path:
    """A folder of the course the builder lists (content/, lessons/, a lesson's folder,
    recordings/): never a symbolic link, so that no file is read from outside the course
    (a linked lesson folder published whatever its files pointed to)."""
    if path.is_symlink():
        raise error(linked(path), path=path, hint=LINK_HINT)
    return path


def _read_at_most(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0 and (chunk := os.read(fd, min(count, READ_CHUNK))):
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def special_file(path: Path | str) -> str:
    """What is at `path` (links followed) when it is there but not a regular file: "a FIFO
    (named pipe)", "a folder", ...; "" otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else _file_kind(mode)


def _not_readable(path: Path | str, failure: OSError) -> str:
    kind = special_file(path)
    return f"is {kind}, not a regular file" if kind else f"cannot be read: {failure.strerror}"


def _file_kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
    }
    return next((name for test, name in kinds.items() if test(mode)), "a special file")


def _size(count: int, digits: int = 1) -> str:
    if count >= 2**20:
        return f"{count / 2**20:.{digits}f} MiB"
    return f"{count / 2**10:.{digits}f} KiB"


def load_yaml(text: str, path: Path | str) -> Any:
    """YAML by libyaml's safe loader when PyYAML has it (20x faster than PyYAML's own)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    _shallow_yaml(text, path)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise ContentError(f"YAML error{where}: {problem}", path=path) from None


def split_front_matter(text: str, path: Path | str) -> tuple[str, str, int]:
    """The YAML block between the opening and closing '---' lines (not parsed), the
    Markdown body after it, and the body's first line number."""
    lines = _head_lines(text)
    if not lines or lines[0].rstrip() != "---":
        raise ContentError(
            "has no front matter: the file must start with a '---' line",
            path=path,
            hint="see README, 'Writing a lesson'",
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise ContentError("front matter is not closed by a '---' line", path=path)
    return "".join(lines[1:end]), text[sum(map(len, lines[: end + 1])) :], end + 2


def front_matter_fields(block: str, path: Path | str) -> dict[str, Any]:
    """The front matter block's fields."""
    raw = load_yaml(block, path)
    if not isinstance(raw, dict):
        raise ContentError("front matter must be a YAML mapping of fields", path=path)
    return raw


def _head_lines(text: str) -> list[str]:
    """text.splitlines(keepends=True), or its first lines when they hold a closing '---'.

    A prefix ending just after a newline splits into the same first lines as the whole
    text, so splitting the body of a long lesson (the slow part) is needed only when the
    front matter does not end before the first newline-'---' line.
    """
    start = text.find("\n---")
    stop = text.find("\n", start + 1) if start >= 0 else -1
    if stop >= 0:
        lines = text[: stop + 1].splitlines(keepends=True)
        if any(line.rstrip() == "---" for line in lines[1:]):
            return lines
    return text.splitlines(keepends=True)
