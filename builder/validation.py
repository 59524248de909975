"""Validation by pydantic, imported only when something is validated.

The course's and the recording's types are frozen standard-library dataclasses, which
pydantic validates (through a TypeAdapter) and exports as JSON Schema like its own models.
Unlike pydantic models, they need no pydantic to exist: a build that takes every lesson
from builder.state (a prose edit) never imports it: 0.15 s of imports, and unpickling
dataclasses is quicker than unpickling models.

A field's rules beyond its Python type are `Annotated` metadata from this module (Limits,
Check, AnyNumber), which pydantic applies when it first builds a validator; a type's
pydantic configuration is its `__pydantic_config__` (FORBID or STRICT).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema, ErrorDetails

T = TypeVar("T")

FORBID = {"extra": "forbid"}  # an unknown key is an error, as a typo in front matter is
STRICT = {"extra": "forbid", "strict": True}  # recordings: no coercion ("1" is not 1)


@dataclass(frozen=True)
class Limits:
    """Bounds on a value, named as pydantic.Field names them: pattern, min_length,
    max_length, ge, le, gt. They become the same JSON Schema keywords."""

    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        limits = {k: v for k, v in vars(self).items() if v is not None}
        return {**handler(source), **limits}


@dataclass(frozen=True)
class Check:
    """A rule the JSON Schema cannot say: `function` takes the value (after pydantic's own
    checks, or before them), returns it, or raises ValueError saying what is wrong."""

    function: Callable[[Any], Any]
    before: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        from pydantic_core import core_schema

        if self.before:
            return core_schema.no_info_before_validator_function(self.function, handler(source))
        return core_schema.no_info_after_validator_function(self.function, handler(source))


@dataclass(frozen=True)
class AnyNumber:
    """A number `function` alone decides on (pydantic would take "1" or True for a float in
    lax mode); "number" in the JSON Schema."""

    function: Callable[[Any], Any]

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(self.function)

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {"type": "number"}


def adapter(kind: Any) -> TypeAdapter[Any]:
    """pydantic's validator for `kind`, built once per process."""
    from pydantic import TypeAdapter

    if kind not in _adapters:
        _adapters[kind] = TypeAdapter(kind)
    return _adapters[kind]


_adapters: dict[Any, TypeAdapter[Any]] = {}


def validate(kind: type[T], raw: Any) -> T:
    """`raw` (parsed YAML or JSON) as a `kind`; raises pydantic's ValidationError."""
    value: T = adapter(kind).validate_python(raw)
    return value


def validate_json(kind: type[T], data: bytes | str) -> T:
    """JSON text as a `kind`, parsed and validated in one pass (a strict type reads JSON
    objects as its dataclasses, which from Python it would only take as instances)."""
    value: T = adapter(kind).validate_json(data)
    return value


def validate_strict(kind: type[T], raw: Any) -> T:
    """Parsed JSON as a strict `kind` (see validate_json)."""
    return validate_json(kind, json.dumps(raw, ensure_ascii=False))


def problems(error: Exception) -> list[tuple[str, str]]:
    """(where, what) for each problem in pydantic's ValidationError: where is the dotted
    path of the field ("" for the value as a whole)."""
    details: list[ErrorDetails] = error.errors(include_url=False)  # type: ignore[attr-defined]
    found = []
    for item in details:
        where = ".".join(str(part) for part in item["loc"])
        # A dataclass names an unknown key as a keyword argument; say it as for a model.
        extra = item["type"] == "unexpected_keyword_argument"
        found.append((where, "Extra inputs are not permitted" if extra else item["msg"]))
    return found


def json_schema(kind: Any) -> dict[str, Any]:
    """The JSON Schema of `kind`; a dataclass's own docstring is its description, as for a
    pydantic model."""
    schema: dict[str, Any] = adapter(kind).json_schema()
    doc = kind.__doc__ if is_dataclass(kind) else None
    if doc and not doc.startswith(f"{kind.__name__}("):  # not the one dataclass writes
        schema["description"] = inspect.cleandoc(doc)
    return dict(sorted(schema.items()))  # pydantic sorts its keys too
