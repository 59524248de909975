"""Each lesson's example as a notebook (builder/render/notebook.py), beside its example.py:
valid, holding the recorded output (not a new run), linked from its page, the same bytes on
every build and made again only when what it shows changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.recording import load
from builder.pipeline.build import build
from builder.render import notebook
from tests.helpers import make_paths

SLUGS = {"basics-01": "first", "basics-02": "no-panels", "speed-01": "settings"}


def _notebook(site: Path, slug: str) -> nbformat.NotebookNode:
    text = (site / "l" / slug / "example.ipynb").read_text("utf-8")
    found = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    nbformat.validate(found)  # raises on anything the schema refuses
    return found


@pytest.mark.parametrize(("lesson_id", "slug"), SLUGS.items())
def test_the_notebook_holds_the_example_and_the_recorded_stdout(
    recorded: Paths, lesson_id: str, slug: str
) -> None:
    found = _notebook(recorded.out, slug)
    assert found.nbformat == 4 and found.nbformat_minor == 5
    intro, *_ = found.cells
    (code,) = [cell for cell in found.cells if cell.cell_type == "code"]
    lesson = next(x for x in load_course(recorded.content).lessons if x.id == lesson_id)
    assert intro.cell_type == "markdown"
    assert intro.source.startswith(f"# {lesson.title}\n")
    assert f"]({'index.html'})" in intro.source  # a link back to the page beside it
    assert code.cell_type == "code"
    assert code.source == lesson.source.decode("utf-8-sig")
    (output,) = code.outputs
    assert (output.output_type, output.name) == ("stream", "stdout")
    assert output.text == load(recorded.recordings / f"{lesson_id}.json").stdout


def test_the_notebook_says_what_else_the_run_needs(recorded: Paths) -> None:
    """speed-01 reads a data file, imports the panels' stand-in and has an env: setting."""
    intro = _notebook(recorded.out, "settings").cells[0].source
    assert "`numbers.txt`, `builder.py`" in intro
    assert "`FIXTURE_SCALE=3`" in intro
    assert "`builder.py`" not in _notebook(recorded.out, "no-panels").cells[0].source


def test_a_lesson_without_a_recording_has_a_notebook_without_output() -> None:
    made = notebook.example_notebook(
        "l/x/", "A *title* [x]", "Course", b"print(1)\n", ((), ()), None, ""
    )
    (data,) = made.files.values() if made.files else ()
    found = nbformat.reads(data.decode(), as_version=4)
    nbformat.validate(found)
    assert found.cells[1].outputs == [] and found.cells[1].execution_count is None
    assert found.cells[0].source.startswith("# A \\*title\\* \\[x\\]\n")  # no emphasis, no link
    assert "no recording yet" in found.cells[0].source


def _as_nbformat_writes_it(source: bytes, stdout: str | None, intro: str) -> str:
    """The notebook built with nbformat's own constructors (each validates) and writer."""
    from nbformat import v4

    code = v4.new_code_cell(source.decode("utf-8-sig"), id="example")
    if stdout is not None:
        code.execution_count = 1
        code.outputs = [v4.new_output("stream", name="stdout", text=stdout)]
    cells = [v4.new_markdown_cell(intro, id="lesson"), code]
    metadata = notebook._metadata()
    made = v4.new_notebook(cells=cells, metadata=metadata)
    nbformat.validate(made)
    return nbformat.writes(made, version=4) + "\n"


@pytest.mark.parametrize(
    ("source", "stdout"),
    [
        (b"print(1)\n", "1\n"),
        (b"\xef\xbb\xbfx = 'caf\xc3\xa9 \xe2\x86\x92'\r\nprint(x)", "caf\u00e9 \u2192\nno end"),
        (b"", ""),
        (b"print('\\t\"\\u0000')\n\n\n", None),
    ],
)
def test_the_notebook_is_byte_for_byte_what_nbformat_writes(
    source: bytes, stdout: str | None
) -> None:
    """Written as plain JSON (nbformat's constructors cost 1.6 s of CPU at 1,000 lessons),
    the file is the one nbformat's writer gives, and its schema accepts it."""
    made = notebook.example_notebook(
        "l/x/", "T\u00eftle *x*", "Course", source, (("a.txt",), ("A=1",)), stdout, "CPU"
    )
    (data,) = made.files.values() if made.files else ()
    intro = nbformat.reads(data.decode(), as_version=nbformat.NO_CONVERT).cells[0].source
    assert data.decode("utf-8") == _as_nbformat_writes_it(source, stdout, intro)


def test_a_notebook_leads_back_to_its_page_from_anywhere_once_the_site_has_an_address() -> None:
    """Downloaded, a notebook is no longer beside its page: with course.yml's site_url the
    link back is the page's absolute address; without it, the page beside it on the site."""
    args = ("l/x/", "Title", "Course", b"print(1)\n", ((), ()), "1\n", "CPU")
    beside = notebook.example_notebook(*args)
    away = notebook.example_notebook(*args, "https://example.org/course/l/x/")
    (near,), (far,) = beside.files.values(), away.files.values()
    assert b"[Title](index.html)" in near
    assert b"[Title](https://example.org/course/l/x/)" in far


def test_the_page_links_to_the_notebook_beside_the_example(recorded: Paths) -> None:
    for slug in SLUGS.values():
        page = (recorded.out / "l" / slug / "index.html").read_text("utf-8")
        block = page[page.index('<section class="run-it"') : page.index("</section>")]
        assert 'href="example.ipynb" download="example.ipynb"' in block, slug


def test_a_second_build_leaves_the_notebook_as_it_was(recorded: Paths, tmp_path: Path) -> None:
    """The same bytes from a rebuild, and from a build in another folder with no cache."""
    before = {s: (recorded.out / "l" / s / "example.ipynb").read_bytes() for s in SLUGS.values()}
    stamps = {s: (recorded.out / "l" / s / "example.ipynb").stat().st_mtime_ns for s in before}
    build(recorded, execute=False, jobs=1)
    for slug, data in before.items():
        path = recorded.out / "l" / slug / "example.ipynb"
        assert path.read_bytes() == data and path.stat().st_mtime_ns == stamps[slug], slug
    other = make_paths(tmp_path / "other")
    shutil.copytree(recorded.content, other.content)
    shutil.copytree(recorded.recordings, other.recordings)
    build(other, execute=False, jobs=2)
    for slug, data in before.items():
        assert (other.out / "l" / slug / "example.ipynb").read_bytes() == data, slug


def test_a_prose_edit_makes_that_lesson_s_notebook_again_and_no_other(
    recorded: Paths,
) -> None:
    """The notebook holds the lesson's prose (issue 57): a prose edit writes it again, with
    the new sentence, and leaves every other lesson's notebook file as it was."""
    lesson = recorded.content / "lessons" / "basics-02" / "lesson.md"
    books = {s: recorded.out / "l" / s / "example.ipynb" for s in SLUGS.values()}
    stamps = {s: path.stat().st_mtime_ns for s, path in books.items()}
    text = lesson.read_text("utf-8")
    lesson.write_text(text + "\nOne more sentence of prose.\n", "utf-8")
    build(recorded, execute=False, jobs=1)
    edited = SLUGS["basics-02"]
    assert "One more sentence of prose." in books[edited].read_text("utf-8")
    assert all(books[s].stat().st_mtime_ns == stamps[s] for s in books if s != edited)
