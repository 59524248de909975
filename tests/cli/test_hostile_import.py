"""`coursebuilder import` given what it must refuse or survive: a PAGE that is a link, a
FIFO, huge, not UTF-8 or not a notebook; an --id that is not a lesson id or names a folder
that exists; a link where the lesson folder goes; cell names that would collide; a line
that would start a cell; 10,000 cells. A refusal is one error naming the file, exit 1, and
nothing written; a write that fails leaves no lesson folder behind.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import jupytext
import nbformat
import pytest

from builder.__main__ import main
from tests.helpers import snapshot

PAGE = "# Title\n\nA sentence.\n\n```{code-cell}\nx = 1\n```\n"
v4 = nbformat.v4


@pytest.fixture
def content(tmp_path: Path) -> Path:
    assert main(["new", str(tmp_path / "course")]) == 0
    return tmp_path / "course" / "content"


def refused(content: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The error of an import that must write nothing, after checking it wrote nothing."""
    before = snapshot(content)
    capsys.readouterr()
    assert main(["import", *args, "--content", str(content)]) == 1
    out, err = capsys.readouterr()
    assert snapshot(content) == before
    assert "Imported" not in out
    return err


def _args(page: Path, lesson_id: str = "new-01") -> list[str]:
    return [str(page), f"--id={lesson_id}", "--arc", "basics"]


