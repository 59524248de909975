"""The recording: schema version 1, its types (validated by pydantic), loading and saving it.

Saving gives 2-space indented JSON with keys in schema order and no trailing newline, so
loading and saving a recording gives back the same bytes. A file that holds a key twice in
one object is refused (every reader takes the last, a reviewer reads the first); one whose
bytes are otherwise not what saving writes is read, and `check` calls it not canonical.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from annotated_types import Interval, Len, MaxLen

from ..cells import MAX_VALUE
from ..core.errors import RecordingError
from .files import Reads, read_file, shallow_json
from .rules import (
    CELL_NAME_PATTERN,
    CONFLICT_MARKER,
    LESSON_ID_PATTERN,
    MAX_RECORDING_BYTES,
    SCHEMA_VERSION,
    SHA256_PATTERN,
    iso_with_timezone,
)
from .validation import STRICT, Check, Pattern, problems, validate_json

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

from .panel_data import BarPanel as BarPanel
from .panel_data import Fit as Fit
from .panel_data import ImagePanel as ImagePanel
from .panel_data import Number as Number
from .panel_data import Panel as Panel
from .panel_data import PanelData, Text, _not_null
from .panel_data import Series as Series
from .panel_data import XYPanel as XYPanel
from .panel_data import XYSeries as XYSeries


def _an_integer(value: object) -> object:
    """Literal[1] takes `true` and `1.0` (they equal 1), and they would be saved as 1."""
    if type(value) is not int:
        raise ValueError(f"must be the integer {SCHEMA_VERSION}")
    return value


@dataclass(frozen=True)
class Environment:
    __pydantic_config__ = STRICT

    backend: Text
    deviceCount: Annotated[int, Interval(ge=1)]
    jax: Text
    numpy: Text
    matplotlib: Text
    # Optional (still schemaVersion 1): the accelerator's kind as jax names it ('TPU v5
    # lite'); absent for the CPU, whose model the sidecar keeps (builder/core/machine.py).
    deviceKind: Annotated[Text | None, Check(_not_null, before=True)] = None


@dataclass(frozen=True)
class Span:
    """Characters `start` to `end` (0-based, end excluded) of stdout's line `line` (1-based)."""

    __pydantic_config__ = STRICT

    line: Annotated[int, Interval(ge=1)]
    start: Annotated[int, Interval(ge=0)]
    end: Annotated[int, Interval(ge=1)]


@dataclass(frozen=True)
class Timings:
    """What the example declared a timing (builder.panels.timing and bar(timing=True)):
    where in stdout each printed timing is, and which panels (1-based) hold timings."""

    __pydantic_config__ = STRICT

    output: list[Span]
    panels: list[Annotated[int, Interval(ge=1)]]


@dataclass(frozen=True)
class Raised:
    """The exception a `raises` cell raised: its class as a traceback names it, its message."""

    __pydantic_config__ = STRICT

    type: Annotated[str, Len(1, 200)]
    message: Annotated[str, MaxLen(MAX_VALUE)]


@dataclass(frozen=True)
class CellRun:
    """One cell that ran (builder/cells.py): its part of stdout, characters `start` to `end`
    (end excluded), and the repr of its last expression or the exception it was to raise."""

    __pydantic_config__ = STRICT

    name: Annotated[str, Pattern(CELL_NAME_PATTERN)]
    start: Annotated[int, Interval(ge=0)]
    end: Annotated[int, Interval(ge=0)]
    value: Annotated[str | None, MaxLen(MAX_VALUE), Check(_not_null, before=True)] = None
    raised: Annotated[Raised | None, Check(_not_null, before=True)] = None
    # Optional: the panels (1-based) of the matplotlib figures the cell drew, in order.
    panels: Annotated[
        list[Annotated[int, Interval(ge=1)]] | None, Check(_not_null, before=True)
    ] = None


