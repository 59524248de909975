"""The rules lessons and recordings follow that the JSON Schemas cannot say, standard library only.

The types in course.py and recording.py (validated by pydantic) call these, and so does
quickcheck.py, which proves a course fresh without importing pydantic: one definition of each rule.
Reading a lesson's front matter lives here too, so both read exactly the same fields.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import sys
from datetime import datetime
from functools import cache
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

from .errors import ContentError

SCHEMA_VERSION = 1
MAX_RECORDING_BYTES = 20 * 1024 * 1024
LESSON_ID_PATTERN = r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ENV_NAME_PATTERN = re.compile(r"^[A-Z_][A-Z0-9_]*$")
DATA_NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
CONFLICT_MARKER = re.compile(rb"^(<{7}|={7}|>{7})( |$)", re.MULTILINE)
DEFAULT_TIMEOUT = 120.0
LESSON_FILE = "lesson.md"
EXAMPLE_FILE = "example.py"
INPUTS_FILE = "_inputs.json"
PINNED_PACKAGES = ("jax", "numpy", "matplotlib")


# -- recordings ------------------------------------------------------------------------------


def finite_number(value: object) -> int | float:
    """A panel value: an int or float, not a bool, not NaN or infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"must be a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


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
    """Every series of a bar panel has one value per label."""
    for label, ys in series:
        if len(ys) != len(labels):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(labels)} labels")


@cache
def installed_versions() -> dict[str, str]:
    """The versions a recording's environment must name, or it is stale(environment)."""
    fast = dist_info_versions(PINNED_PACKAGES)
    if fast is not None:
        return fast
    from importlib import metadata

    versions = {}
    for name in PINNED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def dist_info_versions(names: tuple[str, ...]) -> dict[str, str] | None:
    """importlib.metadata.version of each name, read the way it finds them, or None.

    Importing importlib.metadata (and the email package it parses METADATA with) is a
    seventh of a fast check. Like it, take the first sys.path folder holding a matching
    NAME-*.dist-info and that folder's METADATA 'Version' header; return None (ask it)
    for anything else: another metadata finder, a zip or .egg on sys.path, two matches in
    one folder, an .egg-info, an unusual header block. tests/test_quickcheck.py compares
    the two for every installed distribution.
    """
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None)]
    if finders != [PathFinder] or not all(type(entry) is str for entry in sys.path):
        return None
    wanted = {_normalize(name): name for name in names}
    found: dict[str, str] = {}
    for entry in sys.path:
        hits = _dist_infos(entry, wanted.keys() - found.keys())
        if hits is None:
            return None
        for key, children in hits.items():
            if len(children) != 1:
                return None
            version = _version_header(os.path.join(entry or ".", children[0], "METADATA"))
            if version is None:
                return None
            found[key] = version
        if len(found) == len(wanted):
            return {wanted[key]: version for key, version in found.items()}
    return None  # one is not installed: importlib.metadata says how


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _dist_infos(entry: str, keys: set[str]) -> dict[str, list[str]] | None:
    """The NAME-*.dist-info children of a sys.path folder by wanted name; None: in doubt."""
    if os.path.basename(entry).lower().endswith(".egg"):
        return None
    try:
        children = os.listdir(entry or ".")
    except OSError:
        return None if os.path.exists(entry or ".") else {}  # a zip or unreadable: ask
    hits: dict[str, list[str]] = {}
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")):
            key = _normalize(low.rpartition(".")[0].partition("-")[0])
            if key in keys:
                if not low.endswith(".dist-info"):
                    return None
                hits.setdefault(key, []).append(child)
    return hits


_HEADER = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*): ")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")


def _version_header(path: str) -> str | None:
    """The first Version header of a METADATA file, as email.message_from_string gives it."""
    try:
        with open(path, encoding="utf-8") as file:  # as importlib.metadata reads it
            lines = file.read().split("\n")
    except (OSError, ValueError):  # no METADATA (it would try PKG-INFO), or not UTF-8
        return None
    for line, after in itertools.pairwise(lines):
        header = _HEADER.match(line)
        if not header:
            return None  # the end of the headers, a continued or an odd line: ask
        if header[1].lower() == "version":
            value = line[header.end() :]
            ok = _VERSION.fullmatch(value) and not after.startswith((" ", "\t"))
            return value if ok else None
    return None


