"""Builds that are interrupted, doubled or cannot write: nothing the user had is lost.

Each test checks the bytes of what must survive (previous recordings, the previous site/).
The builder runs as the real CLI in a subprocess where a signal or a second process is the
point; elsewhere in-process through `builder.__main__.main`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.core.store import Store
from builder.pipeline.build import build, build_lock
from builder.pipeline.index import Head
from builder.pipeline.site_record import LEGACY, record_path
from builder.preview import serve
from builder.run.environment import BUILDER_ROOT
from tests.helpers import (
    alive,
    cli,
    logged,
    read_only,
    snapshot,
    wait_gone,
    wall_clock,
    write_course,
)

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
    )
    try:

        def written() -> list[int]:  # a pid file is made, then written: wait for both
            return [int(pid) for f in piddir.iterdir() for pid in f.read_text().split()]

        for _ in range(1200):  # both examples and their children are running
            if len(written()) == 4 or builder.poll() is not None:
                break
            time.sleep(0.05)
        pids = written()
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
    # the first file of that folder the build writes (example.ipynb: the titles changed)
    assert err.startswith(f"error: cannot write {site / 'l' / 's2' / 'example.ipynb'}: ")
    assert "the previous site is unchanged" in err
    assert "-> make the folder writable" in err
    assert "Traceback" not in err
    assert snapshot(site) == before  # the record of its files is in the cache
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

    def full_disk(path: Path, data: bytes, **_: object) -> None:
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
    preview = serve.Preview(recorded, port=0, execute=False)
    preview.start()
    served = preview.files

    def failing() -> list[str]:
        raise failure

    with logged() as log:
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Emacs' lock (a dangling link), auto-save and backup files, Vim's swap files and its
    4913 probe: no rebuild, no orphan, not watched by the preview server."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    (tmp_path / "recordings").mkdir()
    paths = Paths(tmp_path / "content", tmp_path / "recordings", tmp_path / "site", tmp_path / "c")
    # The files were just written: racy (their ctime cannot be set back), so a second build
    # would read them again. Not what this test is about.
    wall_clock(monkeypatch)
    build(paths, execute=False, jobs=1)
    last = Head.load(Store(paths.cache))
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
    now = Head.load(Store(paths.cache))
    assert last is not None and now is not None and now.seen == last.seen, "not a no-op"
    assert main(cli(tmp_path, "check")[3:]) == 1
    assert "  orphan  " not in capsys.readouterr().out


# -- issue 25: one writer that never leaves --out ---------------------------------------------


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A checkout (tmp_path/course) rendered once, a recording beside it, and files outside
    it: what a hostile site folder would reach."""
    course = tmp_path / "course"
    write_course(course, {"calm-01": "print(1)\n", "calm-02": "print(2)\n"})
    assert main(cli(course, "render")[3:]) == 0
    (course / "recordings").mkdir()
    (course / "recordings" / "calm-01.json").write_bytes(b'{"committed": "recording"}')
    (tmp_path / "outside.txt").write_text("the user's own file")
    (tmp_path / "empty").mkdir()
    return course


def outside(course: Path) -> dict[str, bytes]:
    """Every file of the test's folder but the site and the cache, and its empty folders."""
    root, found = course.parent, {}
    for path in sorted(root.rglob("*")):
        inside = path.relative_to(root).parts
        if inside[:2] in (("course", "site"), ("course", ".cache")) or path.is_symlink():
            continue
        if path.is_file():
            found["/".join(inside)] = path.read_bytes()
        elif not any(path.iterdir()):
            found["/".join(inside)] = b"<empty folder>"
    return found


OLD_MARKER = "# made by python -m builder; every file listed here is regenerated\n"


def record_of(course: Path, where: str) -> Path:
    """The list of the files the build wrote in course/site: its record in the cache, or
    (`old marker`) the marker an older builder kept in the site itself, which a build reads
    once as the record (the record is deleted: the marker is all the build knows)."""
    record = record_path(course / ".cache", course / "site")
    if where == "record":
        return record
    marker = course / "site" / LEGACY
    marker.write_text(OLD_MARKER + "".join(record.read_text().splitlines(True)[3:]))
    record.unlink()
    return marker


