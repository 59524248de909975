"""Cells on a page (issue 40): a small course whose examples are in cells, recorded once a
module with real runs (no JAX needed: the page is what is tested), then its site read as a
reader gets it and its prose rendered again with the marks an author might write.

`{{ cell NAME }}` places a cell's code numbered with the file's lines and what it alone
recorded under it; `{{ cell NAME code }}` the code only; `{{ output cell=NAME ... }}` its
stdout with the usual filters. A cell not placed is a build error naming example.py's line;
a `hide` cell cannot be placed; lines= slices are refused in a lesson with cells."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.course.recording import Recording, load
from builder.course.status import recording_path
from builder.render.prose import render_prose
from tests.helpers import CountingRunner, make_paths

COURSE_YML = """\
title: Cells course
summary: Lessons in cells.
arcs:
  - id: calm
    title: Calm
    summary: Cells.
"""

CALM_EXAMPLE = """\
# %% setup hide
import sys
print("setup output, never on the page")
# %% greet
print("<b>bold</b> & café 😀")
print("second line")
"<script>alert('value')</script>"
# %% boom raises=ValueError
raise ValueError("<script>alert('raised')</script>")
# %% aside show
import antigravity
# %% numbers
for i in range(5):
    print(f"row {i}")
"""

CALM_BODY = """\
## First

{{ cell greet }}

Some prose between the cells.

{{ cell boom }}

{{ cell aside }}

## Numbers

{{ cell numbers code }}

{{ output cell=numbers match="row [13]" }}
"""

LAB_EXAMPLE = """\
# %% given
data = list(range(10))
print(len(data), "numbers")
# %% answer
print(sum(data))
"""

LAB_BODY = """\
Here are the numbers:

{{ cell given }}

Add them up.

{{ reveal }}

{{ cell answer }}
"""


def _lesson(content: Path, lesson_id: str, slug: str, order: int, body: str, code: str) -> None:
    folder = content / "lessons" / lesson_id
    folder.mkdir(parents=True)
    folder.joinpath("lesson.md").write_text(
        f"---\nid: {lesson_id}\nslug: {slug}\ntitle: Lesson {slug}\narc: calm\norder: {order}\n"
        f"summary: Cells on a page.\n---\n{body}",
        "utf-8",
    )
    folder.joinpath("example.py").write_text(code, "utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course recorded with real runs and built: the folder holding it."""
    from builder.pipeline.build import build

    root = tmp_path_factory.mktemp("cells-site")
    paths = make_paths(root)
    paths.content.mkdir()
    paths.content.joinpath("course.yml").write_text(COURSE_YML)
    _lesson(paths.content, "calm-01", "calm", 1, CALM_BODY, CALM_EXAMPLE)
    _lesson(paths.content, "lab-a1", "lab", 2, LAB_BODY, LAB_EXAMPLE)
    build(paths, execute=True, jobs=2)
    return root


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Paths:
    """A private copy of the built course that a test may change."""
    shutil.copytree(built, tmp_path / "course")
    return make_paths(tmp_path / "course")


@pytest.fixture(scope="module")
def course(built: Path) -> Course:
    return load_course(make_paths(built).content)


@pytest.fixture(scope="module")
def recording(built: Path) -> Recording:
    return load(recording_path(make_paths(built).recordings, "calm-01"))


def page(built: Path, slug: str) -> str:
    return (make_paths(built).out / "l" / slug / "index.html").read_text("utf-8")


def article(html: str) -> str:
    """The lesson's own part of the page: from its first cell to the Run it yourself."""
    return html[html.index("<figure") : html.index('<section class="run-it"')]


def figures(html: str) -> list[str]:
    return re.findall(r'<figure class="cell".*?</figure>', html, flags=re.S)


def rendered(course: Course, recording: Recording | None, body: str) -> tuple[str, list[str]]:
    lesson = course.lesson("calm-01")
    assert lesson is not None
    made, errors = render_prose(replace(lesson, body=body), course, recording, root="../../")
    return made.html, [str(error) for error in errors]


