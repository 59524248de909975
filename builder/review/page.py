"""A page of what the recordings changed, in a reader's words: the "What changed" page
(`changes/`, built with `--since REV`) and an environment move's page (`moves/<slug>/`,
course.yml `moves:`), one template and one context for both.

The page names the environment move once, lists the lessons that print something different
with what changed (output diff, chart values, the numbers the page shows, linked to their
places), then one line of the lessons whose timings alone moved and one of those that print
the same. The compared revisions are a small line: a reader needs the lessons, not the
commits. Pure: a Compared (builder/review/moves.py) and the navigation in, the context out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..render.nav import NavItem, SiteNav
from .changes import LessonChange, PageMark, PanelChange
from .git import WORK_TREE
from .report import mark_change, number, relative

if TYPE_CHECKING:
    from ..course.model import Move
    from .moves import Compared, Moved


@dataclass(frozen=True)
class ChangedPanel:
    heading: str
    href: str  # the chart on its lesson page ("" when the lesson has no page)
    rows: tuple[tuple[str, str, str, str, str], ...]  # series, label, before, after, change


@dataclass(frozen=True)
class ChangedLesson:
    lesson_id: str
    page: NavItem | None  # None when the lesson is gone
    headline: str
    output: str
    diff: tuple[tuple[str, str], ...]  # (add | del | hunk | same, line)
    panels: tuple[ChangedPanel, ...]
    marks: tuple[tuple[str, str, str], ...]  # (href, where, what changed)
    timings: str  # what else moved that is only timings, in words ("" when nothing)
    timing_panels: tuple[ChangedPanel, ...]  # their values, behind a disclosure


@dataclass(frozen=True)
class ChangesPage:
    heading: str
    lede: str
    compared: str  # which recordings were compared (revisions), a small line
    note: str
    lessons: tuple[ChangedLesson, ...]  # print something else, new, gone, unreadable
    timing_only: tuple[tuple[NavItem | None, str], ...]  # (page, title)
    same: tuple[tuple[NavItem | None, str], ...]


def context(nav: SiteNav, compared: Compared, move: Move | None = None) -> dict[str, Any]:
    """The template's context for changes.html: the What-changed page (root: "../"), or
    with `move` that move's page (root: "../../")."""
    changes, pages = compared.changes, nav.items()
    root = "../../" if move else "../"
    order = {lesson: n for n, lesson in enumerate(pages)}  # course order; removed ones last
    ranked = sorted(changes.lessons, key=lambda x: order.get(x.lesson_id, len(order)))
    kinds = {x.lesson_id: x.category for x in changes.lessons}
    timing = [x.lesson_id for x in ranked if x.category == "timing"]
    same = [i for i in pages if kinds.get(i, "same") == "same"]
    listed = [x for x in ranked if x.category not in ("timing", "same")]
    heading = move.title if move else "What changed"
    content = ChangesPage(
        heading,
        _lede(compared.moved, move is not None) + " " + _counts(listed, timing, same),
        f"Recordings compared: {_side(changes.base)} and {_side(changes.head)}.",
        changes.note,
        tuple(_lesson(x, pages.get(x.lesson_id), root) for x in listed),
        tuple((pages.get(i), _title(pages, i)) for i in timing),
        tuple((pages.get(i), _title(pages, i)) for i in same),
    )
    description = f"{heading}: what the lessons print, before and after."
    return {
        "root": root,
        "title": heading,
        "current": "",
        "changes": content,
        "description": description,
    }


def _side(name: str) -> str:
    """A revision as the small line says it (builder.review.git `describe`)."""
    return "the recordings this site was built from" if name == WORK_TREE else name


def _lede(moved: Moved, move: bool) -> str:
    """'The lessons were recorded again with jax 0.9.2 → 0.10.2.'"""
    names = {"deviceCount": "devices"}
    versions = ", ".join(
        f"{names.get(k, k)} {old} → {new}" + (f" ({count} of {total} lessons)" * (count < total))
        for k, old, new, count, total in moved
    )
    if move:
        again = f"with {versions}" if versions else "in the same environment"
        return f"The lessons were recorded again {again}."
    also = f" They were recorded again with {versions}." if versions else ""
    return f"What the lessons print now, against what they printed before.{also}"