def read_inputs(recordings: Path) -> dict[str, Any]:
    """The sidecar that remembers each recording's inputs and run time; {} when unreadable.

    It only sharpens messages ("the example changed") and the recordings page; losing it
    loses nothing that matters, so a damaged one is ignored rather than fatal.
    """
    try:
        data = json.loads((recordings / INPUTS_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- lessons ---------------------------------------------------------------------------------


def plain_data_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """`data:` names files beside the example, never a path or the example itself."""
    for name in names:
        if not DATA_NAME_PATTERN.fullmatch(name) or name == EXAMPLE_FILE:
            raise ValueError(f"{name!r} must be a plain file name beside the example")
    return names


def env_names(env: dict[str, str]) -> dict[str, str]:
    """`env:` keys are environment variable names."""
    for name in env:
        if not ENV_NAME_PATTERN.match(name):
            raise ValueError(f"{name!r} is not an environment variable name")
    return env


def read_text(path: Path | str) -> str:
    """A content file as text (UTF-8, an optional BOM dropped); errors name the file."""
    try:
        with open(path, "rb", buffering=0) as file:  # unbuffered: a third fewer system calls
            data = file.readall()
    except FileNotFoundError:
        raise ContentError("is missing", path=path) from None
    except OSError as error:
        raise ContentError(f"cannot be read: {error.strerror}", path=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ContentError(
            f"is not UTF-8 (invalid byte at offset {error.start})",
            path=path,
            hint="save the file as UTF-8",
        ) from None


def load_yaml(text: str, path: Path | str) -> Any:
    """YAML, read by flat_yaml when it can (no YAML import), else by libyaml's safe loader
    when PyYAML has it (20x faster than PyYAML's own)."""
    flat = flat_yaml(text)
    if flat is not None:
        return flat
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise ContentError(f"YAML error{where}: {problem}", path=path) from None


# `key: value` with a value YAML reads as this same text or number; only spaces around it.
_FLAT_LINE = re.compile(r"([a-z_][a-z0-9_]*): +(\S(?:.*\S)?) *(?:\r?\n)?")
_YAML_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}
_INT = re.compile(r"[1-9][0-9]*|0")
_FLOAT = re.compile(r"[1-9][0-9]*\.[0-9]+|0\.[0-9]+")


def flat_field(line: str) -> tuple[str, Any] | None:
    """A `key: value` line read without YAML, or None unless YAML surely reads it the same.

    Taken: text that starts with a letter and is not one of YAML's special words, and plain
    decimal numbers. Anything else (quotes, lists, comments, ': ' inside or ':' ending a
    value, dates, signs, tabs, line or paragraph separators, control characters: whatever
    str.isprintable refuses, a subset of what YAML calls printable) is None, and the
    caller reads with YAML. tests/test_course.py checks that both readers agree.
    """
    match = _FLAT_LINE.fullmatch(line)
    if not match or not (value := match[2]).isprintable():
        return None
    if value[0].isalpha():
        if value.lower() in _YAML_WORDS or ": " in value or " #" in value or value[-1] == ":":
            return None
        return match[1], value
    if _INT.fullmatch(value):
        return match[1], int(value)
    if _FLOAT.fullmatch(value):
        return match[1], float(value)
    return None


class _NotFlat(Exception):
    pass


_LIST_KEY = re.compile(r"([a-z_][a-z0-9_]*): *")


def flat_yaml(text: str) -> dict[str, Any] | list[dict[str, Any]] | None:
    """course.yml or glossary.yml written as plain lines, read without YAML; else None.

    Two shapes: a list of flat mappings (`- key: value`, then `  key: value` lines), and a
    flat mapping (see flat_field) where a `key:` line may open such a list, indented or
    not. Blank and comment lines are skipped; LF line endings only; anything else (quotes,
    folded text, tabs, continued lines, an empty document) is None: ask YAML.
    """
    lines = []
    for line in text.split("\n"):
        if not line.isprintable():
            return None
        if line.strip(" ") and not line.lstrip(" ").startswith("#"):
            lines.append(line)
    try:
        if lines and lines[0].startswith("- "):
            items, end = _flat_list(lines, 0, 0)
            return items if end == len(lines) else None
        return _flat_mapping(lines) if lines else None
    except _NotFlat:
        return None


def _flat_mapping(lines: list[str]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    at = 0
    while at < len(lines):
        opener = _LIST_KEY.fullmatch(lines[at])
        if opener and at + 1 < len(lines):
            indent = len(lines[at + 1]) - len(lines[at + 1].lstrip(" "))
            items, at = _flat_list(lines, at + 1, indent)
            field: tuple[str, Any] | None = (opener[1], items)
        else:
            field, at = flat_field(lines[at]), at + 1
        if field is None or field[0] in fields:
            raise _NotFlat
        fields[field[0]] = field[1]
    return fields


def _flat_list(lines: list[str], at: int, indent: int) -> tuple[list[dict[str, Any]], int]:
    """Items opened by '- ' at `indent` from lines[at], up to the first line of another kind."""
    dash, inside = " " * indent + "- ", indent + 2
    items: list[dict[str, Any]] = []
    for at in range(at, len(lines)):  # noqa: B020 - `at` is returned: where the list ends
        line = lines[at]
        if line.startswith(dash):
            items.append({})
        elif not (items and line[:inside] == " " * inside and len(line) > inside):
            return _nonempty(items), at
        field = flat_field(line[inside:])
        if field is None or field[0] in items[-1]:
            raise _NotFlat
        items[-1][field[0]] = field[1]
    return _nonempty(items), len(lines)


def _nonempty(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not items:
        raise _NotFlat
    return items


def flat_front_matter(lines: list[str]) -> dict[str, Any] | None:
    """Front matter of plain `key: value` lines (see flat_field), read without YAML."""
    fields: dict[str, Any] = {}
    for line in lines:
        field = flat_field(line)
        if field is None or field[0] in fields:
            return None
        fields[field[0]] = field[1]
    return fields


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str, int]:
    """Split `---`-fenced YAML front matter from the Markdown body."""
    raw, start, body_line = front_matter(text, path)
    return raw, text[start:], body_line


def front_matter(text: str, path: Path | str) -> tuple[dict[str, Any], int, int]:
    """The front matter's fields, the offset where the body starts, and its line number."""
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
    raw = flat_front_matter(lines[1:end])
    if raw is None:
        raw = load_yaml("".join(lines[1:end]), path)
    if not isinstance(raw, dict):
        raise ContentError("front matter must be a YAML mapping of fields", path=path)
    return raw, sum(map(len, lines[: end + 1])), end + 2


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
