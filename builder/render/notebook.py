"""A lesson's example as a Jupyter notebook, written beside its page and its example.py: a
markdown cell with the title and a link back to the page, then the example with the output
the recording holds (not a new run): one code cell, or one per cell of an example in cells
(builder/cells.py) with that cell's stdout, value and expected exception, tagged as Jupyter
Book reads them (hide-input, skip-execution, raises-exception).

Written as the JSON nbformat writes for format 4.5 (the same bytes as `nbformat.writes`,
which tests/render/test_notebook.py checks), not through nbformat's constructors, which
validate every cell of every notebook again on a cold build. The same inputs give the same
bytes (fixed cell ids, sorted keys, no run-time metadata).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..cells import Cell
from ..core.artifact import Made
from ..core.escape import encoded_address, markdown_code, markdown_text
from ..course.recording import CellRun
from .marks import NOTEBOOK_FILE

if TYPE_CHECKING:
    from .notebook_prose import Piece, Prose

PAGE = "index.html"  # the lesson's page, in the same folder on the site
_JSON = (",", ": ")  # nbformat's, and its indent of 1


def example_notebook(
    folder: str,
    title: str,
    course: str,
    source: bytes,
    run: tuple[tuple[str, ...], tuple[str, ...]],
    stdout: str | None,
    provenance: str,
    page: str = PAGE,
    cells: tuple[Cell, ...] = (),
    ran: tuple[CellRun, ...] = (),
    prose: Prose | None = None,
) -> Made:
    """The notebook file of the lesson at `folder` ("l/<slug>/"): `run` is what the example
    needs besides its code (the files it reads or imports, which the page offers beside it,
    and the lesson's env: as "NAME=value"), `stdout` the recorded output (None: not recorded
    yet, and the code cell has no output); `page`: the lesson page's address (absolute when
    course.yml says where the site is published, so a downloaded notebook still leads back);
    `cells`: the example's cells, `ran`: what each recorded (by name); `prose`: the lesson
    whose prose goes between them (builder/render/notebook_prose.py)."""
    name = f"{folder}{NOTEBOOK_FILE}"
    if cells:
        code = _code_cells(cells, ran, stdout)
    else:
        outputs = [] if stdout is None else [_stream(stdout)]
        whole = _cell("code", "example", source.decode("utf-8-sig"))
        code = [whole | {"execution_count": None if stdout is None else 1, "outputs": outputs}]
    if prose is not None:
        code = _interleaved(code, prose.pieces(_escaped))
    about = _intro(folder, title, course, run, stdout, provenance, page)
    notebook = {
        "cells": [_cell("markdown", "lesson", about), *code],
        "metadata": _metadata(),
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(notebook, indent=1, sort_keys=True, separators=_JSON, ensure_ascii=False)
    return Made({name: (text + "\n").encode("utf-8")})


def _code_cells(
    cells: tuple[Cell, ...], ran: tuple[CellRun, ...], stdout: str | None
) -> list[dict[str, Any]]:
    """One code cell per cell, with what the recording holds for it (none when the lesson
    is not recorded yet, or a `show` cell, which never runs)."""
    recorded = {run.name: run for run in ran} if stdout is not None else {}
    made, count = [], 0
    for cell in cells:
        code = _cell("code", f"cell-{cell.name}", cell.shown.removesuffix("\n"))
        tags = [tag for tag, on in _TAGS if getattr(cell, on) not in (False, None)]
        code["metadata"] = {"tags": tags} if tags else {}
        run = recorded.get(cell.name)
        outputs: list[dict[str, Any]] = []
        if run is not None and stdout is not None:
            count += 1
            printed = stdout[run.start : run.end]
            outputs += [_stream(printed)] if printed else []
            if run.value is not None:
                data = {"text/plain": run.value.splitlines(True)}
                result = {"data": data, "execution_count": count, "metadata": {}}
                outputs.append(result | {"output_type": "execute_result"})
            if run.raised is not None:
                ename = run.raised.type.rpartition(".")[2]
                line = f"{run.raised.type}: {run.raised.message}"
                error = {"ename": ename, "evalue": run.raised.message, "traceback": [line]}
                outputs.append(error | {"output_type": "error"})
        made.append(code | {"execution_count": count if run else None, "outputs": outputs})
    return made


def _interleaved(code: list[dict[str, Any]], pieces: list[Piece]) -> list[dict[str, Any]]:
    """The code cells (in the file's order) with the prose's Markdown cells between them,
    each code cell with the tags its placement gives it besides its own."""
    by_id = {cell["id"]: cell for cell in code}
    made, count = [], 0
    for piece in pieces:
        if piece.kind == "markdown":
            count += 1
            made.append(_cell("markdown", f"prose-{count}", piece.text))
            continue
        cell = by_id[f"cell-{piece.name}" if piece.name else "example"]
        tags = list(dict.fromkeys([*cell["metadata"].get("tags", []), *piece.tags]))
        made.append(cell | {"metadata": {"tags": tags} if tags else {}})
    return made


# The tags Jupyter Book and MyST-NB read, by the cell option that gives them.
_TAGS = (("hide-input", "hide"), ("skip-execution", "show"), ("raises-exception", "raises"))


def _cell(kind: str, cell_id: str, source: str) -> dict[str, Any]:
    """A cell as nbformat writes it: its text split into lines, each keeping its newline."""
    return {"cell_type": kind, "id": cell_id, "metadata": {}, "source": source.splitlines(True)}


def _stream(text: str) -> dict[str, Any]:
    return {"name": "stdout", "output_type": "stream", "text": text.splitlines(True)}


def _metadata() -> dict[str, Any]:
    """No versions of this machine's Python or Jupyter: the same bytes on every machine."""
    return {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }


def _intro(
    folder: str,
    title: str,
    course: str,
    run: tuple[tuple[str, ...], tuple[str, ...]],
    stdout: str | None,
    provenance: str,
    page: str,
) -> str:
    link = f"[{markdown_text(title)}]({encoded_address(page)})"  # course.yml's site_url in it
    output = (
        f"The output under the code is the recorded one ({markdown_text(provenance)}), "
        "not a run on your machine: running the cells prints yours."
        if stdout is not None
        else "This lesson has no recording yet, so the code cell has no output."
    )
    return (
        f"# {markdown_text(title)}\n\n"
        f"The example of the lesson {link} ({markdown_code(folder)} of the site of "
        f"*{markdown_text(course)}*), "
        f"as a notebook.{_needs(*run)}\n\n{output}"
    )


def _needs(files: tuple[str, ...], settings: tuple[str, ...]) -> str:
    """What it takes besides the notebook, as the page's "Run it yourself" says (each as
    code: a backtick in an `env:` value ended a plain span, and raw HTML followed)."""
    said = ""
    if files:
        names = ", ".join(markdown_code(name) for name in files)
        said += f" Put {names} (downloads on the lesson's page) in the notebook's folder."
    if settings:
        said += (
            f" The lesson runs it with {markdown_code(' '.join(settings))}: "
            "set these in the environment Jupyter starts from."
        )
    return said


def _escaped(text: str) -> str:
    """A recorded text as literal Markdown: no emphasis, link or heading it did not mean."""
    return "".join(f"\\{c}" if c in _MARKDOWN else c for c in text)


_MARKDOWN = frozenset("\\`*_[]<>|~")  # inline marks; a title starts no block
