"""Math in prose (issue 41): `$...$` and `$$...$$` become MathML at build time, a price stays
prose, TeX the page cannot show is an error naming the lesson file and line, and no TeX can
make a page do more than show a formula, or make a build slow."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path

import pytest

from bench.generate import generate
from builder.core.errors import RenderError
from builder.core.observe import Paths, read_versions
from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.pipeline.build import build
from builder.render import mathml, prose
from tests.helpers import ROOT, assert_like_a_clean_build, cli, synthetic_copy, write_course

FRONT = "---\nid: calm-01\nslug: s1\ntitle: Lesson 1\narc: hostile\norder: 1\nsummary: One.\n---\n"


def lesson_file(tmp_path: Path) -> Path:
    return tmp_path / "content" / "lessons" / "calm-01" / "lesson.md"


def load(tmp_path: Path, body: str) -> tuple[Course, Lesson]:
    """A course whose one lesson's file holds `body` (so that lines are the file's)."""
    if not lesson_file(tmp_path).exists():
        write_course(tmp_path, {"calm-01": "print(1)\n"})
    lesson_file(tmp_path).write_text(FRONT + body)
    course = load_course(tmp_path / "content")
    return course, course.lessons[0]


def render(tmp_path: Path, body: str) -> tuple[str, list[RenderError]]:
    course, lesson = load(tmp_path, body)
    rendered, errors = prose.render_prose(lesson, course, None, root="../../")
    return rendered.html, errors


def line_of(tmp_path: Path, needle: str) -> int:
    """The 1-based line of the lesson file where `needle` is."""
    text = lesson_file(tmp_path).read_text()
    return text[: text.index(needle)].count("\n") + 1


def one_error(errors: list[RenderError], tmp_path: Path, needle: str) -> str:
    """The one error, which names the lesson file and the line holding `needle`."""
    assert len(errors) == 1, [str(e) for e in errors]
    text = str(errors[0])
    where = f"{lesson_file(tmp_path)}: line {line_of(tmp_path, needle)}: math "
    assert text.startswith(where), text
    return text


# -- what a reader sees -------------------------------------------------------------------


def test_inline_and_display_math_become_mathml_with_their_tex_as_alttext(
    tmp_path: Path,
) -> None:
    html, errors = render(tmp_path, "The gradient $\\nabla f$ points up.\n\n$$\nx^2\n$$\n")
    assert errors == []
    assert '<p>The gradient <math alttext="\\nabla f"><mrow><mo>∇</mo><mi>f</mi>' in html
    display = re.search(r'<div class="math-scroll"([^>]*)><math display="block"([^>]*)>', html)
    assert display, html
    # a display formula scrolls in its own box, reachable by keyboard and named
    assert 'tabindex="0"' in display[1] and 'role="region"' in display[1]
    assert 'aria-label="Formula 1"' in display[1]
    assert display[2] == ' alttext="x^2"'
    assert "<msup><mi>x</mi><mn>2</mn></msup>" in html


def test_each_display_formula_has_its_own_name_and_one_in_a_paragraph_stays_inside_it(
    tmp_path: Path,
) -> None:
    """A notebook's habit: `$$...$$` inside a paragraph. It is drawn as a display formula in
    a box that a paragraph may hold (a span shown as a block)."""
    html, errors = render(tmp_path, "$$a$$\n\nSo\n$$b = 1$$\nholds.\n")
    assert errors == []
    assert html.count("<math display=") == 2
    assert 'aria-label="Formula 1"' in html and 'aria-label="Formula 2"' in html
    assert re.search(r'<p>So\n<span class="math-scroll"[^>]*><math display="block"', html)
    assert "</math></span>\nholds.</p>" in html


@pytest.mark.parametrize(
    "prose_text",
    [
        "It costs $5 and $6.",
        "From $5/$10 a month.",
        "Between $5-$6, or $ 5 $.",
        "A single $ sign, and an escaped \\$x\\$ pair.",
        "Code `$x$` is code.",
    ],
)
def test_a_dollar_in_prose_is_a_dollar(tmp_path: Path, prose_text: str) -> None:
    html, errors = render(tmp_path, prose_text + "\n")
    assert errors == [] and "<math" not in html
    assert "$" in html


def test_backslashes_in_math_reach_the_converter_unescaped(tmp_path: Path) -> None:
    """Markdown reads `\\\\` as an escaped backslash; inside math it is TeX's row break."""
    body = "An array $\\begin{array}{cc} a & b \\\\ c & d \\end{array}$ inline.\n"
    html, errors = render(tmp_path, body)
    assert errors == []
    assert html.count("<mtr>") == 2 and html.count("<mtd ") == 4
    assert 'alttext="\\begin{array}{cc} a &amp; b \\\\ c &amp; d \\end{array}"' in html


