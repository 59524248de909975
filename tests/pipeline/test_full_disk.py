"""A full, read-only or size-limited disk: the file named, what to do, and nothing
half-written (the site, the cache and the recordings)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT, build_cli, snapshot, write_course

# -- a full, read-only or size-limited disk: the file named, nothing half-written ----------


@contextlib.contextmanager
def small_disk(path: Path, size: str = "32m") -> Iterator[Path]:
    """A tmpfs of `size` at `path` (root only: elsewhere the test is skipped, and the
    size-limit test below covers the same code path)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)])
    if mounted.returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(disk: Path) -> None:
    """Leave no free block on `disk`."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError as error:
        assert error.errno == errno.ENOSPC
    finally:
        os.close(fd)


def read_only_mount(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)


def restore(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    (disk / "filler").unlink(missing_ok=True)


def no_temporary_files(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert not left, f"half-written files left behind: {left}"


def rename_every_lesson(root: Path) -> None:
    """Every page shows every title in its navigation: all of them change."""
    for lesson in sorted((root / "content" / "lessons").glob("*/lesson.md")):
        lesson.write_text(lesson.read_text().replace("title: Lesson", "title: Renamed lesson"))


@pytest.fixture
def three(tmp_path: Path) -> Path:
    write_course(tmp_path, {f"calm-0{n}": f"print({n})\n" for n in (1, 2, 3)})
    return tmp_path


FAILURES = {
    "full": (fill, "No space left on device", "-> free space on that disk, then run"),
    "read-only": (read_only_mount, "Read-only file system", "-> that file system is mounted"),
}


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_site_names_the_file_and_keeps_the_site(
    three: Path, failure: str
) -> None:
    """The issue's "cannot write a file: No space left on device": the file is named, with
    what to do; no temporary file is left; the previous site stays byte for byte."""
    damage, reason, remedy = FAILURES[failure]
    with small_disk(three / "disk") as disk:
        site = disk / "site"
        assert build_cli(three, "--out", str(site)) == (0, "")
        before = snapshot(site)
        rename_every_lesson(three)
        damage(disk)
        code, err = build_cli(three, "--out", str(site))
        assert code == 1 and "Traceback" not in err, err
        assert re.match(rf"error: cannot write {re.escape(str(site))}/\S+: {reason}; ", err), err
        assert "the previous site is unchanged" in err and remedy in err, err
        no_temporary_files(site)
        assert snapshot(site) == before  # the record of its files is in the cache
        restore(disk)
        assert build_cli(three, "--out", str(site)) == (0, "")
        assert b"Renamed lesson 2" in (site / "l" / "s2" / "index.html").read_bytes()


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_cache(three: Path, failure: str) -> None:
    """A full disk under the store leaves the build without a cache (a warning naming it,
    and one naming the site's record if that cannot be written either) and the site right; a read-only one stops the build before anything, naming the
    lock file."""
    damage, reason, remedy = FAILURES[failure]
    with small_disk(three / "disk") as disk:
        cache = disk / ".cache"
        assert build_cli(three, "--cache", str(cache)) == (0, "")
        before = snapshot(three / "site")
        rename_every_lesson(three)
        damage(disk)
        code, err = build_cli(three, "--cache", str(cache))
        no_temporary_files(three / "site")
        if failure == "full":  # the site's record (in the cache too) may not fit either
            said = err.splitlines()
            assert code == 0 and said and all(f"{cache}/" in line for line in said), err
            assert all(line.startswith("warning: ") for line in said), err
            assert err.startswith(f"warning: the build cache {cache / 'store.sqlite'} ")
            assert b"Renamed lesson 2" in (three / "site" / "l" / "s2" / "index.html").read_bytes()
        else:
            assert code == 1 and err.startswith(
                f"error: cannot write {cache / 'build.lock'}: {reason}; nothing was built\n"
            ), err
            assert remedy in err and snapshot(three / "site") == before
        restore(disk)
        assert build_cli(three, "--cache", str(cache)) == (0, "")


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_recordings(tmp_path: Path, failure: str) -> None:
    """A full disk: the example runs and its recording cannot be saved, named with the
    reason; read-only: nothing runs. Either way the old recording stays byte for byte."""
    from builder.core.errors import BuildError
    from builder.core.observe import Paths
    from builder.pipeline.build import build
    from tests.helpers import canned_run, copy_course

    damage, reason, _ = FAILURES[failure]
    with small_disk(tmp_path / "disk") as disk:
        course = copy_course(tmp_path, broken=False)
        paths = Paths(course.content, disk / "recordings", course.out, course.cache)
        build(paths, execute=True, jobs=2, runner=canned_run)
        before = snapshot(paths.recordings)
        example = next(paths.content.glob("lessons/*/example.py"))
        example.write_text(example.read_text() + "\n# changed\n")
        damage(disk)
        with pytest.raises(BuildError) as caught:
            build(paths, execute=True, jobs=2, runner=canned_run)
        said = str(caught.value)
        lesson = example.parent.name
        if failure == "full":
            assert f"{paths.recordings / lesson}.json could not be written: {reason}" in said
        else:
            assert said.startswith(f"cannot write {paths.recordings}: {reason}; nothing was ")
        no_temporary_files(paths.recordings)
        assert snapshot(paths.recordings) == before
        restore(disk)


def test_a_file_size_limit_names_the_file_without_root(three: Path) -> None:
    """RLIMIT_FSIZE (ulimit -f) makes a write fail with EFBIG, as a full disk fails it with
    ENOSPC, on any machine: the real CLI in a subprocess, the file it could not write named
    (one of the site's). One page is made larger than the limit; every other file stays
    under it."""
    import resource

    from tests.helpers import cli

    lesson = three / "content" / "lessons" / "calm-02" / "lesson.md"
    lesson.write_text(lesson.read_text() + "\n\n".join(["Long prose. " * 3750] * 5))
    assert build_cli(three) == (0, "")
    site = three / "site"
    before = snapshot(site)
    # the page, and the files that hold its text again: the printable course, the reader's
    # notebook and the search bundle
    holding = ("l/s2/index.html", "print/index.html", "l/s2/example.ipynb")
    kept = {n: d for n, d in before.items() if n not in holding and not n.endswith("offline.js")}
    others = max(map(len, kept.values()))
    assert len(before["l/s2/index.html"]) > LIMIT > others
    rename_every_lesson(three)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    args = cli(three, "render")
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=limited, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    # one of the page's files is the first write over the limit
    said = rf"^error: cannot write {re.escape(str(site))}/l/s2/\S+: File too large; the previous"
    assert re.search(said, done.stderr, re.M), done.stderr
    assert "-> raise the file size limit (ulimit -f), then run" in done.stderr
    no_temporary_files(site)
    assert snapshot(site) == before


LIMIT = 200 * 1024  # bytes: over every file of the site but those that hold one page's text


def test_an_unwritable_cache_folder_costs_only_time(three: Path) -> None:
    """EACCES (EPERM for root: chattr +i): the store cannot be written or replaced; the
    build runs without it, says so in one line, and the site is right."""
    from tests.helpers import read_only

    assert build_cli(three) == (0, "")
    rename_every_lesson(three)
    with read_only(three / ".cache"):
        code, err = build_cli(three)
    assert code == 0 and len(err.splitlines()) == 1, err
    assert err.startswith(f"warning: the build cache {three / '.cache' / 'store.sqlite'} ")
    assert b"Renamed lesson 2" in (three / "site" / "l" / "s2" / "index.html").read_bytes()
    assert build_cli(three) == (0, "")


@pytest.mark.parametrize(
    ("number", "remedy"),
    [
        (errno.ENOSPC, "free space on that disk"),
        (errno.EDQUOT, "free space within your disk quota, or ask for a larger one"),
        (errno.EFBIG, "raise the file size limit (ulimit -f)"),
        (errno.EROFS, "that file system is mounted read-only: pass a folder on a writable one"),
        (errno.EACCES, "make the folder writable"),
        (errno.EPERM, "make the folder writable (chattr -i if it is immutable)"),
        (errno.EIO, "make the folder writable (and check the disk is not full)"),
    ],
)
def test_each_write_failure_says_what_to_do(number: int, remedy: str) -> None:
    """EDQUOT cannot be made here (no quota on tmpfs, and root is exempt): its message is
    checked as the others are, on the one function that words them all."""
    from builder.core.fsutil import cannot_write

    error = cannot_write(OSError(number, os.strerror(number), "/site/x.html"), "kept")
    assert str(error) == (
        f"cannot write /site/x.html: {os.strerror(number)}; kept\n"
        f"  -> {remedy}, then run the command again"
    )
