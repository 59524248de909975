"""Builds that are interrupted, doubled or cannot write: nothing the user had is lost.

Each test checks the bytes of what must survive (previous recordings, the previous site/).
The builder runs as the real CLI in a subprocess where a signal or a second process is the
point; elsewhere in-process through `builder.__main__.main`.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.build.manifest import Manifest
from builder.build.pipeline import build, build_lock
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.core.store import Store
from builder.preview import serve
from builder.run.execute import BUILDER_ROOT
from tests.test_hostile_examples import alive, wait_gone

COURSE_YML = """\
title: Hostile course
summary: Lessons that misbehave on purpose.
arcs:
  - id: hostile
    title: Hostile
    summary: Misbehaving examples.
"""


def write_course(root: Path, examples: dict[str, str], env: dict[str, str] | None = None) -> None:
    content = root / "content"
    (content / "lessons").mkdir(parents=True)
    (content / "course.yml").write_text(COURSE_YML)
    for order, (lesson_id, source) in enumerate(sorted(examples.items()), start=1):
        folder = content / "lessons" / lesson_id
        folder.mkdir()
        settings = "".join(f"\n  {k}: {v!r}" for k, v in (env or {}).items())
        folder.joinpath("lesson.md").write_text(
            f"---\nid: {lesson_id}\nslug: s{order}\ntitle: Lesson {order}\narc: hostile\n"
            f"order: {order}\nsummary: Number {order}.\n"
            + (f"env:{settings}\n" if settings else "")
            + "---\nProse.\n\n{{ output }}\n"
        )
        folder.joinpath("example.py").write_text(textwrap.dedent(source))


def cli(root: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "builder",
        *args,
        "--content",
        str(root / "content"),
        "--recordings",
        str(root / "recordings"),
        "--out",
        str(root / "site"),
        "--cache",
        str(root / ".cache"),
    ]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make `folder` unwritable even for root (chattr +i), or skip where that is impossible."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip(
            "running as root where chattr +i is unavailable: cannot make a folder read-only"
        )
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


SLEEPER = """\
import os, subprocess, time
child = subprocess.Popen(["sleep", "300"])
with open(os.path.join(os.environ["PIDDIR"], "{name}"), "w") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(300)
"""


def test_ctrl_c_while_examples_run_kills_them_and_keeps_the_previous_recordings(
    tmp_path: Path,
) -> None:
    piddir, systmp = tmp_path / "pids", tmp_path / "systmp"
    piddir.mkdir()
    systmp.mkdir()
    write_course(
        tmp_path,
        {"hang-01": SLEEPER.format(name="a"), "hang-02": SLEEPER.format(name="b")},
        env={"PIDDIR": str(piddir)},
    )
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    (recordings / "hang-01.json").write_bytes(b'{"previous": "recording one"}')
    (recordings / "hang-02.json").write_bytes(b"<<<<<<< HEAD\nprevious two\n")
    before = snapshot(recordings)
    builder = subprocess.Popen(
        [*cli(tmp_path, "record", "-j", "2")],
        cwd=BUILDER_ROOT,
        env={**os.environ, "TMPDIR": str(systmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: a test run started in the background (`make test &`) ignores
        # SIGINT, and a Python started with it ignored never raises KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(1200):  # both examples and their children are running
            if len(list(piddir.iterdir())) == 2 or builder.poll() is not None:
                break
            time.sleep(0.05)
        pids = [int(pid) for f in piddir.iterdir() for pid in f.read_text().split()]
        assert len(pids) == 4, builder.communicate()
        builder.send_signal(signal.SIGINT)
        _, err = builder.communicate(timeout=120)
    finally:
        if builder.poll() is None:
            builder.kill()
    assert builder.returncode == 130, err
    assert "interrupted: running examples were stopped" in err
    assert "Traceback" not in err
    assert all(wait_gone(pid) for pid in pids), [pid for pid in pids if alive(pid)]
    assert snapshot(recordings) == before
    assert list(systmp.iterdir()) == [], "no course-* scratch folder is left behind"


def test_a_second_build_waits_for_the_first_and_never_interleaves(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print('calm')\n"})
    site = tmp_path / "site"
    with build_lock(tmp_path / ".cache"):
        second = subprocess.Popen(
            cli(tmp_path, "render"),
            cwd=BUILDER_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert second.stderr is not None
        first_line = second.stderr.readline()
        assert first_line.startswith(f"Another build is running (pid {os.getpid()})")
        assert "waiting for it to finish" in first_line
        assert not site.exists(), "the second build wrote while the first held the lock"
        assert second.poll() is None
    _, rest = second.communicate(timeout=120)
    assert second.returncode == 0, rest
    assert (site / "l" / "s1" / "index.html").exists()


def test_a_write_failure_halfway_through_rendering_leaves_the_previous_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_course(tmp_path, {f"calm-0{n}": f"print({n})\n" for n in (1, 2, 3)})
    assert main(cli(tmp_path, "render")[3:]) == 0
    site = tmp_path / "site"
    before = snapshot(site)
    for n in (1, 2, 3):  # every page shows every title in its navigation: all change
        lesson = tmp_path / "content" / "lessons" / f"calm-0{n}" / "lesson.md"
        lesson.write_text(lesson.read_text().replace(f"Lesson {n}", f"Lesson {n} renamed"))
    capsys.readouterr()
    with read_only(site / "l" / "s2"):  # pages sort before and after this one
        assert main(cli(tmp_path, "render")[3:]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {site / 'l' / 's2' / 'index.html'}: ")
    assert "the previous site is unchanged" in err
    assert "-> make the folder writable" in err
    assert "Traceback" not in err
    marker = ".coursebuilder-site"  # it lists the files this build may leave behind
    assert {k: v for k, v in snapshot(site).items() if k != marker} == {
        k: v for k, v in before.items() if k != marker
    }
    assert main(cli(tmp_path, "render")[3:]) == 0, "the next build succeeds"
    assert b"Lesson 2 renamed" in (site / "l" / "s2" / "index.html").read_bytes()


def test_read_only_recordings_refuse_to_record_before_running_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    write_course(tmp_path, {"calm-01": f"open({str(marker)!r}, 'w')\n"})
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    (recordings / "calm-01.json").write_bytes(b'{"stale": true}')
    before = snapshot(recordings)
    with read_only(recordings):
        assert main(cli(tmp_path, "record")[3:]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: cannot write {recordings}: ")
        assert "nothing was executed" in err and "Traceback" not in err
        assert not marker.exists()
        assert main(cli(tmp_path, "check")[3:]) == 1, "check still reads them"
        assert main(cli(tmp_path, "render")[3:]) == 0, "render still reads them"
    assert snapshot(recordings) == before


def test_a_recording_that_cannot_be_saved_is_reported_and_the_rest_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """recordings/ becomes unwritable after the check (full disk): the run is reported."""
    from builder.run import batch as record

    write_course(tmp_path, {"calm-01": "print(1)\n"})
    (tmp_path / "recordings").mkdir()

    def full_disk(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(record, "write_atomic", full_disk)
    assert main(cli(tmp_path, "record")[3:]) == 1
    err = capsys.readouterr().err
    assert "calm-01" in err and "could not be saved" in err
    assert "No space left on device" in err
    assert "-> make recordings/ writable" in err
    assert list((tmp_path / "recordings").iterdir()) == []


# -- issue 17: the preview server survives every rebuild; editor files are no change ---------


@pytest.mark.parametrize(
    "failure",
    [
        FileNotFoundError(2, "No such file or directory", ".#lesson.md"),  # a lock file raced
        OverflowError("cannot convert float infinity to integer"),  # a bug, not a BuildError
        BuildError("line 3: [[x]] is not a glossary term", path="lesson.md"),
    ],
    ids=["OSError", "a bug", "BuildError"],
)
def test_the_preview_server_survives_any_rebuild_failure_and_shows_it(
    recorded: Paths, failure: Exception
) -> None:
    log = io.StringIO()
    preview = serve.Preview(recorded, port=0, execute=False, log=log)
    preview.start()
    served = preview.files

    def failing() -> list[str]:
        raise failure

    assert preview.apply(failing) is False
    assert "still serving the last good site" in log.getvalue()
    assert preview.files is served
    [problem] = preview.hub.state()["errors"]
    assert "is not a glossary term" in problem["message"] or str(failure) in problem["message"]
    assert preview.apply(lambda: []) is True
    assert preview.hub.state()["errors"] == []
    preview.close()


EDITOR_FILES = [".#lesson.md", "#lesson.md#", "lesson.md~", ".lesson.md.swp", ".lesson.md.swo"]


def test_editor_lock_swap_and_backup_files_are_no_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Emacs' lock (a dangling link), auto-save and backup files, Vim's swap files and its
    4913 probe: no rebuild, no orphan, not watched by the preview server."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    (tmp_path / "recordings").mkdir()
    paths = Paths(tmp_path / "content", tmp_path / "recordings", tmp_path / "site", tmp_path / "c")
    past = time.time() - 60  # older than the manifest's racy window
    for path in tmp_path.rglob("*"):
        os.utime(path, (past, past))
    build(paths, execute=False, jobs=1)
    last = Manifest.load(Store(paths.cache))
    folder = paths.content / "lessons" / "calm-01"
    (folder / EDITOR_FILES[0]).symlink_to("root@host.4242:1700000000")
    for name in EDITOR_FILES[1:]:
        (folder / name).write_text("x")
    (folder / "4913").write_text("")
    (paths.recordings / ".#calm-01.json").symlink_to("root@host.4242:1700000000")
    (paths.recordings / "calm-01.json~").write_text("{}")
    for path in [*folder.iterdir(), *paths.recordings.iterdir()]:
        assert serve.wanted(None, str(path)) == (
            path.name in ("lesson.md", "example.py", "calm-01.json")
        )
    build(paths, execute=False, jobs=1)
    now = Manifest.load(Store(paths.cache))
    assert last is not None and now is not None and now.seen == last.seen, "not a no-op"
    assert main(cli(tmp_path, "check")[3:]) == 1
    assert "  orphan  " not in capsys.readouterr().out
