"""A `lines=` reference whose lines moved under it since the last build is an error naming
the lesson file, its line and what to write instead (builder/render/shifted.py), in `site`
and in the preview: an inserted line never silently shows other code or output."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.pipeline.build import build
from tests.helpers import copy_course

LESSON = "basics-01"


def _lesson(paths: object, name: str) -> Path:
    return paths.content / "lessons" / LESSON / name  # type: ignore[attr-defined]


def test_an_inserted_line_above_a_slice_is_an_error_naming_the_new_lines(tmp_path: Path) -> None:
    paths = copy_course(tmp_path, broken=False)
    md = _lesson(paths, "lesson.md")
    md.write_text(md.read_text().replace("{{ example }}", "{{ example lines=7-8 }}"))
    build(paths, execute=True, jobs=1)
    example = _lesson(paths, "example.py")
    example.write_text("# a new first line\n" + example.read_text())
    with pytest.raises(BuildError) as caught:
        build(paths, execute=False, jobs=1)
    said = str(caught.value)
    assert "lesson.md: line" in said
    assert "{{ example lines=7-8 }} now shows other code than it did" in said
    assert "write lines=8-9" in said
    md.write_text(md.read_text().replace("lines=7-8", "lines=8-9"))
    build(paths, execute=False, jobs=1)  # the author's fix: it builds


def test_lines_edited_in_place_are_not_a_move(tmp_path: Path) -> None:
    paths = copy_course(tmp_path, broken=False)
    md = _lesson(paths, "lesson.md")
    md.write_text(md.read_text().replace("{{ example }}", "{{ example lines=7-8 }}"))
    build(paths, execute=True, jobs=1)
    example = _lesson(paths, "example.py")
    example.write_text(example.read_text().replace("* 2.0 + 1.0", "* 3.0 + 1.0"))
    build(paths, execute=False, jobs=1)
