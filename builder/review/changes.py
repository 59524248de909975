"""What a re-record changed, in a reviewer's terms: per lesson, the output lines, the panel
values, the environment and provenance, and lessons added or removed.

Pure: two sides' recording files (bytes by lesson id) in, a `CourseChanges` out; reading
them from git is builder/review/git.py's, saying it is builder/review/report.py's.

**Timings** move on every run, so a change that only moved timings is told apart. A
recording whose harness declares timings (its `timings` field: `panels.timing` and
`panels.bar(..., timing=True)`) says exactly which: the declared spans of the output are
timings and nothing else is, a line whose only changes are in them is counted, not shown,
and a declared timing panel's values are listed, folded. A recording without the field
(older ones) is read by its text: a number followed by a unit of time (`12.69 ms`, `0.4s`)
is a timing, and a panel whose `ylabel` names a unit of time (`ms`, `GFLOP/s`) or says
`wall clock` is a timing panel. Each side is read by its own rule; a lesson whose changes
are all timings is "timing only".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from ..core.errors import RecordingError
from ..course.recording import Panel, Recording, Timings, loads
from .cells import cells_of_lines, value_changes

_UNIT = r"(?:ns|us|µs|μs|ms|s|sec|secs|seconds?|milliseconds?|microseconds?|nanoseconds?)"
TIME_QUANTITY = re.compile(rf"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?\s?{_UNIT}(?!\w)")
TIMING_YLABEL = re.compile(
    r"(?<!\w)(?:ns|us|µs|μs|ms|s|seconds|milliseconds|microseconds|nanoseconds)(?!\w)"
    r"|wall[ -]clock",
    re.IGNORECASE,
)
CONTEXT = 1  # unchanged lines shown around each changed stretch of output
_HOLE = "\ue000"  # a timing, in a line's comparison key (a private-use character)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
_PADDED_HOLE = re.compile(rf"(?:(?<![ \t])[ \t]+)?{_HOLE}[ \t]*")  # blanks from their start

Category = Literal["added", "removed", "invalid", "changed", "timing", "same"]


@dataclass(frozen=True)
class Value:
    """One bar's value, old -> new (None where the bar did not exist)."""

    series: str
    label: str
    old: float | None
    new: float | None
    relative: float | None  # (new - old) / |old|; None when either is missing or old is 0


@dataclass(frozen=True)
class PanelChange:
    number: int  # 1-based, in emission order
    title: str
    ylabel: str
    timing: bool
    values: tuple[Value, ...]
    notes: tuple[str, ...]  # "added", "removed", "title was ...", "ylabel was ..."


@dataclass(frozen=True)
class OutputChange:
    diff: tuple[str, ...]  # unified-diff hunks of the lines that changed beyond timings
    added: int
    removed: int
    timing_lines: int  # lines whose only change is a timing, folded out of `diff`
    cells: tuple[str, ...] = ()  # the cells that printed the changed lines (cells.py)


@dataclass(frozen=True)
class Field:
    name: str
    old: str
    new: str


@dataclass(frozen=True)
class PageMark:
    """A recorded thing a page shows (an inline value, an output or panel figure) that a
    re-record changed: where it is, what it is, and what it showed before and after."""

    page: str  # the page's path in the site: l/<slug>/
    section: str  # the heading it is under ("" before the first)
    anchor: str  # that heading's id, or the figure's (panel-2)
    kind: str  # "value", "output", "panel", or "broken" (a reference that cannot resolve)
    what: str  # "value: panel 2 “Title”, series, label (unit)", "output", "panel 2"
    old: str
    new: str
    timing: bool


@dataclass(frozen=True)
class LessonChange:
    lesson_id: str
    category: Category
    output: OutputChange | None
    panels: tuple[PanelChange, ...]
    environment: tuple[Field, ...]  # provenance and environment.*
    because: tuple[str, ...]  # "example", "harness": whose hash changed
    recorded: Field | None  # generatedAt, old -> new
    problem: str = ""  # why a side cannot be read (category "invalid")
    pages: tuple[PageMark, ...] = ()  # what the lesson's page shows that changed
    cells: tuple[Field, ...] = ()  # cells whose value or declared exception changed


@dataclass(frozen=True)
class CourseChanges:
    base: str
    head: str
    lessons: tuple[LessonChange, ...]  # only lessons whose recording files differ
    unchanged: int
    note: str = ""  # what could not be compared ("pages not compared: ...")

    def count(self, category: Category) -> int:
        return sum(1 for lesson in self.lessons if lesson.category == category)

    def to_dict(self) -> dict[str, object]:
        """As JSON for tools, keys in camelCase as in recordings and `check --json`."""
        camel: dict[str, object] = _camel(asdict(self))
        return camel


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub(r"_(\w)", lambda m: m[1].upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_camel(item) for item in value]
    return value


