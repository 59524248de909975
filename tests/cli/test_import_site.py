"""Issue 57's bar, end to end: a course made by `new`, a real JAX page
(tests/fixtures/myst/key-concepts.md) and a small MyST page imported with no edit, then
`site` with real JAX: it builds, each cell shows its own code and output, no literal MyST
reaches a page and no link dangles (the build refuses one)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from builder.__main__ import main

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "myst"
MYST = ("{func}", "{term}", "{ref}", ")=", "```{", "{note}")


def test_imported_pages_build_with_no_edit(tmp_path: Path) -> None:
    root = tmp_path / "course"
    assert main(["new", str(root)]) == 0
    content = root / "content"
    for page, lesson_id in (("key-concepts", "concepts-01"), ("small-page", "small-01")):
        args = ["import", str(FIXTURES / f"{page}.md"), "--content", str(content)]
        assert main([*args, "--id", lesson_id, "--arc", "basics"]) == 0
    folders = ["--content", str(content), "--recordings", str(root / "recordings")]
    out = root / "site"
    assert main(["site", *folders, "--out", str(out), "--cache", str(root / ".cache")]) == 0
    for slug in ("key-concepts", "small-page"):
        page = (out / "l" / slug / "index.html").read_text("utf-8")
        text = re.sub(r"<[^>]+>", "", page)
        assert not [m for m in MYST if m in text], slug
        figures = re.findall(r'<figure class="cell".*?</figure>', page, flags=re.DOTALL)
        assert figures, slug
        for figure in figures:  # its own code, then its own output
            assert figure.count("<pre") >= 1, figure[:200]
        notebook = (out / "l" / slug / "example.ipynb").read_text("utf-8")
        nbformat.validate(nbformat.reads(notebook, as_version=nbformat.NO_CONVERT))
        assert not [m for m in MYST if m in notebook], slug
    small = (out / "l" / "small-page" / "index.html").read_text("utf-8")
    assert "total 6" in small and "twice 12" in small
    assert 'href="../../l/key-concepts/index.html"' in small  # a page of the course: a lesson
    cells = nbformat.reads((out / "l" / "small-page" / "example.ipynb").read_text("utf-8"), 4)
    tags = [c.metadata.get("tags") for c in cells.cells if c.cell_type == "code"]
    assert tags == [["hide-input"], ["remove-input"]]  # as the page's tags said
    assert "> **Note**\n>\n> A pytree is a nested container." in cells.cells[1].source
