"""Issue 40 item 7: `coursebuilder import PAGE --id ID` makes a lesson folder of a notebook.

JAX's own three tutorials (tests/fixtures/myst/, MyST Markdown) are imported as an author
would: every code cell reaches example.py verbatim (magics commented out, `%timeit` lines
made timeit cells), raises-exception cells are `raises` cells, and every thing the page
holds that a lesson cannot show is listed as PAGE:LINE, the line being the one in the page
that holds it. The same pages as .ipynb (written by Jupytext) give the same example.py.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from builder.__main__ import main
from builder.course.load import load_course
from tests.helpers import FOREIGN_SYNTAX

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "myst"
PAGES = ("jit-compilation", "automatic-differentiation", "stateful-computations")
MARKER = re.compile(r"^# %% (\S+)(.*)$", re.MULTILINE)
NOTE = re.compile(r"^(.+?):(\d+): (.+?)(?: — (.+))?$")


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """A new course's content/ (`coursebuilder new`): one arc, `basics`, one lesson."""
    assert main(["new", str(tmp_path / "course")]) == 0
    return tmp_path / "course" / "content"


def imported(
    content: Path, page: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[dict[str, str], list[str]]:
    """The example's cells by name (code, options) and the notes, after an import of `page`."""
    capsys.readouterr()
    assert main(["import", str(page), "--content", str(content), *args]) == 0
    out, err = capsys.readouterr()
    assert "Imported" in out
    notes = err.splitlines()
    return _cells((content / "lessons" / args[1] / "example.py").read_text()), notes


def _cells(example: str) -> dict[str, str]:
    marks = list(MARKER.finditer(example))
    return {
        m.group(1) + m.group(2): example[m.end() + 1 : n.start() if n else None].rstrip("\n")
        for m, n in zip(marks, [*marks[1:], None], strict=True)
    }


def _code_cells(page: Path) -> list[tuple[str, list[str]]]:
    """The page's code cells as Jupytext reads them: (source, tags)."""
    notebook = jupytext.read(page)
    return [
        (c.source, list(c.metadata.get("tags", [])))
        for c in notebook.cells
        if c.cell_type == "code"
    ]


@pytest.mark.parametrize("name", PAGES)
def test_every_code_cell_reaches_example_py_verbatim(
    content: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    page = FIXTURES / f"{name}.md"
    cells, _ = imported(content, page, capsys, "--id", "jax-01", "--arc", "basics")
    example = (content / "lessons" / "jax-01" / "example.py").read_text()
    ast.parse(example)  # python example.py runs it: no magic is left uncommented
    for source, tags in _code_cells(page):
        # what is not a magic line, in runs, is in one cell of example.py as it was
        runs = re.split(r"^%.*$", source, flags=re.MULTILINE)
        for run in (r.strip("\n") for r in runs if r.strip()):
            holding = [k for k, code in cells.items() if run in code]
            assert holding, run
            if "raises-exception" in tags:
                assert any(" raises" in k for k in holding), (run, holding)
            if "remove-cell" in tags:
                assert all(" hide" in k for k in holding), (run, holding)
        for statement in re.findall(r"^%timeit (.+)$", source, flags=re.MULTILINE):
            assert any(k.endswith(" timeit") and code == statement for k, code in cells.items())
    page_code = "".join(s for s, _ in _code_cells(page))
    for added in ("try:", "except", "print(repr(", "repr("):
        assert example.count(added) == page_code.count(added), added
    # a cell is named cell-N, in order, each once
    names = [k.split()[0] for k in cells]
    assert names == [f"cell-{n}" for n in range(1, len(names) + 1)]


def test_the_jit_tutorial_becomes_timed_raising_and_hidden_cells(
    content: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = FIXTURES / "jit-compilation.md"
    cells, notes = imported(content, page, capsys, "--id", "jit-01", "--arc", "basics")
    options = [k.split(maxsplit=1)[1] if " " in k else "" for k in cells]
    assert options.count("timeit") == 5  # two one-line cells, three lines of a longer one
    assert options.count("raises") == 2 and options[0] == "hide"
    assert cells["cell-6 timeit"] == "selu(x).block_until_ready()"
    assert cells["cell-1 hide"].endswith("\n# %xmode minimal")
    lesson = (content / "lessons" / "jit-01" / "lesson.md").read_text()
    front = lesson.split("---\n")[1]
    assert "title: Just-in-time compilation\n" in front and "arc: basics\n" in front
    assert "slug: jit-compilation\n" in front and "order: 2\n" in front
    assert "summary: In this section, we will further explore how JAX works" in front
    assert "# Just-in-time compilation" not in lesson  # the title is the page's
    # placed where they stood, in order; the hidden cell is not placed
    placed = re.findall(r"^\{\{ cell (\S+) \}\}$", lesson, flags=re.MULTILINE)
    assert placed == [f"cell-{n}" for n in range(2, 21)]
    assert lesson.index("{{ cell cell-2 }}") > lesson.index("using `jax.make_jaxpr`:")
    assert lesson.index("{{ cell cell-2 }}") < lesson.index("The jax-internals-jaxpr section")
    load_course(content)  # the front matter is valid, the id its folder's
    # issue 57: the target, the comment and the roles are rewritten, not listed
    assert "(jit-compilation)=" not in lesson and "<!--" not in lesson and "{func}" not in lesson
    assert "We will discuss the `jax.jit` transformation" in lesson
    first = [n for n in notes if ":19: " in n or ":22: " in n or ":28: " in n]
    assert first == [
        f"{page}:19: IPython magic %xmode minimal, commented out — do it in Python, or delete it",
    ]
    assert (
        f"{page}:34: glossary term 'primitive', which glossary.yml lacks, shown as text — "
        "add it to glossary.yml, then write [[primitive]]" in notes
    )


@pytest.mark.parametrize("name", PAGES)
def test_each_note_names_the_line_of_the_page_that_holds_it(
    content: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every role, target, magic, math and link noted is on the line the note names, and
    every role of the page's prose is noted."""
    page = FIXTURES / f"{name}.md"
    _, notes = imported(content, page, capsys, "--id", "jax-01", "--arc", "basics")
    lines = page.read_text().splitlines()
    assert notes and all(NOTE.match(n) for n in notes)
    for note in notes:
        where, number, what, _ = NOTE.match(note).groups()  # type: ignore[union-attr]
        assert where == str(page)
        line = lines[int(number) - 1]
        held = re.search(
            r"(\{.+?\}`.+?`) is a Sphinx role|\((.+?)\)= is a MyST target|magic (.+?), commented"
            r"|math (\$\$|\$[^$]+\$)"
            r"|link to '(.+?)'|HTML (<!--)|glossary term '(.+?)'|(\{\{|\[\[) would be read",
            what,
        )
        assert held, note
        shown = next(g for g in held.groups() if g)
        assert shown.removesuffix("...`") in line, (note, line)  # a long role: shortened
    # issue 57: every role of these pages is rewritten; none is left to a person
    assert not [n for n in notes if "Sphinx role" in n]


def test_a_notebook_made_of_the_page_gives_the_same_example(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The round trip: the MyST page written as .ipynb by Jupytext imports to the same
    cells, and its notes name lines of the notebook's JSON that hold what they say."""
    page = FIXTURES / "jit-compilation.md"
    notebook = tmp_path / "jit-compilation.ipynb"
    jupytext.write(jupytext.read(page), notebook, fmt="ipynb")
    from_md, md_notes = imported(content, page, capsys, "--id", "jit-01", "--arc", "basics")
    from_nb, nb_notes = imported(content, notebook, capsys, "--id", "jit-02", "--arc", "basics")
    assert from_nb == from_md
    assert [NOTE.match(n).group(3) for n in nb_notes] == [  # type: ignore[union-attr]
        NOTE.match(n).group(3)  # type: ignore[union-attr]
        for n in md_notes
    ]
    json_lines = notebook.read_text().splitlines()
    for note in nb_notes:
        number = int(NOTE.match(note).group(2))  # type: ignore[union-attr]
        if role := re.search(r"(\{.+?\}`.+?`) is a Sphinx role", note):
            assert json.dumps(role.group(1))[1:-1] in json_lines[number - 1], note


def test_an_error_output_names_the_exception_and_tags_map_to_options(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v4 = nbformat.v4
    error = v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero")
    notebook = v4.new_notebook(
        cells=[
            v4.new_markdown_cell("# Dividing\n\nOne divides by zero here."),
            v4.new_code_cell("x = 1", metadata={"tags": ["remove-input"]}),
            v4.new_code_cell("1 / 0", outputs=[error], metadata={"tags": ["raises-exception"]}),
            v4.new_code_cell("print(x)", metadata={"tags": ["remove-output", "thebe-init"]}),
            v4.new_code_cell("import os", metadata={"tags": ["skip-execution"]}),
            v4.new_code_cell("%%timeit\nsum(range(10))"),
            v4.new_code_cell("!pip install jax\n%matplotlib inline\nx + 1"),
        ]
    )
    page = tmp_path / "divide.ipynb"
    page.write_text(nbformat.writes(notebook))
    cells, notes = imported(content, page, capsys, "--id", "divide-01", "--arc", "basics")
    assert cells == {
        "cell-1": "x = 1",
        "cell-2 raises=ZeroDivisionError": "1 / 0",
        "cell-3": "print(x)",
        "cell-4 show": "import os",
        "cell-5 timeit": "sum(range(10))",
        "cell-6": "# !pip install jax\n# %matplotlib inline\nx + 1",
    }
    lesson = (content / "lessons" / "divide-01" / "lesson.md").read_text()
    assert lesson.endswith(
        "One divides by zero here.\n\n{{ cell cell-1 output }}\n\n{{ cell cell-2 }}\n\n{{ cell cell-3 code }}\n\n"
        "{{ cell cell-4 }}\n\n{{ cell cell-5 }}\n\n{{ cell cell-6 }}\n"
    )
    said = "\n".join(notes)
    assert "cell tag 'thebe-init', which has no equivalent, dropped" in said
    assert "shell command !pip install jax, commented out — put the package in" in said
    assert "IPython magic %matplotlib inline, commented out" in said
    lines = page.read_text().splitlines()
    for note in notes:
        match = NOTE.match(note)
        assert match, note
        if "!pip" in note:
            assert "!pip install jax" in lines[int(match.group(2)) - 1]


# What `import` leaves as written (and lists): the rest of FOREIGN_SYNTAX it rewrites.
IMPORT_LEAVES = ("{glue", "{code-cell}", "{figure}", "{.callout")


@pytest.mark.parametrize(("markdown", "what", "instead"), FOREIGN_SYNTAX)
def test_import_notes_each_construct_the_site_refuses(
    content: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    markdown: str,
    what: str,
    instead: str,
) -> None:
    """The same rules find it (builder/render/foreign.py): one note, on the page's line that
    holds it, saying what the site's error says it is and what to write instead."""
    v4 = nbformat.v4
    cell = v4.new_markdown_cell(f"# Foreign\n\nA page.\n\n{markdown}\n\nAfter.")
    page = tmp_path / "foreign.ipynb"
    page.write_text(nbformat.writes(v4.new_notebook(cells=[cell, v4.new_code_cell("x = 1")])))
    _, notes = imported(content, page, capsys, "--id", "foreign-01", "--arc", "basics")
    left = [n for n in notes if "left as written" in n]
    if not any(
        kept in markdown for kept in IMPORT_LEAVES
    ):  # issue 57: import rewrites it (test_rewrite.py)
        lesson = (content / "lessons" / "foreign-01" / "lesson.md").read_text()
        assert not left and markdown.split("\n")[0] not in lesson, (notes, lesson)
        return
    [note] = left
    assert what in note and instead in note, note
    number = int(NOTE.match(note).group(2))  # type: ignore[union-attr]
    first = json.dumps(markdown.split("\n")[0])[1:-1]
    assert first in page.read_text().splitlines()[number - 1], note
