"""python -m builder serve: site/ over HTTP on localhost, rebuilt when its sources change.

Pages are served with a small reload script added on the way out, so the script exists
only in the preview, never in site/. The browser polls /__reload for the build number
and reloads when it changes. A build that fails, whatever the reason, prints its error,
keeps the last site and shows the error at the top of every served page until a build
succeeds; the next change rebuilds. Editors' lock, swap and backup files are no change.
"""

from __future__ import annotations

import functools
import html
import sys
import threading
import time
import traceback
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from .build import Paths, build
from .errors import BuildError
from .manifest import TEMPLATES, snapshot

RELOAD_PATH = "/__reload"
RELOAD_SCRIPT = (
    b"<script>(function(){var seen=null;setInterval(function(){fetch('/__reload')"
    b".then(function(r){return r.text()}).then(function(n){if(seen!==null&&n!==seen)"
    b"location.reload();seen=n}).catch(function(){})},1000)})();</script>"
)
POLL_SECONDS = 0.5
ERROR_BANNER = (
    '<pre role="alert" style="white-space:pre-wrap;margin:0;padding:1em;background:#fde8e8;'
    'color:#611;border-bottom:2px solid #c00">The last rebuild failed; this is the last good '
    "site.\n{}</pre>"
)


class Preview:
    """The build number the pages poll for, bumped after every rebuild, and the last
    rebuild's error ("" when it succeeded)."""

    def __init__(self) -> None:
        self.generation = 0
        self.error = ""


def serve(
    paths: Paths,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    execute: bool = True,
    jobs: int = 1,
    log: TextIO = sys.stderr,
) -> None:
    """Build, serve, and rebuild on every change until Ctrl-C."""
    preview = Preview()
    rebuild = functools.partial(_rebuild, paths, preview, execute=execute, jobs=jobs, log=log)
    rebuild()
    handler = functools.partial(_Handler, preview, directory=str(paths.out))
    server = ThreadingHTTPServer((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(
        f"Serving {paths.out}/ at http://{host}:{server.server_address[1]}/ (Ctrl-C stops)",
        file=log,
    )
    try:
        _watch(paths, preview, rebuild)
    finally:
        server.shutdown()
        server.server_close()


def _watch(paths: Paths, preview: Preview, rebuild: Any) -> None:
    watched = [paths.content, paths.recordings, TEMPLATES]
    seen = snapshot(watched)
    while True:
        time.sleep(POLL_SECONDS)
        now = snapshot(watched)
        if now != seen:
            rebuild()
            preview.generation += 1  # pages reload: to the new site, or to show the error
            seen = snapshot(watched)  # a build may have written recordings


def _rebuild(paths: Paths, preview: Preview, *, execute: bool, jobs: int, log: TextIO) -> bool:
    """Build; on any failure say why, keep serving the last good site and show the error
    on its pages. Only Ctrl-C (KeyboardInterrupt) stops the server."""
    started = time.perf_counter()
    try:
        result = build(paths, execute=execute, jobs=jobs, log=log)
    except BuildError as error:
        preview.error = str(error)
    except Exception as error:  # a bug, or an OSError no check foresaw: never fatal here
        preview.error = f"{type(error).__name__}: {error} (a builder bug: please report it)"
        traceback.print_exc(file=log)
    else:
        preview.error = ""
        seconds = time.perf_counter() - started
        print(f"Rebuilt: {result.written} file(s) written in {seconds:.2f} s.", file=log)
        return True
    print(f"error: {preview.error}\n(still serving the last good site)", file=log)
    return False


class _Handler(SimpleHTTPRequestHandler):
    def __init__(self, preview: Preview, *args: Any, **kwargs: Any) -> None:
        self.preview = preview
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == RELOAD_PATH:
            self._send(200, str(self.preview.generation).encode(), "text/plain")
            return
        file = Path(self.translate_path(path))
        if file.is_dir():
            file = file / "index.html"
        if file.suffix == ".html" or not file.exists():
            self._page(file)
            return
        super().do_GET()

    def _page(self, file: Path) -> None:
        status = 200
        if not file.is_file():
            status, file = 404, Path(self.directory) / "404.html"
        data = file.read_bytes() if file.is_file() else b"<h1>Not found</h1>"
        self._send(status, inject_reload(data, self.preview.error), "text/html; charset=utf-8")

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


def inject_reload(page: bytes, error: str = "") -> bytes:
    """The page with the reload script just before </body> (or at its end), and the last
    rebuild's error, if any, in a banner at the top."""
    index = page.rfind(b"</body>")
    page = page + RELOAD_SCRIPT if index < 0 else page[:index] + RELOAD_SCRIPT + page[index:]
    if not error:
        return page
    banner = ERROR_BANNER.format(html.escape(error)).encode()
    start = page.find(b"<body")
    start = page.find(b">", start) + 1 if start >= 0 else 0
    return page[:start] + banner + page[start:]
