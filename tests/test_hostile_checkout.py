"""Issue 18: an example that reaches outside its scratch folder, for real.

Without a sandbox it can write anywhere the user can; the build notices any change to the
files it owns (the course, recordings/, builder/, templates/) that it did not make, fails
the run naming the file, and writes no recording from then on. A data file must be a
regular file in the lesson folder: a link to a host file is refused when the course is
loaded and again when the example is staged.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.course.model import load_course
from builder.run.batch import record
from builder.run.execute import BUILDER_ROOT, Limits, Outcome, run_example
from tests.conftest import load_errors, make_paths
from tests.test_hostile_builds import write_course
from tests.test_hostile_lessons import set_front

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
    report = record([evil], tmp_path / "recordings", jobs=1, log=io.StringIO())
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
    assert f"(to {link_to}); data files must be regular files inside the lesson folder" in (message)


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
    assert execution.detail.startswith(f"data file {str(data)!r} is ")
    assert execution.detail.endswith(
        "now: data files must be regular files inside the lesson folder"
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
    report = record([busy], tmp_path / "recordings", jobs=1, log=io.StringIO())
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
    report = record([lesson], recordings, jobs=1, log=io.StringIO())
    assert not report.failures, report.failures
    assert (elsewhere / "calm-01.json").read_text() == "the user's own file"
    assert not (recordings / "_inputs").is_symlink()
    assert (recordings / "_inputs" / "calm-01.json").exists()
    assert (recordings / "calm-01.json").exists()
