"""A pull request's templates run nothing (issue 38, items 1, 2 and 13): a course's
templates render in Jinja's sandbox, narrowed to what a page needs, bounded in time, size
and output; the templates folder is read through the course's one door; every template
mistake is one line naming the template, its line, the problem and a hint.

Each attack goes in a course's base.html (the footer block of every page) and is built
through the real command line (`build_cli`: `python -m builder render`), from the recorded
fixture course; nothing is executed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.render import deadline
from tests.helpers import build_cli, cli

FOOTER = '{% extends "builder/base.html" %}\n{% block footer %}\n__ATTACK__{% endblock %}\n'
MARK = "uid="  # what `id` prints; also the names below that must not reach a page


def _with(paths: Paths, attack: str, name: str = "base.html") -> Path:
    templates = paths.content / "templates"
    templates.mkdir(exist_ok=True)
    (templates / name).write_text(FOOTER.replace("__ATTACK__", attack))
    return templates


def _built(paths: Paths) -> tuple[int, str]:
    return build_cli(paths.content.parent)


def _refused(paths: Paths, attack: str, *said: str, line: str = "line 3: ") -> str:
    """The attack fails the build with one line naming base.html and line 3."""
    _with(paths, attack)
    code, error = _built(paths)
    assert code != 0, error
    assert "Traceback" not in error and "report it" not in error, error
    assert f"templates/base.html: {line}" in error, error
    for words in said:
        assert words in error, error
    assert not (paths.out / "index.html").exists() or MARK not in _home(paths)
    return error


def _home(paths: Paths) -> str:
    return (paths.out / "index.html").read_text()


ESCAPES = [
    # the globals of every default global, and of the filters
    '{{ cycler.__init__.__globals__.os.popen("id").read() }}',
    '{{ joiner.__init__.__globals__.os.popen("id").read() }}',
    '{{ namespace.__init__.__globals__.os.popen("id").read() }}',
    '{{ range.__self__.__import__("os").popen("id").read() }}',
    "{{ dict.__class__.__base__.__subclasses__() }}",
    '{{ (cycler|attr("__init__")|attr("__globals__"))["os"].popen("id").read() }}',
    '{{ [cycler]|map(attribute="__init__")|list }}',
    '{{ lipsum.__globals__["os"].popen("id").read() }}',
    # classes, their bases and subclasses
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ site.__class__.__init__.__globals__ }}",
    "{{ ().__class__.__base__.__subclasses__() }}",
    "{{ dict.mro() }}",
    # self, the template's context, config-like objects
    "{{ self._TemplateReference__context.environment }}",
    "{{ self.__dict__ }}",
    "{{ config.items() }}",
    "{{ request.application }}",
    "{{ environment.loader }}",
    # format attacks
    '{{ "{0.__class__.__mro__}".format(site) }}',
    '{{ "{0.theme.templates}".format(site) }}',
    '{{ "%s"|format(cycler.__init__) }}',
    '{{ "%s"|format(site.theme.static()) }}',
    # what the builder hands a page: a path, a method, a module behind it
    "{{ site.theme.templates }}",
    "{{ site.theme['templates'] }}",
    "{{ site.theme.static() }}",
    "{{ site.items() }}",
    "{{ site|attr('theme')|attr('templates') }}",
    "{{ [site.theme]|map(attribute='templates')|join }}",
    "{{ site.theme.of }}",
]


@pytest.mark.parametrize("attack", ESCAPES)
def test_each_escape_route_from_a_course_template_reaches_nothing(
    recorded: Paths, attack: str
) -> None:
    error = _refused(recorded, attack)
    assert "not allowed in a course template" in error or "undefined: " in error, error


def test_the_reported_popen_route_runs_no_command(recorded: Paths, tmp_path: Path) -> None:
    """Issue 38's own attack: it put `uid=0(root)` on the page; now it touches no file."""
    touched = tmp_path / "touched"
    _refused(
        recorded,
        f'{{{{ cycler.__init__.__globals__.os.popen("touch {touched}").read() }}}}',
        "not allowed in a course template",
        "__init__",
    )
    assert not touched.exists()


