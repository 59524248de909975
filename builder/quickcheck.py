"""Prove a course all fresh without pydantic, or say "cannot tell": the fast path of `check`.

`all_fresh(content, recordings)` returns the lesson count only when `check`'s full path
(load_course + course_status, with pydantic) would load the course without an error and
find every lesson fresh and no orphan. On anything it does not expect it returns None and
`check` runs the full path, which gives the table and the exact messages. Being wrong the
other way (None for a fresh course) costs only time.

The types in course.py and recording.py, as pydantic validates them, stay the source of
truth: front matter, course.yml, glossary.yml and recordings are checked against the JSON
Schemas they export (committed in schema/, kept equal by tests/test_quickcheck.py), read
strictly: a value must already have the type the
schema names (no "5" for 5, no 1.0 for 1, no bool for an int), every number finite. The
rules the types add beyond their schema come from builder.rules, the module they call.
Standard library only; YAML is imported only for a file that is not plain lines
(rules.load_yaml, the call course.py makes). Without schema/ beside builder/ (an installed
copy) it always defers.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from . import fingerprint, rules

SCHEMAS = Path(__file__).resolve().parent.parent / "schema"
SCHEMA_FILES = {
    "recording": "recording.schema.json",
    "front-matter": "front-matter.schema.json",
    "course": "course.schema.json",
    "glossary": "glossary.schema.json",
}
Check = Callable[[Any], bool]


class Unsupported(Exception):
    """A schema keyword this validator does not know: it cannot vouch for the schema."""


class Doubt(Exception):
    """Something the fast path cannot prove valid and fresh; the full path decides."""


def all_fresh(content: Path, recordings: Path) -> int | None:
    """The number of lessons when all are provably fresh; None when it cannot tell."""
    try:
        return _all_fresh(content, recordings)
    except Exception:  # any surprise means "cannot tell", never "fresh"
        return None


def _all_fresh(content: Path, recordings: Path) -> int:
    schemas = {name: compile_schema(_read_schema(file)) for name, file in SCHEMA_FILES.items()}
    arcs = _course_arcs(content / "course.yml", schemas["course"])
    lessons = [_lesson(*folder, schemas["front-matter"]) for folder in _folders(content)]
    ids = {lesson["id"] for lesson in lessons}
    _require(all(lesson["arc"] in arcs for lesson in lessons))
    _require(_slugs_unique(lessons))
    _require(_glossary_ok(content / "glossary.yml", schemas["glossary"], ids))
    rules.read_inputs(recordings)  # as course_status does: anything but OSError/ValueError raises
    renderer = fingerprint.renderer_hash()
    for lesson in lessons:
        _fresh(lesson, recordings, schemas["recording"], renderer)
    _require(not _orphans(recordings, ids))
    return len(lessons)


def _require(condition: bool) -> None:
    if not condition:
        raise Doubt


# -- content ---------------------------------------------------------------------------------


def _read_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_bytes())
    return schema


def _course_arcs(path: Path, check: Check) -> set[str]:
    raw = rules.load_yaml(rules.read_text(path), path)
    _require(check(raw))
    return {arc["id"] for arc in raw["arcs"]}


def _folders(content: Path) -> list[tuple[str, str]]:
    """The lesson folders course.py loads: every folder under lessons/ not starting with '.'.

    Paths are plain strings here: a thousand pathlib joins cost more than reading the files.
    """
    lessons = os.path.join(content, "lessons")
    with os.scandir(lessons) as entries:
        names = sorted(e.name for e in entries if not e.name.startswith(".") and e.is_dir())
    return [(name, os.path.join(lessons, name)) for name in names]


def _lesson(name: str, folder: str, check: Check) -> dict[str, Any]:
    """The front matter and example of a lesson course.py would load without an error."""
    path = os.path.join(folder, rules.LESSON_FILE)
    raw, _, _ = rules.front_matter(rules.read_text(path), path)
    _require(check(raw) and raw["id"] == name)
    data = raw.get("data", [])
    rules.plain_data_names(tuple(data))
    rules.env_names(raw.get("env", {}))
    source = rules.read_text(os.path.join(folder, rules.EXAMPLE_FILE))
    _require(bool(source.strip()))
    _require(all(os.path.isfile(os.path.join(folder, file)) for file in data))
    return {**raw, "folder": folder, "source": source.encode("utf-8")}


def _slugs_unique(lessons: list[dict[str, Any]]) -> bool:
    """course.py's rule: no slug is another lesson's id or slug (its own id is fine)."""
    by_key = {lesson["id"]: lesson for lesson in lessons}
    return all(by_key.setdefault(lesson["slug"], lesson) is lesson for lesson in lessons)


def _glossary_ok(path: Path, check: Check, ids: set[str]) -> bool:
    if not path.exists():
        return True
    raw = rules.load_yaml(rules.read_text(path), path) or []
    if not check(raw):
        return False
    seen: set[str] = set()
    for term in raw:
        keys = {term["id"], term["term"].casefold()}
        if term["taught_in"] not in ids or keys & seen:
            return False
        seen |= keys
    return True


# -- recordings ------------------------------------------------------------------------------

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # pydantic-core refuses lone ones


def _fresh(lesson: dict[str, Any], recordings: Path, check: Check, renderer: str) -> None:
    """Raise Doubt unless the lesson's recording is valid, its own, and matches every input."""
    with open(os.path.join(recordings, f"{lesson['id']}.json"), "rb", buffering=0) as file:
        data = file.readall()
    _require(len(data) <= rules.MAX_RECORDING_BYTES)
    if b"<<<<<<<" in data or b"=======" in data or b">>>>>>>" in data:  # `in` is cheap
        _require(not rules.CONFLICT_MARKER.search(data))
    _require(b"\\u" not in data or not _SURROGATE_ESCAPE.search(data))
    raw = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_nan)
    _require(check(raw) and raw["lessonId"] == lesson["id"])
    rules.iso_with_timezone(raw["generatedAt"])
    for panel in raw["data"]["panels"]:
        rules.series_lengths_match(panel["labels"], [(s["label"], s["y"]) for s in panel["series"]])
    inputs = fingerprint.inputs(
        lesson["id"],
        lesson["source"],
        lesson["folder"],
        lesson.get("data", ()),
        lesson.get("env", {}),
    )
    _require(raw["contentHash"] == fingerprint.content_hash(inputs))
    _require(raw["rendererHash"] == renderer)
    installed = _installed()
    _require(all(raw["environment"][name] == installed[name] for name in rules.PINNED_PACKAGES))


