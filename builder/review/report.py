"""`diff`'s report of a CourseChanges (builder/review/changes.py): plain text for a terminal,
Markdown for a pull request or `$GITHUB_STEP_SUMMARY`, JSON for tools.

Lessons whose changes are all timings are folded into one closing line; inside a changed
lesson, its timing lines and timing panels are folded into one line of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher
from types import MappingProxyType

from ..core.escape import json_text, markdown_code, markdown_fence, markdown_text, one_line, visible
from .changes import (
    Category,
    CourseChanges,
    Field,
    LessonChange,
    OutputChange,
    PageMark,
    PanelChange,
    line_keys,
)

MAX_DIFF_LINES = 200  # of one lesson's output diff; the rest is counted, not shown
_KINDS: tuple[tuple[Category, str], ...] = (
    ("changed", "changed"),
    ("timing", "timing only"),
    ("same", "re-recorded with the same results"),
    ("added", "added"),
    ("removed", "removed"),
    ("invalid", "not readable"),
)
UNRESOLVED = "(unresolved)"  # a reference the recording of that side does not have
_WORDS = MappingProxyType({"added": "added", "removed": "removed", "invalid": "cannot be compared"})


def render(changes: CourseChanges, form: str) -> str:
    if form == "json":
        return json_text(changes.to_dict()) + "\n"
    return markdown(changes) if form == "markdown" else text(changes)


# -- shared words ----------------------------------------------------------------------------


def summary(changes: CourseChanges) -> str:
    """'3 recordings differ, 15 unchanged: 1 changed, 1 timing only, 1 added.'"""
    differ = len(changes.lessons)
    if not differ:
        return f"No recording differs ({changes.unchanged} unchanged)."
    kinds = [f"{count} {label}" for category, label in _KINDS if (count := changes.count(category))]
    noun = "recording differs" if differ == 1 else "recordings differ"
    return f"{differ} {noun}, {changes.unchanged} unchanged: {', '.join(kinds)}."


def number(value: float | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.6g}"


def relative(old: float | None, new: float | None, change: float | None) -> str:
    if old is None:
        return "new"
    if new is None:
        return "gone"
    return "" if change is None else f"{change:+.1%}"


def why(lesson: LessonChange, arrow: str = "->") -> str:
    """'re-recorded after the example changed · 2026-10-20 -> 2026-11-30'."""
    reasons = {"example": "the example changed", "harness": "the recording harness changed"}
    parts = [f"re-recorded after {' and '.join(reasons[b] for b in lesson.because)}"]
    if not lesson.because:
        parts = ["re-recorded with the same example and harness"]
    if lesson.recorded:
        parts.append(f"recorded {lesson.recorded.old[:10]} {arrow} {lesson.recorded.new[:10]}")
    return " · ".join(parts)


def folded(lesson: LessonChange) -> str:
    """What moved that is only timings: '4 output lines, panel 1 (3 values)'."""
    parts = []
    lines = lesson.output.timing_lines if lesson.output else 0
    if lines:
        parts.append(f"{lines} output line{'s' * (lines != 1)}")
    parts += [
        f"panel {p.number} ({len(p.values)} value{'s' * (len(p.values) != 1)})"
        for p in _timing_panels(lesson)
    ]
    return ", ".join(parts)


def output_words(output: OutputChange) -> str:
    parts = [f"{output.added} line(s) added"] if output.added else []
    parts += [f"{output.removed} removed"] if output.removed else []
    if output.cells:
        parts.append(f"in cell{'s' * (len(output.cells) > 1)} {', '.join(output.cells)}")
    return ", ".join(parts) or "only timings moved"


def environment_words(fields: tuple[Field, ...], arrow: str = "->") -> str:
    return "; ".join(
        f"{f.name.removeprefix('environment.')} {f.old} {arrow} {f.new}" for f in fields
    )


def mark_change(mark: PageMark, arrow: str = "->") -> str:
    """How a changed mark reads: a value old -> new; a figure by how much of it changed."""
    if mark.what == "recorded output":
        return _figure_lines(mark.old.splitlines(), mark.new.splitlines())
    if mark.what.startswith("panel "):
        return "its values changed (listed above)"
    return f"{_short(mark.old) or UNRESOLVED} {arrow} {_short(mark.new) or UNRESOLVED}"


def added_words(lesson: LessonChange) -> str:
    lines = lesson.output.added + lesson.output.removed if lesson.output else 0
    return f"{lines} line(s) of output, {len(lesson.panels)} panel(s)"


def _figure_lines(old: list[str], new: list[str]) -> str:
    """'1 of its 4 line(s) changed, 2 more only in timings': the lines paired as the
    output's diff pairs them (by their keys, timings and the padding around them masked),
    so a line that only moved, or a timing that shifted its padding, is not a change."""
    old_keys, new_keys = line_keys("\n".join(old), None), line_keys("\n".join(new), None)
    real = timing = 0
    for op, i1, i2, j1, j2 in SequenceMatcher(
        None, old_keys, new_keys, autojunk=False
    ).get_opcodes():
        if op == "equal":
            timing += sum(a != b for a, b in zip(old[i1:i2], new[j1:j2], strict=True))
        else:
            real += max(i2 - i1, j2 - j1)
    more = f", {timing} more only in timings" if timing else ""
    return f"{real} of its {len(new)} line(s) changed{more}"


def _timing_panels(lesson: LessonChange) -> list[PanelChange]:
    return [p for p in lesson.panels if p.timing and not p.notes]


def _shown_panels(lesson: LessonChange) -> list[PanelChange]:
    return [p for p in lesson.panels if not p.timing or p.notes]


def _diff_lines(output: OutputChange) -> list[str]:
    lines = list(output.diff[:MAX_DIFF_LINES])
    if len(output.diff) > MAX_DIFF_LINES:
        lines.append(f"... {len(output.diff) - MAX_DIFF_LINES} more diff lines")
    return lines


def _listed(changes: CourseChanges) -> list[LessonChange]:
    return [x for x in changes.lessons if x.category not in ("timing", "same")]


def _folded_lessons(changes: CourseChanges, name: Callable[[str], str]) -> str:
    timing = [
        f"{name(x.lesson_id)} ({folded(x)})" for x in changes.lessons if x.category == "timing"
    ]
    same = [name(x.lesson_id) for x in changes.lessons if x.category == "same"]
    lines = [f"Timings only: {', '.join(timing)}"] if timing else []
    return "\n".join(lines + ([f"Same results: {', '.join(same)}"] if same else []))


# -- plain text ------------------------------------------------------------------------------


def text(changes: CourseChanges) -> str:
    note = f"\n({one_line(changes.note)})" if changes.note else ""
    sides = f"{one_line(changes.base)} -> {one_line(changes.head)}"
    blocks = [f"Recordings: {sides}\n{summary(changes)}{note}"]
    blocks += ["\n".join(_text_lesson(lesson)) for lesson in _listed(changes)]
    fold = _folded_lessons(changes, one_line)
    blocks += [fold] if fold else []
    return "\n\n".join(blocks) + "\n"


def _text_lesson(lesson: LessonChange) -> list[str]:
    """Each name and value one_line(): nothing a recording holds starts a line of its own;
    output lines as visible() (control characters shown; the CLI's stream does the rest)."""
    name = one_line(lesson.lesson_id)
    if lesson.category != "changed":
        detail = lesson.problem if lesson.category == "invalid" else added_words(lesson)
        return [f"{name}: {_WORDS[lesson.category]} ({one_line(detail)})"]
    lines = [f"{name}: changed ({one_line(why(lesson))})"]
    if lesson.output and lesson.output.diff:
        lines.append(f"  output: {output_words(lesson.output)}")
        lines += [f"    {visible(line)}" for line in _diff_lines(lesson.output)]
    lines += [f"  {f.name}: {one_line(f.old)} -> {one_line(f.new)}" for f in lesson.cells]
    for panel in _shown_panels(lesson):
        lines += _text_panel(panel)
    if lesson.environment:
        lines.append(f"  environment: {one_line(environment_words(lesson.environment))}")
    lines += _text_pages(lesson.pages)
    if folded(lesson):
        lines.append(f"  timings moved: {folded(lesson)}")
    return lines


def _text_panel(panel: PanelChange) -> list[str]:
    notes = f" ({one_line('; '.join(panel.notes))})" if panel.notes else ""
    title = f"“{one_line(panel.title)}” [{one_line(panel.ylabel)}]"
    lines = [f"  panel {panel.number} {title}{notes}"]
    for v in panel.values:
        change = relative(v.old, v.new, v.relative)
        lines.append(
            f"    {one_line(v.series)} · {one_line(v.label)}: {number(v.old)} -> {number(v.new)}"
            + (f" ({change})" if change else "")
        )
    return lines


def _text_pages(marks: tuple[PageMark, ...]) -> list[str]:
    shown = [m for m in marks if not m.timing]
    lines = ["  on its page:"] if shown else []
    for mark in shown:
        where = f"{mark.page}#{mark.anchor}" if mark.anchor else mark.page
        section = f" § {mark.section}" if mark.section else ""
        lines.append(f"    {one_line(f'{where}{section}: {mark.what}: {mark_change(mark)}')}")
    return lines


def _short(shown: str) -> str:
    one = " ".join(shown.split())
    return one if len(one) <= 60 else one[:57] + "..."


# -- Markdown --------------------------------------------------------------------------------


def markdown(changes: CourseChanges) -> str:
    blocks = [
        f"### Recordings: {markdown_code(changes.base)} → {markdown_code(changes.head)}",
        summary(changes),
    ]
    blocks += [f"_({_cell(changes.note)})_"] if changes.note else []
    for lesson in _listed(changes):
        blocks += _md_lesson(lesson)
    fold = _folded_lessons(changes, markdown_code)
    blocks += [f"**{line.replace(':', ':**', 1)}" for line in fold.splitlines()] if fold else []
    return "\n\n".join(blocks) + "\n"


def _md_lesson(lesson: LessonChange) -> list[str]:
    head = f"#### {markdown_code(lesson.lesson_id)}"
    if lesson.category != "changed":
        detail = lesson.problem if lesson.category == "invalid" else added_words(lesson)
        return [f"{head} — {_WORDS[lesson.category]}", _cell(detail)]
    blocks = [f"{head} — changed", _cell(why(lesson, "→"))]
    if lesson.output and lesson.output.diff:
        blocks.append(f"**Output**: {output_words(lesson.output)}")
        blocks.append(markdown_fence("diff", _diff_lines(lesson.output)))
    blocks += [f"**{f.name}**: {_cell(f.old)} → {_cell(f.new)}" for f in lesson.cells]
    blocks += [_md_panel(panel) for panel in _shown_panels(lesson)]
    if lesson.environment:
        blocks.append(f"**Environment**: {_cell(environment_words(lesson.environment, '→'))}")
    blocks += _md_pages(lesson.pages)
    if folded(lesson):
        blocks.append(f"**Timings moved**: {folded(lesson)}")
    return blocks


def _md_panel(panel: PanelChange) -> str:
    notes = f" ({_cell('; '.join(panel.notes))})" if panel.notes else ""
    head = f"**Panel {panel.number}**: {_cell(panel.title)} [{_cell(panel.ylabel)}]{notes}"
    if not panel.values:
        return head
    rows = [
        f"| {_cell(v.series)} | {_cell(v.label)} | {number(v.old)} | {number(v.new)} | "
        f"{relative(v.old, v.new, v.relative)} |"
        for v in panel.values
    ]
    table = ["| series | label | before | after | change |", "|---|---|--:|--:|--:|", *rows]
    return head + "\n\n" + "\n".join(table)


def _md_pages(marks: tuple[PageMark, ...]) -> list[str]:
    shown = [m for m in marks if not m.timing]
    if not shown:
        return []
    items = [
        f"- {markdown_code(m.page + ('#' + m.anchor if m.anchor else ''))}"
        + (f" § {_cell(m.section)}" if m.section else "")
        + f": {_cell(m.what)}: {_md_change(m)}"
        for m in shown
    ]
    return ["**On its page**:\n\n" + "\n".join(items)]


def _md_change(mark: PageMark) -> str:
    if mark.what == "recorded output" or mark.what.startswith("panel "):
        return mark_change(mark)
    old, new = (markdown_code(_short(x)) if x else UNRESOLVED for x in (mark.old, mark.new))
    return f"{old} → {new}"


_cell = markdown_text  # builder/core/escape.py: one place for Markdown