RUNAWAYS = [
    "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "{% set x = [0] * 10000 %}{% for a in x %}{% for b in x %}{% for c in x %}"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{% for a in range(99999) recursive %}{{ loop([1, 2]) }}{% endfor %}",
]


HUGE = [
    '{{ "x" * 1000000000 }}',
    "{{ 10 ** 1000000 }}",
    "{% set ns = namespace(n=3) %}{% for i in range(40) %}{% set ns.n = ns.n * ns.n %}"
    "{% endfor %}{{ ns.n > 0 }}",
    "{{ [0] * 1000000000 }}",
    '{% set a = "x" * 1000000 %}{% set b = a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a %}'
    "{% set c = b ~ b ~ b ~ b ~ b ~ b ~ b ~ b ~ b ~ b %}{{ c }}",
    '{% set ns = namespace(s="xxxxxxxx") %}{% for i in range(64) %}'
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
    '{% set a = ["x" * 100000] * 100 %}{% set b = [a, a, a, a, a, a, a, a, a, a] %}'
    "{% set c = [b, b, b, b, b, b, b, b, b, b] %}{{ c }}",
    '{{ "x"|center(1000000000) }}',
    '{{ "x"|indent("y" * 10000000) }}',
    '{{ ("x" * 1000000)|replace("", "y" * 1000) }}',
    '{{ ("a" * 1000000)|list|join("b" * 1000) }}',
    '{{ "%1000000000d"|format(1) }}',
    '{{ "%*d" % (1000000000, 1) }}',
    '{{ "{:1000000000}".format(1) }}',
    "{{ range(10)|slice(100000000)|list }}",
    "{{ ([[0] * 100000] * 1000)|sum(start=[]) }}",
    '{{ "x".ljust(1000000000) }}',
]


def test_a_template_that_makes_a_gigabyte_page_stops_at_the_page_limit(recorded: Paths) -> None:
    """No value is over the limit, the page is: it is named by its template."""
    attack = '{% for i in range(100000) %}{{ "x" * 1000 }}{% endfor %}'
    _with(recorded, attack)
    code, error = _built(recorded)
    assert code != 0 and "Traceback" not in error, error
    assert "templates/lesson.html: not allowed in a course template: it makes a page over" in error


@pytest.mark.parametrize("attack", RUNAWAYS + HUGE)
def test_a_template_that_runs_for_ever_or_makes_a_gigabyte_stops_in_seconds(
    recorded: Paths, attack: str
) -> None:
    start = time.monotonic()
    _refused(recorded, attack)
    assert time.monotonic() - start < deadline.SECONDS + 15


PATHS = [
    '{% include "/etc/passwd" %}',
    '{% include "../course.yml" %}',
    '{% include "../../../../../../etc/hostname" %}',
    '{% include "builder/../../../../../../etc/passwd" %}',
    '{% import "/etc/hostname" as x %}',
    '{% from "../course.yml" import x %}',
    '{% include "static/../../course.yml" %}',
]


@pytest.mark.parametrize("attack", PATHS)
def test_include_and_import_reach_no_file_outside_the_templates(
    recorded: Paths, attack: str
) -> None:
    _refused(recorded, attack, "template not found")


def test_extends_reaches_no_file_outside_the_templates(recorded: Paths) -> None:
    templates = recorded.content / "templates"
    templates.mkdir()
    (templates / "base.html").write_text('{% extends "../course.yml" %}')
    code, error = _built(recorded)
    assert code != 0 and "templates/base.html: line 1: template not found" in error, error


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_a_linked_templates_folder_is_refused_not_walked(recorded: Paths, tmp_path: Path) -> None:
    """A link to / walked the whole disk for 96 s; a linked folder's static files were
    published."""
    for target in (Path("/"), tmp_path / "theirs"):
        (tmp_path / "theirs" / "static").mkdir(parents=True, exist_ok=True)
        (tmp_path / "theirs" / "static" / "leak.txt").write_text("secret")
        link = recorded.content / "templates"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        start = time.monotonic()
        code, error = _built(recorded)
        assert code != 0 and time.monotonic() - start < 20, error
        assert f"{link}: is a symbolic link (to {target})" in error, error
        assert not (recorded.out / "static" / "leak.txt").exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_a_linked_static_folder_in_the_templates_is_refused(
    recorded: Paths, tmp_path: Path
) -> None:
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "leak.txt").write_text("secret")
    templates = recorded.content / "templates"
    templates.mkdir()
    (templates / "static").symlink_to(tmp_path / "theirs")
    code, error = _built(recorded)
    assert code != 0 and f"{templates / 'static'}: is a link" in error, error
    assert not (recorded.out / "static" / "leak.txt").exists()


