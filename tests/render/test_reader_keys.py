"""What issue 43's rest adds to what authors write and what pages say: course.yml's
`audience`, `colab_url` and `issues_url` (hostile values refused naming course.yml and the
key) and glossary definitions whose `names` are set in code font (a lesson's reading time:
test_reading_time.py).
"""

from __future__ import annotations

import html
import shutil

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.render.markup import code_spans
from tests.helpers import load_errors, rendered

COLAB = "https://colab.research.google.com/github/o/course/blob/gh-pages/"
ISSUES = "https://github.com/o/course/issues/new"


def _append(paths: Paths, text: str, name: str = "course.yml") -> None:
    with (paths.content / name).open("a") as handle:
        handle.write(text)


def _files(paths: Paths) -> dict[str, bytes]:
    from builder.course.status import course_status

    shutil.rmtree(paths.content / "lessons" / "speed-02", ignore_errors=True)
    course = load_course(paths.content)
    return rendered(course, course_status(course, paths.recordings), paths.cache)


# -- colab_url and issues_url --------------------------------------------------------------

HOSTILE = [
    "javascript:alert(1)",
    "JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "http://colab.research.google.com/github/o/r/blob/main/",  # not https
    'https://colab.research.google.com/github/o/r/blob/main/"onmouseover="alert(1)',
    "https://colab.research.google.com/github/o/r/blob/main/'><script>x</script>",
    "https://colab.research.google.com/github/o/r/blob/main/ x",
    "https://colab.research.google.com/github/o/r/blob/main/?x=1",
    "https://colab.research.google.com/github/o/r/blob/main/#x",
    "https://evil.example/github/o/r/blob/main/",  # not Colab
    "//colab.research.google.com/github/o/r/blob/main/",
]


@pytest.mark.parametrize("url", HOSTILE)
def test_a_hostile_colab_url_is_refused_naming_course_yml(course_copy: Paths, url: str) -> None:
    _append(course_copy, f"colab_url: {json_string(url)}\n")
    errors = load_errors(course_copy)
    assert str(course_copy.content / "course.yml") in errors
    assert "course field 'colab_url'" in errors
    assert "such as https://colab.research.google.com/github/<org>/<repo>/blob/gh-pages/" in errors


@pytest.mark.parametrize(
    "url",
    [
        *(u for u in HOSTILE if not u.startswith("https://evil")),
        'https://github.com/o/r/issues/new"><script>alert(1)</script>',
        "https://github.com/o/r/issues/new?title=x",
        "https://github.com/o/r/issues/new#x",
        "https://github.com/o/r/issues/new\\x",
        "https://x.org/a'b",
        "https://x.org/a b",
        "https://",
        "ftp://x.org/issues",
    ],
)
def test_a_hostile_issues_url_is_refused_naming_course_yml(course_copy: Paths, url: str) -> None:
    _append(course_copy, f"issues_url: {json_string(url)}\n")
    errors = load_errors(course_copy)
    assert str(course_copy.content / "course.yml") in errors
    assert "course field 'issues_url'" in errors
    assert "such as https://github.com/<org>/<repo>/issues/new" in errors


def json_string(value: str) -> str:
    """`value` as a YAML string, whatever it holds (JSON is YAML)."""
    import json

    return json.dumps(value)


def test_colab_and_report_links_appear_only_when_named(recorded: Paths) -> None:
    page = _files(recorded)["l/first/index.html"].decode()
    assert "Open in Colab" not in page and "Report a difference" not in page
    _append(recorded, f"colab_url: {COLAB}\nissues_url: {ISSUES}\n")
    page = _files(recorded)["l/first/index.html"].decode()
    colab = f"{COLAB}l/first/example.ipynb"
    assert f'<a class="colab-link" href="{colab}">Open in Colab</a>' in page
    start = page.index('<a class="report-link" href="') + len('<a class="report-link" href="')
    href = html.unescape(page[start : page.index('"', start)])
    assert href.startswith(f"{ISSUES}?title=")
    from urllib.parse import parse_qs, urlsplit

    query = parse_qs(urlsplit(href).query)
    assert query["title"][0].endswith(": a difference from the recording")
    from builder.course.recording import load

    jax = load(recorded.recordings / "basics-01.json").environment.jax
    assert "l/first/" in query["body"][0] and f"jax {jax}," in query["body"][0]