def test_an_array_with_rows_on_lines_of_their_own(tmp_path: Path) -> None:
    body = "$$\n\\begin{array}{lr}\n  x & 1 \\\\\n  y & 2 \\\\\n  z & 3\n\\end{array}\n$$\n"
    html, errors = render(tmp_path, body)
    assert errors == []
    rows = re.findall(r"<mtr>(.*?)</mtr>", html)
    assert len(rows) == 3
    assert rows[1] == (
        '<mtd columnalign="left"><mi>y</mi></mtd><mtd columnalign="right"><mn>2</mn></mtd>'
    )


def test_aligned_and_arg_max_read_as_what_the_converter_knows(tmp_path: Path) -> None:
    body = "$$\n\\begin{aligned} f &= \\arg\\max_x g \\\\ &= 1 \\end{aligned}\n$$\n"
    html, errors = render(tmp_path, body)
    assert errors == []
    assert html.count("<mtr>") == 2 and "<mo>arg</mo><msub><mo>max</mo>" in html
    assert "\\begin{aligned}" in html  # alttext: the TeX as the author wrote it


def test_less_than_and_markup_in_tex_are_text(tmp_path: Path) -> None:
    body = (
        "$a < b$ and $\\text{<script>alert(1)</script>}$ and $\\verb|</math><img src=x>|$ "
        "and $\\text{&lt;b&gt;}$.\n"
    )
    html, errors = render(tmp_path, body)
    assert errors == []
    assert "<mo>&lt;</mo>" in html and 'alttext="a &lt; b"' in html
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "<mtext>&lt;script&gt;alert(1)&lt;/script&gt;</mtext>" in html
    assert _tags(html) <= {"p", *mathml.ELEMENTS}


# -- what cannot be shown: an error naming the file and the line ------------------------


@pytest.mark.parametrize(
    ("tex", "needle", "message"),
    [
        ("\\foo x", "\\foo", "\\foo is not a command the converter knows"),
        ("\\label{eq}", "\\label", "\\label is not a command the converter knows"),
        ("\\text{a \\bar}", "\\bar", "\\bar is not a command the converter knows"),
        ("\\begin{foo} x \\end{foo}", "{foo}", "\\begin{foo} is not an environment"),
        ("\\begin{array}{xy} a \\end{array}", "\\begin{array}", "needs its columns next"),
        ("\\frac{a}", "\\frac", "misses a part"),
        ("\\frac{a}{", "\\frac", "a { or \\begin is never closed"),
        ("x}", "x}", "a closing } has no opening one"),
        ("x^", "x^", "a ^ or _ has nothing after it"),
        ("\\left( x", "\\left", "a \\left has no \\right"),
        ("a \\\\ b", "\\\\", "\\\\ breaks a line only between the rows"),
        ("\\color{red} x", "\\color", "\\color: no colours"),
    ],
)
def test_tex_the_page_cannot_show_is_an_error_at_its_line(
    tmp_path: Path, tex: str, needle: str, message: str
) -> None:
    body = f"Intro.\n\nA paragraph\nover lines\nwith ${tex}$ in it.\n"
    html, errors = render(tmp_path, body)
    assert message in one_error(errors, tmp_path, needle)
    assert '<mark class="broken">' in html and "<math" not in html


def test_an_error_in_a_display_block_names_the_line_it_is_on(tmp_path: Path) -> None:
    body = "Intro.\n\n$$\n\\begin{array}{cc}\n a & b \\\\\n c & \\unknown\n\\end{array}\n$$\n"
    _, errors = render(tmp_path, body)
    assert "\\unknown is not a command" in one_error(errors, tmp_path, "\\unknown")


