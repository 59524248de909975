"""A page is made from the ids of the lessons its anchored links lead to: renaming a heading
makes the next incremental build refuse the links to it, and a prose edit that renames no
heading rewrites no other page. Synthetic courses (bench/generate.py): nothing executes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.pipeline.build import build
from builder.pipeline.index import Changes
from builder.preview.session import Session
from tests.helpers import assert_like_a_clean_build, synthetic_copy
from tests.pipeline.test_incremental import append, files, lesson_md

LESSONS = 4
TARGET, LINKING = "a01-002", "a01-003"  # slugs sa01-002, sa01-003
LINK = "\nSee [what it measured](lesson:sa01-002#what-it-measured).\n"


@pytest.fixture
def paths(course_template: Path, tmp_path: Path) -> Paths:
    made = synthetic_copy(course_template, tmp_path)
    append(lesson_md(made, LINKING), LINK)
    return made


def render(paths: Paths) -> None:
    build(paths, execute=False, jobs=2)


def rename_heading(paths: Paths, old: str, new: str) -> None:
    path = lesson_md(paths, TARGET)
    path.write_text(path.read_text().replace(f"## {old}\n", f"## {new}\n"))


def test_renaming_a_heading_makes_a_link_to_it_an_error_on_the_next_build(
    paths: Paths, tmp_path: Path
) -> None:
    render(paths)
    page = (paths.out / "l" / "sa01-003" / "index.html").read_text()
    assert 'href="../../l/sa01-002/index.html#what-it-measured"' in page
    time.sleep(0.01)
    rename_heading(paths, "What it measured", "What it recorded")
    with pytest.raises(BuildError) as raised:
        render(paths)
    message = str(raised.value)
    assert f"{lesson_md(paths, LINKING)}: line " in message
    assert "lesson 'sa01-002' has no anchor 'what-it-measured'" in message
    assert "(its anchors: the-program, what-it-recorded, takeaways, panel-1, " in message
    time.sleep(0.01)
    rename_heading(paths, "What it recorded", "What it measured")  # back: the link holds again
    render(paths)
    assert_like_a_clean_build(paths, tmp_path)


def test_a_prose_edit_that_renames_no_heading_rewrites_no_linking_page(paths: Paths) -> None:
    render(paths)
    before = files(paths.out)
    time.sleep(0.01)
    append(lesson_md(paths, TARGET), "\nA new sentence, under the last heading.\n")
    render(paths)
    changed = {n for n, data in files(paths.out).items() if before.get(n) != data}
    assert "l/sa01-002/index.html" in changed
    assert not {n for n in changed if n.startswith("l/sa01-003/")}


def test_in_the_preview_renaming_a_heading_refreshes_the_pages_that_link_to_it(
    paths: Paths,
) -> None:
    """The preview keys again only the lessons whose inputs changed and those whose
    anchored links lead to one of them (builder.pipeline.reuse `_stale`): the linking page
    is checked against the renamed heading, and the next edit that restores it builds."""
    render(paths)
    session = Session(paths, execute=False)
    try:
        session.start()
        rename_heading(paths, "What it measured", "What it recorded")
        with pytest.raises(BuildError) as raised:
            session.refresh(Changes.events(paths, [str(lesson_md(paths, TARGET))]))
        assert "lesson 'sa01-002' has no anchor 'what-it-measured'" in str(raised.value)
        rename_heading(paths, "What it recorded", "What it measured")
        changed = session.refresh(Changes.events(paths, [str(lesson_md(paths, TARGET))]))
        assert "l/sa01-003/index.html" not in changed  # as it was before the rename
        append(lesson_md(paths, TARGET), "\n## A heading the link does not name\n")
        changed = session.refresh(Changes.events(paths, [str(lesson_md(paths, TARGET))]))
        assert "l/sa01-002/index.html" in changed
        assert "l/sa01-003/index.html" in changed  # its anchors are the linking page's input
    finally:
        session.close()
