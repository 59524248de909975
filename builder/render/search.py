"""Full-text search: Pagefind indexes of the rendered pages, as artifacts (builder.pipeline.make).

The index is split into bundles that static/search.js asks and merges in the reader's
browser: the main one in pagefind/ (the glossary), and one per run of up to BUNDLE_LESSONS
lessons of an arc in search-index/<arc>-<n>/. Pagefind has no incremental mode, so an edit
re-indexes only its page's bundle, and a cold build indexes the bundles in parallel. A
bundle's key is made of its pages' keys, so it is never older than its pages. Pagefind
indexes only what the templates mark `data-pagefind-body`; each bundle also holds that text
as a script, for a site opened from disk (builder/render/offline.py).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import resource
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.artifact import Artifact, Made
from ..core.errors import BuildError, PutOff
from ..core.fsutil import REMEDIES, cannot_write
from ..core.lineage import dies_with_parent
from ..core.scratch import MEMORY, scratch
from .offline import script

if TYPE_CHECKING:
    from ..course.model import Course
    from .renderer import Renderer

logger = logging.getLogger(__name__)
BUNDLE = "pagefind"
MERGED = "search-index"
OFFLINE = "offline.js"  # in each bundle's folder: its pages for a site opened from disk
BUNDLE_LESSONS = 50
RUN_S = 300  # the longest a Pagefind run may take
STOP_POLL_S = 0.005  # how often a run that may be stopped asks whether to stop
Stop = Callable[[], bool] | None  # asked while Pagefind runs: stop now?
# Pagefind's UIs and highlighter: the site has its own (static/search.js)
UNUSED = ("pagefind-component-ui", "pagefind-modular-ui", "pagefind-ui", "pagefind-highlight")


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


def bundle_artifacts(
    course: Course,
    keys: Mapping[str, str],
    read: Callable[[str], bytes],
    renderer: Renderer,
    stop: Stop = None,
) -> list[Artifact]:
    """Each search bundle, keyed by the keys of its pages (`keys`: the key of the artifact
    each site file came from) and made from their bytes (`read(name)`); `stop`: asked while
    Pagefind runs, which it stops when it says so (PutOff)."""
    return [
        renderer.artifact("", _made, bundle, Pages(tuple((n, keys[n]) for n in names), read, stop))
        for bundle, names in bundles(course).items()
    ]


class Pages:
    """Pages of the site, each with the key of the artifact it came from, how to read their
    bytes, and whether to stop indexing them. As an argument, it is its names and keys: a
    key says what its bytes are."""

    def __init__(
        self, keys: tuple[tuple[str, str], ...], read: Callable[[str], bytes], stop: Stop = None
    ) -> None:
        self.keys = keys
        self.read = read
        self.stop = stop

    def __digest__(self) -> tuple[tuple[str, str], ...]:
        return self.keys


def _made(bundle: str, pages: Pages) -> Made:
    """The bundle's Pagefind files, and its offline index made from them
    (builder/render/offline.py): a page opened from disk searches only that."""
    names = [name for name, _ in pages.keys]
    found = index(bundle, names, pages.read, pages.stop)
    if not found:
        return Made(found)
    return Made(found | {f"{bundle_folder(bundle)}{OFFLINE}": script(names, found)})


def index(
    bundle: str, names: list[str], read: Callable[[str], bytes], stop: Stop = None
) -> dict[str, bytes]:
    """The Pagefind bundle of the pages `names`, by path inside the site; {} when it
    cannot be made. A missing binary is an error in CI and a one-line warning elsewhere:
    the site still works, and its search page says that the index was not built. `stop`
    is asked every STOP_POLL_S while Pagefind runs: when it says so, the run is killed and
    PutOff raised."""
    binary = _binary()
    if binary is None:
        message = "the Pagefind binary is missing (pip install -r requirements.lock)"
        if os.environ.get("CI") == "true":
            raise BuildError(message)
        logger.warning("warning: search index skipped: %s", message)
        return {}
    with scratch("search", _memory()) as folder:  # swept by the next build if this one is killed
        pages, output = folder / "pages", folder / BUNDLE
        _copy_pages(pages, names, read)
        _run(
            [str(binary), "--site", str(pages), "--output-path", str(output), "--keep-index-url"],
            stop,
            output,
        )
        return {
            f"{bundle_folder(bundle)}{path.relative_to(output).as_posix()}": path.read_bytes()
            for path in sorted(output.rglob("*"))
            if path.is_file() and not path.name.startswith(UNUSED)
        }


def _copy_pages(pages: Path, names: Iterable[str], read: Callable[[str], bytes]) -> None:
    """The pages Pagefind reads, in its scratch folder; a full disk there names the file."""
    for name in names:
        path = pages / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(read(name))
        except OSError as error:
            failure = OSError(error.errno, error.strerror, error.filename or str(path))
            raise cannot_write(failure, "the search index was not built") from None


def _memory() -> str | None:
    """Where a bundle's scratch folder goes: in memory (/dev/shm) when there is one and
    TMPDIR does not say otherwise, else the temporary folder. A bundle writes and deletes
    about 200 files there; on a disk, creating and deleting them costs CPU, and the deletions
    slow the site's file creations that follow (ext4 checks each new inode against those
    deleted recently)."""
    if "TMPDIR" not in os.environ and os.access(MEMORY, os.W_OK | os.X_OK):
        return MEMORY
    return None


@cache
def _binary() -> Path | None:
    """The Pagefind binary pagefind_bin ships, found where its get_executable() looks
    (the package's own folder) without importing it: that import brings in logging and
    platform, a share of a one-page rebuild's search that finding a file does not need."""
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


def _run(command: list[str], stop: Stop = None, output: Path | None = None) -> None:
    """Pagefind, to its end, or killed: when `stop()` says so (PutOff), or after RUN_S
    (a BuildError that says so). It runs with SIGXFSZ at its default (Popen restores it): a
    Pagefind that ignored it wrote every file past `ulimit -f` cut short, and said it was done."""
    if stop is not None and stop():
        raise PutOff
    deadline = time.monotonic() + RUN_S
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=dies_with_parent()
    ) as process:
        while True:
            try:  # communicate() again after its timeout loses no output
                out, err = process.communicate(timeout=STOP_POLL_S if stop else RUN_S)
                break
            except subprocess.TimeoutExpired:
                stopped = stop is not None and stop()
                if stopped or time.monotonic() >= deadline:
                    process.kill()
                    process.communicate()
                    if stopped:
                        raise PutOff from None
                    raise BuildError(
                        f"Pagefind ran for {RUN_S} s without finishing and was stopped: the "
                        "search index was not built",
                        hint="run the command again; if Pagefind stops again, reinstall it "
                        "(pip install -r requirements.lock)",
                    ) from None
    if process.returncode != 0:  # Pagefind writes UTF-8 whatever the locale says
        raise _failed(process.returncode, (out + err).decode("utf-8", "replace"), output)


