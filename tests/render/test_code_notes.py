"""Code notes (issue 43, builder/render/code_notes.py): a cell's line ending `# <N>` shows a
numbered badge linking to note N, the ordered list right after `{{ cell NAME }}`; each note
links back to its line. Every mistake names example.py's or lesson.md's line."""

from __future__ import annotations

import html as html_module
import json
import re
from collections import Counter
from dataclasses import replace

import pytest

from builder.cells import parse
from builder.course.model import Course, Lesson
from builder.render import notebook
from builder.render.prose import render_prose

EXAMPLE = """\
# %% setup hide
import math
# %% trace
x = 1  # <1>
s = "# <3>"
y = x + 1  # <2>
print(y, s)
# %% plain
print("no notes here")
"""

NOTES = """\
Intro.

{{ cell trace }}

1. Sets `x` <b>bold</b>.
2. Adds one.

{{ cell plain }}
"""


def lesson_of(course: Course, source: str, body: str) -> Lesson:
    lesson = course.lessons[0]
    return replace(lesson, source=source.encode(), cells=parse(source), body=body)


def rendered(course: Course, source: str, body: str) -> tuple[str, list[str], Lesson]:
    lesson = lesson_of(course, source, body)
    made, errors = render_prose(lesson, course, None, root="../../")
    return made.html, [str(error) for error in errors], lesson


def code_lines(html: str, cell: str) -> list[str]:
    """The cell's code as HTML, one entry a line of the file."""
    figure = re.search(rf'<figure class="cell"[^>]*data-cell="{cell}".*?</figure>', html, re.S)
    assert figure
    code = re.search(r'class="highlight"[^>]*><code>(.*?)</code>', figure[0], re.S)
    assert code
    return code[1].split("\n")


