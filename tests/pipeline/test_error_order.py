"""A page with several errors lists them in the order of its lines, whichever check found
each: foreign syntax and links are found while the page is parsed, math and recorded
marks while it is rendered (within one line, they come in the order of the checks). Synthetic course (bench/generate.py): nothing executes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.pipeline.build import build
from tests.helpers import synthetic_copy

LESSONS = 2
MIXED = """
Math $\\frobnicate{x}$ comes first.

(a-target)=

See [nowhere](#no-such-section), then {func}`jax.jit`.

A value {{ value panel=9 }} and $$\\unknowncmd$$.

[Elsewhere](lesson:sa01-002#no-such-heading) and {ref}`a-label`.
"""
FOUND = [  # (line in MIXED, counted from its opening newline; what the error says)
    (2, "\\frobnicate is not a command"),
    (4, "(a-target)= is a MyST target"),
    (6, "this page has no anchor 'no-such-section'"),
    (6, "{func}`jax.jit` is a Sphinx role"),
    (8, "{{ value panel=9 }}"),
    (8, "\\unknowncmd is not a command"),
    (10, "has no anchor 'no-such-heading'"),
    (10, "{ref}`a-label` is a Sphinx role"),
]


def test_a_pages_errors_come_in_the_order_of_its_lines(
    course_template: Path, tmp_path: Path
) -> None:
    paths = synthetic_copy(course_template, tmp_path)
    lesson = paths.content / "lessons" / "a01-001" / "lesson.md"
    before = lesson.read_text()
    lesson.write_text(before + MIXED)
    with pytest.raises(BuildError) as raised:
        build(paths, execute=False, jobs=1)
    said = [line for line in str(raised.value).splitlines() if line.startswith(f"{lesson}: ")]
    last = len(before.splitlines())  # MIXED's line N is the file's line last + N
    found = [(int(re.match(r".*?: line (\d+): ", s)[1]) - last, s) for s in said]  # type: ignore[index]
    assert [line for line, _ in found] == [line for line, _ in FOUND], said
    for line, what in FOUND:  # within a line, in the order of the checks
        assert any(what in message for at, message in found if at == line), (line, what)
