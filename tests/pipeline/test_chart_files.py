"""A chart's files are written once, in the site's charts/ folder, named by what they draw:
every page that shows the same drawing points at them, a changed drawing is a new file, and
the old one goes once no page shows it. Synthetic courses (bench/generate.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bench.generate import lesson_id
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.recording import load
from builder.pipeline.build import build
from tests.helpers import (
    assert_like_a_clean_build,
    charts_shown,
    edit_panels,
    scaled,
    synthetic_copy,
)

FIRST, OTHER, SAME = (lesson_id(n) for n in range(3))  # 3 lessons, 3 different drawings


@pytest.fixture
def paths(course_template: Path, tmp_path: Path) -> Paths:
    """The course, with SAME's panel drawing what FIRST's does under its own title."""
    paths = synthetic_copy(course_template, tmp_path)
    first = load(paths.recordings / f"{FIRST}.json").panels[0]
    edit_panels(_recording(paths, SAME), lambda panel: replace(first, title=panel.title))
    return paths


def _recording(paths: Paths, lesson: str) -> Path:
    return paths.recordings / f"{lesson}.json"


def _page(paths: Paths, lesson: str) -> str:
    found = load_course(paths.content).lesson(lesson)
    assert found is not None
    return f"{found.url}index.html"


def _svgs(site: Path) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*.svg") if "static" not in p.parts}


def test_two_lessons_with_one_drawing_share_its_files(paths: Paths, tmp_path: Path) -> None:
    build(paths, execute=False, jobs=1)
    first, same, other = (charts_shown(paths.out, _page(paths, x)) for x in (FIRST, SAME, OTHER))
    assert len(first) == 4 and len(set(first)) == 4  # light, dark; wide, narrow
    assert same == first  # the same files, not copies
    assert set(other).isdisjoint(first)
    assert all(name.startswith("charts/") for name in first + other)
    assert _svgs(paths.out) == {*first, *other}  # written once each, nowhere else
    for lesson, title in ((FIRST, "lesson 0"), (SAME, "lesson 2")):  # the captions are the pages'
        assert (
            f"<strong>Saved arrays, {title}</strong>"
            in (paths.out / _page(paths, lesson)).read_text()
        )
    assert_like_a_clean_build(paths, tmp_path)


def test_a_changed_chart_is_a_new_file_and_the_old_goes_when_no_page_shows_it(
    paths: Paths, tmp_path: Path
) -> None:
    build(paths, execute=False, jobs=1)
    old = charts_shown(paths.out, _page(paths, FIRST))
    edit_panels(_recording(paths, SAME), scaled)
    build(paths, execute=False, jobs=1)
    new = charts_shown(paths.out, _page(paths, SAME))
    assert set(new).isdisjoint(old)
    assert charts_shown(paths.out, _page(paths, FIRST)) == old
    assert {*old, *new} <= _svgs(paths.out)  # FIRST still shows the old drawing: kept
    assert_like_a_clean_build(paths, tmp_path / "1")

    edit_panels(
        _recording(paths, FIRST), scaled
    )  # now FIRST draws what SAME does: the old one is unused
    build(paths, execute=False, jobs=1)
    assert charts_shown(paths.out, _page(paths, FIRST)) == new
    assert not {*old} & _svgs(paths.out)
    assert len(_svgs(paths.out)) == 8  # two drawings: FIRST and SAME's, and OTHER's
    assert_like_a_clean_build(paths, tmp_path / "2")
