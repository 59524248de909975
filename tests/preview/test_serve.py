"""The preview: the in-memory session (builder.preview.session), the server and its event stream
(builder.preview.serve), and background re-recording (builder.preview.rerecord). Browser behaviour is in
tests/browser/test_preview.py."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from builder.build import manifest
from builder.build.manifest import TEMPLATES, Manifest
from builder.build.pipeline import build
from builder.core.errors import RenderError
from builder.core.observe import Paths
from builder.core.store import Store
from builder.preview.hub import page_update
from builder.preview.serve import LIVE_SCRIPT, Preview, inject_live, problems, wanted
from builder.preview.session import Changed, Session
from builder.run.execute import Execution, Limits, Outcome
from tests.helpers import ROOT, canned_run, charts_named, charts_shown, edit, edit_panels, scaled

LESSON = "basics-01"  # slug "first"


def lesson_md(paths: Paths, lesson: str = LESSON) -> Path:
    return paths.content / "lessons" / lesson / "lesson.md"


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_the_live_script_goes_before_body_end() -> None:
    script = b'<script data-build="7">' + LIVE_SCRIPT + b"</script>"
    assert inject_live(b"<p>x</p></body></html>", 7) == b"<p>x</p>" + script + b"</body></html>"


def page(main: str, title: str = "One", head: str = "", frame: str = "") -> bytes:
    return (
        f"<!doctype html><html><head><title>{title}</title>"
        f'<meta name="description" content="{title}">'
        f'<meta property="og:title" content="{title}"><meta name="twitter:title" content="{title}">'
        f"{head}</head><body>{frame}"
        f'<main id="main">{main}</main><footer>f</footer></body></html>'
    ).encode()


def test_a_page_is_sent_its_new_main_or_told_to_reload() -> None:
    old = page("<p>a</p>")
    assert page_update(old, old) is None
    assert page_update(old, page("<p>b</p>", "T &amp; U")) == {
        "main": '<main id="main"><p>b</p></main>',
        "title": "T & U",
    }
    # a new title is patched in, though the link-preview tags (OpenGraph, Twitter) repeat it
    assert page_update(old, page("<p>a</p>", "Two")) == {
        "main": '<main id="main"><p>a</p></main>',
        "title": "Two",
    }
    for new in (page("<p>b</p>", head="<link>"), page("<p>b</p>", frame="<nav>x</nav>")):
        assert page_update(old, new) == {"reload": True}, new  # more than <main> changed
    assert page_update(old, page("<p>b</p>"), reload=True) == {"reload": True}  # a template
    assert page_update(None, old) == page_update(old, None) == {"reload": True}
    assert page_update(b"<p>no main</p>", b"<p>still none</p>") == {"reload": True}


def test_file_events_say_what_they_touch(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "content", tmp_path / "recordings", tmp_path / "site", tmp_path / "c")
    folder = paths.content / "lessons"
    changed = Changed.of(
        paths,
        [
            str(folder / "a-01" / "lesson.md"),
            str(folder / "b-02" / "data.csv"),
            str(paths.recordings / "c-03.json"),
            str(paths.content / "glossary.yml"),
        ],
    )
    assert changed == Changed(frozenset({"a-01", "b-02"}), frozenset({"c-03"}))
    sidecar = paths.recordings / "_inputs" / "c-03.json"
    assert Changed.of(paths, [str(sidecar)]) == Changed(recordings=frozenset({"c-03"}))
    assert Changed.of(paths, [str(TEMPLATES / "lesson.html")]).templates
    assert Changed.of(paths, [str(folder)]).everything  # a folder renamed, say
    assert Changed.of(paths, [str(paths.content / "notes" / "x.md")]).everything


@pytest.mark.parametrize(
    "name",
    [".#lesson.md", "#lesson.md#", "lesson.md~", ".lesson.md.swp", "4913", ".a.json.1-2.tmp"],
)
def test_editor_and_temporary_files_are_no_change(name: str) -> None:
    assert not wanted(None, f"/course/content/lessons/a-01/{name}")
    assert wanted(None, "/course/content/lessons/a-01/lesson.md")


def test_a_prose_edit_reads_one_lesson_and_remakes_its_page(recorded: Paths) -> None:
    session = Session(recorded, execute=False)
    session.start()
    session.settle()
    before = session.course
    assert before is not None
    edit(lesson_md(recorded), "{{ panel 1 }}", "A new sentence.\n\n{{ panel 1 }}")
    changed = session.refresh(Changed.of(recorded, [str(lesson_md(recorded))]))
    assert "l/first/index.html" in changed
    assert [n for n in changed if n.endswith(".html")] == ["l/first/index.html"]
    assert b"A new sentence." in session.served()["l/first/index.html"]
    after = session.course
    assert after is not None
    for old, new in zip(before.lessons, after.lessons, strict=True):
        assert (old is new) == (old.id != LESSON), old.id  # only the edited one was read
    session.settle()
    session.close()
    root = recorded.out.parent
    clean = Paths(recorded.content, recorded.recordings, root / "clean", root / "clean-cache")
    build(clean, execute=False, jobs=1)
    assert site_bytes(recorded.out) == site_bytes(clean.out)  # as `make site` writes it


def test_a_changed_chart_is_served_under_a_new_name_and_the_old_one_goes(recorded: Paths) -> None:
    session = Session(recorded, execute=False)
    session.start()
    session.settle()
    page = "l/first/index.html"
    old = charts_shown(recorded.out, page)
    recording = recorded.recordings / f"{LESSON}.json"
    edit_panels(recording, scaled)
    changed = session.refresh(Changed.of(recorded, [str(recording)]))
    served = session.served()
    new = charts_named(served[page].decode(), page)
    assert len(new) == 4 and set(new).isdisjoint(old)
    assert {page, *old, *new} <= set(changed)  # the page is patched, the new files fetched
    assert set(new) <= set(served) and not set(old) & set(served)
    session.settle()
    session.close()
    assert charts_shown(recorded.out, page) == new
    assert not any((recorded.out / name).exists() for name in old)
    root = recorded.out.parent
    clean = Paths(recorded.content, recorded.recordings, root / "clean", root / "clean-cache")
    build(clean, execute=False, jobs=1)
    assert site_bytes(recorded.out) == site_bytes(clean.out)


def test_after_settling_the_next_build_is_a_no_op(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fixture's files were just written: racy by their ctime (which utime cannot set
    # back), so the build would read them again; this test is about the preview's manifest.
    monkeypatch.setattr(manifest, "RACY_NS", 0)
    session = Session(recorded, execute=True)
    session.start()
    session.settle()
    session.close()
    last = Manifest.load(Store(recorded.cache))
    build(recorded, execute=True, jobs=1)
    now = Manifest.load(Store(recorded.cache))
    assert last is not None and now is not None and now.seen == last.seen, "not a no-op"


def test_a_broken_edit_raises_and_the_last_good_site_is_served(recorded: Paths) -> None:
    session = Session(recorded, execute=False)
    session.start()
    good = session.served()
    edit(lesson_md(recorded), "{{ panel 1 }}", "See [[no-such-term]].\n\n{{ panel 1 }}")
    with pytest.raises(RenderError) as caught:
        session.refresh(Changed.of(recorded, [str(lesson_md(recorded))]))
    assert session.served() == good
    [problem] = problems(caught.value)
    assert problem["file"] == str(lesson_md(recorded)) and problem["line"] > 1
    assert "no-such-term" in problem["message"]
    session.close()


@pytest.fixture
def preview(recorded: Paths) -> Iterator[Preview]:
    shown = Preview(recorded, port=0, execute=False)
    shown.start()
    yield shown
    shown.close()


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_pages_are_served_from_memory_with_the_script_and_site_has_none(
    preview: Preview, recorded: Paths
) -> None:
    status, page = get(f"{preview.url}l/first/")
    assert status == 200 and LIVE_SCRIPT in page
    assert f'<script data-build="{preview.hub.build}">'.encode() in page
    assert get(f"{preview.url}l/first/example.py")[1] == preview.files["l/first/example.py"]
    status, missing = get(f"{preview.url}nope/")
    assert status == 404 and LIVE_SCRIPT in missing
    assert all(LIVE_SCRIPT not in data for data in site_bytes(recorded.out).values())
    served = inject_live(site_bytes(recorded.out)["l/first/index.html"], preview.hub.build)
    assert page == served


def test_each_page_is_told_the_state_then_every_change(preview: Preview) -> None:
    events = urllib.request.urlopen(f"{preview.url}__events", timeout=10)
    assert events.headers["Content-Type"] == "text/event-stream"

    def state() -> dict[str, object]:
        assert events.readline() == b"event: state\n"
        data = events.readline()
        assert events.readline() == b"\n"
        return json.loads(data.removeprefix(b"data: "))  # type: ignore[no-any-return]

    assert state() == {"changed": [], "errors": [], "recording": []}
    preview.apply(lambda: ["l/first/index.html"])
    assert state()["changed"] == ["l/first/index.html"]
    preview.apply(lambda: (_ for _ in ()).throw(RenderError("line 3: bad", path="x.md")))
    assert state()["errors"] == [{"file": "x.md", "line": 3, "message": "bad"}]
    events.close()


def test_a_page_is_sent_its_own_new_main_over_its_stream(preview: Preview, recorded: Paths) -> None:
    """A prose edit: the lesson's stream gets the new <main> and title, another page's
    only the list of changes; a template edit: reload. A page from an older build (or an
    earlier server) reloads as it subscribes."""
    build = preview.hub.build

    def stream(page: str, stamp: int = build) -> Any:
        query = urllib.parse.urlencode({"page": page, "build": stamp})
        return urllib.request.urlopen(f"{preview.url}__events?{query}", timeout=10)

    def state(events: Any) -> dict[str, Any]:
        assert events.readline() == b"event: state\n"
        data = events.readline()
        assert events.readline() == b"\n"
        return json.loads(data.removeprefix(b"data: "))  # type: ignore[no-any-return]

    lesson, other = stream("l/first/index.html"), stream("l/no-panels/index.html")
    assert "page" not in state(lesson) and "page" not in state(other)
    edit(lesson_md(recorded), "{{ panel 1 }}", "Typed just now.\n\n{{ panel 1 }}")
    assert preview.rebuild([str(lesson_md(recorded))])
    told = state(lesson)["page"]
    assert "Typed just now." in told["main"] and told["main"].startswith("<main")
    assert told["main"].endswith("</main>") and "<footer" not in told["main"]
    assert told["title"] == "A first jaxpr · Fixture course"
    assert "page" not in state(other)
    # A template in the same burst (the template itself left as it is): reload.
    edit(lesson_md(recorded), "Typed just now.", "Typed again.")
    assert preview.rebuild([str(lesson_md(recorded)), str(TEMPLATES / "lesson.html")])
    assert state(lesson)["page"] == {"reload": True}
    assert "page" not in state(other)
    assert state(stream("l/first/index.html", build))["page"] == {"reload": True}
    assert "page" not in state(stream("l/first/index.html", preview.hub.build))
    for events in (lesson, other):
        events.close()


def test_the_server_listens_on_loopback_only(preview: Preview) -> None:
    assert preview.server.server_address[0] == "127.0.0.1"


def failing_run(lesson: object, limits: Limits) -> Execution:
    return Execution(lesson.id, Outcome.RAISED, 0.1, stderr="ValueError: boom")


@pytest.mark.parametrize("runner", [canned_run, failing_run], ids=["succeeds", "fails"])
def test_an_example_edit_is_re_recorded_in_the_background(recorded: Paths, runner: object) -> None:
    preview = Preview(recorded, port=0, jobs=1, runner=runner)  # type: ignore[arg-type]
    preview.start()
    recording = recorded.recordings / f"{LESSON}.json"
    old = recording.read_bytes()
    example = recorded.content / "lessons" / LESSON / "example.py"
    example.write_text(example.read_text() + "# a comment changes the content hash\n")
    assert preview.rebuild([str(example)])
    assert preview.session.course and preview.recorder
    preview.recorder.poll(preview.session.course, preview.session.statuses)
    assert preview.hub.state()["recording"] == ["l/first/index.html"]
    thread = preview.recorder.thread
    assert thread is not None
    thread.join(10)
    state = preview.hub.state()
    assert state["recording"] == []
    if runner is canned_run:
        assert recording.read_bytes() != old and state["errors"] == []
    else:
        assert recording.read_bytes() == old  # the last good recording stays
        [problem] = state["errors"]
        assert problem["file"] == str(example) and "boom" in problem["message"]
        preview.recorder.poll(preview.session.course, preview.session.statuses)
        assert preview.recorder.thread is thread, "tried again without a change"
    preview.close()


def test_an_edit_made_during_the_first_build_is_not_lost(recorded: Paths) -> None:
    """The OS watches before the first build reads anything: an edit made after it read
    the lesson is the first rebuild."""
    preview = Preview(recorded, port=0, execute=False)
    first_build = preview.session.start

    def start_then_edit() -> list[str]:
        made = first_build()
        edit(lesson_md(recorded), "{{ panel 1 }}", "Typed while starting.\n\n{{ panel 1 }}")
        return made

    preview.session.start = start_then_edit  # type: ignore[method-assign]
    preview.start()
    assert b"Typed while starting." not in preview.files["l/first/index.html"]
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    preview.run(stop)  # the edit is waiting in the queue
    assert b"Typed while starting." in preview.files["l/first/index.html"]
    preview.close()


# -- issue 25: links in the course, and stopping -----------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(path: Path, text: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = path.read_text(errors="replace")
        if text in found:
            return found
        time.sleep(0.2)
    return path.read_text(errors="replace")


LINKED = {
    "a link to / in a lesson folder": ("content/lessons/basics-01/root", ""),
    "a link to / in recordings/": ("recordings/root", ""),
    "a lesson folder linked to /": ("content/lessons/basics-09", "is a symbolic link (to /)"),
    "no recordings/ yet": ("recordings", ""),  # removed: watchfiles raised FileNotFoundError
}


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("case", LINKED)
def test_serve_starts_and_stops_whatever_links_the_course_holds(
    recorded: Paths, case: str, stop: signal.Signals
) -> None:
    """A link to / anywhere in content/ or recordings/: the watcher walked into /proc and
    died before the server was ready, with a traceback, and the server then ignored Ctrl-C
    and SIGTERM. It starts (a link is never followed: the build names one it would read,
    as `render` does), serves, and stops on either signal."""
    where, message = LINKED[case]
    if where == "recordings":
        shutil.rmtree(recorded.recordings)
    else:
        (recorded.content.parent / where).symlink_to("/")
    port = _free_port()
    log = recorded.content.parent / "serve.log"
    root = ROOT
    args = ["--content", str(recorded.content), "--recordings", str(recorded.recordings)]
    args += ["--out", str(recorded.out), "--cache", str(recorded.cache)]
    with open(log, "wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "builder", "serve", "--no-execute", "--port", str(port), *args],
            cwd=root,
            stdout=sink,
            stderr=sink,
        )
    try:
        started = _wait_for(log, "Serving ", 60)
        assert "Serving " in started, started
        assert get(f"http://127.0.0.1:{port}/")[0] in (200, 404)
        if message:
            assert f"{recorded.content.parent / where}: {message}" in started
        server.send_signal(stop)
        code = server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    output = log.read_text(errors="replace")
    assert "Traceback" not in output, output
    assert code == (143 if stop == signal.SIGTERM else 130), output


def _events_until(preview: Preview, wanted_path: Path, seen: set[str], seconds: float = 20) -> bool:
    """Wait (bounded) for a file event on `wanted_path`; every path seen goes into `seen`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(queue.Empty):
            seen.update(preview.changes.get(timeout=0.2))
        if str(wanted_path) in seen:
            return True
    return False


def test_a_folder_made_while_serving_is_watched_and_a_link_is_not_followed(
    preview: Preview, recorded: Paths
) -> None:
    """Folders are watched one by one (never through a link): a lesson folder made while
    serving is listed again and watched; a linked folder's files send no event."""
    lessons = recorded.content / "lessons"
    outside = recorded.content.parent / "outside"
    outside.mkdir()
    (lessons / "linked").symlink_to(outside)
    (lessons / "new-01").mkdir()
    seen: set[str] = set()
    assert _events_until(preview, lessons / "new-01", seen)
    time.sleep(1)  # the watcher lists the folders again
    (outside / "x.md").write_text("through the link")
    (lessons / "new-01" / "lesson.md").write_text("---\n")
    assert _events_until(preview, lessons / "new-01" / "lesson.md", seen)
    _events_until(preview, lessons / "linked" / "x.md", seen, seconds=1)
    assert not any(path.startswith(str(lessons / "linked") + os.sep) for path in seen), seen