def text(html: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def at(lesson: Lesson, body_line: int) -> str:
    """lesson.md's line of the body's line `body_line` (0-based), as errors name it."""
    return f"{lesson.lesson_path}: line {lesson.body_line + body_line}:"


# -- what a reader sees ------------------------------------------------------------------------


def test_a_marked_line_ends_in_a_badge_linking_to_its_note(course: Course) -> None:
    html, errors, _ = rendered(course, EXAMPLE, NOTES)
    assert errors == []
    lines = code_lines(html, "trace")
    assert text(lines[0]) == "x = 11" and "# &lt;1&gt;" not in lines[0]
    assert re.search(
        r'<a class="code-note" id="cell-trace.mark-1" href="#cell-trace.note-1" '
        r'aria-label="Note 1"[^>]*>1</a>$',
        lines[0],
    )
    assert 'href="#cell-trace.note-2"' in lines[2] and text(lines[2]) == "y = x + 12"
    assert "code-note" not in lines[1] + lines[3]


def test_a_marker_in_a_string_is_text(course: Course) -> None:
    html, errors, _ = rendered(course, EXAMPLE, NOTES)
    assert errors == []
    assert text(code_lines(html, "trace")[1]) == 's = "# <3>"'


def test_the_list_after_the_cell_is_its_notes_each_leading_back_to_its_line(
    course: Course,
) -> None:
    html, _, _ = rendered(course, EXAMPLE, NOTES)
    notes = re.search(
        r'<ol class="code-notes" aria-label="Notes on cell trace">(.*?)</ol>', html, re.S
    )
    assert notes
    items = re.findall(r"<li [^>]*>.*?</li>", notes[1], re.S)
    assert len(items) == 2
    assert items[0].startswith('<li class="code-note-item" id="cell-trace.note-1" value="1">')
    assert 'href="#cell-trace.mark-1" aria-label="Note 1, line 4: back to the code"' in items[0]
    assert "<code>x</code> &lt;b&gt;bold&lt;/b&gt;" in items[0]  # Markdown, raw HTML escaped
    assert 'href="#cell-trace.mark-2"' in items[1] and "line 6" in items[1]


def test_the_line_numbers_are_the_files_and_every_id_is_unique(course: Course) -> None:
    html, _, _ = rendered(course, EXAMPLE, NOTES + "\n{{ cell trace code }}\n")
    numbers = re.search(r'<pre class="lineno"[^>]*>(.*?)</pre>', html, re.S)
    assert numbers and numbers[1].split() == ["4", "5", "6", "7"]
    ids = Counter(re.findall(r' id="([^"]+)"', html))
    assert [name for name, n in ids.items() if n > 1] == []
    assert html.count('href="#cell-trace.note-1"') == 2  # both placements link to the note


def test_a_list_after_a_cell_without_markers_stays_a_list(course: Course) -> None:
    """lab-j1 asks its questions in an ordered list right after a cell."""
    body = NOTES.replace("{{ cell plain }}\n", "{{ cell plain }}\n\n1. Predict.\n2. Run.\n")
    html, errors, _ = rendered(course, EXAMPLE, body)
    assert errors == []
    assert "<ol>\n<li>Predict.</li>\n<li>Run.</li>\n</ol>" in html


def test_a_loose_list_and_a_list_numbered_from_elsewhere_are_notes(course: Course) -> None:
    body = NOTES.replace("1. Sets `x` <b>bold</b>.\n2.", "2) Adds\n\n   two paragraphs.\n\n1)")
    html, errors, _ = rendered(course, EXAMPLE, body)
    assert errors == []
    assert re.search(r'id="cell-trace.note-2" value="2">.*?<p>Adds</p>\n<p>two', html, re.S)
    assert html.index("cell-trace.note-2") < html.index('id="cell-trace.note-1"')


def test_lines_shows_the_badges_of_its_lines(course: Course) -> None:
    body = "{{ cell trace code lines=3-4 }}\n\n2. Adds one.\n\n{{ cell trace }}\n\n1. Sets.\n\n{{ cell plain }}\n"
    html, errors, _ = rendered(course, EXAMPLE, body)
    assert errors == []
    first = re.search(r'<figure class="cell".*?</figure>', html, re.S)
    assert first and "note-1" not in first[0] and 'id="cell-trace.mark-2"' in first[0]


def test_a_slice_starting_on_a_blank_line_keeps_each_badge_on_its_line(course: Course) -> None:
    source = EXAMPLE.replace("s = ", "\n\ns = ")
    body = NOTES.replace("{{ cell trace }}", "{{ cell trace code lines=2-5 }}").replace(
        "1. Sets `x` <b>bold</b>.\n", ""
    )
    body += "\n{{ cell trace code lines=1 }}\n\n1. Sets.\n"
    html, errors, _ = rendered(course, source, body)
    assert errors == []
    lines = code_lines(html, "trace")
    assert [text(line) for line in lines[:4]] == ["", "", 's = "# <3>"', "y = x + 12"]
    numbers = re.search(r'<pre class="lineno"[^>]*>(.*?)</pre>', html, re.S)
    assert numbers and numbers[1].split() == ["5", "6", "7", "8"]


def test_crlf_lines_keep_their_endings_and_lose_the_marker(course: Course) -> None:
    html, errors, _ = rendered(course, EXAMPLE.replace("\n", "\r\n"), NOTES)
    assert errors == []
    assert "&lt;1&gt;" not in html and 'href="#cell-trace.note-1"' in html


def test_the_file_and_the_notebook_keep_the_markers(course: Course) -> None:
    """The reader downloads what ran: example.py's bytes are the lesson's, markers and all
    (the content hash is of them), and the notebook's cells are the file's."""
    lesson = lesson_of(course, EXAMPLE, NOTES)
    made = notebook.example_notebook(
        "l/x/", "T", "C", lesson.source, ((), ()), None, "", cells=lesson.cells
    )
    (data,) = made.files.values() if made.files else ()
    cells = json.loads(data)["cells"]
    assert "".join(cells[2]["source"]).startswith("x = 1  # <1>\n")
    assert b"y = x + 1  # <2>\n" in lesson.source


def test_a_marker_like_comment_that_is_not_one_stays_a_comment(course: Course) -> None:
    source = EXAMPLE.replace("# <1>", "# <1><script>alert(1)</script>").replace(
        "# <2>", "# see <2>"
    )
    html, errors, _ = rendered(course, source, "{{ cell trace }}\n\n{{ cell plain }}\n")
    assert errors == []
    assert "code-note" not in html and "<script>" not in html
    assert "# &lt;1&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html


# -- mistakes, each naming its file and line ---------------------------------------------------


def test_a_marker_without_a_note_names_example_py_and_its_line(course: Course) -> None:
    html, errors, lesson = rendered(course, EXAMPLE, NOTES.replace("2. Adds one.\n", ""))
    assert errors == [
        f"{lesson.example_path}: line 6: cell 'trace': note marker `# <2>` has no note: write "
        "`2. ...` in the numbered list right after {{ cell trace }} in lesson.md"
    ]
    assert 'href="#cell-trace.note-2"' in html  # the page still renders, the build fails


def test_a_paragraph_between_the_cell_and_its_list_leaves_the_markers_without_notes(
    course: Course,
) -> None:
    body = NOTES.replace("1. Sets", "Notes:\n\n1. Sets")
    _, errors, lesson = rendered(course, EXAMPLE, body)
    assert [e.split(":")[1] for e in errors] == [" line 4", " line 6"]
    assert all(e.startswith(str(lesson.example_path)) for e in errors)


def test_a_note_without_a_marker_names_lesson_md_and_its_line(course: Course) -> None:
    _, errors, lesson = rendered(course, EXAMPLE, NOTES.replace("2. Adds", "3. Adds"))
    assert len(errors) == 2
    assert errors[0] == (
        f"{at(lesson, 5)} note 3: cell 'trace' has no marker `# <3>` on the lines shown above "
        "(its markers there: # <1>, # <2>)"
    )
    assert errors[1].startswith(f"{lesson.example_path}: line 6: cell 'trace': note marker `# <2>`")


def test_a_note_given_twice_names_lesson_md(course: Course) -> None:
    body = NOTES.replace("2. Adds one.\n", "2. Adds one.\n1. Again.\n")
    _, errors, lesson = rendered(course, EXAMPLE, body)
    assert errors == [f"{at(lesson, 6)} note 1 of cell 'trace' is given twice"]


def test_a_number_used_twice_in_a_cell_names_its_second_line(course: Course) -> None:
    source = EXAMPLE.replace("print(y, s)", "print(y, s)  # <1>")
    _, errors, lesson = rendered(course, source, NOTES)
    assert errors == [
        f"{lesson.example_path}: line 7: cell 'trace': note marker `# <1>` is used twice "
        "in this cell"
    ]


@pytest.mark.parametrize("number", ["0", "100", "007", "12345678901", "\u0661"])
def test_a_number_outside_1_to_99_is_an_error(course: Course, number: str) -> None:
    source = EXAMPLE.replace("print(y, s)", f"print(y, s)  # <{number}>")
    _, errors, lesson = rendered(course, source, NOTES)
    assert errors == [
        f"{lesson.example_path}: line 7: cell 'trace': note marker `# <{number}>`: number "
        "notes 1 to 99"
    ]


def test_a_marker_of_thousands_of_digits_is_an_error_said_briefly(course: Course) -> None:
    source = EXAMPLE.replace("print(y, s)", f"print(y, s)  # <{'9' * 5000}>")
    _, errors, lesson = rendered(course, source, NOTES)
    assert errors == [
        f"{lesson.example_path}: line 7: cell 'trace': note marker `# <99999999...>`: number "
        "notes 1 to 99"
    ]


def test_99_is_a_note_number(course: Course) -> None:
    source = EXAMPLE.replace("print(y, s)", "print(y, s)  # <99>")
    html, errors, _ = rendered(
        course, source, NOTES.replace("2. Adds one.\n", "2. Adds.\n99. Prints.\n")
    )
    assert errors == [] and 'id="cell-trace.note-99"' in html


def test_a_marker_in_a_hide_cell_is_an_error(course: Course) -> None:
    source = EXAMPLE.replace("import math", "import math  # <1>")
    _, errors, lesson = rendered(course, source, NOTES)
    assert errors == [
        f"{lesson.example_path}: line 2: cell 'setup' is `hide`: its note marker `# <1>` "
        "would be shown nowhere"
    ]


def test_a_marker_in_the_preamble_is_an_error(course: Course) -> None:
    _, errors, lesson = rendered(course, "import math  # <1>\n" + EXAMPLE, NOTES)
    assert errors == [
        f"{lesson.example_path}: line 1: cell 'preamble' is `hide`: its note marker `# <1>` "
        "would be shown nowhere"
    ]


def test_a_marker_in_an_example_without_cells_is_an_error(course: Course) -> None:
    source = 'x = 1  # <1>\ns = "# <2>"\nprint(x)  # <0>\n'
    _, errors, lesson = rendered(course, source, "{{ example }}\n")
    assert [e.split(": ", 2)[1] for e in errors] == ["line 1", "line 3"]
    assert all(e.startswith(str(lesson.example_path)) for e in errors)
    assert "works in a cell" in errors[0]


def test_a_cell_that_does_not_tokenize_says_its_markers_cannot_be_read(course: Course) -> None:
    source = EXAMPLE + "# %% sketch show\nf(x,  # <1>\n"
    body = NOTES + "\n{{ cell sketch }}\n\n1. Unclosed.\n"
    html, errors, lesson = rendered(course, source, body)
    assert len(errors) == 1
    assert errors[0].startswith(f"{lesson.example_path}: line 11: cell 'sketch' does not tokenize")
    assert "# &lt;1&gt;" in html  # shown as written


def test_a_huge_cell_of_markers_renders(course: Course) -> None:
    lines = "".join(f"v{n} = {n}  # <{n % 99 + 1}>\n" for n in range(99))
    notes = "".join(f"{n}. Note {n}.\n" for n in range(1, 100))
    source = EXAMPLE + "# %% many\n" + lines
    html, errors, _ = rendered(course, source, NOTES + "\n{{ cell many }}\n\n" + notes)
    assert errors == []
    assert html.count('class="code-note-item"') == 101
