"""A lesson's example as a Jupyter notebook, written beside its page and its example.py:
a markdown cell with the lesson's title and a link back to its page, then one code cell
holding the example with the output the recording holds (not a new run) as its stdout.

Written with nbformat and checked against its schema (`nbformat.validate`) as it is made;
the same inputs give the same bytes (fixed cell ids, sorted keys, no run-time metadata).
"""

from __future__ import annotations

from typing import Any

from ..core.artifact import Made
from ..core.errors import RenderError

NOTEBOOK_FILE = "example.ipynb"  # beside marks.EXAMPLE_FILE in each lesson's folder
PAGE = "index.html"  # the lesson's page, in the same folder on the site


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
    import nbformat
    from nbformat import v4

    name = f"{folder}{NOTEBOOK_FILE}"
    code = v4.new_code_cell(source.decode("utf-8-sig"), id="example")
    if stdout is not None:
        code.execution_count = 1
        code.outputs = [v4.new_output("stream", name="stdout", text=stdout)]
    about = _intro(folder, title, course, run, stdout, provenance, page)
    intro = v4.new_markdown_cell(about, id="lesson")
    notebook = v4.new_notebook(cells=[intro, code], metadata=_metadata())
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as error:  # a bug in this module, not in the course
        what = str(error).splitlines()[0]
        hint = "the builder made it: report this with the lesson's example and recording"
        raise RenderError(f"not a valid notebook ({what})", path=name, hint=hint) from error
    text = nbformat.writes(notebook, version=4)
    return Made({name: (text + "\n").encode("utf-8")})


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