@cache
def _installed() -> dict[str, str]:
    """rules.installed_versions(), without importing importlib.metadata."""
    versions = rules.dist_info_versions(rules.PINNED_PACKAGES)
    if versions is None:
        raise Doubt("installed versions")
    return versions


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    _require(len(result) == len(pairs))
    return result


def _nan(name: str) -> Any:
    raise Doubt(name)


def _orphans(recordings: Path, ids: set[str]) -> list[Path]:
    """status.py's rule, with the same glob."""
    return [
        path
        for path in recordings.glob("*.json")
        if path.stem not in ids and not path.name.startswith("_")
    ]


# -- a JSON Schema subset, read strictly -----------------------------------------------------

_ANNOTATIONS = {"title", "description", "default", "$schema", "$id", "$defs"}
_INT_LIMIT = 2**63  # beyond, pydantic-core's JSON parser reads big integers differently
_FLOAT_LIMIT = 1e300  # near overflow a float might round differently in pydantic-core


def _is_number(value: Any) -> bool:
    """A JSON number, read strictly: int or float (never bool), finite, well inside limits."""
    if type(value) is int:
        return -_INT_LIMIT < value < _INT_LIMIT
    return type(value) is float and -_FLOAT_LIMIT < value < _FLOAT_LIMIT  # False for NaN