def _counts(listed: list[LessonChange], timing: list[str], same: list[str]) -> str:
    """'2 lessons print something different, 1 only moved its timings and 12 print the
    same; 1 is new.'"""
    count = {k: sum(x.category == k for x in listed) for k in ("changed", "added", "removed")}
    parts = [_lessons(count["changed"], "prints something different", "print something different")]
    parts += [f"{len(timing)} only moved {'its' if len(timing) == 1 else 'their'} timings"]
    parts += [f"{len(same)} {'prints' if len(same) == 1 else 'print'} the same"]
    more = [f"{count['added']} {'is' if count['added'] == 1 else 'are'} new"] * bool(count["added"])
    more += [f"{count['removed']} no longer in the course"] * bool(count["removed"])
    unreadable = len(listed) - sum(count.values())
    more += [f"{unreadable} cannot be compared"] * bool(unreadable)
    tail = f"; {', '.join(more)}" if more else ""
    return f"{', '.join(parts[:-1])} and {parts[-1]}{tail}."


def _many(count: int, noun: str) -> str:
    """'1 line', '2 lines'."""
    return f"{count} {noun}{'s' * (count != 1)}"


def _lessons(count: int, one: str, many: str) -> str:
    return f"1 lesson {one}" if count == 1 else f"{count} lessons {many}"


def _title(pages: dict[str, NavItem], lesson_id: str) -> str:
    """What the page calls a lesson: its title (its id once it is no longer in the course)."""
    return pages[lesson_id].title if lesson_id in pages else lesson_id


def _lesson(change: LessonChange, page: NavItem | None, root: str) -> ChangedLesson:
    output = change.output if change.output and change.output.diff else None
    panels = change.panels if change.category == "changed" else ()
    return ChangedLesson(
        change.lesson_id,
        page,
        _headline(change),
        _output_words(change) if output else "",
        tuple((_kind(line), line) for line in output.diff) if output else (),
        tuple(_panel(p, page, root) for p in panels if not p.timing or p.notes),
        tuple(_mark(m, page, root) for m in change.pages if not m.timing),
        _timing_words(change) if change.category == "changed" else "",
        tuple(_panel(p, page, root) for p in panels if p.timing and not p.notes),
    )


def _headline(change: LessonChange) -> str:
    if change.category == "invalid":
        return f"Its recording cannot be compared: {change.problem}"
    if change.category == "removed":
        return "No longer in the course."
    lines = change.output.added if change.output else 0
    if change.category == "added":
        charts = len(change.panels)
        draws = f" and draws {_many(charts, 'chart')}" if charts else ""
        return f"New: it prints {_many(lines, 'line')}{draws}."
    edited = "Its example was edited; recorded" if "example" in change.because else "Recorded"
    when = f" on {change.recorded.new[:10]}" if change.recorded else ""
    return f"{edited} again{when}."


def _output_words(change: LessonChange) -> str:
    """'1 new line, 1 line gone, printed by the cell trace.'"""
    assert change.output is not None
    added, removed, cells = change.output.added, change.output.removed, change.output.cells
    parts = [f"{added} new line{'s' * (added != 1)}"] * bool(added)
    parts += [f"{_many(removed, 'line')} gone"] * bool(removed)
    by = f", printed by the cell{'s' * (len(cells) > 1)} {', '.join(cells)}" if cells else ""
    return f"{', '.join(parts)}{by}."


def _timing_words(change: LessonChange) -> str:
    """What else moved that is only timings: '4 lines of output, the chart “First call”'."""
    lines = change.output.timing_lines if change.output else 0
    parts = [f"{_many(lines, 'line')} of output"] * bool(lines)
    parts += [f"the chart “{p.title}”" for p in change.panels if p.timing and not p.notes]
    return ", ".join(parts)


def _kind(line: str) -> str:
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")


def _panel(panel: PanelChange, page: NavItem | None, root: str) -> ChangedPanel:
    notes = f" ({'; '.join(panel.notes)})" if panel.notes else ""
    heading = f"Chart {panel.number}: {panel.title} ({panel.ylabel}){notes}"
    href = f"{root}{page.url}index.html#panel-{panel.number}" if page else ""
    rows = tuple(
        (v.series, v.label, number(v.old), number(v.new), relative(v.old, v.new, v.relative))
        for v in panel.values
    )
    return ChangedPanel(heading, href, rows)


def _mark(mark: PageMark, page: NavItem | None, root: str) -> tuple[str, str, str]:
    anchor = f"#{mark.anchor}" if mark.anchor else ""
    href = f"{root}{mark.page}index.html{anchor}" if page else ""
    where = f"§ {mark.section}" if mark.section else "top of the page"
    return href, where, f"{mark.what}: {mark_change(mark, '→')}"