def compare(
    old: dict[str, bytes],
    new: dict[str, bytes],
    base: str,
    head: str,
    *,
    environment: bool = True,
) -> CourseChanges:
    """Every lesson whose recording differs between the two sides, by lesson id.
    `environment=False` leaves the environment and provenance out (`rehearse`, where every
    lesson ran on other versions on purpose and the report says which once)."""
    ids = sorted(old.keys() | new.keys())
    differ = [i for i in ids if old.get(i) != new.get(i)]
    lessons = tuple(
        lesson_change(i, old.get(i), new.get(i), base, head, environment=environment)
        for i in differ
    )
    return CourseChanges(base, head, lessons, len(ids) - len(differ))


def lesson_change(
    lesson_id: str,
    old: bytes | None,
    new: bytes | None,
    base: str,
    head: str,
    *,
    environment: bool = True,
) -> LessonChange:
    try:
        a = None if old is None else loads(old, f"{base}: recordings/{lesson_id}.json")
        b = None if new is None else loads(new, f"{head}: recordings/{lesson_id}.json")
    except RecordingError as error:
        return LessonChange(lesson_id, "invalid", None, (), (), (), None, str(error))
    if a is None or b is None:
        return _added_or_removed(lesson_id, a, b)
    output = output_change(a.stdout, b.stdout, a.timings, b.timings, (a, b))
    cells = tuple(Field(*change) for change in value_changes(a, b))
    panels = panel_changes(a.panels, b.panels, _declared_panels(a), _declared_panels(b))
    fields = _environment(a, b) if environment else ()
    because = tuple(
        name
        for name, field in (("example", "contentHash"), ("harness", "rendererHash"))
        if getattr(a, field) != getattr(b, field)
    )
    recorded = Field("generatedAt", a.generatedAt, b.generatedAt)
    category = "changed" if cells else _category(output, panels, fields)
    return LessonChange(lesson_id, category, output, panels, fields, because, recorded, cells=cells)


def _added_or_removed(lesson_id: str, a: Recording | None, b: Recording | None) -> LessonChange:
    one = b or a
    assert one is not None
    lines = len(one.stdout.splitlines())
    output = OutputChange((), lines if b else 0, 0 if b else lines, 0)
    note: Category = "added" if b else "removed"
    declared = _declared_panels(one)
    panels = tuple(
        PanelChange(n, p.title, p.ylabel, timing_panel(p, n, declared), (), (note,))
        for n, p in enumerate(one.panels, start=1)
    )
    return LessonChange(lesson_id, note, output, panels, (), (), None)


def _category(
    output: OutputChange | None, panels: tuple[PanelChange, ...], environment: tuple[Field, ...]
) -> Category:
    if environment or (output and output.diff) or any(not p.timing or p.notes for p in panels):
        return "changed"
    return "timing" if output or panels else "same"


# -- output ----------------------------------------------------------------------------------


def line_keys(stdout: str, timings: Timings | None) -> list[str]:
    """Each stdout line as it is compared: its timings (the declared spans, or for a
    recording that declares none, numbers with a unit of time) and the spaces around them
    made one placeholder, so a timing that gained a digit and shifted its padding is the
    same line. Two lines with equal keys differ only in timings."""
    lines = stdout.splitlines()
    if timings is None:  # the number is the timing, as a declared one is; its unit stays
        holes = [TIME_QUANTITY.sub(_number_hole, line) for line in lines]
    else:
        spans: dict[int, list[tuple[int, int]]] = {}
        for span in timings.output:
            spans.setdefault(span.line, []).append((span.start, span.end))
        holes = [_punch(line, spans.get(n, [])) for n, line in enumerate(lines, start=1)]
    return [_PADDED_HOLE.sub(f" {_HOLE} ", line) for line in holes]


def _number_hole(match: re.Match[str]) -> str:
    number = _NUMBER.match(match[0])
    return _HOLE + match[0][number.end() if number else 0 :]


def _punch(line: str, spans: list[tuple[int, int]]) -> str:
    """The line with each span (clamped to it; overlapping ones merged) made a hole."""
    out, at = [], 0
    for start, end in sorted(spans):
        start, end = max(start, at), min(end, len(line))
        if start < end:
            out += [line[at:start], _HOLE]
            at = end
    return "".join([*out, line[at:]])


