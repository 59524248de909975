"""The "What changed" page (`changes/`, built with `--since REV`): `diff`'s report as a
page of the site, each changed figure and number linked to its place on its lesson page.

Pure: a CourseChanges (builder/review/changes.py) and the course in, the page's typed context
out; the words are diffreport's, so the page and `diff` say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..render.nav import NavItem, SiteNav
from .changes import CourseChanges, LessonChange, PageMark, PanelChange
from .report import (
    added_words,
    environment_words,
    folded,
    mark_change,
    number,
    output_words,
    relative,
    summary,
    why,
)


@dataclass(frozen=True)
class ChangedPanel:
    heading: str
    href: str  # the panel on its lesson page ("" when the lesson has no page)
    rows: tuple[tuple[str, str, str, str, str], ...]  # series, label, before, after, change


@dataclass(frozen=True)
class ChangedLesson:
    lesson_id: str
    page: NavItem | None  # None when the lesson is gone
    headline: str
    output: str
    diff: tuple[tuple[str, str], ...]  # (add | del | hunk | same, line)
    panels: tuple[ChangedPanel, ...]
    environment: str
    marks: tuple[tuple[str, str, str], ...]  # (href, where, what changed)
    timings: str  # what only moved timings, in words
    timing_panels: tuple[ChangedPanel, ...]  # folded: shown only when opened


@dataclass(frozen=True)
class ChangesPage:
    base: str
    head: str
    summary: str
    note: str
    lessons: tuple[ChangedLesson, ...]  # changed, added, removed, unreadable
    timing_only: tuple[tuple[NavItem | None, str, str], ...]  # (page, id, what moved)
    same: tuple[str, ...]


def context(nav: SiteNav, changes: CourseChanges) -> dict[str, Any]:
    """The template's context for changes/index.html (root: "../"): every lesson is in
    `nav`."""
    pages = nav.items()
    order = {lesson: n for n, lesson in enumerate(pages)}  # course order; removed ones last
    listed = sorted(
        (x for x in changes.lessons if x.category not in ("timing", "same")),
        key=lambda x: order.get(x.lesson_id, len(order)),
    )
    content = ChangesPage(
        changes.base,
        changes.head,
        summary(changes),
        changes.note,
        tuple(_lesson(x, pages.get(x.lesson_id)) for x in listed),
        tuple(
            (pages.get(x.lesson_id), x.lesson_id, folded(x))
            for x in sorted(changes.lessons, key=lambda x: order.get(x.lesson_id, len(order)))
            if x.category == "timing"
        ),
        tuple(_title(pages, x.lesson_id) for x in changes.lessons if x.category == "same"),
    )
    return {
        "root": "../",
        "title": "What changed",
        "current": "",
        "changes": content,
        "description": f"What the recordings changed since {changes.base}.",
    }


def _title(pages: dict[str, NavItem], lesson_id: str) -> str:
    """What the page calls a lesson: its title (its id once it is no longer in the course)."""
    return pages[lesson_id].title if lesson_id in pages else lesson_id


def _lesson(change: LessonChange, page: NavItem | None) -> ChangedLesson:
    if change.category == "changed":
        headline = f"changed: {why(change, '→')}"
    else:
        detail = change.problem if change.category == "invalid" else added_words(change)
        headline = f"{change.category}: {detail}"
    output = change.output if change.output and change.output.diff else None
    panels = change.panels if change.category == "changed" else ()
    return ChangedLesson(
        change.lesson_id,
        page,
        headline,
        output_words(output) if output else "",
        tuple((_kind(line), line) for line in output.diff) if output else (),
        tuple(_panel(p, page) for p in panels if not p.timing or p.notes),
        environment_words(change.environment, "→"),
        tuple(_mark(m, page) for m in change.pages if not m.timing),
        folded(change) if change.category == "changed" else "",
        tuple(_panel(p, page) for p in panels if p.timing and not p.notes),
    )


def _kind(line: str) -> str:
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")


def _panel(panel: PanelChange, page: NavItem | None) -> ChangedPanel:
    notes = f" ({'; '.join(panel.notes)})" if panel.notes else ""
    heading = f"Panel {panel.number}: {panel.title} [{panel.ylabel}]{notes}"
    href = f"../{page.url}index.html#panel-{panel.number}" if page else ""
    rows = tuple(
        (v.series, v.label, number(v.old), number(v.new), relative(v.old, v.new, v.relative))
        for v in panel.values
    )
    return ChangedPanel(heading, href, rows)


def _mark(mark: PageMark, page: NavItem | None) -> tuple[str, str, str]:
    anchor = f"#{mark.anchor}" if mark.anchor else ""
    href = f"../{mark.page}index.html{anchor}" if page else ""
    where = f"§ {mark.section}" if mark.section else mark.page
    return href, where, f"{mark.what}: {mark_change(mark)}"