def test_bad_tex_fails_the_build_naming_the_lesson_file_and_line(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    lesson_file(tmp_path).write_text(FRONT + "Prose.\n\nThe loss $\\lossfn(x)$.\n")
    done = subprocess.run(
        cli(tmp_path, "render"),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode != 0
    where = f"lessons/calm-01/lesson.md: line {line_of(tmp_path, '$')}: math $\\lossfn(x)$"
    assert where in done.stderr, done.stderr
    assert "\\lossfn is not a command the converter knows" in done.stderr


# -- hostile TeX: bounded, and nothing but a formula comes out -----------------------------


HOSTILE = {
    "huge": "x_{i}^{2} + " * 1000,
    "braces": "{" * 3000 + "x" + "}" * 3000,
    "roots": "\\sqrt" * 1500 + "x",
    "lefts": "\\left(" * 600 + "x" + "\\right)" * 600,
    "environments": "\\begin{matrix}" * 300 + "x" + "\\end{matrix}" * 300,
    "macro bomb": "".join(f"\\def\\m{i}{{\\m{i + 1}\\m{i + 1}}}" for i in range(40)) + "\\m0",
    "newcommand": "\\newcommand{\\x}{\\x\\x}\\x",
    "href": "\\href{javascript:alert(1)}{click}",
    "url": "\\url{javascript:alert(1)}",
    "style": "\\style{position:fixed;inset:0}{x}",
    "class": "\\class{anchor}{x}",
    "control": "a\x00b\x1bc",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_tex_is_an_error_at_once(tmp_path: Path, name: str) -> None:
    started = time.perf_counter()
    html, errors = render(tmp_path, f"Text\n$${HOSTILE[name]}$$\n")
    assert time.perf_counter() - started < 5
    assert len(errors) == 1 and "line 10: math $$" in str(errors[0]), errors
    assert "<math" not in html
    assert _attributes(html) <= {"class"}  # the <mark> that says what failed: no href


def test_no_formula_carries_a_link_a_style_or_a_script(tmp_path: Path) -> None:
    """Text that looks like a URL stays text: no element in math takes a URL or CSS."""
    body = (
        "$\\text{javascript:alert(1)}$ $\\mathrm{javascript}:x$ "
        "$\\operatorname{<a href=x>}$ $\\tag{<b onclick=x>}$ $\\sum_{i=1}^n \\boxed{x_i}$\n"
    )
    html, errors = render(tmp_path, body)
    assert errors == []
    inside = re.findall(r"<math.*?</math>", html, re.S)
    assert len(inside) == 5
    assert _tags(html) <= {"p", *mathml.ELEMENTS}
    assert _attributes("".join(inside)) <= {"alttext", *mathml.ATTRIBUTES}


DOLLARS = {
    "dollars": "$" * 60000,
    "escaped": "$a" + "\\$" * 30000,
    "unclosed": "$a " * 20000,
    "prices": "$5 and " * 8000,
    "doubles": "$$a$ " * 12000,
    "backslashes": "$a" + "\\" * 60000 + "$",
}


@pytest.mark.parametrize("name", DOLLARS)
def test_a_paragraph_of_dollars_renders_in_linear_time(tmp_path: Path, name: str) -> None:
    started = time.perf_counter()
    render(tmp_path, DOLLARS[name] + "\n")
    assert time.perf_counter() - started < 5


# -- cost and reuse -------------------------------------------------------------------------


def test_a_page_without_math_imports_no_converter(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from tests.render.test_math import render
        render(Path({str(tmp_path)!r}), "No math here, for $5.\\n")
        print("latex2mathml" in sys.modules)
        render(Path({str(tmp_path)!r}), "Math: $x$.\\n")
        print("latex2mathml" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_the_converters_version_is_part_of_every_key() -> None:
    """A new latex2mathml may draw a formula differently: the build's code digest names it."""
    assert read_versions()["latex2mathml"] == metadata.version("latex2mathml")


def test_a_formula_edit_renders_its_page_again(tmp_path: Path) -> None:
    root = tmp_path / "course"
    generate(3, root)
    paths: Paths = synthetic_copy(root, tmp_path / "work")
    page = paths.out / "l" / "sa01-002" / "index.html"
    lesson = paths.content / "lessons" / "a01-002" / "lesson.md"
    lesson.write_text(lesson.read_text() + "\nThe loss $x^2$.\n")
    build(paths, execute=False, jobs=1)
    assert 'alttext="x^2"' in page.read_text()
    lesson.write_text(lesson.read_text().replace("$x^2$", "$x^3$"))
    build(paths, execute=False, jobs=1)
    assert 'alttext="x^3"' in page.read_text() and "<mn>3</mn>" in page.read_text()
    assert_like_a_clean_build(paths, tmp_path / "clean")


# -- helpers --------------------------------------------------------------------------------


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


def _tags(html: str) -> set[str]:
    collected = _Collect()
    collected.feed(html)
    return collected.tags


def _attributes(html: str) -> set[str]:
    collected = _Collect()
    collected.feed(html)
    return collected.attributes
