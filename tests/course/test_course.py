"""Loading content/: every problem names the file and the field, all reported at once."""

from __future__ import annotations

import shutil

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from tests.helpers import edit, load_errors


def test_fixture_course_loads_in_reading_order(course_copy: Paths) -> None:
    course = load_course(course_copy.content)
    assert [x.id for x in course.lessons] == ["basics-01", "basics-02", "speed-01", "speed-02"]
    assert course.term("Primitive") is not None
    assert course.lesson("no-panels") is course.lesson("basics-02")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "order: 1\n",
            "order: first\n",
            "front matter field 'order': Input should be a valid integer",
        ),
        ("slug: first\n", "", "front matter field 'slug': Field required"),
        (
            "slug: first\n",
            "slug: ../../etc\n",
            "front matter field 'slug': String should match pattern",
        ),
        ("slug: first\n", "slug: Fir st\n", "front matter field 'slug'"),
        ("arc: basics\n", "arc: nowhere\n", "arc 'nowhere' is not one of the arcs"),
        ("id: basics-01\n", "id: basics-09\n", "does not match its folder name"),
        ("title: A first jaxpr\n", "title: [unclosed\n", "YAML error at line"),
        (
            "summary: Trace",
            "colour: red\nsummary: Trace",
            "'colour': Extra inputs are not permitted",
        ),
        ("slug: first\n", "slug: no-panels\n", "slug 'no-panels' is already the slug or id"),
        ("---\nid", "id", "has no front matter"),
    ],
)
def test_bad_front_matter_names_file_and_field(
    course_copy: Paths, old: str, new: str, message: str
) -> None:
    path = course_copy.content / "lessons" / "basics-01" / "lesson.md"
    edit(path, old, new)
    text = load_errors(course_copy)
    assert message in text
    assert str(path) in text


def test_every_problem_is_reported_together(course_copy: Paths) -> None:
    lessons = course_copy.content / "lessons"
    edit(lessons / "basics-01" / "lesson.md", "order: 1\n", "order: x\n")
    edit(lessons / "basics-02" / "lesson.md", "arc: basics\n", "arc: nope\n")
    text = load_errors(course_copy)
    assert "2 problem(s)" in text and "basics-01" in text and "basics-02" in text


def test_glossary_term_taught_in_an_unknown_lesson(course_copy: Paths) -> None:
    edit(course_copy.content / "glossary.yml", "taught_in: basics-02", "taught_in: basics-99")
    assert "taught_in 'basics-99', which is not a lesson id" in load_errors(course_copy)


def test_missing_example_and_data_file(course_copy: Paths) -> None:
    (course_copy.content / "lessons" / "basics-02" / "example.py").unlink()
    (course_copy.content / "lessons" / "speed-01" / "numbers.txt").unlink()
    text = load_errors(course_copy)
    assert "basics-02/example.py: is missing" in text
    assert "declares data file 'numbers.txt', which is missing" in text


def test_non_utf8_lesson_is_named(course_copy: Paths) -> None:
    path = course_copy.content / "lessons" / "basics-02" / "lesson.md"
    path.write_bytes(path.read_bytes() + b"\xff\xfe caf\xe9\n")
    assert f"{path}: is not UTF-8" in load_errors(course_copy)


def test_data_file_names_cannot_escape_the_lesson(course_copy: Paths) -> None:
    edit(course_copy.content / "lessons" / "speed-01" / "lesson.md", "[numbers.txt]", "[../x.txt]")
    assert "must be a plain file name" in load_errors(course_copy)


def test_missing_course_file(course_copy: Paths) -> None:
    (course_copy.content / "course.yml").unlink()
    shutil.rmtree(course_copy.content / "lessons" / "speed-02")
    assert "course.yml: is missing" in load_errors(course_copy)