def test_a_page_that_is_a_link_is_refused(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "real.md"
    real.write_text(PAGE)
    link = tmp_path / "page.md"
    link.symlink_to(real)
    err = refused(content, capsys, *_args(link))
    assert err.startswith(f"error: {link}: is a symbolic link (to "), err


def test_a_fifo_is_refused_without_waiting(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "page.md"
    os.mkfifo(fifo)
    started = time.monotonic()
    err = refused(content, capsys, *_args(fifo))
    assert time.monotonic() - started < 10
    assert f"{fifo}: is a FIFO" in err and "not a regular file" in err


def test_a_huge_page_is_refused_unread(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.ipynb"
    with page.open("wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: refused by its size
    err = refused(content, capsys, *_args(page))
    assert f"{page}: is 64.0 MiB, over the 32 MiB limit" in err, err


def test_a_page_that_is_not_utf8_is_refused(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_bytes(PAGE.encode() + b"\xff\xfe caf\xe9\n")
    err = refused(content, capsys, *_args(page))
    assert f"{page}: is not UTF-8 (invalid byte at offset" in err


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("page.txt", PAGE, "is neither a Jupyter notebook (.ipynb) nor a MyST Markdown page"),
        ("page.ipynb", "{not json", "cannot be read as a notebook"),
        ("page.ipynb", "[" * 100_000, "nests arrays and objects 100000 deep"),
        ("page.md", "# Only prose\n\nNo code.\n", "has no code cell"),
    ],
)
def test_what_is_not_a_notebook_is_refused(
    content: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    data: str,
    said: str,
) -> None:
    page = tmp_path / name
    page.write_text(data)
    err = refused(content, capsys, *_args(page))
    assert f"{page}: {said}" in err, err


@pytest.mark.parametrize("lesson_id", ["../x", "x/../../y", "New-01", "-x", "a" * 65, ""])
def test_an_id_that_is_not_a_lesson_id_is_refused(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], lesson_id: str
) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    err = refused(content, capsys, *_args(page, lesson_id))
    assert f"--id {lesson_id!r} is not a lesson id" in err
    assert not (tmp_path / "x").exists() and not (content.parent / "y").exists()


def test_an_existing_folder_is_refused_and_kept(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    err = refused(content, capsys, *_args(page, "basics-01"))
    assert f"{content / 'lessons' / 'basics-01'}: already exists" in err
    (content / "lessons" / "empty-01").mkdir()  # even an empty one: never reused
    assert "already exists" in refused(content, capsys, *_args(page, "empty-01"))


def test_a_link_where_the_lesson_folder_goes_is_refused(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, elsewhere = tmp_path / "page.md", tmp_path / "elsewhere"
    page.write_text(PAGE)
    elsewhere.mkdir()
    (content / "lessons" / "new-01").symlink_to(elsewhere)
    assert "already exists" in refused(content, capsys, *_args(page))
    assert list(elsewhere.iterdir()) == []


def test_an_arc_must_be_one_of_the_course(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    err = refused(content, capsys, str(page), "--id", "new-01")
    assert f"{content / 'course.yml'}: needs --arc: one of basics" in err
    err = refused(content, capsys, str(page), "--id", "new-01", "--arc", "nope")
    assert "--arc 'nope' is not an arc of course.yml: one of basics" in err
    err = refused(content, capsys, *_args(page), "--slug", "basics-01")
    assert "--slug 'basics-01' is taken by lesson basics-01" in err


def test_a_failed_write_leaves_no_lesson_folder(
    content: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Disk full at the second rename: the first file is taken back, the folder removed."""
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    renames = []
    real = os.replace

    def full(*args: object, **kwargs: object) -> None:
        renames.append(args)
        if len(renames) == 2:
            raise OSError(28, "No space left on device")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", full)
    err = refused(content, capsys, *_args(page))
    assert "cannot write" in err and "No space left on device" in err
    assert "nothing was written" in err and "-> free space on that disk" in err
    assert not (content / "lessons" / "new-01").exists()


def test_cell_names_never_collide(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names the notebook gives are kept when valid and unused; the rest count around them."""
    cells = [
        v4.new_code_cell("a = 1", metadata={"name": "cell-2"}),
        v4.new_code_cell("b = 2", metadata={"name": "Cell-2"}),  # the same name again
        v4.new_code_cell("c = 3", metadata={"name": "../bad name"}),
        v4.new_code_cell("d = 4", metadata={"name": "setup"}),
        v4.new_code_cell("# %% evil raises\ne = 5"),  # would start a cell of its own
    ]
    page = tmp_path / "names.ipynb"
    page.write_text(nbformat.writes(v4.new_notebook(cells=cells)))
    capsys.readouterr()
    assert main(["import", *_args(page), "--content", str(content)]) == 0
    example = (content / "lessons" / "new-01" / "example.py").read_text()
    markers = [line for line in example.splitlines() if line.startswith("# %%")]
    assert markers == ["# %% cell-2", "# %% cell-1", "# %% cell-3", "# %% setup", "# %% cell-4"]
    assert "# (%%) evil raises\ne = 5" in example
    assert "a comment that would start a cell, rewritten as # (%%)" in capsys.readouterr().err


def test_ten_thousand_cells_import_in_bounded_time(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cells = [v4.new_markdown_cell("# Long", id="title")]
    for n in range(5_000):  # ids given: 10,001 random 8-hex ids collide about once in 86 runs
        cells += [
            v4.new_markdown_cell(f"Step {n}: {{eval}}`f`.", id=f"md-{n}"),
            v4.new_code_cell(f"x{n} = {n}", id=f"code-{n}"),
        ]
    page = tmp_path / "long.ipynb"
    page.write_text(nbformat.writes(v4.new_notebook(cells=cells)))
    started = time.monotonic()
    capsys.readouterr()
    assert main(["import", *_args(page), "--content", str(content)]) == 0
    assert time.monotonic() - started < 60
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 5_000  # each role import cannot rewrite ({eval}), on its own line
    lines = page.read_text().splitlines()
    assert all(f"Step {n}:" in lines[int(e.split(":")[1]) - 1] for n, e in enumerate(err))
    example = (content / "lessons" / "new-01" / "example.py").read_text()
    assert example.count("\n# %% cell-") == 5_000


def test_a_page_of_one_long_line_is_checked_in_bounded_time(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    near = ["<a " * 6_600, "![" * 9_900, "a " + "`" * 19_900, "[a](" * 4_900, "`a" * 9_900]
    page.write_text(PAGE + "\n" + "\n\n".join(near) + "\n\n" + "`a" * 50_000 + "\n")
    started = time.monotonic()
    capsys.readouterr()
    assert main(["import", *_args(page), "--content", str(content)]) == 0
    assert time.monotonic() - started < 30
    assert "a line of 100000 characters, not checked" in capsys.readouterr().err


def test_a_myst_page_round_trips_through_jupytext(tmp_path: Path) -> None:
    """The fixture text Jupytext writes back reads as the same cells (what import reads)."""
    notebook = jupytext.reads(PAGE, fmt="md:myst")
    again = jupytext.reads(jupytext.writes(notebook, fmt="md:myst"), fmt="md:myst")
    assert [c.source for c in again.cells] == [c.source for c in notebook.cells]


# Issue 56, item 10: nine nested aliases of ten expand to 10^9 values ("billion laughs");
# `import` of a notebook with these in its front matter ran 28 s, then MemoryError.
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 10)}]\n"
    for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    "page",
    [
        f"---\n{LAUGHS}---\n\n{PAGE}",  # a Markdown page's front matter
        f"---\njupytext:\n  text_representation:\n    format_name: myst\n{LAUGHS}---\n\n{PAGE}",
    ],
    ids=["md", "myst"],
)
def test_a_notebook_with_a_billion_laughs_is_refused_in_a_second(
    content: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], page: str
) -> None:
    path = tmp_path / "page.md"
    path.write_text(page)
    started = time.process_time()
    err = refused(content, capsys, *_args(path))
    assert time.process_time() - started < 1
    assert err.startswith(f"error: {path}: uses the YAML alias *a: aliases are not allowed")


@pytest.mark.parametrize("file", ["course.yml", "glossary.yml", "lessons/basics-01/lesson.md"])
def test_a_course_file_with_a_billion_laughs_is_refused_in_a_second(
    content: Path, file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = content / file
    if file.endswith(".md"):
        path = next((content / "lessons").glob("*/lesson.md"))
        path.write_text(path.read_text().replace("---\n", f"---\n{LAUGHS}", 1))
    else:
        path.write_text(LAUGHS)
    started = time.process_time()
    assert (
        main(
            ["check", "--content", str(content), "--recordings", str(content.parent / "recordings")]
        )
        == 1
    )
    assert time.process_time() - started < 1
    assert f"{path}: uses the YAML alias *a: aliases are not allowed" in capsys.readouterr().err
