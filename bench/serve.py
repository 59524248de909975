"""Time `python -m builder serve` from an edit to the screen, in Chromium through Playwright.

    python bench/serve.py                    # 100 and 1,000 lessons, 10 edits each
    python bench/serve.py --scales 1000 --edits 20
    python bench/serve.py --mkdocs /tmp/mk/bin/mkdocs   # the same edit with `mkdocs serve`
    python bench/serve.py --hugo hugo                   # and with `hugo server` (Debian's hugo)
    python bench/serve.py --baseline /tmp/old           # and another checkout's serve, same run

For each scale, bench/generate.py writes a course, `python -m builder render` builds it
once (as an author's checkout has), and the preview is started on a free port. A lesson
page is opened; then, `--edits` times, a sentence is appended to its lesson.md and the
time is taken from the write until the sentence is in the page's DOM (polled every
2 ms). The median and the slowest are printed. With --mkdocs, the same lesson bodies (prose
and code, no front matter) are served by `mkdocs serve` and edited the same way; with --hugo,
by `hugo server` (livereload, its default fast render), each body a page with its title,
in one minimal layout; with --baseline, by another checkout's `serve` (its own builder/, on
its own copy of the course), timed just before this one's. The rows of one scale are timed
one after the other, in one run, so that their ratios hold on a machine whose speed drifts.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.generate import generate, lesson_id  # noqa: E402
from bench.sites import hugo_site, lesson_bodies  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
EDITED = 5  # the lesson edited: one in the first arc, with lessons before and after it
START_TIMEOUT = 600.0
EDIT_TIMEOUT = 300.0  # mkdocs rebuilds 1,000 pages on every edit
PAUSE = 1.6  # between edits, as an author pauses: the preview writes site/ meanwhile


def time_edits(page: Any, lesson: Path, edits: int) -> list[float]:
    """Seconds from each append to `lesson` until its sentence is in `page`'s DOM. The page
    first gets a pause to open its connection to the server (Hugo's livereload misses an
    edit saved before its WebSocket is open)."""
    seconds = []
    time.sleep(PAUSE)
    for n in range(edits):
        sentence = f"Edit number {n} at {time.time_ns()} is here."
        started = time.perf_counter()
        with open(lesson, "a", encoding="utf-8") as handle:
            handle.write(f"\n{sentence}\n")
        while not _shows(page, sentence):
            time.sleep(0.002)
            if time.perf_counter() - started > EDIT_TIMEOUT:
                raise RuntimeError(f"the edit never showed: {sentence}")
        seconds.append(time.perf_counter() - started)
        time.sleep(PAUSE)
    return seconds


def _shows(page: Any, sentence: str) -> bool:
    try:
        return bool(page.evaluate("s => document.body.textContent.includes(s)", sentence))
    except Exception:  # the page is being replaced
        return False


@contextmanager
def server(command: list[str], pattern: str, cwd: Path, root: Path = ROOT) -> Iterator[str]:
    """A server started as a subprocess; yields the URL it prints (matched by `pattern`)."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (the server writes into it)
    process = subprocess.Popen(
        command, cwd=cwd, env=_env(root), stderr=log, stdout=log, start_new_session=True
    )
    try:
        started = time.perf_counter()
        while True:
            log.seek(0)
            found = re.search(pattern, log.read().decode(errors="replace"))
            if found:
                break
            if process.poll() is not None or time.perf_counter() - started > START_TIMEOUT:
                log.seek(0)
                raise RuntimeError(f"the server did not start:\n{log.read().decode()[-2000:]}")
            time.sleep(0.1)
        yield found.group(1)
    except Exception:
        log.seek(0)
        print(f"the server's log:\n{log.read().decode(errors='replace')[-3000:]}", file=sys.stderr)
        raise
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def bench_builder(
    browser: Any, count: int, work: Path, edits: int, root: Path = ROOT
) -> list[float]:
    """`serve` of the checkout at `root` (this one's by default)."""
    dest = work / f"course-{count}" if root == ROOT else work / f"course-{count}-{root.name}"
    generate(count, dest)
    folders = ["--content", "content", "--recordings", "recordings", "--out", "site"]
    folders += ["--cache", ".cache"]
    python = [sys.executable, "-m", "builder"]
    subprocess.run([*python, "render", *folders], cwd=dest, check=True, env=_env(root))
    command = [*python, "serve", *folders, "--port", "0", "--no-execute"]
    with server(command, r"at (http://\S+/) \(Ctrl-C", dest, root) as url:
        page = browser.new_page()
        page.goto(f"{url}l/s{lesson_id(EDITED)}/")
        lesson = dest / "content" / "lessons" / lesson_id(EDITED) / "lesson.md"
        return time_edits(page, lesson, edits)


