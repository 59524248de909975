"""Issue 18: an example that reaches outside its scratch folder, for real.

Without a sandbox it can write anywhere the user can; the build notices any change to the
files it owns (the course, recordings/, builder/ with its templates) that it did not make, fails
the run naming the file, and writes no recording from then on. A data file must be a
regular file in the lesson folder: a link to a host file is refused when the course is
loaded and again when the example is staged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.course.load import load_course
from builder.run.batch import record
from builder.run.environment import BUILDER_ROOT
from builder.run.execute import Limits, Outcome, run_example
from tests.helpers import REFERENCE, cli, load_errors, make_paths, set_front, write_course

FIND_BUILDER = """\
import os
pid = os.getppid()
while pid > 1:  # up through the supervisor to the builder, and into its working folder
    target = f"/proc/{pid}/cwd/recordings/calm-01.json"
    if os.path.exists(target):
        break
    with open(f"/proc/{pid}/stat", "rb") as handle:
        pid = int(handle.read().rsplit(b")", 1)[1].split()[1])
with open(target, "a") as handle:
    handle.write("tampered")
print("wrote")
"""


def test_appending_to_another_lessons_recording_fails_the_run_naming_it(tmp_path: Path) -> None:
    """The issue's case, through the CLI run from the course folder: the example finds the
    builder's folder through /proc/<pid>/cwd and appends to a recording made earlier in
    the same run. The run fails naming the file; nothing is recorded after it."""
    write_course(
        tmp_path,
        {"calm-01": "print('calm')\n", "evil-02": FIND_BUILDER, "later-03": "print('later')\n"},
    )
    done = subprocess.run(
        [sys.executable, "-m", "builder", "record", "-j", "1", "--cache", ".cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(BUILDER_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "evil-02 (" in done.stderr
    assert "ran while a file the builder owns changed: recordings/calm-01.json changed" in (
        done.stderr
    )
    assert "nothing more is recorded in this run" in done.stderr
    assert "-> an example may write only in its working (scratch) folder" in done.stderr
    recordings = sorted(p.name for p in (tmp_path / "recordings").iterdir())
    assert recordings == ["_inputs", "calm-01.json"], "no recording after the change"
    sidecars = sorted(p.name for p in (tmp_path / "recordings" / "_inputs").iterdir())
    assert sidecars == ["calm-01.json"], "no sidecar after the change"
    assert "[3/3] FAIL later-03" in done.stderr, "a later run is not recorded either"


@pytest.mark.parametrize(
    ("target", "write", "what"),
    [
        ("content/lessons/calm-01/example.py", "a", "changed"),
        ("content/lessons/calm-01/notes.txt", "w", "appeared"),
        ("recordings/forged.json", "w", "appeared"),
        ("content/lessons/calm-01/example.py", "unlink", "was removed"),
    ],
)
def test_a_change_to_an_example_a_course_file_or_a_recording_fails_the_run(
    tmp_path: Path, target: str, write: str, what: str
) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n", "evil-02": "print(2)\n"})
    (tmp_path / "recordings").mkdir()
    path = tmp_path / target
    action = (
        f"os.unlink({str(path)!r})"
        if write == "unlink"
        else f"open({str(path)!r}, {write!r}).write('x')"
    )
    course = load_course(tmp_path / "content")
    evil = course.lesson("evil-02")
    assert evil is not None
    (evil.folder / "example.py").write_text(f"import os\n{action}\nraise SystemExit(0)\n")
    evil = load_course(tmp_path / "content").lesson("evil-02")
    assert evil is not None
    report = record([evil], tmp_path / "recordings", jobs=1)
    [failure] = report.failures
    assert failure.outcome is Outcome.TAMPERED
    assert failure.detail.startswith(f"{path} {what} while examples ran")
    assert not (tmp_path / "recordings" / "evil-02.json").exists()


# -- data files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "link_to",
    ["/etc/hostname", "numbers-real.txt", "nowhere.txt"],
    ids=["host file", "file beside it", "dangling"],
)
def test_a_data_file_that_is_a_link_is_refused_when_the_course_is_loaded(
    tmp_path: Path, link_to: str
) -> None:
    write_course(tmp_path, {"calm-01": "print(open('numbers.txt').read())\n"})
    set_front(tmp_path, "summary", "Number 1.\ndata: [numbers.txt]")
    folder = tmp_path / "content" / "lessons" / "calm-01"
    (folder / "numbers-real.txt").write_text("1 2 3\n")
    (folder / "numbers.txt").symlink_to(link_to)
    message = load_errors(make_paths(tmp_path))
    assert f"{folder / 'lesson.md'}: declares data file 'numbers.txt', which is a symbolic " in (
        message
    )
    assert f"(to {link_to}), and links in the course are not followed" in message


@pytest.mark.parametrize("swap", ["link", "fifo"])
def test_a_data_file_swapped_after_loading_is_refused_when_staged(
    tmp_path: Path, swap: str
) -> None:
    """Loaded as a regular file, then replaced by a link to a host file (or a FIFO, which
    would block a plain copy): the run fails naming the file; nothing of the host's is read."""
    write_course(tmp_path, {"calm-01": "print(open('numbers.txt').read())\n"})
    set_front(tmp_path, "summary", "Number 1.\ndata: [numbers.txt]")
    data = tmp_path / "content" / "lessons" / "calm-01" / "numbers.txt"
    data.write_text("1 2 3\n")
    lesson = load_course(tmp_path / "content").lesson("calm-01")
    assert lesson is not None
    data.unlink()
    if swap == "link":
        data.symlink_to("/etc/hostname")
    else:
        os.mkfifo(data)
    execution = run_example(lesson, Limits(timeout=30))
    assert execution.outcome is Outcome.BAD_DATA
    assert execution.detail.startswith(
        f"data file {str(data)!r} changed since the course was loaded: it is "
    )
    assert execution.detail.endswith(
        "(to /etc/hostname), and links in the course are not followed"
        if swap == "link"
        else "a FIFO (named pipe), not a regular file"
    )