@dataclass(frozen=True)
class Recording:
    """One executed lesson: what its example printed and the panels it emitted."""

    __pydantic_config__ = STRICT

    schemaVersion: Annotated[Literal[1], Check(_an_integer, before=True)]
    lessonId: Annotated[str, Pattern(LESSON_ID_PATTERN), MaxLen(64)]
    contentHash: Annotated[str, Pattern(SHA256_PATTERN)]
    rendererHash: Annotated[str, Pattern(SHA256_PATTERN)]
    kind: Literal["executed"]
    generatedAt: Annotated[str, Check(iso_with_timezone)]
    provenance: Annotated[str, Pattern(r"^recorded_[a-z0-9]+_computation$")]
    environment: Environment
    stdout: str
    data: PanelData
    # Optional (still schemaVersion 1): absent in recordings made before examples declared
    # their timings; `diff` then recognises timings by their units (builder/review/changes.py).
    timings: Annotated[Timings | None, Check(_not_null, before=True)] = None
    # Optional: the example's cells that ran, in order (absent for an example without cells).
    cells: Annotated[list[CellRun] | None, Check(_not_null, before=True)] = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        """The recording's own fields, then: its cells' parts of stdout fit it."""
        return Check(_cells_fit).__get_pydantic_core_schema__(source, handler)

    @property
    def panels(self) -> list[Panel]:
        return self.data.panels

    @property
    def device(self) -> str:
        """The instrument in words: 'CPU' for recorded_cpu_computation."""
        return self.provenance.removeprefix("recorded_").removesuffix("_computation").upper()

    @property
    def device_count(self) -> str:
        """'1 device', '8 devices'."""
        count = self.environment.deviceCount
        return f"{count} device" + ("s" if count != 1 else "")

    @property
    def devices(self) -> str:
        """'1 device', '8 devices · TPU v5 lite': how many, and their kind where known."""
        kind = self.environment.deviceKind
        return f"{self.device_count} · {kind}" if kind else self.device_count


def _cells_fit(recording: Recording) -> Recording:
    """Each cell once, its part of stdout within stdout and after the one before it, and a
    value or an exception, not both: what a run makes."""
    end, names = 0, set()
    for cell in recording.cells or ():
        if cell.name in names:
            raise ValueError(f"cells: {cell.name!r} is listed twice")
        if not end <= cell.start <= cell.end <= len(recording.stdout):
            raise ValueError(
                f"cells: {cell.name!r} holds characters {cell.start} to {cell.end}, not within "
                f"stdout ({len(recording.stdout)} characters) after the cell before it ({end})"
            )
        if cell.value is not None and cell.raised is not None:
            raise ValueError(f"cells: {cell.name!r} has both a value and an exception")
        names.add(cell.name)
        end = cell.end
    return recording


def dumps(recording: Recording) -> bytes:
    """The recording's bytes on disk: 2-space indent, schema key order, no final newline;
    an optional field that is absent (None) is left out, never written as null."""
    text = json.dumps(_present(asdict(recording)), indent=2, ensure_ascii=False)
    return text.encode("utf-8")


def _present(value: Any) -> Any:
    """`value` with every None-valued key of its objects, at any depth, left out."""
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_present(v) for v in value]
    return value


def loads(data: bytes, source: Path | str) -> Recording:
    """Parse and validate a recording; errors name `source` and the field (or the key
    found twice)."""
    return read(data, source)[0]


def read(data: bytes, source: Path | str) -> tuple[Recording, int]:
    """The recording, and 0 when `data` is byte for byte what `dumps` writes of it, else
    the first line that differs. Only a file that is not canonical can hold a key twice
    (`dumps` writes each once): that one is parsed again, to refuse it."""
    recording = _validated(data, source)
    written = dumps(recording)
    if written == data:
        return recording, 0
    _parse_json(data, source)
    return recording, _first_difference(written, data)


def _first_difference(written: bytes, data: bytes) -> int:
    lines = zip(written.split(b"\n"), data.split(b"\n"), strict=False)
    return next((n for n, (a, b) in enumerate(lines, 1) if a != b), written.count(b"\n") + 1)


def _validated(data: bytes, source: Path | str) -> Recording:
    if len(data) > MAX_RECORDING_BYTES:
        raise RecordingError(
            f"is {len(data) / 2**20:.1f} MiB, over the {MAX_RECORDING_BYTES // 2**20} MiB limit",
            path=source,
            hint=_TOO_BIG,
        )
    from pydantic import ValidationError

    try:  # the common case, parsed and validated in one pass by pydantic-core
        return validate_json(Recording, data)
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
        return validate_json(Recording, data)
    except ValidationError as error:
        raise RecordingError(_describe(error), path=source, hint=_REPAIR) from None


