"""Validation by pydantic, imported only when something is validated.

The course's and the recording's types are frozen standard-library dataclasses, which
pydantic validates (through a TypeAdapter) and exports as JSON Schema like its own models.
Unlike pydantic models, they need no pydantic to exist: a build that takes its validated
front matter and recordings from the store (a prose edit) never imports it.

A field's rules beyond its Python type are `Annotated` metadata: annotated_types'
constraints (Interval, Len, MinLen, MaxLen), which pydantic applies natively; `Pattern`
for a string's pattern; `Check` for a rule the JSON Schema cannot say (builder/course/rules.py).
A type's pydantic configuration is its `__pydantic_config__` (FORBID, or STRICT where
no coercion may happen: a recording's "1" is not 1).

Validating a text again is what a build avoids, so the loaders take a `Cache`: a pure
call's result, given its kind and parts, with no key, store or lifetime to ask about
(`uncached` is a correct one); which values are kept is the build's (builder.pipeline.reuse).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, is_dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import ErrorDetails

T = TypeVar("T")

FORBID = {"extra": "forbid"}  # an unknown key is an error, as a typo in front matter is
STRICT = {"extra": "forbid", "strict": True}  # recordings: no coercion ("1" is not 1)


class Cache(Protocol):
    """What a stage is handed to keep the results of its expensive pure calls (validating a
    text, highlighting code, drawing a chart): `cache(kind, parts, make)` is `make()`'s value,
    which `kind` and `parts` determine. The stage names the call and its parts, and nothing
    else: not where a value is kept, for how long, under which key or code digest, nor what
    stays alive (that is the build's: builder.pipeline.reuse). Any cache that returns `make()`'s
    value gives the same result as `uncached`, so the stage stays a pure function of its
    arguments, testable without a store."""

    def __call__(self, kind: str, parts: tuple[str | bytes, ...], make: Callable[[], T]) -> T: ...


def uncached(kind: str, parts: tuple[str | bytes, ...], make: Callable[[], T]) -> T:
    """`make()`, kept nowhere: the Cache of tests and tools."""
    return make()


@dataclass(frozen=True)
class Pattern:
    """A string that matches `regex` ("pattern" in the JSON Schema). Length bounds go
    beside it as annotated_types markers (MaxLen, Len), which pydantic applies to it."""

    regex: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        from pydantic_core import core_schema

        return core_schema.str_schema(pattern=self.regex)


@dataclass(frozen=True)
class Tagged:
    """A union of dataclasses told apart by the value of their field `tag` (a Literal): an
    unknown value is one error naming the ones that exist, not one error per alternative."""

    tag: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        from pydantic import Discriminator

        return Discriminator(self.tag).__get_pydantic_core_schema__(source, handler)


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


@cache
def adapter(kind: Any) -> TypeAdapter[Any]:
    """pydantic's validator for `kind`, built once per process, on first use."""
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def validate(kind: type[T], raw: Any) -> T:
    """`raw` (parsed YAML or JSON) as a `kind`; raises pydantic's ValidationError."""
    value: T = adapter(cast(Any, kind)).validate_python(raw)
    return value


def validate_json(kind: type[T], data: bytes | str) -> T:
    """JSON text as a `kind`, parsed and validated in one pass (a strict type reads JSON
    objects as its dataclasses; recordings are only ever validated as the bytes that are
    or will be on disk)."""
    value: T = adapter(cast(Any, kind)).validate_json(data)
    return value


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
        from inspect import cleandoc

        schema["description"] = cleandoc(doc)
    return dict(sorted(schema.items()))  # pydantic sorts its keys too
