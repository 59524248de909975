"""Every command drives the same Build (builder.pipeline.build), so each sees the same
thing after the same trouble: a damaged build cache, an input edited within the racy tick
of the last build, a build killed before it published. `render`, `site --no-execute` and
`check` run as a user runs them (the command line, in a process of their own); `serve`'s
build is its Session, started here as `serve` starts it."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.core.store import FILE
from builder.preview.session import Session
from tests.helpers import ROOT, cli

LESSON = "basics-01"
DAMAGED = "the build cache"


def run(paths: Paths, *args: str) -> subprocess.CompletedProcess[str]:
    root = paths.content.parent
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        cli(root, *args), capture_output=True, text=True, env=env, cwd=root, timeout=300
    )


def session_start(paths: Paths, caplog: pytest.LogCaptureFixture) -> tuple[Session, str]:
    """A preview's first build, as `serve` makes it; the session and what it logged."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        session = Session(paths, execute=False)
        session.start()
    return session, caplog.text


def damage(paths: Paths) -> None:
    (paths.cache / FILE).write_bytes(b"not a database, " * 64)


def test_a_damaged_cache_is_reported_by_every_command(
    recorded: Paths, caplog: pytest.LogCaptureFixture
) -> None:
    """One warning, the same words, whichever command found the cache damaged; each then
    does its work (the preview used to replace the cache without a word)."""
    said = []
    for args in (("render",), ("site", "--no-execute"), ("check",)):
        damage(recorded)
        done = run(recorded, *args)
        assert done.returncode == 0, (args, done.stderr)
        warned = [line for line in done.stderr.splitlines() if DAMAGED in line]
        assert len(warned) == 1, (args, done.stderr)
        said.append(warned[0].split(DAMAGED)[1])
    damage(recorded)
    session, logged = session_start(recorded, caplog)
    session.close()
    warned = [line for line in logged.splitlines() if DAMAGED in line]
    assert len(warned) == 1, logged
    said.append(warned[0].split(DAMAGED)[1])
    assert len(set(said)) == 1, said  # the same report: the file and what was done


def racy_edit(paths: Paths) -> None:
    """The example changed within the last build's tick: same size, same mtime."""
    example = paths.content / "lessons" / LESSON / "example.py"
    info = example.stat()
    text = example.read_text("utf-8")
    changed = text.replace("1", "2", 1)
    assert changed != text and len(changed) == len(text)
    example.write_text(changed, "utf-8")
    os.utime(example, ns=(info.st_atime_ns, info.st_mtime_ns))


def statuses_of_check(paths: Paths) -> dict[str, str]:
    done = run(paths, "check", "--json")
    return {row["lessonId"]: row["state"] for row in json.loads(done.stdout)}


def test_a_racy_edit_is_seen_by_every_command(
    recorded: Paths, caplog: pytest.LogCaptureFixture
) -> None:
    """An edit the file's metadata cannot show (git's racy case) is read again by the
    index of every command: each says the lesson is no longer fresh."""
    assert run(recorded, "render").returncode == 0  # the index of this build is the one read
    racy_edit(recorded)
    assert statuses_of_check(recorded)[LESSON] != "fresh"
    session, _ = session_start(recorded, caplog)
    by_id = {s.lesson_id: str(s.state) for s in session.statuses}
    session.close()
    assert by_id[LESSON] != "fresh"
    assert run(recorded, "render").returncode == 0
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")  # basics-01's
    assert "Not fresh:" in page
    assert statuses_of_check(recorded)[LESSON] == by_id[LESSON]


KILL_BEFORE_PUBLISH = textwrap.dedent(
    """
    import os, signal, sys
    from builder.pipeline import stages

    def killed(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    stages.publish = killed
    from builder.__main__ import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_a_build_killed_before_it_published_leaves_every_command_a_clean_start(
    recorded: Paths, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Killed after it made every page but before it wrote site/ and its manifest: the
    next build of each command gives what a build from nothing gives."""
    assert run(recorded, "render").returncode == 0
    before = statuses_of_check(recorded)
    lesson = recorded.content / "lessons" / LESSON / "lesson.md"
    lesson.write_text(lesson.read_text("utf-8") + "\nA sentence added.\n", "utf-8")
    root = recorded.content.parent
    command = [sys.executable, "-c", KILL_BEFORE_PUBLISH, *cli(root, "render")[3:]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert killed.returncode == -9, killed.stderr
    assert statuses_of_check(recorded) == before
    session, logged = session_start(recorded, caplog)
    served = session.served()
    session.close()
    assert "warning" not in logged
    assert any(b"A sentence added." in data for data in served.values())
    assert run(recorded, "render").returncode == 0
    pages = [p.read_bytes() for p in recorded.out.rglob("*.html")]
    assert any(b"A sentence added." in data for data in pages)