def source(count: int, work: Path) -> Path:
    """The content folder of a generated course of `count` lessons, the other generators'
    pages are made from (bench/sites.py)."""
    dest = work / f"source-{count}"
    if not dest.exists():
        generate(count, dest)
    return dest / "content"


def bench_mkdocs(browser: Any, mkdocs: str, count: int, work: Path, edits: int) -> list[float]:
    """The same edit with `mkdocs serve`, over the lesson bodies as plain Markdown pages."""
    dest = work / f"mkdocs-{count}"
    docs = dest / "docs"
    docs.mkdir(parents=True)
    for name, _, body in lesson_bodies(source(count, work)):
        (docs / f"{name}.md").write_text(body)
    (docs / "index.md").write_text("# Home\n")
    (dest / "mkdocs.yml").write_text("site_name: bench\n")
    command = [mkdocs, "serve", "--dev-addr", f"127.0.0.1:{_free_port()}"]
    with server(command, r"Serving on (http://\S+/)", dest) as url:
        page = browser.new_page()
        page.goto(f"{url}{lesson_id(EDITED)}/")
        return time_edits(page, docs / f"{lesson_id(EDITED)}.md", edits)


def bench_hugo(browser: Any, hugo: str, count: int, work: Path, edits: int) -> list[float]:
    """The same edit with `hugo server`, over the lesson bodies as Hugo pages
    (bench/sites.py `hugo_site`)."""
    dest = work / f"hugo-{count}"
    pages = hugo_site(dest, source(count, work))
    port = _free_port()
    command = [hugo, "server", "--bind", "127.0.0.1", "--port", str(port)]
    command += ["--baseURL", f"http://127.0.0.1:{port}/"]
    with server(command, r"Web Server is available at (http://\S+/)", dest) as url:
        page = browser.new_page()
        page.goto(f"{url}l/{lesson_id(EDITED)}/")
        return time_edits(page, pages / f"{lesson_id(EDITED)}.md", edits)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(root: Path = ROOT) -> dict[str, str]:
    """This checkout's builder (or `root`'s), whatever the interpreter's path says."""
    return {**os.environ, "PYTHONPATH": str(root)}


def report(name: str, count: int, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    print(
        f"{name:28} {count:>6,} lessons: median {statistics.median(ms):5.0f} ms, "
        f"fastest {ms[0]:4.0f}, slowest {ms[-1]:5.0f} ({len(ms)} edits)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="100,1000", help="comma-separated lesson counts")
    parser.add_argument("--edits", type=int, default=10, help="edits per scale (median)")
    parser.add_argument("--mkdocs", help="an mkdocs executable to time the same edit with")
    parser.add_argument("--mkdocs-edits", type=int, default=5, help="(a rebuild is slow)")
    parser.add_argument("--hugo", help="a hugo executable to time the same edit with")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temp folder)")
    parser.add_argument("--baseline", type=Path, help="another checkout whose serve to time too")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-serve-") as scratch:
        work = args.work or Path(scratch)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            for count in (int(n) for n in args.scales.split(",")):
                if args.baseline:
                    baseline = args.baseline.resolve()
                    seconds = bench_builder(browser, count, work, args.edits, baseline)
                    report(f"serve ({baseline.name}): edit to screen", count, seconds)
                seconds = bench_builder(browser, count, work, args.edits)
                report("serve: edit to screen", count, seconds)
                if args.hugo:
                    seconds = bench_hugo(browser, args.hugo, count, work, args.edits)
                    report("hugo server: edit to screen", count, seconds)
                if args.mkdocs:
                    seconds = bench_mkdocs(browser, args.mkdocs, count, work, args.mkdocs_edits)
                    report("mkdocs serve: edit to screen", count, seconds)
            browser.close()


if __name__ == "__main__":
    main()