def calm(course: Course) -> Lesson:
    lesson = course.lesson("calm-01")
    assert lesson is not None
    return lesson


PLACED = "{{ cell greet }}\n\n{{ cell boom }}\n\n{{ cell aside }}\n\n{{ cell numbers }}\n"


# -- the built page --------------------------------------------------------------------------


def test_a_cell_shows_its_code_numbered_as_the_file_and_its_own_output_under_it(
    built: Path,
) -> None:
    greet = figures(page(built, "calm"))[0]
    assert 'id="cell-greet"' in greet
    numbers = re.search(r'<pre class="lineno"[^>]*>(.*?)</pre>', greet, flags=re.S)
    assert numbers and numbers[1].split() == ["5", "6", "7"]
    stdout = re.search(r'class="output cell-stdout"><code>(.*?)</code>', greet, flags=re.S)
    assert stdout and stdout[1] == "&lt;b&gt;bold&lt;/b&gt; &amp; café 😀\nsecond line\n"
    value = re.search(r'class="output cell-value"><code>(.*?)</code>', greet, flags=re.S)
    assert value and value[1] == "&#34;&lt;script&gt;alert(&#39;value&#39;)&lt;/script&gt;&#34;"


def test_a_declared_exception_is_shown_as_an_error_escaped(built: Path) -> None:
    boom = figures(page(built, "calm"))[1]
    assert 'class="output cell-raised"' in boom
    assert (
        "<strong>ValueError</strong>: &lt;script&gt;alert(&#39;raised&#39;)&lt;/script&gt;"
    ) in boom
    assert "cell-value" not in boom and "cell-stdout" not in boom


def test_no_recorded_text_reaches_the_page_unescaped(built: Path) -> None:
    html = page(built, "calm")
    assert "<script>alert" not in html and "<b>bold" not in html


def test_a_show_cell_says_it_was_not_run(built: Path) -> None:
    aside = figures(page(built, "calm"))[2]
    assert "antigravity" in aside
    assert "Shown, not run." in aside and "output" not in aside


def test_a_hide_cell_and_its_output_are_not_on_the_page(built: Path) -> None:
    lesson_part = article(page(built, "calm"))
    assert "setup output" not in lesson_part
    assert 'import</span><span class="w"> </span><span class="nn">sys' not in lesson_part
    assert 'data-cell="setup"' not in lesson_part


def test_output_cell_match_quotes_that_cells_lines(built: Path) -> None:
    html = article(page(built, "calm"))
    quoted = re.findall(r'<figure class="output".*?<code>(.*?)</code>', html, flags=re.S)
    assert quoted == ["row 1\nrow 3\n"]


def test_the_first_cell_figure_alone_has_the_caption(built: Path) -> None:
    shown = figures(page(built, "calm"))
    assert len(shown) == 4
    assert [f.count("<figcaption") for f in shown] == [1, 0, 0, 0]
    caption = re.search(r"<figcaption.*?</figcaption>", shown[0], flags=re.S)
    assert caption is not None
    assert 'href="example.py" download="example.py"' in caption[0]
    assert "Outputs: Recorded CPU computation" in caption[0]


def test_a_page_of_cells_has_one_caption(built: Path) -> None:
    assert article(page(built, "calm")).count("<figcaption") == 1


def test_a_labs_exercise_has_no_download_link_before_its_reveal(built: Path) -> None:
    html = page(built, "lab")
    exercise = html[html.index("<figure") : html.index('<details class="reveal"')]
    assert "given" in exercise and "10 numbers" in exercise
    assert "download" not in exercise
    assert exercise.count("<figcaption") == 1  # the page's caption, without the link
    answer = html[html.index('<details class="reveal"') : html.index("</details>")]
    assert "45\n" in answer and "<figcaption" not in answer


def test_every_id_on_a_page_of_cells_is_unique(built: Path) -> None:
    ids = Counter(re.findall(r' id="([^"]+)"', page(built, "calm")))
    assert [name for name, n in ids.items() if n > 1] == []


