"""The recording: schema version 1, its pydantic models, and loading and saving it.

Saving gives 2-space indented JSON with keys in schema order and no trailing newline, so
loading and saving a recording gives back the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from .errors import RecordingError
from .rules import (
    CONFLICT_MARKER,
    LESSON_ID_PATTERN,
    MAX_RECORDING_BYTES,
    SCHEMA_VERSION,
    SHA256_PATTERN,
    finite_number,
    iso_with_timezone,
    series_lengths_match,
)

Number = Annotated[int | float, PlainValidator(finite_number), WithJsonSchema({"type": "number"})]
Text = Annotated[str, Field(min_length=1, max_length=200)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, defer_build=True)


class Series(Frozen):
    label: Text
    y: list[Number]


class BarPanel(Frozen):
    kind: Literal["bar"]
    title: Text
    labels: list[Text] = Field(min_length=1)
    ylabel: Text
    series: list[Series] = Field(min_length=1)

    @model_validator(mode="after")
    def _lengths_match(self) -> BarPanel:
        series_lengths_match(self.labels, [(s.label, s.y) for s in self.series])
        return self


class PanelData(Frozen):
    kind: Literal["panels"]
    panels: list[BarPanel]


class Environment(Frozen):
    backend: Text
    deviceCount: int = Field(ge=1)
    jax: Text
    numpy: Text
    matplotlib: Text


class Recording(Frozen):
    """One executed lesson: what its example printed and the panels it emitted."""

    schemaVersion: Literal[1]
    lessonId: str = Field(pattern=LESSON_ID_PATTERN, max_length=64)
    contentHash: str = Field(pattern=SHA256_PATTERN)
    rendererHash: str = Field(pattern=SHA256_PATTERN)
    kind: Literal["executed"]
    generatedAt: str
    provenance: str = Field(pattern=r"^recorded_[a-z0-9]+_computation$")
    environment: Environment
    stdout: str
    data: PanelData

    @field_validator("generatedAt")
    @classmethod
    def _iso_with_timezone(cls, value: str) -> str:
        return iso_with_timezone(value)

    @field_validator("schemaVersion", mode="before")
    @classmethod
    def _an_integer(cls, value: object) -> object:
        """Literal[1] takes `true` and `1.0` (they equal 1), and they would be saved as 1."""
        if type(value) is not int:
            raise ValueError(f"must be the integer {SCHEMA_VERSION}")
        return value

    @property
    def panels(self) -> list[BarPanel]:
        return self.data.panels

    @property
    def device(self) -> str:
        """The instrument in words: 'CPU' for recorded_cpu_computation."""
        return self.provenance.removeprefix("recorded_").removesuffix("_computation").upper()


def dumps(recording: Recording) -> bytes:
    """The recording's bytes on disk: 2-space indent, schema key order, no final newline."""
    text = json.dumps(recording.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return text.encode("utf-8")


def loads(data: bytes, source: Path | str) -> Recording:
    """Parse and validate a recording; errors name `source` and the field."""
    if len(data) > MAX_RECORDING_BYTES:
        raise RecordingError(
            f"is {len(data) / 2**20:.1f} MiB, over the {MAX_RECORDING_BYTES // 2**20} MiB limit",
            path=source,
            hint="an example printing this much is a mistake; trim its output and re-record",
        )
    try:  # the common case, parsed and validated in one pass by pydantic-core
        return Recording.model_validate_json(data)
    except ValidationError:
        pass  # read it again step by step, to say exactly what is wrong
    raw = _parse_json(data, source)
    version = raw.get("schemaVersion", SCHEMA_VERSION) if isinstance(raw, dict) else None
    if isinstance(raw, dict) and (type(version) is not int or version != SCHEMA_VERSION):
        raise RecordingError(
            f"schemaVersion {raw['schemaVersion']!r} is not supported (this builder reads "
            f"{SCHEMA_VERSION})",
            path=source,
            hint="re-record it with this builder: make record FORCE=1",
        )
    try:
        return Recording.model_validate(raw)
    except ValidationError as error:
        raise RecordingError(_describe(error), path=source, hint=_REPAIR) from None


def load(path: Path) -> Recording:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RecordingError(f"cannot be read: {error.strerror}", path=path) from None
    return loads(data, path)


def json_schema() -> dict[str, Any]:
    schema = Recording.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "recording.schema.json"
    return schema


_REPAIR = "recordings are data, not code: re-record with `make record` rather than editing it"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _parse_json(data: bytes, source: Path | str) -> Any:
    if CONFLICT_MARKER.search(data):
        raise RecordingError(
            "contains git merge-conflict markers (<<<<<<< / ======= / >>>>>>>)",
            path=source,
            hint="do not merge recordings by hand: take either side, then re-record with "
            "`make record`",
        )
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as error:
        raise RecordingError(
            f"is not UTF-8 (byte {error.start})", path=source, hint=_REPAIR
        ) from None
    except json.JSONDecodeError as error:
        raise RecordingError(
            f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}",
            path=source,
            hint=_REPAIR,
        ) from None
    except ValueError as error:
        raise RecordingError(str(error), path=source, hint=_REPAIR) from None


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        problems.append(f"field {where}: {item['msg']}")
    return "; ".join(problems)