def compile_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Check:
    """A function that is True only for values valid under `schema`, taken strictly.

    Types are exact (a string is a str, an integer an int and not a bool, an object a dict
    with str keys), numbers finite. A keyword it does not implement raises Unsupported.
    """
    root = schema if root is None else root
    keys = schema.keys() - _ANNOTATIONS
    if keys == {"$ref"}:
        prefix = "#/$defs/"
        if not schema["$ref"].startswith(prefix):
            raise Unsupported(schema["$ref"])
        return compile_schema(root["$defs"][schema["$ref"].removeprefix(prefix)], root)
    kind = schema.get("type")
    if kind not in _COMPILERS:
        raise Unsupported(f"type {kind!r}")
    compiler, known = _COMPILERS[kind]
    if keys - known:
        raise Unsupported(", ".join(sorted(keys - known)))
    return compiler(schema, root)


def _string(schema: dict[str, Any], root: dict[str, Any]) -> Check:
    low, high = schema.get("minLength", 0), schema.get("maxLength", math.inf)
    pattern = _pattern(schema["pattern"]) if "pattern" in schema else None
    if "const" in schema:
        const = schema["const"]
        return lambda value: type(value) is str and value == const and low <= len(value) <= high
    if pattern is not None:
        fullmatch = pattern.fullmatch
        return lambda value: (
            type(value) is str and low <= len(value) <= high and fullmatch(value) is not None
        )
    return lambda value: type(value) is str and low <= len(value) <= high


def _pattern(pattern: str) -> re.Pattern[str]:
    """fullmatch: never looser than pydantic-core's search, and equal to it when anchored.

    Escapes and set operations, where Python's re and Rust's regex differ, are refused.
    """
    if any(token in pattern for token in ("\\", "&&", "--", "~~", "[[")):
        raise Unsupported(pattern)
    return re.compile(pattern)


def _number(schema: dict[str, Any], root: dict[str, Any]) -> Check:
    integer = schema["type"] == "integer"
    low = schema.get("minimum", -math.inf)
    high = schema.get("maximum", math.inf)
    above = schema.get("exclusiveMinimum", -math.inf)
    below = schema.get("exclusiveMaximum", math.inf)
    if schema.keys() == {"type"} and not integer:
        return _is_number  # the panel values: most of the numbers in a recording
    constant, const = "const" in schema, schema.get("const")

    def check(value: Any) -> bool:
        return (
            _is_number(value)
            and (type(value) is int or not integer)
            and low <= value <= high
            and above < value < below
            and (not constant or value == const)
        )

    return check


def _array(schema: dict[str, Any], root: dict[str, Any]) -> Check:
    item = compile_schema(schema["items"], root)
    low = schema.get("minItems", 0)
    high = schema.get("maxItems", math.inf)
    return lambda value: type(value) is list and low <= len(value) <= high and all(map(item, value))


def _object(schema: dict[str, Any], root: dict[str, Any]) -> Check:
    extra = schema.get("additionalProperties", True)
    if "properties" not in schema:  # a dict[str, X]
        if not isinstance(extra, dict):
            raise Unsupported("an object with neither properties nor a value schema")
        values = compile_schema(extra, root)
        return lambda value: (
            type(value) is dict
            and all(type(key) is str for key in value)
            and all(map(values, value.values()))
        )
    if extra is not False:
        raise Unsupported("properties without additionalProperties: false")
    properties = {key: compile_schema(s, root) for key, s in schema["properties"].items()}
    required, known = frozenset(schema.get("required", ())), properties.keys()

    def check(value: Any) -> bool:  # keys in `known` are str: no other key type gets past
        if type(value) is not dict or not required <= value.keys() <= known:
            return False
        for key, item in value.items():  # noqa: SIM110 - a loop beats all() over a generator
            if not properties[key](item):
                return False
        return True

    return check


_NUMBER_KEYS = {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const"}
_COMPILERS: dict[Any, tuple[Callable[[dict[str, Any], dict[str, Any]], Check], set[str]]] = {
    "string": (_string, {"type", "minLength", "maxLength", "pattern", "const"}),
    "integer": (_number, _NUMBER_KEYS),
    "number": (_number, _NUMBER_KEYS),
    "array": (_array, {"type", "items", "minItems", "maxItems"}),
    "object": (_object, {"type", "properties", "required", "additionalProperties"}),
}