def test_a_heading_cannot_take_a_cells_id(course: Course, recording: Recording) -> None:
    html, errors = rendered(course, recording, "## Cell greet\n\n" + PLACED)
    assert errors == []
    ids = Counter(re.findall(r' id="([^"]+)"', html))
    assert ids["cell-greet"] == 1


# -- marks an author might write --------------------------------------------------------------


def test_all_cells_placed_render_without_error(course: Course, recording: Recording) -> None:
    html, errors = rendered(course, recording, PLACED)
    assert errors == []
    assert len(figures(html)) == 4


def test_a_missing_cell_names_the_placeable_ones(course: Course, recording: Recording) -> None:
    _, errors = rendered(course, recording, PLACED + "\n{{ cell grete }}\n")
    assert len(errors) == 1
    assert str(calm(course).lesson_path) in errors[0]
    assert (
        "cell 'grete': example.py has no such cell (placeable: greet, boom, aside, numbers)"
    ) in errors[0]


@pytest.mark.parametrize(
    "name", ["../x", "<script>", "Greet", "greet\u200b", "\u0261reet", "cell-greet", "setup/.."]
)
def test_a_hostile_name_in_a_cell_mark_is_an_error_that_escapes_it(
    course: Course, recording: Recording, name: str
) -> None:
    html, errors = rendered(course, recording, PLACED + f'\n{{{{ cell "{name}" }}}}\n')
    assert len(errors) == 1 and f"cell {name!r}: example.py has no such cell" in errors[0]
    assert "<script>" not in html


def test_a_hide_cell_cannot_be_placed(course: Course, recording: Recording) -> None:
    _, errors = rendered(course, recording, PLACED + "\n{{ cell setup }}\n")
    assert len(errors) == 1
    assert (
        "cell 'setup' is `hide`: it runs but is not shown; drop `hide` to place it" in (errors[0])
    )


def test_a_hide_cells_output_can_be_quoted(course: Course, recording: Recording) -> None:
    """`hide` hides the code (long measuring code), not what it printed: the prose may
    quote it, as it quotes any output."""
    html, errors = rendered(course, recording, PLACED + "\n{{ output cell=setup }}\n")
    assert errors == []
    assert "setup output, never on the page" in html
    assert "import sys" not in html


def test_an_unplaced_cell_is_an_error_naming_example_py_and_its_line(
    course: Course, recording: Recording
) -> None:
    _, errors = rendered(course, recording, "{{ cell greet }}\n\n{{ cell boom }}\n")
    lesson = calm(course)
    assert errors == [
        f"{lesson.example_path}: line 10: cell 'aside' is not placed in lesson.md: write "
        "{{ cell aside }} where the prose discusses it, or mark it `hide`",
        f"{lesson.example_path}: line 12: cell 'numbers' is not placed in lesson.md: write "
        "{{ cell numbers }} where the prose discusses it, or mark it `hide`",
    ]


def test_the_whole_example_places_every_cell(course: Course, recording: Recording) -> None:
    html, errors = rendered(course, recording, "{{ example }}\n\n{{ output }}\n")
    assert errors == []
    assert "setup output, never on the page" in html  # the whole stdout, asked for


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("{{ example lines=4-7 }}", "example.py has cells: place one with {{ cell NAME }}"),
        ("{{ output lines=1-2 }}", "output lines=1-2: example.py has cells"),
        ("{{ cell }}", "write {{ cell NAME }}, {{ cell NAME code }} for its code alone"),
        (
            "{{ cell greet numbers }}",
            "write {{ cell NAME }}, {{ cell NAME code }} for its code alone",
        ),
        (
            "{{ cell greet code extra }}",
            "write {{ cell NAME }}, {{ cell NAME code }} for its code alone",
        ),
        ("{{ cell greet lines=1 }}", "write {{ cell NAME code lines=A-B }}"),
        ("{{ output cell=nosuch }}", "output cell='nosuch': no cell of that name ran"),
        ("{{ output cell=aside }}", "output cell='aside': no cell of that name ran"),
        ('{{ output cell=numbers match="^zzz" }}', "matches no line"),
        ("{{ output cell=numbers lines=9 }}", "output lines=9: it has 5 lines"),
        ("text {{ cell greet }} text", "must stand alone in its paragraph"),
    ],
)
def test_a_wrong_mark_names_lesson_md_and_what_to_write(
    course: Course, recording: Recording, body: str, said: str
) -> None:
    _, errors = rendered(course, recording, PLACED + "\n" + body + "\n")
    assert len(errors) == 1, errors
    assert str(calm(course).lesson_path) in errors[0]
    assert said in errors[0]


