"""What the lesson pages offer besides the prose: old addresses that redirect (`aliases:`),
a "Run it yourself" block that runs without this repository, and linked headings."""

from __future__ import annotations

import pytest

from builder.build import Paths
from builder.course import load_course
from builder.errors import BuildError
from tests.conftest import edit

LESSONS = ("lessons", "basics-01", "lesson.md")


def _errors(paths: Paths) -> str:
    with pytest.raises(BuildError) as caught:
        load_course(paths.content)
    return str(caught.value)


# -- aliases ---------------------------------------------------------------------------------


def test_an_alias_is_an_old_slug_of_the_lesson(course_copy: Paths) -> None:
    course = load_course(course_copy.content)
    lesson = course.lesson("basics-01")
    assert lesson is not None and lesson.meta.aliases == ("first-jaxpr",)
    assert lesson.alias_urls == ("l/first-jaxpr/",)


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        ("[no-panels]", "alias 'no-panels' is the slug of"),
        ("[speed-01]", "alias 'speed-01' is the id of"),
        ("[first]", "alias 'first' is the slug of"),  # its own slug
        ("[old, old]", "alias 'old' is listed twice"),
        ("[../etc]", "front matter field 'aliases.0': String should match pattern"),
        ("first-jaxpr", "front matter field 'aliases'"),
    ],
)
def test_an_alias_that_collides_or_is_no_slug_is_refused(
    course_copy: Paths, aliases: str, message: str
) -> None:
    path = course_copy.content.joinpath(*LESSONS)
    edit(path, "aliases: [first-jaxpr]", f"aliases: {aliases}")
    text = _errors(course_copy)
    assert message in text
    assert str(path) in text


def test_two_lessons_cannot_share_an_alias(course_copy: Paths) -> None:
    other = course_copy.content / "lessons" / "basics-02" / "lesson.md"
    edit(other, "order: 2\n", "order: 2\naliases: [first-jaxpr]\n")
    text = _errors(course_copy)
    assert "alias 'first-jaxpr' is already an alias of" in text
    assert str(other) in text


def test_an_alias_writes_a_redirect_with_relative_urls(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first-jaxpr" / "index.html").read_text("utf-8")
    target = "../first/index.html"
    assert f'<link rel="canonical" href="{target}">' in page
    assert f'<meta http-equiv="refresh" content="0; url={target}">' in page
    assert f'<a href="{target}">A first jaxpr</a>' in page
    assert f'location.replace("{target}" + location.hash)' in page
    assert 'name="robots" content="noindex"' in page
    assert "http" not in page.replace("http-equiv", "")  # nothing absolute


def test_removing_an_alias_removes_its_page(recorded: Paths) -> None:
    from builder.build import build

    edit(recorded.content.joinpath(*LESSONS), "aliases: [first-jaxpr]", "aliases: []")
    build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "l" / "first-jaxpr").exists()
    assert (recorded.out / "l" / "first" / "index.html").is_file()


# -- headings -------------------------------------------------------------------------------


def test_headings_have_a_named_link_and_plain_contents(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    assert (
        '<div class="heading"><h2 id="tracing">Tracing</h2><a class="anchor" href="#tracing" '
        'aria-label="Link to this section: Tracing"'
    ) in page
    assert '<li class="toc-2"><a href="#tracing">Tracing</a></li>' in page


def test_the_contents_read_a_heading_without_its_markdown(course_copy: Paths) -> None:
    from builder.prose import render_prose

    path = course_copy.content.joinpath(*LESSONS)
    edit(path, "## Tracing", "## What `jax.make_jaxpr` *traces*")
    course = load_course(course_copy.content)
    lesson = course.lesson("basics-01")
    assert lesson is not None
    rendered, _ = render_prose(lesson, course, None, "../../")
    assert rendered.toc[0][2] == "What jax.make_jaxpr traces"
    assert 'aria-label="Link to this section: What jax.make_jaxpr traces"' in rendered.html
