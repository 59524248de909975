"""Issue 57: the reader's notebook is the lesson: its prose as Markdown cells between its
code cells, the builder's marks made plain Markdown with the recorded values, cells in
example.py's order, placements' tags, nbformat-valid and the same bytes every time."""

from __future__ import annotations

from pathlib import Path

import nbformat

from builder.core.observe import Paths
from builder.pipeline.build import build
from tests.helpers import canned_run, copy_course, edit

LESSON = """\
---
id: basics-03
slug: in-cells
title: An example in cells
arc: basics
order: 3
summary: Each cell's code with its own recorded output.
---
## Squares

A [[jaxpr]] and [the first lesson](lesson:first#tracing), `{{ value x }}` in code.

{{ cell too-big output }}

!!! tip "Mind the *index*"
    The squares are {{ value output="squares \\[(.*)\\]" }}.

=== "First tab"
    Tab text.

{{ cell show-squares fold=code }}

{{ cell aside code }}
"""


def _built(tmp_path: Path, site_url: str = "") -> tuple[Paths, nbformat.NotebookNode]:
    paths = copy_course(tmp_path, broken=False, cells=True)
    (paths.content / "lessons" / "basics-03" / "lesson.md").write_text(LESSON)
    if site_url:
        course = paths.content / "course.yml"
        course.write_text(f"site_url: {site_url}\n{course.read_text()}")
    build(paths, execute=True, jobs=2, runner=canned_run)
    text = (paths.out / "l" / "in-cells" / "example.ipynb").read_text("utf-8")
    found = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(found)
    return paths, found


def test_the_notebook_interleaves_the_prose_with_the_cells(tmp_path: Path) -> None:
    _, found = _built(tmp_path)
    kinds = [(c.cell_type, c.id) for c in found.cells]
    assert kinds == [
        ("markdown", "lesson"),
        ("markdown", "prose-1"),
        # too-big is placed first: the cells before it in example.py come before it
        ("code", "cell-setup"),
        ("code", "cell-show-squares"),
        ("code", "cell-too-big"),
        ("markdown", "prose-2"),
        ("code", "cell-aside"),
    ]
    cells = {c.id: c for c in found.cells}
    prose = cells["prose-1"].source
    assert prose.startswith("## Squares\n\nA jaxpr and [the first lesson](../../l/first/")
    assert "`{{ value x }}` in code" in prose  # a code span is code
    assert "[[" not in prose and "lesson:" not in prose
    tip = cells["prose-2"].source
    assert "> **Mind the *index***\n>\n> The squares are 0, 1, 4, 9." in tip
    assert "**First tab**\nTab text." in tip and "!!!" not in tip and "===" not in tip
    assert cells["cell-too-big"].metadata["tags"] == ["raises-exception", "remove-input"]
    assert cells["cell-aside"].metadata["tags"] == ["skip-execution", "remove-output"]
    # placed after too-big in the prose, it runs before it: where example.py has it
    assert "tags" not in cells["cell-show-squares"].metadata
    assert cells["cell-show-squares"].outputs[0].text == "squares [0, 1, 4, 9]\n"


def test_links_to_other_lessons_are_absolute_once_the_site_has_an_address(
    tmp_path: Path,
) -> None:
    _, found = _built(tmp_path, "https://example.org/course/")
    prose = found.cells[1].source
    assert "[the first lesson](https://example.org/course/l/first/#tracing)" in prose


def test_the_notebook_is_the_same_bytes_from_another_build(tmp_path: Path) -> None:
    one, _ = _built(tmp_path / "one")
    two, _ = _built(tmp_path / "two")
    name = "l/in-cells/example.ipynb"
    assert (one.out / name).read_bytes() == (two.out / name).read_bytes()


def test_a_recorded_value_is_literal_markdown(tmp_path: Path) -> None:
    """A recorded text that reads as Markdown (an image, a link) stays text."""
    paths = copy_course(tmp_path, broken=False)
    lesson = paths.content / "lessons" / "basics-02" / "lesson.md"
    edit(lesson, "Only output here", "Said {{ value line=1 }}.\n\nOnly output here")
    build(paths, execute=True, jobs=2, runner=canned_run)
    recording = paths.recordings / "basics-02.json"
    text = (paths.out / "l" / "no-panels" / "example.ipynb").read_text("utf-8")
    found = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    assert recording.is_file() and "Said line 1." in found.cells[1].source