def test_another_tracker_gets_its_address_as_written(recorded: Paths) -> None:
    tracker = "https://gitlab.example.org/o/course/-/issues/new"
    _append(recorded, f"issues_url: {tracker}\n")
    page = _files(recorded)["l/first/index.html"].decode()
    assert f'<a class="report-link" href="{tracker}">Report a difference</a>' in page


# -- audience ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "said"),
    [
        ("audience:\n  who: x\n  assumes: y\n  outcomes: []\n", "audience.outcomes"),
        ("audience:\n  who: x\n  assumes: y\n", "audience.outcomes"),
        ("audience:\n  who: ''\n  assumes: y\n  outcomes: [z]\n", "audience.who"),
        ("audience:\n  who: x\n  assumes: y\n  outcomes: [z]\n  for: w\n", "audience.for"),
        (
            "audience:\n  who: x\n  assumes: y\n  outcomes: [" + "z, " * 11 + "z]\n",
            "audience.outcomes",
        ),
        ("audience: everyone\n", "audience"),
    ],
)
def test_a_malformed_audience_names_course_yml_and_the_key(
    course_copy: Paths, block: str, said: str
) -> None:
    _append(course_copy, block)
    errors = load_errors(course_copy)
    assert str(course_copy.content / "course.yml") in errors
    assert f"course field '{said}" in errors


def test_the_audience_is_said_on_the_home_page_as_text(recorded: Paths) -> None:
    _append(
        recorded,
        "audience:\n  who: Readers <script>alert(1)</script>\n  assumes: Python & NumPy\n"
        "  outcomes: [Read a jaxpr, 'Count <b>equations</b>']\n",
    )
    home = _files(recorded)["index.html"].decode()
    assert "Before you start" in home
    assert "Readers &lt;script&gt;alert(1)&lt;/script&gt;" in home and "<script>alert" not in home
    assert "Python &amp; NumPy" in home
    assert "<li>Count &lt;b&gt;equations&lt;/b&gt;</li>" in home


def test_without_an_audience_the_home_page_has_no_such_block(recorded: Paths) -> None:
    assert "Before you start" not in _files(recorded)["index.html"].decode()


# -- glossary definitions in code font -------------------------------------------------------


def test_a_definition_with_an_odd_backtick_names_glossary_yml(course_copy: Paths) -> None:
    path = course_copy.content / "glossary.yml"
    text = path.read_text()
    first = text.index("definition: ") + len("definition: ")
    path.write_text(text[:first] + "Uses `jax.jit to " + text[first:])
    errors = load_errors(course_copy)
    assert str(path) in errors
    assert "odd number of backticks" in errors and "`jax.jit`" in errors


def test_code_spans_escape_inside_and_outside_the_marks() -> None:
    made = code_spans("a <b> `x<script>` & `y` ")
    assert str(made) == "a &lt;b&gt; <code>x&lt;script&gt;</code> &amp; <code>y</code> "
    assert str(code_spans("plain")) == "plain"


def test_the_glossary_and_a_card_set_marked_names_in_code(recorded: Paths) -> None:
    path = recorded.content / "glossary.yml"
    text = path.read_text()
    first = text.index("definition: ") + len("definition: ")
    path.write_text(text[:first] + "Printed by `jax.make_jaxpr`, " + text[first:])
    files = _files(recorded)
    glossary = files["glossary/index.html"].decode()
    assert "Printed by <code>jax.make_jaxpr</code>, " in glossary
    assert "`" not in glossary.split("<dl", 1)[1].split("</dl>", 1)[0]
    cards = [page.decode() for name, page in files.items() if name.startswith("l/")]
    assert any('-def">Printed by <code>jax.make_jaxpr</code>, ' in page for page in cards)
