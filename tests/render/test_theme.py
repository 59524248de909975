"""A course chooses, the builder provides: the course's templates and static files override
the builder's by name (content/templates/), and course.yml's colours set the accent. In
place, from the recorded fixture course; nothing is executed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.course.colours import contrast
from builder.pipeline.build import build
from tests.helpers import edit, load_errors

BASE = """\
{% extends "builder/base.html" %}
{% block brand %}<img src="{{ root }}static/logo.svg" alt="" width="24" height="24"> {{ site.title }}{% endblock %}
{% block footer %}Made by the fixture's authors.{% endblock %}
"""
LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"><rect width="1" height="1"/></svg>'
)


def _theme(paths: Paths) -> Path:
    templates = paths.content / "templates"
    (templates / "static").mkdir(parents=True)
    (templates / "base.html").write_text(BASE)
    (templates / "static" / "logo.svg").write_text(LOGO)
    return templates


def _page(paths: Paths, name: str = "l/first/index.html") -> str:
    return (paths.out / name).read_text()


def test_a_courses_templates_and_static_files_override_the_builders_by_name(
    recorded: Paths,
) -> None:
    templates = _theme(recorded)
    build(recorded, execute=False, jobs=1)
    for name in ("index.html", "l/first/index.html", "glossary/index.html"):
        page = _page(recorded, name)
        assert "Made by the fixture's authors." in page, name
        assert "Built from recorded runs." not in page, name
        assert 'static/logo.svg" alt=""' in page, name
    assert (recorded.out / "static" / "logo.svg").read_text() == LOGO
    builder_css = (recorded.out / "static" / "style.css").read_bytes()
    (templates / "static" / "style.css").write_text(":root { --accent: #000000; }\n")
    edit(templates / "base.html", "fixture's authors", "course's authors")
    build(recorded, execute=False, jobs=1)  # a course file's edit re-renders what uses it
    assert "Made by the course's authors." in _page(recorded)
    css = (recorded.out / "static" / "style.css").read_bytes()
    assert css == b":root { --accent: #000000; }\n" != builder_css


def test_course_colours_set_the_accent_in_light_and_dark_mode(recorded: Paths) -> None:
    course = recorded.content / "course.yml"
    course.write_text(course.read_text() + 'colours: {accent: "#1f6f50", accent_dark: "#7fd8b8"}\n')
    build(recorded, execute=False, jobs=1)
    page = _page(recorded)
    assert ":root { --accent: #1f6f50; }" in page
    assert ":root[data-theme=dark] { --accent: #7fd8b8; }" in page
    assert ":root:not([data-theme]) { --accent: #7fd8b8; }" in page


def test_an_unreadable_accent_is_refused_naming_the_field(recorded: Paths) -> None:
    course = recorded.content / "course.yml"
    course.write_text(course.read_text() + 'colours: {accent: "#ffff00"}\n')
    errors = load_errors(recorded)
    assert "course.yml" in errors and "colours.accent" in errors
    assert "contrast of 1.1:1; links need 4.5:1: choose a darker colour" in errors
    assert contrast("#000000", "#ffffff") == pytest.approx(21)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_a_link_among_the_courses_templates_is_refused(recorded: Paths, tmp_path: Path) -> None:
    templates = _theme(recorded)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the site")
    (templates / "static" / "notes.txt").symlink_to(secret)
    with pytest.raises(BuildError, match="is a link; templates and static files must be regular"):
        build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "static" / "notes.txt").exists()