def test_output_cell_lines_are_numbered_within_the_cell(
    course: Course, recording: Recording
) -> None:
    html, errors = rendered(course, recording, PLACED + "\n{{ output cell=numbers lines=2-3 }}\n")
    assert errors == []
    quoted = re.findall(r'<figure class="output".*?<code>(.*?)</code>', html, flags=re.S)
    assert quoted == ["row 1\nrow 2\n"]


def test_a_cell_placed_twice_has_one_id_and_one_caption(
    course: Course, recording: Recording
) -> None:
    html, errors = rendered(course, recording, PLACED + "\n{{ cell greet code }}\n")
    assert errors == []
    assert html.count('id="cell-greet"') == 1
    assert html.count("<figcaption") == 1


def test_without_a_recording_the_cells_say_not_recorded_yet(course: Course) -> None:
    html, errors = rendered(course, None, PLACED)
    assert errors == []
    assert html.count("Output: not recorded yet.") == 3  # aside is shown, never run
    assert "Outputs: not recorded yet" in html


def test_a_recording_without_a_cell_asks_for_a_re_record(
    course: Course, recording: Recording
) -> None:
    partial = replace(recording, cells=[c for c in recording.cells or () if c.name != "greet"])
    _, errors = rendered(course, partial, PLACED)
    assert len(errors) == 1
    assert "cell 'greet' has no recorded output" in errors[0] and "re-record" in errors[0]


def test_control_codes_and_markup_in_a_recorded_cell_are_shown_harmlessly(
    course: Course, recording: Recording
) -> None:
    """What a recording holds is data: a value with terminal codes and NUL, an exception type
    and message with markup (a recording edited by hand, or a repr that returns them)."""
    from builder.course.recording import CellRun, Raised

    hostile = []
    for run in recording.cells or ():
        if run.name == "greet":
            run = replace(run, value="\x1b[31mred\x1b[0m\x00 <img src=x onerror=alert(1)>")
        if run.name == "boom":
            run = replace(run, raised=Raised("<svg onload=alert(1)>", "\x1b[2J<b>m</b>"))
        hostile.append(run)
    assert all(isinstance(run, CellRun) for run in hostile)
    html, errors = rendered(course, replace(recording, cells=hostile), PLACED)
    assert errors == []
    assert "\x1b" not in html and "\x00" not in html
    assert "<img" not in html and "<svg" not in html and "<b>m" not in html
    assert "&lt;svg onload=alert(1)&gt;" in html


# -- what a prose edit costs -------------------------------------------------------------------


def test_a_prose_edit_of_a_cells_lesson_does_not_re_execute(copy: Paths) -> None:
    from builder.pipeline.build import build, check

    lesson_md = copy.content / "lessons" / "calm-01" / "lesson.md"
    lesson_md.write_text(
        lesson_md.read_text().replace("Some prose between", "Some rewritten prose between")
    )
    assert all(status.fresh for status in check(copy).statuses)
    runner = CountingRunner()
    build(copy, execute=True, jobs=1, runner=runner)
    assert runner.calls == []
    assert "Some rewritten prose between" in (copy.out / "l" / "calm" / "index.html").read_text()


def test_an_edit_of_a_cells_code_makes_its_recording_stale(copy: Paths) -> None:
    from builder.pipeline.build import check

    example = copy.content / "lessons" / "calm-01" / "example.py"
    example.write_text(example.read_text().replace('print("second line")', 'print("2nd")'))
    states = {s.lesson_id: s.fresh for s in check(copy).statuses}
    assert states == {"calm-01": False, "lab-a1": True}