def load(path: Path) -> Recording:
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        raise RecordingError("cannot be read: No such file or directory", path=path) from None
    return loads(data, path)


def read_bytes(path: Path, reads: Reads | None = None) -> bytes:
    """A recording file's bytes, read only when it is a regular file within the size limit
    (a FIFO made `check` wait forever; a link to /dev/zero, run out of memory)."""
    return read_file(path, MAX_RECORDING_BYTES, RecordingError, _TOO_BIG, reads)


def json_schema() -> dict[str, Any]:
    from .validation import json_schema

    schema = json_schema(Recording)
    for part in [schema, *schema["$defs"].values()]:
        for name, field in part["properties"].items():
            part["properties"][name] = _never_null(field)
    schema["properties"]["timings"]["description"] = (
        "Optional. The timings the example declared (builder.panels.timing, "
        "bar(timing=True)); absent in recordings made before examples declared them."
    )
    schema["properties"]["cells"]["description"] = (
        "Optional. The example's cells that ran, in order, each with its part "
        "of stdout (characters start to end, end excluded), the repr of its last expression "
        "(value) or the exception it was declared to raise (raised); absent for an example "
        "without cells."
    )
    schema["$defs"]["XYSeries"]["properties"]["fit"]["description"] = (
        "Optional, on a scatter panel only: the least-squares line the run "
        'fitted to the series\' points (builder.panels.scatter(fit="linear")).'
    )
    kind = schema["$defs"]["Environment"]["properties"]["deviceKind"]
    kind |= {"minLength": 1, "maxLength": 200}
    kind["description"] = (
        "Optional. The kind of device jax ran on, as jax names it "
        "(jax.devices()[0].device_kind, e.g. 'TPU v5 lite'), measured by the provenance "
        "probe; absent for the CPU (the lesson's sidecar names the CPU's model) and in "
        "recordings made before it was kept."
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "recording.schema.json"
    return schema


def _never_null(field: dict[str, Any]) -> dict[str, Any]:
    """An optional field's schema: when present, what it is (never null)."""
    options = field.get("anyOf", [])
    if field.get("default", 0) is not None or {"type": "null"} not in options:
        return field
    (kind,) = [option for option in options if option != {"type": "null"}]
    said = {k: v for k, v in field.items() if k not in ("anyOf", "default")}
    return {**kind, **said}


_TOO_BIG = "an example printing this much is a mistake; trim its output and re-record"
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
    shallow_json(data, source, RecordingError, _REPAIR)  # before Python's parser recurses
    try:
        return json.loads(
            data.decode("utf-8"), parse_constant=_reject_constant, object_pairs_hook=_once
        )
    except UnicodeDecodeError as error:
        raise RecordingError(
            f"is not UTF-8 (byte {error.start})", path=source, hint=_REPAIR
        ) from None
    except json.JSONDecodeError as error:
        raise RecordingError(
            f"is not valid JSON: {error.msg} (column {error.colno})",
            path=source,
            hint=_REPAIR,
            line=error.lineno,
        ) from None
    except ValueError as error:
        raise RecordingError(str(error), path=source, hint=_REPAIR) from None


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different, so that readers and reviewers see one value."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(
                f"holds the key {json.dumps(key, ensure_ascii=False)} twice in one object: "
                "every reader takes the last value, a reviewer of the file reads the first"
            )
        found[key] = value
    return found


def _describe(error: Exception) -> str:
    found = [(_KIND_IN_PATH.sub(r"\1", where), msg) for where, msg in problems(error)]
    return "; ".join(f"field {where or '(top level)'}: {msg}" for where, msg in found)


# pydantic puts a panel's kind in the path of what is wrong in it (data.panels.0.bar.title):
# said without it, the path is the file's own (data.panels.0.title)
_KIND_IN_PATH = re.compile(r"(panels\.\d+)\.(?:bar|line|scatter|image)\b")