def output_change(
    old: str,
    new: str,
    old_timings: Timings | None = None,
    new_timings: Timings | None = None,
    sides: tuple[Recording, Recording] | None = None,
) -> OutputChange | None:
    """The output's changed lines as unified-diff hunks; lines that only moved timings are
    aligned as unchanged (and counted), so they never show as changes. With the two
    recordings (`sides`), the cells that printed the changed lines are named."""
    if old == new:
        return None
    a, b = old.splitlines(), new.splitlines()
    matcher = SequenceMatcher(None, line_keys(old, old_timings), line_keys(new, new_timings))
    codes = matcher.get_opcodes()
    timing = sum(
        a[i1 + k] != b[j1 + k]
        for tag, i1, i2, j1, _ in codes
        if tag == "equal"
        for k in range(i2 - i1)
    )
    added = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag in ("insert", "replace"))
    removed = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag in ("delete", "replace"))
    diff: list[str] = []
    if added or removed:
        for group in matcher.get_grouped_opcodes(CONTEXT):
            diff += _hunk(group, a, b)
    names: list[str] = []
    if sides and (added or removed):
        changed = [(tag, i1, i2, j1, j2) for tag, i1, i2, j1, j2 in codes if tag != "equal"]
        names = cells_of_lines(sides[1], (j for _, _, _, j1, j2 in changed for j in range(j1, j2)))
        gone = cells_of_lines(sides[0], (i for _, i1, i2, _, _ in changed for i in range(i1, i2)))
        names += [name for name in gone if name not in names]
    return OutputChange(tuple(diff), added, removed, timing, tuple(names))


def _hunk(group: list[tuple[str, int, int, int, int]], a: list[str], b: list[str]) -> list[str]:
    first, last = group[0], group[-1]
    lines = [f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"]
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            lines += [f" {line}" for line in b[j1:j2]]
            continue
        lines += [f"-{line}" for line in a[i1:i2]]
        lines += [f"+{line}" for line in b[j1:j2]]
    return lines


def _range(start: int, stop: int) -> str:
    """A hunk's line range as `diff -u` writes it (difflib's _format_range_unified)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start if length == 0 else start + 1},{length}"


# -- panels ----------------------------------------------------------------------------------


def timing_panel(panel: Panel, number: int = 0, declared: set[int] | None = None) -> bool:
    """Panel `number` holds timings: declared so, or (when its recording declares none,
    `declared` None) its ylabel names a unit of time or says wall clock."""
    if declared is not None:
        return number in declared
    return TIMING_YLABEL.search(panel.ylabel) is not None


def _declared_panels(recording: Recording) -> set[int] | None:
    return None if recording.timings is None else set(recording.timings.panels)


def panel_changes(
    old: list[Panel],
    new: list[Panel],
    old_declared: set[int] | None = None,
    new_declared: set[int] | None = None,
) -> tuple[PanelChange, ...]:
    """Panels compared by position: panel N of one side against panel N of the other."""
    count = max(len(old), len(new))
    pairs = [(n, _at(old, n), _at(new, n)) for n in range(1, count + 1)]
    declared = (old_declared, new_declared)
    return tuple(change for n, a, b in pairs if (change := _panel_change(n, a, b, declared)))


def _at(panels: list[Panel], number: int) -> Panel | None:
    return panels[number - 1] if number <= len(panels) else None


def _panel_change(
    number: int,
    a: Panel | None,
    b: Panel | None,
    declared: tuple[set[int] | None, set[int] | None],
) -> PanelChange | None:
    one = b or a
    assert one is not None
    timing = (a is not None and timing_panel(a, number, declared[0])) or (
        b is not None and timing_panel(b, number, declared[1])
    )
    if a is None or b is None:
        return PanelChange(number, one.title, one.ylabel, timing, (), (_side(b),))
    values = _values(a, b)
    notes = tuple(
        f"{name} was {old!r}"
        for name, old, new in (("title", a.title, b.title), ("ylabel", a.ylabel, b.ylabel))
        if old != new
    )
    if not values and not notes:
        return None
    return PanelChange(number, b.title, b.ylabel, timing, values, notes)


def _side(new: Panel | None) -> str:
    return "added" if new else "removed"


def _values(a: Panel, b: Panel) -> tuple[Value, ...]:
    old, new = a.values(), b.values()
    keys = [*new, *(key for key in old if key not in new)]
    return tuple(
        Value(*key, old.get(key), new.get(key), _relative(old.get(key), new.get(key)))
        for key in keys
        if old.get(key) != new.get(key)
    )


def _relative(old: float | None, new: float | None) -> float | None:
    if old is None or new is None or old == 0:
        return None
    return (new - old) / abs(old)


# -- environment -----------------------------------------------------------------------------


def _environment(a: Recording, b: Recording) -> tuple[Field, ...]:
    pairs = [("provenance", a.provenance, b.provenance)] + [
        (f"environment.{name}", str(old), str(getattr(b.environment, name)))
        for name, old in asdict(a.environment).items()
    ]
    return tuple(Field(name, str(old), new) for name, old, new in pairs if str(old) != new)