WHERE = ["record", "old marker"]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize(
    "line",
    [
        "../../outside.txt",
        "l/../../content/lessons/calm-01/example.py",
        "../recordings/calm-01.json",
        "./../recordings/calm-01.json",
        "l/s1/../../../recordings/calm-01.json",
        "../../empty/gone",  # deleting it would remove the empty folder on the way
        "{tmp}/outside.txt",  # absolute
        "..\\..\\outside.txt",
        "l//s1/index.html",
        "l/s1/",
        "l/s1/index.html\x1b]8;;https://x\x07",
        "l/s1\x00/../../../outside.txt",
    ],
    ids=[
        "outside the checkout",
        "an author's example",
        "a recording",
        "./",
        "deep ..",
        "a folder",
        "absolute",
        "backslashes",
        "//",
        "trailing /",
        "control characters",
        "NUL",
    ],
)
def test_a_record_line_outside_the_site_stops_the_build_before_anything_is_deleted(
    built: Path, line: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25 item 1: names read from the record of the site's files (in the cache since
    issue 43; in the site before) are untrusted (builder/core/fsutil.py name_problem,
    applied by builder/pipeline/site_record.py): nothing is written or deleted."""
    record = record_of(built, where)
    line = line.replace("{tmp}", str(built.parent))
    record.write_text(record.read_text() + line + "\n")
    number = record.read_text().split("\n").index(line) + 1
    before, site = outside(built), snapshot(built / "site")
    records = snapshot(built / ".cache" / "sites")
    capsys.readouterr()
    assert main(cli(built, "render")[3:]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {record}: line {number} names {line!r}, which "), err
    assert "nothing was written or deleted" in err
    assert "-> delete that line (this builder never writes one)" in err
    assert outside(built) == before
    assert snapshot(built / "site") == site
    assert snapshot(built / ".cache" / "sites") == records


@pytest.mark.parametrize("where", WHERE)
def test_a_record_that_is_not_utf8_is_named_with_its_line(
    built: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = record_of(built, where)
    record.write_bytes(record.read_bytes() + b"l/s1/\xff\xfe.html\n")
    site = snapshot(built / "site")
    capsys.readouterr()
    assert main(cli(built, "render")[3:]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {record}: line "), err
    assert "which is not UTF-8" in err and "Traceback" not in err
    assert snapshot(built / "site") == site


@pytest.mark.parametrize("where", [*WHERE, "the records' folder"])
def test_a_record_that_is_a_link_is_not_read_and_its_target_is_kept(
    built: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the link, every line of the target was read as a file of the site, and the
    marker rewritten there by an older builder; a link is not the record this builder
    writes (nor is a link where its folder of records goes)."""
    record = record_of(built, "old marker" if where == "old marker" else "record")
    target = built / "content" / "lessons" / "calm-01" / "example.py"
    if where == "the records' folder":
        (built.parent / "elsewhere").mkdir()
        shutil.move(record.parent, built.parent / "elsewhere" / "sites")
        record = record.parent
        target = built.parent / "elsewhere" / "sites"
    else:
        record.unlink()
    record.symlink_to(target)
    before, site = outside(built), snapshot(built / "site")
    capsys.readouterr()
    assert main(cli(built, "render")[3:]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {record}: is a symbolic link, not the "), err
    assert "nothing was written or deleted" in err
    assert outside(built) == before
    assert snapshot(built / "site") == site
    assert record.is_symlink()


LINKS = {  # where in the site, and what it points to (relative to the test's folder)
    "a page's folder": ("l/s1", "elsewhere"),
    "a top folder": ("l", "elsewhere"),
    "static/": ("static", "elsewhere"),
    "a page": ("l/s1/index.html", "outside.txt"),
    "a page, to a recording": ("l/s1/index.html", "course/recordings/calm-01.json"),
    "a folder, to recordings/": ("l", "course/recordings"),
    "a folder, to a lesson": ("l/s1", "course/content/lessons/calm-01"),
}


@pytest.mark.parametrize("where", LINKS)
def test_a_link_in_the_site_is_replaced_never_written_through(built: Path, where: str) -> None:
    """Issue 25 item 3: with site/static -> ~/somewhere a build overwrote the user's files
    there. Every write below --out opens one folder at a time without following a link
    (builder/core/fsutil.py open_below); a link where the site has a folder or a file is
    replaced (the link deleted, its target kept), and the site equals a clean build."""
    name, target = LINKS[where]
    elsewhere = built.parent / "elsewhere"
    for inside in ("s1/index.html", "index.html", "nav.js", "pygments.css", "example.py"):
        (elsewhere / inside).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / inside).write_text("the user's own file")
    link = built / "site" / name
    shutil.rmtree(link) if link.is_dir() else link.unlink()
    link.symlink_to(built.parent / target)
    before = outside(built)
    assert main(cli(built, "render")[3:]) == 0
    assert outside(built) == before, "a file outside the site changed"
    assert not link.is_symlink()
    site = built / "site"
    assert not [p for p in site.rglob("*") if p.is_symlink()]
    clean = [
        *cli(built, "render")[3:-4],
        "--out",
        str(built / "clean"),
        "--cache",
        str(built / "cc"),
    ]
    assert main(clean) == 0
    assert snapshot(site) == snapshot(built / "clean")


