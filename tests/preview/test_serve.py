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

from builder.core.artifact import Parts
from builder.core.errors import RenderError
from builder.core.observe import TEMPLATES, Paths
from builder.core.store import Store
from builder.pipeline.build import build
from builder.pipeline.index import Changes, Head
from builder.preview import http
from builder.preview.http import LIVE_SCRIPT, inject_live
from builder.preview.hub import page_update
from builder.preview.serve import Preview, problems, wanted
from builder.preview.session import Session
from builder.run.execute import Execution, Limits, Outcome
from tests.helpers import (
    ROOT,
    canned_run,
    charts_named,
    charts_shown,
    edit,
    edit_panels,
    make_paths,
    scaled,
    wall_clock,
)

LESSON = "basics-01"  # slug "first"


def lesson_md(paths: Paths, lesson: str = LESSON) -> Path:
    return paths.content / "lessons" / lesson / "lesson.md"


def site_bytes(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def test_the_live_script_goes_before_body_end() -> None:
    script = b'<script data-build="7">' + LIVE_SCRIPT + b"</script>"
    assert inject_live(b"<p>x</p></body></html>", 7) == b"<p>x</p>" + script + b"</body></html>"


def page_file(main: str, title: str | None = "One", frame: str = "f") -> tuple[bytes, Parts]:
    """A page's file and its parts as its template left them: <main> between a head and
    a footer (the hub reads where it is, never the HTML)."""
    head, element = b"<head>anything</head>", f'<main id="main">{main}</main>'.encode()
    parts = Parts("x.html", (len(head), len(head) + len(element)), title, frame)
    return head + element + b"<footer>", parts


def test_a_page_is_sent_its_new_main_or_told_to_reload() -> None:
    old = page_file("<p>a</p>")
    assert page_update(old, old) is None
    assert page_update(old, page_file("<p>é & b</p>", "T & U")) == {
        "main": '<main id="main"><p>é & b</p></main>',
        "title": "T & U",
    }
    assert page_update(old, page_file("<p>a</p>", "Two")) == {
        "main": '<main id="main"><p>a</p></main>',
        "title": "Two",
    }
    assert page_update(old, page_file("<p>b</p>", frame="another")) == {"reload": True}
    assert page_update(old, page_file("<p>b</p>"), reload=True) == {"reload": True}  # a template
    assert page_update(None, old) == page_update(old, None) == {"reload": True}
    no_parts = (b"<p>no main</p>", None)
    assert page_update(old, no_parts) == page_update(no_parts, old) == {"reload": True}


def test_a_frame_change_reloads_the_page_a_prose_edit_patches_it(
    preview: Preview, recorded: Paths
) -> None:
    """What decides patch or reload is the page's frame as its template placed it: a
    stylesheet a course's base.html adds to every head, or a course title the header
    shows, reloads the open page (no builder template changed: only the frame says so);
    a prose edit swaps its <main>, whose bytes are the page's own."""
    page = "l/first/index.html"
    told: list[Any] = []
    preview.hub.publish = lambda changed=(), updates=None, **_: told.append(  # type: ignore[method-assign]
        updates(page) if updates and page in changed else None
    )
    edit(lesson_md(recorded), "{{ panel 1 }}", "Typed just now.\n\n{{ panel 1 }}")
    assert preview.rebuild([str(lesson_md(recorded))])
    patch = told[-1]
    assert set(patch) == {"main", "title"} and "Typed just now." in patch["main"]
    assert preview.files[page].count(patch["main"].encode()) == 1
    base = recorded.content / "templates" / "base.html"
    base.parent.mkdir()
    base.write_text(
        '{% extends "builder/base.html" %}{% block resources %}{{ super() }}'
        '<link rel="stylesheet" href="{{ root }}static/extra.css">{% endblock %}\n'
    )
    edit(lesson_md(recorded), "Typed just now.", "Typed again.")
    assert preview.rebuild([str(lesson_md(recorded)), str(base)])
    assert told[-1] == {"reload": True}, "a stylesheet in the head is not patched in"
    course = recorded.content / "course.yml"
    edit(course, "title: ", "title: Retitled ")
    assert preview.rebuild([str(course)])
    assert told[-1] == {"reload": True}, "the header's course title is not patched in"


HOSTILE_BASES = {
    # written from nothing, none of the blocks: rendered, and reloaded on every edit
    "no blocks": (
        "<!doctype html><title>{{ title }}</title><main>{% block main %}{% endblock %}</main>"
        "{% block main_class %}{% endblock %}{% block og_title %}{% endblock %}\n",
        None,
    ),
    # the <main> shown twice, once outside its block: a patch would leave the copy stale
    "main twice": (
        '{% extends "builder/base.html" %}'
        "{% block footer %}{{ self.main_element() }}{% endblock %}\n",
        None,
    ),
    # a title of markup and an entity: the text a browser shows for it, as data
    "a title of markup": (
        '{% extends "builder/base.html" %}'
        "{% block title %}<b>{{ title }}</b> &amp; co{% endblock %}\n",
        "<b>A first jaxpr</b> & co",
    ),
}


@pytest.mark.parametrize("base", HOSTILE_BASES)
def test_a_courses_base_html_decides_its_parts_and_never_a_stale_patch(
    preview: Preview, recorded: Paths, base: str
) -> None:
    template, title = HOSTILE_BASES[base]
    told: list[Any] = []
    page = "l/first/index.html"
    preview.hub.publish = lambda changed=(), updates=None, **_: told.append(  # type: ignore[method-assign]
        updates(page) if updates and page in changed else None
    )
    path = recorded.content / "templates" / "base.html"
    path.parent.mkdir()
    path.write_text(template)
    assert preview.rebuild([str(path)])
    edit(lesson_md(recorded), "{{ panel 1 }}", "Typed just now.\n\n{{ panel 1 }}")
    assert preview.rebuild([str(lesson_md(recorded))])
    if title is None:
        assert told[-1] == {"reload": True}
    else:
        assert told[-1]["title"] == title and "Typed just now." in told[-1]["main"]


def test_file_events_are_spelled_as_the_input_door_notes_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher names paths absolute; the index notes them as the command named the
    folders (here relative): the change-set is spelled the index's way, so the lookup
    finds them. What is under no input folder changes no value; a template, the keys."""
    monkeypatch.chdir(tmp_path)
    paths = Paths(Path("content"), Path("recordings"), Path("site"), Path("c"))
    lesson, sidecar = "content/lessons/a-01/lesson.md", "recordings/_inputs/c-03.json"
    changes = Changes.events(paths, [str(tmp_path / lesson), str(tmp_path / sidecar), "/x/y"])
    assert changes.paths == {lesson, sidecar} and not changes.code
    assert Changes.events(paths, [str(TEMPLATES / "lesson.html")]).code


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
    changed = session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
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


def test_course_yml_and_glossary_yml_are_read_again_only_when_an_event_names_them(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from builder.course import load

    opened: list[str] = []
    real = load.read_text

    def read_text(path: Path, *args: Any, **kwargs: Any) -> str:
        opened.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(load, "read_text", read_text)
    session = Session(recorded, execute=False)
    session.start()
    assert {"course.yml", "glossary.yml"} <= set(opened)  # the first build reads them
    opened.clear()
    edit(lesson_md(recorded), "{{ panel 1 }}", "A new sentence.\n\n{{ panel 1 }}")
    session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
    assert opened == ["lesson.md", "example.py"]  # the edited lesson's files, no more
    course_yml = recorded.content / "course.yml"
    title = session.course.meta.title if session.course else ""
    edit(course_yml, f"title: {title}", "title: A Renamed Course")
    session.refresh(Changes.events(recorded, [str(course_yml)]))
    assert "course.yml" in opened
    assert b"A Renamed Course" in session.served()["index.html"]
    session.close()


def test_a_changed_chart_is_served_under_a_new_name_and_the_old_one_goes(recorded: Paths) -> None:
    session = Session(recorded, execute=False)
    session.start()
    session.settle()
    page = "l/first/index.html"
    old = charts_shown(recorded.out, page)
    recording = recorded.recordings / f"{LESSON}.json"
    edit_panels(recording, scaled)
    changed = session.refresh(Changes.events(recorded, [str(recording)]))
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
    # back), so the build would read them again; this test is about the preview's index.
    wall_clock(monkeypatch)
    session = Session(recorded, execute=True)
    session.start()
    session.settle()
    session.close()
    last = Head.load(Store(recorded.cache))
    build(recorded, execute=True, jobs=1)
    now = Head.load(Store(recorded.cache))
    assert last is not None and now is not None and now.seen == last.seen, "not a no-op"


def test_a_broken_edit_raises_and_the_last_good_site_is_served(recorded: Paths) -> None:
    session = Session(recorded, execute=False)
    session.start()
    good = session.served()
    edit(lesson_md(recorded), "{{ panel 1 }}", "See [[no-such-term]].\n\n{{ panel 1 }}")
    with pytest.raises(RenderError) as caught:
        session.refresh(Changes.events(recorded, [str(lesson_md(recorded))]))
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
    preview.apply(lambda: (_ for _ in ()).throw(RenderError("bad", path="x.md", line=3)))
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


def test_the_background_recorder_waits_for_the_build_lock(recorded: Paths) -> None:
    """The preview records as every build does, under the build lock: while another
    build (here `make record`'s lock, held by this test) runs, its recording waits, and
    writes once the lock is given back."""
    from builder.pipeline.build import build_lock

    preview = Preview(recorded, port=0, jobs=1, runner=canned_run)
    preview.start()
    recording = recorded.recordings / f"{LESSON}.json"
    old = recording.read_bytes()
    example = recorded.content / "lessons" / LESSON / "example.py"
    example.write_text(example.read_text() + "# a comment changes the content hash\n")
    assert preview.rebuild([str(example)]) and preview.session.course and preview.recorder
    with build_lock(recorded.cache):
        preview.recorder.poll(preview.session.course, preview.session.statuses)
        thread = preview.recorder.thread
        assert thread is not None
        thread.join(1.0)
        assert thread.is_alive() and recording.read_bytes() == old  # waiting for the lock
    thread.join(10)
    assert not thread.is_alive() and recording.read_bytes() != old
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


# -- issue 38: the address served, redirects, methods, and clients that misbehave -------------


@pytest.fixture(scope="module")
def served(recorded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Preview]:
    """One preview for the tests below, which only ask it things."""
    root = tmp_path_factory.mktemp("served") / "course"
    shutil.copytree(recorded_template, root)
    shown = Preview(make_paths(root), port=0, execute=False)
    shown.start()
    yield shown
    shown.close()


def _ask(preview: Preview, request: str, seconds: float = 10) -> bytes:
    """`request` sent as is over a new connection; all the server says until it closes."""
    port = preview.server.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as client:
        client.sendall(request.encode("latin-1"))
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _headers(answer: bytes) -> dict[str, str]:
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in head)}


def _body(answer: bytes) -> bytes:
    return answer.split(b"\r\n\r\n", 1)[1]


def _port(preview: Preview) -> int:
    return int(preview.server.server_address[1])


def _get(path: str, host: str | None, *extra: str, method: str = "GET") -> str:
    lines = [f"{method} {path} HTTP/1.1", *([f"Host: {host}"] if host is not None else []), *extra]
    return "\r\n".join([*lines, "Connection: close", "", ""])


ELSEWHERE = {  # Host headers of a page elsewhere (or of nothing) that reach this server
    "a rebound name": "rebind.example:{port}",
    "a rebound name, no port": "rebind.example",
    "a name ending in the address": "127.0.0.1.nip.io:{port}",
    "localhost, another port": "localhost:{other}",
    "localhost, no port": "localhost",
    "localhost with a final dot": "localhost.:{port}",
    "empty": "",
    "none": None,
}


@pytest.mark.parametrize("case", ELSEWHERE)
@pytest.mark.parametrize("path", ["/l/first/", "/__events", "/nope"])
def test_a_host_that_is_not_the_address_served_is_refused(
    served: Preview, case: str, path: str
) -> None:
    """A page on another name that resolves to 127.0.0.1 (DNS rebinding) read every preview
    page and its event stream as its own origin: the server answered any Host."""
    host = ELSEWHERE[case]
    if host is not None:
        host = host.format(port=_port(served), other=_port(served) + 1)
    answer = _ask(served, _get(path, host))
    assert _status(answer) == 421, answer[:300]
    assert _body(answer) == f"this preview answers only at {served.url}\n".encode()
    assert LIVE_SCRIPT not in answer and not served.hub.streams


def test_two_host_headers_are_refused(served: Preview) -> None:
    good = f"127.0.0.1:{_port(served)}"
    answer = _ask(served, _get("/l/first/", good, "Host: rebind.example"))
    assert _status(answer) == 421


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]", "LocalHost"])
def test_the_address_served_is_answered_by_each_of_its_names(served: Preview, name: str) -> None:
    answer = _ask(served, _get("/l/first/", f"{name}:{_port(served)}"))
    assert _status(answer) == 200 and LIVE_SCRIPT in answer


@pytest.mark.parametrize(
    "origin",
    ["http://rebind.example", "null", "http://127.0.0.1:{other}", "https://127.0.0.1:{port}"],
)
def test_the_event_stream_refuses_a_page_of_another_origin(served: Preview, origin: str) -> None:
    origin = origin.format(port=_port(served), other=_port(served) + 1)
    host = f"127.0.0.1:{_port(served)}"
    answer = _ask(served, _get("/__events", host, f"Origin: {origin}"))
    assert _status(answer) == 403, answer[:300]
    assert b"the event stream is only for pages of" in _body(answer)
    assert not served.hub.streams


def test_the_event_stream_takes_a_page_of_its_own_origin(served: Preview) -> None:
    port = _port(served)
    request = _get("/__events", f"localhost:{port}", f"Origin: http://localhost:{port}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(request.encode())
        assert client.recv(4096).startswith(b"HTTP/1.0 200 ")


@pytest.mark.parametrize("path", ["/%2Fglossary", "//glossary", "/%2F%2Fglossary", "/glossary"])
def test_a_folder_redirects_to_its_own_address_never_to_another_host(
    served: Preview, path: str
) -> None:
    """`/%2Fglossary` was sent to `//glossary/`, which a browser reads as http://glossary/."""
    assert "glossary/index.html" in served.files
    answer = _ask(served, _get(path, f"127.0.0.1:{_port(served)}"))
    assert _status(answer) == 301 and _headers(answer)["location"] == "/glossary/", answer


@pytest.mark.parametrize("path", ["/l/first/", "/l/first/example.py", "/nope/", "/glossary"])
def test_head_is_answered_with_gets_headers_and_no_body(served: Preview, path: str) -> None:
    host = f"127.0.0.1:{_port(served)}"
    got, head = _ask(served, _get(path, host)), _ask(served, _get(path, host, method="HEAD"))
    assert _status(head) == _status(got) and head.endswith(b"\r\n\r\n")
    drop = {"date"}
    assert {k: v for k, v in _headers(head).items() if k not in drop} == {
        k: v for k, v in _headers(got).items() if k not in drop
    }


def test_head_of_the_event_stream_opens_no_stream(served: Preview) -> None:
    answer = _ask(served, _get("/__events", f"127.0.0.1:{_port(served)}", method="HEAD"))
    assert _status(answer) == 200 and answer.endswith(b"\r\n\r\n")
    assert _headers(answer)["content-type"] == "text/event-stream"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"])
def test_other_methods_are_not_allowed_and_say_which_are(served: Preview, method: str) -> None:
    answer = _ask(served, _get("/l/first/", f"127.0.0.1:{_port(served)}", method=method))
    assert _status(answer) == 405 and _headers(answer)["allow"] == "GET, HEAD", answer


def test_an_idle_connection_is_closed(served: Preview) -> None:
    """One thread a connection, with no timeout: a socket that never sent a whole request
    was held for ever. Both are closed after IDLE_TIMEOUT (10 s)."""
    port = _port(served)
    clients = [socket.create_connection(("127.0.0.1", port), timeout=15) for _ in range(2)]
    clients[1].sendall(b"GET /l/first/ HTTP/1.1\r\nHost: 127.0.0.1")
    started = time.monotonic()
    for client in clients:
        with client:
            assert client.recv(4096) == b""  # closed, not a socket.timeout after 15 s
    assert time.monotonic() - started < http.IDLE_TIMEOUT + 3


@pytest.mark.parametrize("how", ["silent", "part of a request"])
def test_idle_sockets_over_the_cap_never_keep_the_browser_out(served: Preview, how: str) -> None:
    """Issue 56 item 13: any local process filled the 64 connections with idle sockets,
    and everyone was answered 503 for up to IDLE_TIMEOUT. 200 idle sockets (that sent
    nothing, or only part of a request), then a page: 200 at once, again and again; the
    oldest idle ones were closed to make room."""
    port = _port(served)
    idle = []
    try:
        for _ in range(200):
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
            idle.append(client)
            if how == "part of a request":
                client.sendall(f"GET /l/first/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        started = time.monotonic()
        assert [_answered(port, seconds=5) for _ in range(5)] == [200] * 5
        assert time.monotonic() - started < 3
        assert idle[0].recv(1) == b""  # closed by the server, not a timeout after 5 s
    finally:
        for client in idle:
            client.close()


def test_a_stream_that_is_not_read_is_told_to_reload_not_kept_growing() -> None:
    """Each page's queue was unbounded: a stopped reader kept every page's new <main>."""
    from builder.preview.hub import BACKLOG, Hub

    hub = Hub()
    stream = hub.subscribe("l/first/index.html", hub.build)
    for n in range(BACKLOG * 4):
        hub.publish(["l/first/index.html"], lambda page, n=n: {"main": f"<main>{n}</main>"})
        assert stream.qsize() <= BACKLOG
    told = [stream.get_nowait() for _ in range(stream.qsize())]
    assert any('"page": {"reload": true}' in str(message) for message in told)
    hub.close()
    assert stream.get_nowait() is None  # a closing server is told even to a full stream


def _dropped(port: int, request: bytes) -> None:
    """A client that asks, reads a little with a small window, and resets the connection."""
    with socket.socket() as client:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.settimeout(5)
        client.connect(("127.0.0.1", port))
        client.sendall(request)
        client.recv(1024)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def _answered(port: int, seconds: float = 3) -> int:
    """The status a GET gets within `seconds`, or 0."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=seconds) as client:
            client.sendall(f"GET / HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            head = client.recv(64)
    except OSError:
        return 0
    return int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0


def _few_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_idle_and_dropped_clients_neither_stop_serve_nor_print_tracebacks(recorded: Paths) -> None:
    """At about 1,018 idle sockets (the open-file limit) the server stopped answering
    everyone, and every client that went away mid-answer printed a BrokenPipeError or
    ConnectionResetError traceback. A real `serve`, with 256 files: 400 idle sockets (to
    127.0.0.1 only, 30 s at most) are held while it still answers (200, or
    503 at once), then let go; 60 clients reset mid-answer; no traceback. (The OS's queue
    of connections not yet taken was 5: a burst over it waited a second each.)"""
    port = _free_port()
    log = recorded.content.parent / "serve.log"
    args = ["--content", str(recorded.content), "--recordings", str(recorded.recordings)]
    args += ["--out", str(recorded.out), "--cache", str(recorded.cache)]
    command = [sys.executable, "-m", "builder", "serve", "--no-execute", "--port", str(port)]
    with open(log, "wb") as sink:
        server = subprocess.Popen(
            [*command, *args], cwd=ROOT, stdout=sink, stderr=sink, preexec_fn=_few_files
        )
    idle: list[socket.socket] = []
    try:
        assert "Serving " in _wait_for(log, "Serving ", 60)
        biggest = max(site_bytes(recorded.out).items(), key=lambda item: len(item[1]))[0]
        for n in range(60):
            path = "/__events" if n % 3 == 0 else f"/{biggest}"
            _dropped(port, f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        deadline = time.monotonic() + 30
        while len(idle) < 400 and time.monotonic() < deadline:
            try:  # a SYN the OS dropped (its queue full) is sent again after 1 s, then 3 s
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=4))
            except OSError:
                break
        assert len(idle) == 400, f"serve stopped taking connections after {len(idle)}"
        assert _answered(port) == 200  # the oldest idle socket made room (issue 56)
        files = len(os.listdir(f"/proc/{server.pid}/fd"))
        assert files < 200, files
        for client in idle:
            client.close()
        idle.clear()
        deadline = time.monotonic() + 10
        while _answered(port) != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _answered(port) == 200
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 130
    finally:
        for client in idle:
            client.close()
        if server.poll() is None:
            server.kill()
            server.wait()
    output = log.read_text(errors="replace")
    assert "Traceback" not in output and "Error" not in output, output[-3000:]
