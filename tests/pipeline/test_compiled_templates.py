"""The builder's own templates are compiled once for each version of the code and kept in
the store (builder/pipeline/reuse.py `Reuse.templates`, builder/pipeline/compiled.py): a later build's process takes them compiled,
and makes the same bytes. What the store holds is checked by Jinja (its magic, the
source's checksum) and by the key (the code's digest), so new code, an edited template or
a damaged entry compiles again; a course's own templates are never taken from the store:
the sandbox compiles them in every process."""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.bccache import bc_magic

from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.core.store import Store
from builder.pipeline.build import build
from builder.pipeline.compiled import Compiled
from builder.render import markup
from tests.helpers import assert_like_a_clean_build, synthetic_copy, wall_clock

LESSON = "content/lessons/a01-001/lesson.md"


@pytest.fixture
def paths(course_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """A built copy of the course, built as in a process of its own (no environment yet)."""
    wall_clock(monkeypatch)
    paths = synthetic_copy(course_template, tmp_path / "course")
    markup._environment.cache_clear()
    build(paths, execute=False, jobs=1)
    return paths


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """The templates compiled from here on, (environment's class, name): each build's
    environments new, as in a process of its own."""
    names: list[tuple[str, str]] = []
    compile_ = jinja2.Environment.compile

    def spied(self: jinja2.Environment, source: str, name: str | None = None, *args: Any) -> Any:
        names.append((type(self).__name__, str(name)))
        return compile_(self, source, name, *args)

    monkeypatch.setattr(jinja2.Environment, "compile", spied)
    markup._environment.cache_clear()
    yield names
    markup._environment.cache_clear()


def _edit(paths: Paths, text: str) -> None:
    lesson = paths.content.parent / LESSON
    lesson.write_text(lesson.read_text() + f"\n{text}\n")


def test_a_later_build_compiles_none_of_the_builders_templates_and_makes_the_same_site(
    paths: Paths, compiled: list[tuple[str, str]], tmp_path: Path
) -> None:
    _edit(paths, "One more sentence.")
    assert build(paths, execute=False, jobs=1).written >= 1
    assert compiled == [], "compiled again, though the store holds them for this code"
    assert_like_a_clean_build(paths, tmp_path / "clean")


def test_no_build_leaves_the_store_in_the_environment(paths: Paths) -> None:
    _edit(paths, "Another sentence.")
    build(paths, execute=False, jobs=1)
    assert markup.environment().bytecode_cache is None, "a closed store, held by the process"


def _environment(store: Store, salt: str, folder: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder), bytecode_cache=Compiled(store, salt)
    )


def test_new_code_an_edited_template_or_a_damaged_entry_compiles_again(
    tmp_path: Path, compiled: list[tuple[str, str]]
) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "page.html").write_text("<p>{{ x }}</p>")
    store = Store(tmp_path / "cache")

    def render(salt: str) -> str:
        return _environment(store, salt, folder).get_template("page.html").render(x="one")

    assert render("code-1") == "<p>one</p>" and len(compiled) == 1
    assert render("code-1") == "<p>one</p>" and len(compiled) == 1, "taken from the store"
    assert render("code-2") == "<p>one</p>" and len(compiled) == 2, "new code: compiled again"
    (folder / "page.html").write_text("<b>{{ x }}</b>")
    assert render("code-2") == "<b>one</b>" and len(compiled) == 3, "edited: compiled again"
    for damaged in (b"", b"garbage", bc_magic + b"\x80", bc_magic + marshal.dumps(1)[:1]):
        for key in list(store.pending):
            store.pending[key] = damaged
        assert render("code-2") == "<b>one</b>", damaged
    assert len(compiled) == 7, "each damaged entry compiled again"


def test_a_courses_own_templates_are_compiled_by_the_sandbox_in_every_build(
    paths: Paths, compiled: list[tuple[str, str]]
) -> None:
    templates = paths.content / "templates"
    templates.mkdir()
    (templates / "base.html").write_text(
        '{% extends "builder/base.html" %}{% block main %}<p>course</p>{{ super() }}{% endblock %}'
    )
    build(paths, execute=False, jobs=1)
    markup._environment.cache_clear()
    compiled.clear()
    _edit(paths, "A sentence the course's base.html frames.")
    build(paths, execute=False, jobs=1)
    assert ("_Courses", "base.html") in compiled, "a course's template taken from the store"
    assert all(kind == "_Courses" for kind, _ in compiled), compiled

    (templates / "base.html").write_text('{{ cycler.__init__.__globals__.os.popen("id").read() }}')
    markup._environment.cache_clear()
    with pytest.raises(BuildError):
        build(paths, execute=False, jobs=1)


def test_the_builders_templates_have_one_environment_however_it_is_asked_for() -> None:
    """`environment()` (the macros') and `environment("")` (a page's, with no course
    templates) are one: a template is compiled, and found in the store, once."""
    assert markup.environment() is markup.environment("")