NOT_BUILT = "the search index was not built"
_OS_ERROR = re.compile(r"\(os error ([0-9]+)\)")  # how Rust shows an OSError


def _failed(returncode: int, log: str, output: Path | None) -> BuildError:
    """Why Pagefind failed: a file past the file size limit (killed by SIGXFSZ; the file it
    was writing is the one at the limit) or an OSError it reports (named with its errno's
    remedy, as the builder's own writes are), else its log's end."""
    where = output or Path("Pagefind's output folder")
    if returncode == -signal.SIGXFSZ:
        efbig = OSError(errno.EFBIG, os.strerror(errno.EFBIG), str(_at_limit(output) or where))
        return cannot_write(efbig, f"Pagefind was stopped at the file size limit; {NOT_BUILT}")
    found = _OS_ERROR.search(log)
    if found and int(found[1]) in REMEDIES:
        number = int(found[1])
        lines = [line.strip() for line in log.splitlines() if found[0] in line]
        error = OSError(number, os.strerror(number), f"{where} (Pagefind)")
        return cannot_write(error, f"Pagefind said: {lines[0][-300:]}; {NOT_BUILT}")
    return BuildError(f"Pagefind failed to build the search index:\n{log.strip()[-2000:]}")


def _at_limit(output: Path | None) -> Path | None:
    """The file under `output` as large as the file size limit: the one a write past it
    stopped."""
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if output is None or limit == resource.RLIM_INFINITY:
        return None
    full = (p for p in sorted(output.rglob("*")) if p.is_file() and p.stat().st_size >= limit)
    return next(full, None)
