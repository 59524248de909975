"""A lesson's example as a Jupyter notebook, written beside its page and its example.py:
a markdown cell with the lesson's title and a link back to its page, then one code cell
holding the example with the output the recording holds (not a new run) as its stdout.

Written as the JSON nbformat writes for notebook format 4.5 (the same bytes `nbformat.writes`
gives, which tests/render/test_notebook.py checks with nbformat's own writer and schema),
not through nbformat's constructors: they validate every cell of every notebook against
the schema, work a cold build would repeat for each lesson. The same inputs give the same
bytes (fixed cell ids, sorted keys, no run-time metadata).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.artifact import Made

NOTEBOOK_FILE = "example.ipynb"  # beside marks.EXAMPLE_FILE in each lesson's folder
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
) -> Made:
    """The notebook file of the lesson at `folder` ("l/<slug>/"): `run` is what the example
    needs besides its code (the files it reads or imports, which the page offers beside it,
    and the lesson's env: as "NAME=value"), `stdout` the recorded output (None: not recorded
    yet, and the code cell has no output); `page`: the lesson page's address (absolute when
    course.yml says where the site is published, so a downloaded notebook still leads back)."""
    name = f"{folder}{NOTEBOOK_FILE}"
    outputs = [] if stdout is None else [_stream(stdout)]
    code = _cell("code", "example", source.decode("utf-8-sig"))
    code |= {"execution_count": None if stdout is None else 1, "outputs": outputs}
    about = _intro(folder, title, course, run, stdout, provenance, page)
    notebook = {
        "cells": [_cell("markdown", "lesson", about), code],
        "metadata": _metadata(),
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = json.dumps(notebook, indent=1, sort_keys=True, separators=_JSON, ensure_ascii=False)
    return Made({name: (text + "\n").encode("utf-8")})


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
    link = f"[{_escaped(title)}]({page})"
    output = (
        f"The output under the code is the recorded one ({provenance}), "
        "not a run on your machine: running the cell prints yours."
        if stdout is not None
        else "This lesson has no recording yet, so the code cell has no output."
    )
    return (
        f"# {_escaped(title)}\n\n"
        f"The example of the lesson {link} (`{folder}` of the site of *{_escaped(course)}*), "
        f"as a notebook.{_needs(*run)}\n\n{output}"
    )


def _needs(files: tuple[str, ...], settings: tuple[str, ...]) -> str:
    """What it takes besides the notebook, as the page's "Run it yourself" says."""
    said = ""
    if files:
        names = ", ".join(f"`{name}`" for name in files)
        said += f" Put {names} (downloads on the lesson's page) in the notebook's folder."
    if settings:
        said += (
            f" The lesson runs it with `{' '.join(settings)}`: "
            "set these in the environment Jupyter starts from."
        )
    return said


def _escaped(text: str) -> str:
    """`text` as literal Markdown: no emphasis, link or heading it did not mean."""
    return "".join(f"\\{c}" if c in _MARKDOWN else c for c in text)


_MARKDOWN = frozenset("\\`*_[]<>|~")  # inline marks; a title starts no block
