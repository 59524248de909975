"""The rehearsal's report (builder/review/rehearse.py): text for a terminal, Markdown for a
job summary or docs/, JSON for tools, in the words `diff` uses."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

from ..core.escape import markdown_code as _code
from ..core.escape import markdown_fence
from ..core.escape import markdown_text as _cell
from .rehearse import Reference, Rehearsal
from .report import UNRESOLVED, _short

_WORDS = MappingProxyType(
    {
        "same": "same",
        "timing": "timing only",
        "changed": "changed",
        "failed": "failed",
        "added": "no committed recording",
        "removed": "no lesson",
        "invalid": "cannot be compared",
    }
)


def render(rehearsal: Rehearsal, form: str) -> str:
    from .report import render as diff_render

    if form == "json":
        return json.dumps(rehearsal.to_dict(), indent=2, ensure_ascii=False) + "\n"
    details = diff_render(rehearsal.changes, form)
    if form == "markdown":
        return _markdown(rehearsal) + "\n" + details.replace("### Recordings:", "### Details:", 1)
    return _text(rehearsal) + "\n" + details


def counts(rehearsal: Rehearsal) -> str:
    """'19 lessons: 12 same, 4 timing only, 2 changed, 1 failed.'"""
    found = [category for _, category in rehearsal.lessons]
    parts = [f"{n} {_WORDS[c]}" for c in _WORDS if (n := found.count(c))]
    return f"{len(found)} lessons: {', '.join(parts)}."


def _versions_words(rehearsal: Rehearsal, arrow: str = "->") -> str:
    moved = [f"{name} {old} {arrow} {new}" for name, old, new in rehearsal.versions]
    return "; ".join(moved) or "the same versions as the committed recordings"


def _text(rehearsal: Rehearsal) -> str:
    lines = [
        f"Rehearsal of {rehearsal.lock} (sha256 {rehearsal.digest[:12]})",
        f"Versions: {_versions_words(rehearsal)}",
        counts(rehearsal),
        "",
    ]
    width = max((len(i) for i, _ in rehearsal.lessons), default=6)
    lines += [f"  {i:<{width}}  {_WORDS[c]}" for i, c in rehearsal.lessons]
    for failure in rehearsal.failures:
        lines += ["", f"{failure.lesson_id}: failed: {failure.outcome}: {failure.detail}"]
        lines += [f"    | {line}" for line in failure.tail]
    lines += _text_section("Prose references that show another value:", rehearsal.references)
    lines += _text_section(
        "References that no longer resolve (the build would fail):", rehearsal.unresolved
    )
    if rehearsal.checks_gone:
        lines += ["", "`check passed:` lines that are gone:"]
        lines += [f"  {i}: {line}" for i, line in rehearsal.checks_gone]
    if rehearsal.pages:
        lines += ["", f"Pages that would change: {', '.join(rehearsal.pages)}"]
    lines += ["", f"Recordings: {rehearsal.recordings}", f"Site: {rehearsal.site}"]
    if rehearsal.site_problem:
        lines.append(f"  (the site could not be rendered: {rehearsal.site_problem})")
    return "\n".join(lines) + "\n"


def _text_section(title: str, references: tuple[Reference, ...]) -> list[str]:
    if not references:
        return []
    lines = ["", title]
    for ref in references:
        section = f" § {ref.section}" if ref.section else ""
        lines.append(f"  {ref.page}{section}: {ref.what}: {_change(ref)}")
    return lines


def _change(ref: Reference) -> str:
    return f"{_short(ref.old) or UNRESOLVED} -> {_short(ref.new) or UNRESOLVED}"


def _markdown(rehearsal: Rehearsal) -> str:
    blocks = [
        f"### Rehearsal of {_code(Path(rehearsal.lock).name)} "
        f"(sha256 {_code(rehearsal.digest[:12])})",
        f"**Versions**: {_cell(_versions_words(rehearsal, '→'))}",
        counts(rehearsal),
        "| lesson | result |\n|---|---|\n"
        + "\n".join(f"| {_code(i)} | {_WORDS[c]} |" for i, c in rehearsal.lessons),
    ]
    for failure in rehearsal.failures:
        blocks.append(
            f"#### {_code(failure.lesson_id)} — failed\n\n"
            f"{_cell(failure.outcome)}: {_cell(failure.detail)}\n\n" + _fenced(failure.tail)
        )
    blocks += _md_section("Prose references that show another value", rehearsal.references)
    blocks += _md_section(
        "References that no longer resolve (the build would fail)", rehearsal.unresolved
    )
    if rehearsal.checks_gone:
        items = "\n".join(f"- {_code(i)}: {_code(line)}" for i, line in rehearsal.checks_gone)
        blocks.append(f"#### `check passed:` lines that are gone\n\n{items}")
    if rehearsal.pages:
        items = "\n".join(f"- {_code(page)}" for page in rehearsal.pages)
        blocks.append(f"#### Pages that would change\n\n{items}")
    if rehearsal.site_problem:
        blocks.append(f"_(the site could not be rendered: {_cell(rehearsal.site_problem)})_")
    return "\n\n".join(blocks) + "\n"


def _md_section(title: str, references: tuple[Reference, ...]) -> list[str]:
    if not references:
        return []
    items = [
        f"- {_code(ref.page)}"
        + (f" § {_cell(ref.section)}" if ref.section else "")
        + f": {_cell(ref.what)}: "
        + f"{_code(_short(ref.old)) if ref.old else UNRESOLVED} → "
        + f"{_code(_short(ref.new)) if ref.new else UNRESOLVED}"
        for ref in references
    ]
    return [f"#### {title}\n\n" + "\n".join(items)]


def _fenced(lines: tuple[str, ...]) -> str:
    return markdown_fence("", list(lines)) if lines else ""
