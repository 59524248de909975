"""python -m builder serve: the site over HTTP on localhost, rebuilt in memory as you type
(docs/site.md, Preview).

The build lives in a Session (builder.preview.session): each file event (watchfiles) is one
refresh that makes only the pages whose keys changed, served from memory; site/ is brought
up to date when the edits pause. Pages carry builder/preview/live.js, added on the way out
so it never reaches site/: over Server-Sent Events (/__events) it hears which files changed,
and a page whose own file changed gets its new <main> and title to swap in place
(builder.preview.hub.page_update). A failed build is shown over every open page until one
succeeds; the last good site stays served. With execution on, an example whose recording is
not fresh is re-recorded in the background, one lesson at a time, and the last good
recording stays until then. Editors' lock, swap and backup files and the builder's own
temporary files are no change. The HTTP side is builder/preview/http.py.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.artifact import Parts
from ..core.errors import BuildError
from ..core.fsutil import TEMPORARY
from ..core.observe import TEMPLATES, Paths, editor_file
from ..pipeline.index import Changes
from . import heap
from .http import Handler, listen, served_hosts
from .hub import Hub, page_update, problems
from .session import Session

if TYPE_CHECKING:
    from ..run.execute import Runner
    from .rerecord import Recorder

# After a file event, how long to wait for the rest of its burst: watchfiles hands a batch
# over once one step passes with no new event, 1-2 steps after the last (an editor's save
# is microseconds long); it wakes every step meanwhile, idle or not.
STEP_MS = 2
WATCH_MS = 300  # how often the watcher looks up from the OS's events (to stop when asked)
# No event for this long: the author paused, bring site/ up to date (the search bundles,
# the printable course, the files written), and an edit that lands meanwhile waits for it.
SETTLE_AFTER = 1.0
logger = logging.getLogger(__name__)


class Preview:
    """The running preview: its session, the files it serves, the HTTP server and the
    pages' streams; examples are re-recorded by `runner` (`--sandbox`'s; course.yml's
    `sandbox: true` is applied when they run)."""

    def __init__(
        self,
        paths: Paths,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        execute: bool = True,
        jobs: int = 1,
        runner: Runner | None = None,
    ) -> None:
        self.server = listen(host, port, functools.partial(Handler, self))
        address = self.server.server_address
        self.hosts = served_hosts(str(address[0]), address[1])  # what Host may say
        self.origins = frozenset(f"http://{name}" for name in self.hosts)  # and Origin
        self.paths = paths
        self.session = Session(paths, execute=execute)
        self.hub = Hub()
        self.files: dict[str, bytes] = {}  # replaced whole after each build, never changed
        self.parts: dict[str, Parts] = {}  # each page's (builder.core.artifact), as `files`
        self.changes: queue.Queue[list[str]] = queue.Queue()  # file event batches
        self.stopping = threading.Event()
        self.recorder: Recorder | None = None
        if execute:
            from .rerecord import Recorder

            self.recorder = Recorder(paths, self.hub, runner, jobs)
        self.serving = False  # shutdown() waits for serve_forever: forever, if never started

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> None:
        """Watch, then the first build (site/ brought up to date too), then serve: an edit
        made while the first build runs is the first rebuild."""
        ready = threading.Event()
        threading.Thread(target=self._watch, args=(ready,), daemon=True).start()
        ready.wait()
        if self.apply(self.session.start):
            self.apply(self.session.settle, "Wrote site/")
        heap.kept()
        self.serving = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _watch(self, ready: threading.Event) -> None:
        """Every batch of file events into `changes` (a thread: the OS's events queue up
        while a build runs, and none is lost between two batches). `ready` is set once the
        OS watches, or when it cannot: the preview then serves without rebuilding."""
        try:
            self._watch_folders(ready)
        except Exception as error:  # never a dead thread and a server that never starts
            logger.warning("warning: edits are not watched (%s); restart serve", error)
        finally:
            ready.set()

    def _watch_folders(self, ready: threading.Event) -> None:
        """Each folder of the course on its own, not recursively: watchfiles follows links
        when it walks a tree (a link to / in content/ walked into /proc and died), and the
        builder reads nothing through a link (builder.course.files.open_input). A folder made or
        removed lists them again; what appeared meanwhile is sent as a change."""
        from watchfiles import watch

        roots = [Path(os.path.abspath(p)) for p in (self.paths.content, self.paths.recordings)]
        roots.append(TEMPLATES)
        fresh: list[str] = []
        while not self.stopping.is_set():
            folders = watched_folders(roots)
            try:
                for events in watch(
                    *folders,
                    watch_filter=functools.partial(_inside, roots),
                    step=STEP_MS,
                    rust_timeout=WATCH_MS,
                    yield_on_timeout=True,
                    stop_event=self.stopping,
                    raise_interrupt=False,
                    recursive=False,
                    ignore_permission_denied=True,
                ):
                    ready.set()  # the first batch is empty: the OS watches from here on
                    changed = [path for _, path in events] + fresh
                    fresh = []
                    if changed:
                        self.changes.put(changed)
                    if any(_folder_event(change, path, folders) for change, path in events):
                        fresh = [path for _, path in events]
                        break
            except FileNotFoundError:  # a folder removed between listing and watching
                time.sleep(STEP_MS / 1000)

    def run(self, stop: threading.Event | None = None) -> None:
        """Rebuild on every change until Ctrl-C (or `stop`)."""
        dirty = untidy = False
        while not (stop and stop.is_set()):
            try:
                files = self.changes.get(timeout=SETTLE_AFTER)
            except queue.Empty:
                if dirty:
                    dirty = not self.apply(self._settle, "Wrote site/")
                    if not dirty:
                        heap.set_aside()
                        untidy = True
                elif untidy:  # a second quiet second
                    heap.kept()
                    untidy = False
            else:
                while not self.changes.empty():  # a burst: one rebuild
                    files += self.changes.get()
                dirty = self.rebuild(files) or dirty
            if self.recorder and self.session.course:
                self.recorder.poll(self.session.course, self.session.statuses)

    def _settle(self) -> list[str] | None:
        return self.session.settle(lambda: not self.changes.empty())

    def rebuild(self, files: Iterable[str]) -> bool:
        session = self.session
        if session.course is None:  # the first build failed: start again
            return self.apply(session.start, reload=True)
        changes = Changes.events(self.paths, files)
        with heap.paused(not changes.code):
            return self.apply(lambda: session.refresh(changes), reload=changes.code)

    def apply(
        self, step: Callable[[], list[str] | None], what: str = "Rebuilt", *, reload: bool = False
    ) -> bool:
        """Run a build step; tell the pages what changed (each open page whose file changed,
        its new <main> to swap in, or to reload: `reload`, a template changed), or show them
        why it failed; False if it failed or was put off (None: an edit came). Only Ctrl-C
        (KeyboardInterrupt) stops the server."""
        started = time.perf_counter()
        try:
            changed = step()
            if changed is None:
                return False
        except Exception as error:  # a BuildError, a bug, an OSError: never fatal here
            self.hub.publish(errors=problems(error))
            logger.error(  # a bug (not a BuildError) with its traceback
                "error: %s\n(still serving the last good site)",
                error,
                exc_info=not isinstance(error, BuildError),
            )
            return False
        before, parts = self.files, self.parts
        self.parts = self.session.parts()
        self.files = after = self.session.served()  # then the build's number (_Handler.do_GET)

        def updates(page: str) -> dict[str, Any] | None:
            old, new = before.get(page), after.get(page)
            was = None if old is None else (old, parts.get(page))
            now = None if new is None else (new, self.parts.get(page))
            return page_update(was, now, reload=reload)

        self.hub.publish(changed, updates, errors=[])
        seconds = time.perf_counter() - started
        logger.info("%s: %d file(s) changed in %.2f s.", what, len(changed), seconds)
        return True

    def close(self) -> None:
        self.stopping.set()
        self.hub.close()
        if self.serving:
            self.server.shutdown()
        self.server.server_close()
        if self.recorder:
            self.recorder.stop()
        self.session.close()
        heap.given_back()


def serve(preview: Preview) -> None:
    """Build, serve, and rebuild on every change until Ctrl-C, then close the preview."""
    try:
        preview.start()
        logger.info("Serving %s/ at %s (Ctrl-C stops)", preview.paths.out, preview.url)
        preview.run()
    finally:
        preview.close()


def watched_folders(roots: Iterable[Path]) -> set[str]:
    """Every folder under `roots`, never through a link (nor into __pycache__ or a hidden
    folder); a root that is missing or a link is watched from its parent, to see it made."""
    found: list[str] = []
    for root in roots:
        if root.is_symlink() or not root.is_dir():
            found += [str(root.parent)] if root.parent.is_dir() else []
            continue
        stack = [str(root)]
        while stack:
            folder = stack.pop()
            found.append(folder)
            try:
                with os.scandir(folder) as entries:
                    stack += [e.path for e in entries if _walked(e)]
            except OSError:  # unreadable: not watched, as watchfiles ignores it
                continue
    return set(found)


def _walked(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    return entry.is_dir(follow_symlinks=False) and name[0] != "." and name != "__pycache__"


def _inside(roots: list[Path], change: object, path: str) -> bool:
    """A file event under one of `roots` (a root watched from its parent sees its siblings)
    that may change the site (`wanted`)."""
    return wanted(change, path) and any(
        path == str(root) or path.startswith(f"{root}{os.sep}") for root in roots
    )


def _folder_event(change: object, path: str, folders: set[str]) -> bool:
    """A folder made (a new lesson) or one of the watched folders gone."""
    from watchfiles import Change

    if change == Change.added:
        return os.path.isdir(path) and not os.path.islink(path)
    return change == Change.deleted and path in folders


def wanted(change: object, path: str) -> bool:
    """A file event that may change the site: not an editor's lock, swap or backup file,
    nor a temporary file the builder renames into place."""
    name = Path(path).name
    return not (editor_file(name) or TEMPORARY.fullmatch(name) or "__pycache__" in path)