def test_a_fifo_among_the_templates_is_refused_not_waited_on(recorded: Paths) -> None:
    templates = recorded.content / "templates"
    templates.mkdir()
    os.mkfifo(templates / "base.html")
    code, error = _built(recorded)
    assert code != 0 and "base.html: is a FIFO (named pipe), not a regular file" in error, error


def test_a_template_over_the_size_limit_or_not_utf8_is_named(recorded: Paths) -> None:
    templates = _with(recorded, "x" * (2 * 2**20))
    code, error = _built(recorded)
    assert code != 0 and "base.html: is 2.0 MiB, over the 1 MiB limit" in error, error
    (templates / "base.html").write_bytes(b"{% block footer %}\xff{% endblock %}")
    code, error = _built(recorded)
    assert code != 0 and "base.html: is not UTF-8 (invalid byte at offset 18)" in error, error


MISTAKES = [
    ("{% if %}", "template syntax error: "),
    ('{% include "nowhere.html" %}', "template not found: no template 'nowhere.html'"),
    ("{{ no_such_name }}", "undefined: 'no_such_name' is undefined"),
    ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
    (
        "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
        "a macro or include calls itself without end",
    ),
    ("{{ site.theme.templates }}", "not allowed in a course template"),
]


@pytest.mark.parametrize(("mistake", "said"), MISTAKES)
def test_a_template_mistake_is_one_line_naming_the_template_and_line(
    recorded: Paths, mistake: str, said: str
) -> None:
    error = _refused(recorded, mistake, said)
    first, *rest = error.strip().splitlines()
    assert first.startswith("error: ") and len(rest) == 1 and rest[0].startswith("  -> "), error


