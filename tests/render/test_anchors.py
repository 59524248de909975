"""Links that cannot dangle (issue 41): a `lesson:slug#x` or `(#x)` link names an id its
page has, else an error names lesson.md, the line and the ids that exist; `[](lesson:x)`
reads the lesson's title; `[](api:jax.jit)` is a link to course.yml's documentation
address for `jax`. Another lesson's ids are found from its body (anchors.page_ids) and
must be the ones its rendered page has."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from builder.core.errors import RenderError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.render import anchors, prose
from tests.helpers import load_errors, write_course
from tests.render.test_hostile_prose import lesson_path, only_error, recorded_stdout

JAX = "https://docs.jax.dev/en/latest/_autosummary/{name}.html"
OTHER = """\
Prose.

## First steps

{{ output }}

## First steps

### Über alles

## Cell trace
"""


def course_of(tmp_path: Path, other: str = OTHER, api: str = "") -> Course:
    """calm-01 (slug s1, which the tests write) and calm-02 (slug s2, titled "Lesson 2",
    whose body is `other`)."""
    if not (tmp_path / "content").exists():
        write_course(tmp_path, {"calm-01": "print(1)\n", "calm-02": "print(2)\n"})
    content = tmp_path / "content"
    if api:
        (content / "course.yml").write_text((content / "course.yml").read_text() + api)
    second = content / "lessons" / "calm-02" / "lesson.md"
    front = second.read_text().split("---\n")[1]
    second.write_text(f"---\n{front}---\n{other}")
    return load_course(content)


def render(course: Course, body: str) -> tuple[str, list[RenderError]]:
    lesson = replace(course.lessons[0], body=body)
    edited = replace(course, lessons=(lesson, *course.lessons[1:]))
    linked = anchors.linked_ids(edited, [], ids)
    rendered, errors = prose.render_prose(
        lesson, course, recorded_stdout("x\n"), root="../../", linked=linked[0]
    )
    return rendered.html, errors


def ids(lesson: Lesson) -> tuple[str, ...]:
    return anchors.page_ids(prose.parser(), lesson)


@pytest.mark.parametrize(
    "href",
    [
        "lesson:s2#first-steps",
        "lesson:calm-02#first-steps-1",  # by id; the second heading of the same words
        "lesson:s2#über-alles",  # markdown-it percent-encodes it; the page's id is not
        "lesson:s2#section-cell-trace",  # a heading never takes a figure's id
        "lesson:s2#run-it-yourself",
        "lesson:s2",
    ],
)
def test_a_link_to_an_anchor_another_page_has_builds(tmp_path: Path, href: str) -> None:
    html, errors = render(course_of(tmp_path), f"Prose.\n\nSee [there]({href}).\n")
    assert errors == []
    suffix = href.partition("#")[1] + href.partition("#")[2]
    assert re.search(
        'href="../../l/s2/index.html' + re.escape(suffix.replace("ü", "%C3%BC")) + '"', html
    )


def test_a_dangling_anchor_names_the_file_the_line_and_the_anchors_there(tmp_path: Path) -> None:
    course = course_of(tmp_path)
    _, errors = render(course, "Prose.\n\n## Here\n\nSee [it](lesson:s2#first-step).\n")
    message = only_error(errors, lesson_path(tmp_path), line=13)
    assert "link 'lesson:s2#first-step': lesson 's2' has no anchor 'first-step'" in message
    assert (
        "(its anchors: first-steps, first-steps-1, über-alles, section-cell-trace, "
        "run-it-yourself)" in message
    )


@pytest.mark.parametrize(
    ("markdown", "anchor"),
    [
        ("[in](#nowhere)", "nowhere"),
        ("[in](#Here)", "Here"),  # ids are lower case
        ("[in](#panel-3)", "panel-3"),  # the recording has two panels
        ("[in](#cell-main)", "cell-main"),  # the example has no cells
        ("[ref][r]\n\n[r]: #missing", "missing"),
        ("[in](#%6eowhere)", "nowhere"),
        ("- item [in](#deep)", "deep"),
        ("> quoted [in](#quoted)", "quoted"),
    ],
)
def test_a_dangling_in_page_anchor_is_an_error(tmp_path: Path, markdown: str, anchor: str) -> None:
    _, errors = render(course_of(tmp_path), f"Prose.\n\n## Here\n\n{markdown}\n")
    message = only_error(errors, lesson_path(tmp_path), line=13)
    assert f"this page has no anchor {anchor!r}" in message
    assert "(its anchors: here, panel-1, panel-2, run-it-yourself)" in message


@pytest.mark.parametrize(
    "markdown",
    [
        "[up](#here)",
        "[chart](#panel-2)",
        "[run](#run-it-yourself)",
        "[top](#)",
        "[me](lesson:s1#here)",
    ],
)
def test_an_in_page_anchor_the_page_has_builds(tmp_path: Path, markdown: str) -> None:
    assert render(course_of(tmp_path), f"Prose.\n\n## Here\n\n{markdown}\n")[1] == []


def test_an_anchored_link_spelled_so_the_build_cannot_find_it_is_refused(tmp_path: Path) -> None:
    """Escaped, `lesson:` is found in no body: the page would not be made again when the
    anchor goes, so it is refused rather than checked once."""
    _, errors = render(course_of(tmp_path), "Prose.\n\n[x](lesson\\:s2#first-steps)\n")
    assert "write it as lesson:s2#first-steps, plainly" in only_error(
        errors, lesson_path(tmp_path), line=11
    )


def test_an_empty_lesson_link_reads_the_lessons_title(tmp_path: Path) -> None:
    html, errors = render(
        course_of(tmp_path), "Prose.\n\n[](lesson:s2) and [](lesson:calm-02#first-steps)\n"
    )
    assert errors == []
    assert '<a href="../../l/s2/index.html">Lesson 2</a> and' in html
    assert '<a href="../../l/s2/index.html#first-steps">Lesson 2</a>' in html


@pytest.mark.parametrize("href", ["https://example.com", "#here", "example.py"])
def test_any_other_link_without_text_is_an_error(tmp_path: Path, href: str) -> None:
    _, errors = render(course_of(tmp_path), f"Prose.\n\n## Here\n\n[]({href})\n")
    assert f"link {href!r} has no text" in only_error(errors, lesson_path(tmp_path), line=13)


API = f'api_links:\n  jax: "{JAX}"\n  optax: "https://optax.readthedocs.io/en/latest/api.html#{{name}}"\n'


def test_an_api_link_leads_to_the_pattern_course_yml_gives(tmp_path: Path) -> None:
    course = course_of(tmp_path, api=API)
    html, errors = render(course, "Prose.\n\n[](api:jax.numpy.sum), [the jit](api:jax.jit).\n")
    assert errors == []
    docs = "https://docs.jax.dev/en/latest/_autosummary/"
    assert f'<a href="{docs}jax.numpy.sum.html"><code>jax.numpy.sum</code></a>' in html
    assert f'<a href="{docs}jax.jit.html">the jit</a>' in html


@pytest.mark.parametrize(
    ("markdown", "message", "api"),
    [
        (
            "[](api:numpy.sum)",
            "course.yml's api_links has no 'numpy' (it defines: jax, optax)",
            API,
        ),
        ("[](api:numpy.sum)", "course.yml's api_links has no 'numpy' (it defines: none)", ""),
        ("[](api:jax..jit)", "write a dotted name, such as api:jax.numpy.sum", API),
        ("[](api:jax.jit%22onclick=x)", "write a dotted name", API),
        ("[](api:)", "write a dotted name", API),
    ],
)
def test_a_bad_api_link_is_an_error(tmp_path: Path, markdown: str, message: str, api: str) -> None:
    html, errors = render(course_of(tmp_path, api=api), f"Prose.\n\n{markdown}\n")
    assert message in only_error(errors, lesson_path(tmp_path), line=11)
    assert 'href="#"' in html


HEADINGS = [
    "## Plain\n\n## Plain\n\n## Plain-1\n",
    "## What `jax.jit` *does*\n\n### A \\*starred\\* &amp; escaped one\n",
    "## [A link](https://example.com) and [[not a term\n\n## {{ value line=1 }} values\n",
    "- ## In a list\n\n> ### In a quote\n\n```\n## not a heading\n```\n",
    "Setext\n------\n\n# One\n\n#### Four\n\n## !!!\n\n## !!!\n",
    "## Cell trace\n\n## Panel 2\n\n## Run it yourself\n\n## panel-2\n",
    "## 中文 标题\n\n## Ünïcödé\n\n##    spaced   out  \n",
]


@pytest.mark.parametrize("body", HEADINGS)
def test_another_lessons_ids_are_the_ids_its_page_has(tmp_path: Path, body: str) -> None:
    """page_ids reads the body without rendering it: the same ids as the render's."""
    course = course_of(tmp_path, other=body)
    second = course.lessons[1]
    rendered, _ = prose.render_prose(second, course, recorded_stdout("x\n"), root="../../")
    made = re.findall(r'<h[23] id="([^"]+)"', rendered.html)  # id="": nothing to link to
    assert ids(second) == tuple(made)