@pytest.mark.slow
def test_a_regular_data_file_is_still_staged(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(open('numbers.txt').read(), end='')\n"})
    set_front(tmp_path, "summary", "Number 1.\ndata: [numbers.txt]")
    (tmp_path / "content" / "lessons" / "calm-01" / "numbers.txt").write_text("1 2 3\n")
    lesson = load_course(tmp_path / "content").lesson("calm-01")
    assert lesson is not None
    execution = run_example(lesson, Limits(timeout=60))
    assert execution.ok, execution
    assert execution.stdout == "1 2 3\n"


def test_prose_and_editor_files_changed_during_a_run_are_an_author_at_work(tmp_path: Path) -> None:
    """An author edits lesson.md (and the editor leaves its swap file) while an example runs,
    with `make serve` open or beside a long `make record`: the run still records."""
    write_course(tmp_path, {"calm-01": "print(1)\n", "busy-02": "print(2)\n"})
    (tmp_path / "recordings").mkdir()
    lessons = tmp_path / "content" / "lessons"
    edits = [lessons / "calm-01" / "lesson.md", tmp_path / "content" / "course.yml"]
    swap = lessons / "calm-01" / ".lesson.md.swp"
    steps = [f"open({str(path)!r}, 'a').write('\\nEdited.\\n')" for path in edits]
    steps.append(f"open({str(swap)!r}, 'w').write('swap')")
    course = load_course(tmp_path / "content")
    busy = course.lesson("busy-02")
    assert busy is not None
    (busy.folder / "example.py").write_text("\n".join(steps) + "\nprint(2)\n")
    busy = load_course(tmp_path / "content").lesson("busy-02")
    assert busy is not None
    report = record([busy], tmp_path / "recordings", jobs=1)
    assert not report.failures, report.failures
    assert (tmp_path / "recordings" / "busy-02.json").exists()


def test_a_linked_sidecar_folder_is_replaced_never_written_through(tmp_path: Path) -> None:
    """Issue 25: recordings/_inputs committed as a link to a folder of the reviewer's: the
    sidecar was written there, over a file of the same name. Recordings are written as the
    site is (builder/core/fsutil.py open_below): the link is replaced, its target kept."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    recordings, elsewhere = tmp_path / "recordings", tmp_path / "elsewhere"
    recordings.mkdir()
    elsewhere.mkdir()
    (elsewhere / "calm-01.json").write_text("the user's own file")
    (recordings / "_inputs").symlink_to(elsewhere)
    lesson = load_course(tmp_path / "content").lesson("calm-01")
    assert lesson is not None
    report = record([lesson], recordings, jobs=1)
    assert not report.failures, report.failures
    assert (elsewhere / "calm-01.json").read_text() == "the user's own file"
    assert not (recordings / "_inputs").is_symlink()
    assert (recordings / "_inputs" / "calm-01.json").exists()
    assert (recordings / "calm-01.json").exists()


# -- issue 25: one reader for every input; no file of the course is read through a link -------

SECRET = "token=ghp_SECRET_FROM_GIT_CONFIG"
ELSEWHERE_LESSON = """---
id: calm-01
slug: s1
title: Lesson 1
arc: hostile
order: 1
summary: Number 1.
---
Prose.
"""


def _outside(root: Path) -> Path:
    """A folder beside the checkout holding a secret, a whole lesson and a course file (what
    a link could reach: CI's .git/config, another checkout)."""
    outside = root / "outside"
    (outside / "lessons" / "calm-01").mkdir(parents=True)
    (outside / "config").write_text(f"[http]\n\textraheader = {SECRET}\n")
    (outside / "lessons" / "calm-01" / "lesson.md").write_text(ELSEWHERE_LESSON + SECRET + "\n")
    (outside / "lessons" / "calm-01" / "example.py").write_text(f"print({SECRET!r})\n")
    course = (root / "checkout" / "content" / "course.yml").read_text()
    (outside / "course.yml").write_text(course.replace("summary:", f"summary: {SECRET} ", 1))
    (outside / "glossary.yml").write_text(
        f"- {{id: t, term: T, definition: {SECRET}, taught_in: calm-01}}\n"
    )
    return outside


# (where, relative to the checkout; what it points to; what the error names)
LINKS = {
    "example.py to .git/config": (
        "content/lessons/calm-01/example.py",
        "../../../../outside/config",
    ),
    "example.py to /proc/self/environ": (
        "content/lessons/calm-01/example.py",
        "/proc/self/environ",
    ),
    "example.py to /dev/zero": ("content/lessons/calm-01/example.py", "/dev/zero"),
    "lesson.md inside the course": ("content/lessons/calm-01/lesson.md", "../calm-02/lesson.md"),
    "lesson.md dangling": ("content/lessons/calm-01/lesson.md", "gone.md"),
    "a lesson folder": ("content/lessons/calm-01", "../../../outside/lessons/calm-01"),
    "lessons/ itself": ("content/lessons", "../../outside/lessons"),
    "course.yml": ("content/course.yml", "../../outside/course.yml"),
    "glossary.yml": ("content/glossary.yml", "../../outside/glossary.yml"),
    "content/ itself": ("content", "../outside"),
}


@pytest.mark.parametrize("command", ["check", "render"])
@pytest.mark.parametrize("case", LINKS)
def test_a_linked_input_is_refused_naming_it_and_nothing_of_its_target_is_published(
    tmp_path: Path, case: str, command: str
) -> None:
    """The issue's cases and their siblings: whatever a link in the course points to, out
    of the checkout or inside it, dangling or to a device, the command stops with one
    line naming the link and what to do; the target is never read, so never published."""
    root = tmp_path / "checkout"
    write_course(root, {"calm-01": "print(1)\n", "calm-02": "print(2)\n"})
    outside = _outside(tmp_path)
    where, target = LINKS[case]
    link = root / where
    moved = tmp_path / "moved"
    if link.is_dir():  # a folder: kept aside (the link now stands where it was)
        link.rename(moved)
        if where == "content":  # the course everything else is read from: the whole of it
            (outside / "course.yml").write_text((moved / "course.yml").read_text())
    else:
        link.unlink(missing_ok=True)
    link.symlink_to(target)
    done = subprocess.run(cli(root, command), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"{link}: is a symbolic link (to {target}), and links in the course are not " in (
        done.stderr
    )
    assert "-> replace the link with the file or folder it points to" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    site = root / "site"
    published = [p.read_bytes() for p in site.rglob("*") if p.is_file()] if site.exists() else []
    assert not any(SECRET.encode() in data for data in published)


def test_a_link_to_a_fifo_is_named_without_waiting(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    os.mkfifo(tmp_path / "pipe")
    example = tmp_path / "content" / "lessons" / "calm-01" / "example.py"
    example.unlink()
    example.symlink_to(tmp_path / "pipe")
    done = subprocess.run(cli(tmp_path, "check"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{example}: is a symbolic link (to {tmp_path / 'pipe'})" in done.stderr


@pytest.mark.parametrize("where", ["recordings/calm-01.json", "recordings"])
def test_a_linked_recording_or_recordings_folder_is_never_read(tmp_path: Path, where: str) -> None:
    """A recording (or the whole folder) linked to a valid recording elsewhere: `check`
    names the link; `render` publishes nothing of the target."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    assert subprocess.run(cli(tmp_path, "render"), capture_output=True, timeout=60).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    forged = json.loads(REFERENCE.read_text())
    forged.update(lessonId="calm-01", stdout=SECRET + "\n")
    (elsewhere / "calm-01.json").write_text(json.dumps(forged, indent=2))
    link = tmp_path / where
    link.parent.mkdir(exist_ok=True)
    target = (
        elsewhere / link.relative_to(tmp_path / "recordings")
        if where != "recordings"
        else elsewhere
    )
    link.symlink_to(target)
    checked = subprocess.run(cli(tmp_path, "check"), capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert f"is a symbolic link (to {target})" in checked.stdout + checked.stderr
    subprocess.run(cli(tmp_path, "render"), capture_output=True, timeout=60)
    site = tmp_path / "site"
    assert not any(SECRET.encode() in p.read_bytes() for p in site.rglob("*") if p.is_file())


def test_an_image_the_prose_shows_is_a_data_file_and_never_a_link(tmp_path: Path) -> None:
    """An image is published only as a `data:` file beside the page: a linked one is refused
    like any input (and the check holds again when the site copies it)."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    set_front(tmp_path, "summary", "Number 1.\ndata: [plot.png]")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "config").write_text(SECRET)
    lesson = tmp_path / "content" / "lessons" / "calm-01"
    (lesson / "lesson.md").write_text((lesson / "lesson.md").read_text() + "\n![plot](plot.png)\n")
    (lesson / "plot.png").symlink_to("../../../outside/config")
    done = subprocess.run(cli(tmp_path, "render"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "declares data file 'plot.png', which is a symbolic link (to ../../../outside/co" in (
        done.stderr
    )
    assert not (tmp_path / "site" / "l" / "s1" / "plot.png").exists()


def test_linked_sidecars_are_not_read(tmp_path: Path) -> None:
    """recordings/_inputs/ (or one sidecar) as a link: ignored, as a damaged sidecar is (they
    only sharpen messages), never read through the link."""
    from builder.course.rules import read_input, read_inputs

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "calm-01.json").write_text(json.dumps({"seconds": 1.5}))
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    (recordings / "_inputs").symlink_to(elsewhere)
    assert read_inputs(recordings) == {} and read_input(recordings, "calm-01") is None
    (recordings / "_inputs").unlink()
    (recordings / "_inputs").mkdir()
    (recordings / "_inputs" / "calm-01.json").symlink_to(elsewhere / "calm-01.json")
    assert read_inputs(recordings) == {} and read_input(recordings, "calm-01") is None
    (recordings / "_inputs" / "calm-01.json").unlink()
    (recordings / "_inputs" / "calm-01.json").write_text(json.dumps({"seconds": 1.5}))
    assert read_inputs(recordings) == {"calm-01": {"seconds": 1.5}}