def test_a_template_mistake_through_the_command_line_is_one_line(recorded: Paths) -> None:
    """As a user sees it: the real `python -m builder render`, in its own process (its
    workers and threads render the pages)."""
    _with(recorded, "{{ site.theme.templates }}")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run(
        cli(recorded.content.parent, "render"), capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode != 0, done.stderr
    assert "templates/base.html: line 3: not allowed in a course template" in done.stderr
    assert "Traceback" not in done.stderr and sys.executable


def test_the_builders_own_pages_are_unchanged_by_the_sandbox(recorded: Paths) -> None:
    """The sandbox allows all that the builder's templates use (loop.cycle, self.block(),
    caller(), the filters): the fixture course builds."""
    code, error = _built(recorded)
    assert code == 0, error
    _with(
        recorded,
        '{{ loop_free|default("ok") }}{% for x in [1, 2] %}{{ loop.cycle("a", "b") }}'
        "{% endfor %}{{ self.og_title() }}{{ site.theme.accent }}{{ 'a,b'.split(',')|join }}",
    )
    code, error = _built(recorded)
    assert code == 0, error
    assert "okab" in _home(recorded)


# Issue 56, item 6: printing an object printed its dataclass repr, hidden fields too (the
# theme's folder: the checkout's absolute path). Every route that makes text of a value.
PRINTS = [
    "{{ site }}",
    "{{ site.theme }}",
    "{{ site.theme|string }}",
    "{{ site.theme|pprint }}",
    "{{ site|pprint }}",
    "{{ '%s'|format(site) }}",
    "{{ '%s' % site.theme }}",
    "{{ '%(x)s' % {'x': site.theme} }}",
    "{{ '{0.theme}'.format(site) }}",
    "{{ '{0!r}'.format(site.theme) }}",
    "{{ '{x}'.format_map({'x': site.theme}) }}",
    "{{ ('{0}'|safe).format(site.theme) }}",
    "{{ 'a' ~ site.theme }}",
    "{{ [site.theme]|join }}",
    "{{ [site, site]|join(', ', attribute='theme') }}",
    "{{ [site]|map(attribute='theme')|join }}",
    "{{ [site.theme]|map('string')|list }}",
    "{{ site.theme|tojson }}",
    "{{ site.theme|e }}",
    "{{ site.theme|upper }}",
    "{{ site.theme|replace('a', 'b') }}",
    "{{ site.theme|truncate(900) }}",
    "{{ site.theme|urlencode }}",
    "{{ {'a': site.theme}|xmlattr }}",
    "{{ 'x'|replace('x', site.theme) }}",
    "{{ [site.theme] }}",
    "{{ {'a': site.theme} }}",
    "{{ dict(a=site.theme).items() }}",
    "{{ namespace(a=site.theme) }}",
    "{{ [1, [site.theme]] }}",
    "{% set x %}{{ site.theme }}{% endset %}{{ x }}",
    "{{ site.theme|attr(site.theme) }}",
    "{{ {}[site.theme] }}",
    "{{ [1].index(site.theme) }}",
    "{{ [1]|map(site.theme)|list }}",
    "{{ [1]|select(site.theme)|list }}",
    "{% include [site.theme] %}",
    "{% import site.theme as x %}",
    "{{ cycler(site.theme).next() }}",
    "{{ cycler }}",
    "{% for x in [1] %}{{ loop }}{% endfor %}",
]


@pytest.mark.parametrize("attack", PRINTS)
def test_a_template_prints_no_object_only_what_it_may_read(recorded: Paths, attack: str) -> None:
    """Each route is the one-line template error; neither it nor a page holds the path."""
    _with(recorded, attack)
    code, error = _built(recorded)
    assert code != 0 and "Traceback" not in error, error
    assert "templates/base.html: line 3: not allowed in a course template: it prints a " in error
    assert str(recorded.content) not in error.split("line 3:", 1)[1], error  # but its file
    for page in recorded.out.rglob("*.html") if recorded.out.exists() else ():
        assert str(recorded.content) not in page.read_text()


def test_printing_text_numbers_and_fields_is_unchanged(recorded: Paths) -> None:
    _with(
        recorded,
        "[{{ [site, site]|join('|', attribute='title') }}][{{ [site]|map(attribute='url')|join }}]"
        "[{{ [1, 'a', none, 2.5]|pprint }}][{{ {'a': [1]}|tojson }}][{{ '%s-%d'|format('x', 1) }}]"
        "[{{ '{0.accent}!'.format(site.theme) }}][{{ [1, 2][:1]|length }}]"
        "[{{ {'a': 1}.items()|list }}]",
    )
    code, error = _built(recorded)
    assert code == 0, error
    home = _home(recorded)
    assert (
        '[Fixture course|Fixture course][][[1, &#39;a&#39;, None, 2.5]][{"a": [1]}][x-1][!][1][[(&#39;a&#39;, 1)]]'
        in home
    )


def test_a_template_slow_on_every_page_stops_at_the_builds_budget(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 56, item 12: 0.8 s a page, under the page's 5 s, made a 41-page render take
    35 s; the build's pages now take at most BUILD_SECONDS in all (here 1 s), per process."""
    monkeypatch.setattr(deadline, "BUILD_SECONDS", 1.0)
    _with(recorded, "{% for i in range(99999) %}{% for j in range(3) %}{% endfor %}{% endfor %}")
    started = time.monotonic()
    code, error = _built(recorded)
    assert code != 0 and "Traceback" not in error, error
    assert "line 3: too slow: this build's pages took over 1 s of rendering in all" in error
    assert "a template slow on every page" in error
    assert time.monotonic() - started < 30