def test_links_in_the_cache_folder_are_never_written_through(built: Path) -> None:
    """A checkout's .cache/ may be committed (git add -f): its build.lock as a link had its
    target truncated to "pid N"; a store.sqlite linked to nowhere made a database there."""
    cache = built / ".cache"
    precious = built.parent / "outside.txt"
    (cache / "build.lock").unlink()
    (cache / "build.lock").symlink_to(precious)
    for suffix in ("", "-wal", "-shm"):
        (cache / f"store.sqlite{suffix}").unlink(missing_ok=True)
        (cache / f"store.sqlite{suffix}").symlink_to(built.parent / f"made-there{suffix}")
    before = outside(built)
    lesson = built / "content" / "lessons" / "calm-01" / "lesson.md"
    lesson.write_text(lesson.read_text().replace("Prose.", "Prose, edited."))
    assert main(cli(built, "render")[3:]) == 0
    after = outside(built)
    assert after.pop("course/content/lessons/calm-01/lesson.md")
    before.pop("course/content/lessons/calm-01/lesson.md")
    assert after == before
    assert not [p for p in cache.iterdir() if p.is_symlink()]


def test_out_may_be_a_link_to_a_folder_the_user_chose(tmp_path: Path) -> None:
    """--out is followed when it is itself a link (`--out /srv/www/course`, where /srv/www
    is one): the site is built there, and a page deleted there is noticed (the site's
    snapshot walked only the link, so the next build was a no-op) and written again."""
    course = tmp_path / "course"
    write_course(course, {"calm-01": "print(1)\n"})
    chosen = tmp_path / "www"
    chosen.mkdir()
    (course / "site").symlink_to(chosen)
    past = time.time() - 60  # older than the index's racy window: a no-op is possible
    for path in course.rglob("*"):
        os.utime(path, (past, past), follow_symlinks=False)
    assert main(cli(course, "render")[3:]) == 0
    page = chosen / "l" / "s1" / "index.html"
    made = page.read_bytes()
    page.unlink()
    (chosen / "l" / "s1" / ".index.html.77-0.tmp").write_text("left by a killed build")
    assert main(cli(course, "render")[3:]) == 0
    assert page.read_bytes() == made
    assert not (chosen / "l" / "s1" / ".index.html.77-0.tmp").exists()
    assert (course / "site").is_symlink()


@pytest.mark.parametrize(
    "left",
    [
        [".coursebuilder-site.4242-0.tmp"],
        [".coursebuilder-site.4242-0.tmp", "l/s1/.index.html.4242-1.tmp", "static/"],
    ],
    ids=["the marker's", "pages' in folders"],
)
def test_a_folder_holding_only_this_builders_temporary_files_is_taken_over(
    tmp_path: Path, left: list[str]
) -> None:
    """A first build killed right after its first staged file (the marker's, before any
    rename) left only temporary files: the next build refused the folder."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    for name in left:
        path = tmp_path / "site" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not name.endswith("/"):
            path.write_text("half written")
    assert main(cli(tmp_path, "render")[3:]) == 0
    assert not [p for p in (tmp_path / "site").rglob("*.tmp")]
    assert (tmp_path / "site" / "l" / "s1" / "index.html").exists()


@pytest.mark.parametrize(
    "other",
    ["notes.txt", "l/s1/notes.txt", "link.4242-0.tmp -> outside", ".x.4242-0.tmp -> outside"],
)
def test_a_folder_holding_anything_else_is_still_refused(
    tmp_path: Path, other: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    site = tmp_path / "site"
    (site / "l").mkdir(parents=True)
    (site / ".coursebuilder-site.4242-0.tmp").write_text("half written")
    (tmp_path / "outside").write_text("the user's own file")
    name, _, target = other.partition(" -> ")
    path = site / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(tmp_path / target) if target else path.write_text("the user's own file")
    before = snapshot(site)
    assert main(cli(tmp_path, "render")[3:]) == 1
    assert "is not empty and was not made by this builder" in capsys.readouterr().err
    assert snapshot(site) == before
    assert (tmp_path / "outside").read_text() == "the user's own file"


def test_the_sites_folders_are_readable_by_a_web_server_whatever_the_umask(
    tmp_path: Path,
) -> None:
    """Files were 0644 under umask 077, folders 0700: a web server running as another
    user could read no page. Every folder the builder makes is 0755, --out included."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    done = subprocess.run(
        [
            *cli(tmp_path, "render")[:-4],
            "--out",
            str(tmp_path / "www" / "site"),
            "--cache",
            str(tmp_path / "c"),
        ],
        cwd=BUILDER_ROOT,
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.umask(0o077),
    )
    assert done.returncode == 0, done.stderr
    site = tmp_path / "www" / "site"
    modes = {
        p.relative_to(tmp_path).as_posix(): oct(p.stat().st_mode & 0o777)
        for p in [site.parent, site, *site.rglob("*")]
    }
    assert {m for p, m in modes.items() if (tmp_path / p).is_dir()} == {"0o755"}, modes
    assert {m for p, m in modes.items() if (tmp_path / p).is_file()} == {"0o644"}, modes
