"""Full-text search: a Pagefind index of the rendered pages, built in a scratch folder.

The index is built from the pages in memory before anything is written, so it joins the
site's files and is written (and cleaned up) with them, all or nothing. Pagefind indexes
only what the templates mark with `data-pagefind-body` (lesson bodies, the glossary).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from .errors import BuildError

BUNDLE = "pagefind"
UNUSED = ("pagefind-component-ui", "pagefind-modular-ui")  # other UIs the site does not load


def search_index(
    files: dict[str, bytes], scratch: Path, log: TextIO = sys.stderr
) -> dict[str, bytes]:
    """The Pagefind bundle for these pages, by path inside the site; {} when it cannot be made.

    A missing binary is an error in CI and a one-line warning elsewhere: the site still
    works, and its search page says that the index was not built.
    """
    binary = _binary()
    if binary is None:
        message = "the Pagefind binary is missing (pip install -r requirements.lock)"
        if os.environ.get("CI") == "true":
            raise BuildError(message)
        print(f"warning: search index skipped: {message}", file=log)
        return {}
    pages, bundle = scratch / "pages", scratch / BUNDLE
    shutil.rmtree(scratch, ignore_errors=True)
    for name, data in files.items():
        if name.endswith(".html"):
            (pages / name).parent.mkdir(parents=True, exist_ok=True)
            (pages / name).write_bytes(data)
    _run([str(binary), "--site", str(pages), "--output-path", str(bundle), "--keep-index-url"])
    return {
        f"{BUNDLE}/{path.relative_to(bundle).as_posix()}": path.read_bytes()
        for path in sorted(bundle.rglob("*"))
        if path.is_file() and not path.name.startswith(UNUSED)
    }


def _binary() -> Path | None:
    try:
        from pagefind_bin import get_executable  # type: ignore[import-untyped]
    except ImportError:
        return None
    try:
        return Path(get_executable())
    except FileNotFoundError:
        return None


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()[-2000:]
        raise BuildError(f"Pagefind failed to build the search index:\n{output}")