def test_another_lessons_placed_cells_are_among_its_ids(tmp_path: Path) -> None:
    write_course(
        tmp_path,
        {
            "calm-01": "print(1)\n",
            "calm-02": "# %% setup\nx = 1\n# %% main\nprint(x)\n# %% quiet hide\ny = 2\n",
        },
    )
    body = "## Code\n\n{{ cell main code }}\n\n{{ cell setup code }}\n\n{{ cell main code }}\n"
    course = course_of(tmp_path, other=body)
    second = course.lessons[1]
    rendered, errors = prose.render_prose(second, course, None, root="../../")
    assert errors == []
    made = re.findall(r' id="([^"]+)"', rendered.html)
    assert made == ["code", "cell-main", "cell-setup"]
    assert ids(second) == tuple(made)
    _, errors = render(course, "Prose.\n\n[x](lesson:s2#cell-quiet)\n")
    assert "(its anchors: code, cell-main, cell-setup, run-it-yourself)" in str(errors[0])


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ('jax: "http://docs.jax.dev/{name}.html"', "api_links"),  # not https
        ('jax: "https://docs.jax.dev/jax.html"', "api_links"),  # no {name}
        ('jax: "https://docs.jax.dev/{name}/{name}.html"', "api_links"),  # twice
        ('jax: "https://{name}.example.org/x"', "api_links"),  # in the host
        ('jax: "https://docs.jax.dev/{name}\\" onclick=\\"x"', "api_links"),
        ('"ja x": "https://docs.jax.dev/{name}.html"', "api_links"),  # not a name's part
    ],
)
def test_an_api_links_pattern_that_is_no_https_address_names_course_yml(
    course_copy: Paths, entry: str, field: str
) -> None:
    with (course_copy.content / "course.yml").open("a") as handle:
        handle.write(f"api_links:\n  {entry}\n")
    errors = load_errors(course_copy)
    assert str(course_copy.content / "course.yml") in errors
    assert field in errors
    if "ja x" not in entry:
        assert "with {name} once where the dotted name goes" in errors


@pytest.mark.parametrize(
    ("title", "made"), [("Top", "section-top"), ("Main", "section-main"), ("Topology", "topology")]
)
def test_a_heading_never_takes_the_id_of_the_skip_link_or_back_to_top(
    title: str, made: str
) -> None:
    from builder.render.links import heading_id

    assert heading_id(title) == made  # two elements of one id: #top would lead to the heading
