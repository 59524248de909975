"""Full-text search: Pagefind indexes of the rendered pages, built from copies in .cache/.

The site's search is split into bundles, merged in the reader's browser (Pagefind's
`mergeIndex`): the main one in pagefind/ (the glossary, and the search UI), and one per run
of up to BUNDLE_LESSONS lessons of an arc in search-index/<arc>-<n>/. Pagefind has no
incremental mode, so an edit re-indexes only the bundle of the page it changed (a tenth of
a second) instead of the whole course (two seconds at 1,000 lessons), and a cold build
indexes the bundles in parallel. Each is built before anything is written, and joins the
site's files, written (and cleaned up) with them, all or nothing.
Pagefind indexes only what the templates mark with `data-pagefind-body`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .errors import BuildError

if TYPE_CHECKING:
    from .course import Course

BUNDLE = "pagefind"
MERGED = "search-index"
BUNDLE_LESSONS = 50
UNUSED = ("pagefind-component-ui", "pagefind-modular-ui")  # other UIs the site does not load
UI = ("pagefind-ui", "pagefind-highlight")  # loaded from the main bundle only


def bundles(course: Course) -> dict[str, list[str]]:
    """The pages of each search bundle, by bundle id ("" for the main one)."""
    result = {"": ["glossary/index.html"]}
    for arc, lessons in course.by_arc().items():
        for n, start in enumerate(range(0, len(lessons), BUNDLE_LESSONS), start=1):
            chunk = lessons[start : start + BUNDLE_LESSONS]
            result[f"{arc}-{n}"] = [f"{lesson.url}index.html" for lesson in chunk]
    return result


def bundle_folder(bundle: str) -> str:
    """Where a bundle lives inside the site."""
    return f"{BUNDLE}/" if not bundle else f"{MERGED}/{bundle}/"


def search_index(
    pages: dict[str, str], read: Callable[[str], bytes], scratch: Path, log: TextIO = sys.stderr
) -> dict[str, bytes]:
    """The Pagefind bundle of `pages` (name -> a key of its bytes), by path inside the bundle;
    {} when it cannot be made.

    Pagefind reads the pages from `scratch`/pages, which keeps them between builds with a
    list of their keys: only a page whose key changed is written again (`read(name)` gives
    its bytes). A missing binary is an error in CI and a one-line warning elsewhere: the
    site still works, and its search page says that the index was not built.
    """
    binary = _binary()
    if binary is None:
        message = "the Pagefind binary is missing (pip install -r requirements.lock)"
        if os.environ.get("CI") == "true":
            raise BuildError(message)
        print(f"warning: search index skipped: {message}", file=log)
        return {}
    folder, bundle, listing = scratch / "pages", scratch / BUNDLE, scratch / "pages.json"
    try:
        copied = json.loads(listing.read_bytes())
    except (OSError, ValueError):
        copied = None
    if not isinstance(copied, dict) or not folder.is_dir():
        shutil.rmtree(scratch, ignore_errors=True)
        copied = {}
    for name in copied.keys() - pages.keys():
        (folder / name).unlink(missing_ok=True)
    for name, key in pages.items():
        if copied.get(name) != key:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(read(name))
    listing.write_text(json.dumps(pages))  # after the pages: it vouches for them
    shutil.rmtree(bundle, ignore_errors=True)
    _run([str(binary), "--site", str(folder), "--output-path", str(bundle), "--keep-index-url"])
    return {
        path.relative_to(bundle).as_posix(): path.read_bytes()
        for path in sorted(bundle.rglob("*"))
        if path.is_file() and not path.name.startswith(UNUSED)
    }


@cache
def _binary() -> Path | None:
    """The Pagefind binary pagefind_bin ships, found where its get_executable() looks
    (the package's own folder) without importing it: that import costs 25 ms of logging and
    platform, a tenth of a one-page rebuild's search."""
    from importlib.util import find_spec

    spec = find_spec("pagefind_bin")
    if spec is None or spec.origin is None:
        return None
    for name in ("pagefind_extended", "pagefind"):  # get_executable's order (not Windows)
        candidate = Path(spec.origin).parent / name
        if candidate.is_file():
            return candidate
    try:  # anything else: ask the package itself
        from pagefind_bin import get_executable  # type: ignore[import-untyped]

        return Path(get_executable())
    except (ImportError, FileNotFoundError):
        return None


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()[-2000:]
        raise BuildError(f"Pagefind failed to build the search index:\n{output}")
