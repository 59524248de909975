"""One recorded fixture site, one HTTP server and one Chromium for the whole session; the
real course loaded once, and `new_page` for pages in the contexts a test asks for.

In CI (CI=true) a missing Chromium or Playwright fails the tests instead of skipping them.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from builder.course.load import load_course
from builder.course.model import Course
from tests.helpers import ROOT, constructs_course

LAPTOP = {"width": 1280, "height": 800}
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def site(recorded_template: Path) -> Path:
    """The fixture course's site, recorded and built (search index included) once."""
    out = recorded_template / "site"
    assert (out / "search-index" / "main" / "offline.js").exists(), "the search index was not built"
    return out


class _Quiet(SimpleHTTPRequestHandler):
    """A static host: a missing page gets the site's 404.html with status 404, whatever its
    depth (as GitHub Pages, Netlify and most hosts do)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def list_directory(self, path: Any) -> None:  # a folder without index.html: not found
        self.send_error(404)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "site" / "404.html"
        if code != 404 or not page.is_file() or self.command != "GET":
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    """`folder`/site/ served over HTTP under a sub-path (/site/), as on any static host."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/site/"


@pytest.fixture(scope="session")
def base_url(site: Path) -> Iterator[str]:
    """The fixture course's site served over HTTP under a sub-path (/site/)."""
    server, url = _serve(site.parent)
    yield url
    server.shutdown()
    server.server_close()


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def course_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real course (content/ and its committed recordings), rendered once per session
    into a temporary folder with its search index; nothing is executed."""
    root = tmp_path_factory.mktemp("course")
    out = root / "site"
    # The revision the site is built from (its footer names it), kept beside it: a commit
    # made while the session runs moves HEAD, not what this site says.
    head = ["git", "rev-parse", "--short", "HEAD"]
    revision = subprocess.run(head, cwd=REPO, capture_output=True, text=True).stdout.strip()
    (root / "revision").write_text(revision)
    command = [sys.executable, "-m", "builder", "render", "--content", "content"]
    command += ["--recordings", "recordings", "--out", str(out), "--cache", str(root / "cache")]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    assert (out / "search-index" / "main" / "offline.js").exists(), "the search index was not built"
    return out


@pytest.fixture(scope="session")
def course_url(course_site: Path) -> Iterator[str]:
    """The real course's site served over HTTP under /site/, 404.html for missing pages."""
    server, url = _serve(course_site.parent)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def constructs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course with every construct of issue 41 (tests/fixtures/constructs-course),
    recorded by the builder through the real subprocess (plain Python: no JAX) and built
    once per session."""
    from builder.pipeline.build import build

    paths = constructs_course(tmp_path_factory.mktemp("constructs"))
    build(paths, execute=True, jobs=2)
    return paths.out


@pytest.fixture(scope="session")
def constructs_url(constructs_site: Path) -> Iterator[str]:
    """The constructs course's site served over HTTP under /site/."""
    server, url = _serve(constructs_site.parent)
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@dataclass
class Watch:
    """Everything a page did wrong: console errors, failed or outside requests."""

    allowed: tuple[str, ...]
    problems: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url} {r.failure}"))
        page.on("response", self._response)
        page.on("request", self._request)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def _request(self, request: Any) -> None:
        if not request.url.startswith(self.allowed):
            self.problems.append(f"request left the site: {request.url}")


@pytest.fixture
def watch(base_url: str, site: Path) -> Iterator[Watch]:
    found = Watch(allowed=(base_url, site.as_uri(), "data:", "blob:"))
    yield found
    assert not found.problems, "\n".join(found.problems)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(5000)
    yield context
    context.close()


@pytest.fixture
def page(context: Any, watch: Watch) -> Any:
    page = context.new_page()
    watch.attach(page)
    return page


@pytest.fixture(scope="session")
def course() -> Course:
    """The real course, as content/ holds it."""
    return load_course(ROOT / "content")


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """make(scheme, viewport, **context options): a page in a context of its own, every
    context closed afterwards."""
    contexts: list[Any] = []

    def make(scheme: str = "light", viewport: dict[str, int] = LAPTOP, **options: Any) -> Any:
        context = browser.new_context(color_scheme=scheme, viewport=viewport, **options)
        context.set_default_timeout(15_000)  # a shared, loaded machine
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()
