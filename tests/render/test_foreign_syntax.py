"""MyST and Sphinx syntax pasted into a lesson (builder/render/foreign.py): an error naming
lesson.md and the line, saying what to write instead; never literal text on the page; and
nothing said about the same syntax inside code."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers import FOREIGN_SYNTAX
from tests.render.test_hostile_prose import lesson_path, only_error, render


@pytest.mark.parametrize(("markdown", "what", "instead"), FOREIGN_SYNTAX)
def test_foreign_syntax_is_an_error_saying_what_to_write(
    tmp_path: Path, markdown: str, what: str, instead: str
) -> None:
    html, errors = render(tmp_path, markdown + "\n\nAfter.\n")
    text = only_error(errors, lesson_path(tmp_path), line=9)
    assert what in text and instead in text, text
    assert "which this builder does not read" in text
    assert '<mark class="broken">' in html
    assert "<p>After.</p>" in html  # a directive's block ends where it closes
    shown = html.replace(html[html.index('<mark class="broken">') : html.index("</mark>")], "")
    for literal in ("`", ")=", ":::", "Body."):
        assert literal not in shown, (literal, html)


@pytest.mark.parametrize(
    "markdown",
    [
        "Code: `{func}`, ``{func}`jax.jit` `` and `(label)=` and `:::{note}`.",
        "```markdown\n(label)=\n:::{note}\n{func}`jax.jit`\n```",
        "~~~~\n```{note}\nx\n```\n~~~~",
        "    (label)=\n    :::{note}\n    {func}`x`",
        r"An escaped \{func}`jax.jit` is the text it says.",
        "Braces {a} and `code` apart, and {not a role}`x`.",
        "A pair (x, y)= in prose, and (label) = spaced.",
    ],
    ids=["code-spans", "fenced", "tilde-fenced", "indented", "escaped", "near-misses", "prose"],
)
def test_the_same_syntax_in_code_is_left_as_typed(tmp_path: Path, markdown: str) -> None:
    html, errors = render(tmp_path, markdown + "\n")
    assert errors == [], [str(e) for e in errors]
    assert "broken" not in html


def test_each_is_named_by_its_own_line(tmp_path: Path) -> None:
    body = (
        "Prose on line 9\nand on line 10 {func}`a`\n\n"  # 9, 10
        "- a list item {ref}`b`\n\n"  # 12
        "!!! note\n    In a callout\n    {term}`c` on line 16.\n\n"  # 16
        "| head |\n|---|\n| {mod}`d` |\n\n"  # 20
        "[a link {class}`e`](https://example.org)\n\n"  # 22
        "(target)=\n## Heading\n\n"  # 24
        "Text\n:::{note}\n:::\n"  # 28
    )
    _, errors = render(tmp_path, body)
    where = sorted(int(str(e).split(": line ")[1].split(":")[0]) for e in errors)
    assert where == [10, 12, 16, 20, 22, 24, 28], [str(e) for e in errors]


def test_what_foreign_syntax_holds_is_escaped(tmp_path: Path) -> None:
    body = "{func}`<script>alert(1)</script>`\n\n(<img/src=x>)=\n\n```{<b>}\n```\n"
    html, errors = render(tmp_path, body)
    assert len(errors) == 3
    assert "<script" not in html and "<img" not in html and "<b>" not in html


def test_a_paragraph_full_of_roles_and_braces_renders_at_once(tmp_path: Path) -> None:
    started = time.perf_counter()
    html, errors = render(tmp_path, "{" * 60_000 + "a}`x`\n\n" + "{a}`x` " * 9_000 + "\n")
    assert time.perf_counter() - started < 10
    assert len(errors) == 9_001  # the first: one role, after 59,999 braces of text
    assert html.count('<mark class="broken">') == 9_001