def test_part_of_a_cells_code_is_numbered_with_the_files_lines(
    course: Course, recording: Recording
) -> None:
    """`{{ cell NAME code lines=A-B }}`: lines A to B of the cell (counted within it), the
    gutter numbering them as the file does; a range past the cell's end is an error."""
    html, errors = rendered(course, recording, PLACED + "\n{{ cell greet code lines=2-3 }}\n")
    assert not errors
    part = html.split('data-cell="greet"')[-1].split("</figure>")[0]
    assert '<pre class="lineno" aria-hidden="true" data-pagefind-ignore>6\n7</pre>' in part
    assert "second line" in part and "bold" not in part and "row" not in part
    _, errors = rendered(course, recording, PLACED + "\n{{ cell greet code lines=2-9 }}\n")
    assert len(errors) == 1 and "lines=2-9: it has 3 lines" in errors[0]


# -- issue 57: what MyST-NB's tags show, comments, dangling links ------------------------------


def test_output_alone_shows_no_code_and_fold_folds_the_part_named(
    course: Course, recording: Recording
) -> None:
    body = PLACED.replace("{{ cell greet }}", "{{ cell greet output }}").replace(
        "{{ cell numbers }}", "{{ cell numbers fold=code }}"
    )
    html, errors = rendered(course, recording, body)
    assert errors == []
    greet, _, _, numbers = figures(html)
    assert "cell-stdout" in greet and "lineno" not in greet  # its output, no code
    folded = re.search(
        r'<details class="cell-fold"><summary>Show the code</summary>.*?</details>', numbers, re.S
    )
    assert folded and "lineno" in folded[0] and "row 4" not in folded[0]  # the code folded
    assert "row 4" in numbers.split("</details>")[-1]  # its output shown
    html, errors = rendered(course, recording, PLACED.replace("greet }}", "greet fold=output }}"))
    assert errors == [] and "Show the output" in figures(html)[0]


@pytest.mark.parametrize(
    "mark",
    [
        "{{ cell greet output lines=1-2 }}",
        "{{ cell greet output fold=code }}",
        "{{ cell greet fold=everything }}",
        "{{ cell greet code output }}",
    ],
)
def test_a_placement_that_contradicts_itself_is_an_error(
    course: Course, recording: Recording, mark: str
) -> None:
    _, errors = rendered(course, recording, PLACED.replace("{{ cell greet }}", mark))
    assert errors and all("lesson.md" in e for e in errors), errors


def test_an_html_comment_is_not_shown_and_other_html_stays_escaped(
    course: Course, recording: Recording
) -> None:
    body = "<!-- freshness: reviewed -->\n\nText <!-- inline --> here <b>x</b>.\n\n" + PLACED
    html, errors = rendered(course, recording, body)
    assert errors == []
    assert "freshness" not in html and "inline" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


@pytest.mark.parametrize(
    ("link", "said"),
    [
        ("[Tracing](tracing-tutorial)", "neither a lesson nor a file of this lesson"),
        ("[Other](other.md)", "neither a lesson nor a file"),
        ("[Other](../nobody/)", "no lesson has the slug 'nobody'"),
        ("[Other](../../docs/guide.md)", "a source page of another site"),
    ],
)
def test_a_relative_link_to_nothing_of_the_course_is_an_error(
    course: Course, recording: Recording, link: str, said: str
) -> None:
    _, errors = rendered(course, recording, f"See {link}.\n\n" + PLACED)
    assert len(errors) == 1 and said in errors[0] and "lesson.md" in errors[0], errors
    assert "line " in errors[0]


@pytest.mark.parametrize("link", ["[code](example.py)", "[nb](example.ipynb)", "[me](../calm/)"])
def test_a_relative_link_to_the_lessons_files_or_a_lesson_is_kept(
    course: Course, recording: Recording, link: str
) -> None:
    _, errors = rendered(course, recording, f"See {link}.\n\n" + PLACED)
    assert errors == []
