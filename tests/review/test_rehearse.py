"""`python -m builder rehearse LOCKFILE` on the fixture course, with a lock that pins another
version of a small pure-Python package (iniconfig) that two added lessons print, so the suite
needs no second JAX download: one lesson's output, prose value and `check passed:` line
change, another hangs on the other version. The side environment is made once per module.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.review.rehearsal_report import render
from builder.review.rehearse import Rehearsal, rehearse
from builder.run.sandbox import sandbox_problem
from tests.helpers import canned_run, copy_course, make_paths

OTHER = "2.3.0" if metadata.version("iniconfig") != "2.3.0" else "2.3.1"
PRINTS = """\
from importlib import metadata
version = metadata.version("iniconfig")
print("iniconfig", version)
if version == "{pinned}":
    print("check passed: iniconfig is the pinned {pinned}")
"""
HANGS = """\
import time
from importlib import metadata
version = metadata.version("iniconfig")
if version != "{pinned}":
    time.sleep(600)
print("iniconfig answered in time")
"""


def add_lesson(
    paths: Paths, lesson_id: str, order: int, source: str, body: str, extra: str = ""
) -> None:
    folder = paths.content / "lessons" / lesson_id
    folder.mkdir()
    pinned = metadata.version("iniconfig")
    (folder / "example.py").write_text(source.format(pinned=pinned))
    (folder / "lesson.md").write_text(
        f"---\nid: {lesson_id}\nslug: pkg-{order}\ntitle: Package {order}\narc: basics\n"
        f"order: {order}\nsummary: Prints a version.\n{extra}---\n{textwrap.dedent(body)}"
    )


def digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """The fixture course plus two lessons that print iniconfig's version, recorded here."""
    from builder.pipeline.build import build

    root = tmp_path_factory.mktemp("rehearse")
    paths = copy_course(root, broken=False)
    add_lesson(
        paths,
        "basics-05",
        5,
        PRINTS,
        """
        The version is {{ value output="^iniconfig (\\S+)" }}, and
        {{ value output="check passed: (.*)" }}.
        """,
    )
    add_lesson(paths, "basics-06", 6, HANGS, "{{ output }}\n", "timeout: 5\n")

    def runner(lesson, limits):  # type: ignore[no-untyped-def]
        from builder.run.execute import run_example

        return (
            run_example(lesson, limits) if lesson.id >= "basics-05" else canned_run(lesson, limits)
        )

    build(paths, execute=True, jobs=2, runner=runner)
    shutil.rmtree(paths.out)
    lock = root / "other.lock"
    lock.write_text(f"iniconfig=={OTHER}\n")
    return paths


@pytest.fixture(scope="module")
def rehearsal(course: Paths) -> tuple[Rehearsal, dict[str, str]]:
    before = {
        "recordings": digest(course.recordings),
        "site": digest(course.out),
        "lock": digest(course.content.parent / "other.lock"),
    }
    done = rehearse(
        course.content.parent / "other.lock",
        course.content,
        course.recordings,
        course.cache,
        jobs=2,
    )
    after = {
        "recordings": digest(course.recordings),
        "site": digest(course.out),
        "lock": digest(course.content.parent / "other.lock"),
    }
    assert after == before  # recordings/, site/ and the lock are only read
    return done, before


def test_the_rehearsal_says_what_the_other_lock_changes(
    rehearsal: tuple[Rehearsal, dict[str, str]], course: Paths
) -> None:
    done, _ = rehearsal
    results = dict(done.lessons)
    assert results["basics-05"] == "changed"
    assert results["basics-06"] == "failed"
    assert results["basics-02"] == "same"
    [failure] = done.failures
    assert failure.lesson_id == "basics-06" and failure.outcome == "timed out"
    [shown] = done.references
    assert (shown.page, shown.old, shown.new) == ("l/pkg-5/", metadata.version("iniconfig"), OTHER)
    [broken] = done.unresolved
    assert broken.old.startswith("iniconfig is the pinned") and broken.new == ""
    assert done.checks_gone == (
        ("basics-05", f"check passed: iniconfig is the pinned {metadata.version('iniconfig')}"),
    )
    assert done.pages == ("l/pkg-5/",)
    side = Path(done.recordings)
    assert side != course.recordings and (side / "basics-05.json").is_file()
    assert json.loads((side / "basics-05.json").read_text())["stdout"] == f"iniconfig {OTHER}\n"
    # the reference that no longer resolves fails the rehearsal's build, as it would the real one
    assert "basics-05/lesson.md: line 10: {{ value" in done.site_problem
    assert "the pattern matches nothing" in done.site_problem


def test_the_report_in_diffs_three_formats(rehearsal: tuple[Rehearsal, dict[str, str]]) -> None:
    done, _ = rehearsal
    text = render(done, "text")
    assert "basics-06  failed" in text and "timed out" in text
    assert f"{metadata.version('iniconfig')} -> {OTHER}" in text
    assert "References that no longer resolve" in text
    assert "the site could not be rendered" in text
    markdown = render(done, "markdown")
    assert "| `basics-05` | changed |" in markdown and "#### Pages that would change" in markdown
    data = json.loads(render(done, "json"))
    assert dict(map(tuple, data["lessons"]))["basics-06"] == "failed"
    assert data["checksGone"] and data["failures"][0]["lessonId"] == "basics-06"


def test_the_side_environment_is_reused(course: Paths, capsys: pytest.CaptureFixture[str]) -> None:
    """A second rehearsal of the same lock makes no environment; Ctrl-C while it records
    leaves recordings/ as it was and says so."""
    lock = course.content.parent / "other.lock"
    before = digest(course.recordings)
    import builder.run.batch

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    original, builder.run.batch.record = builder.run.batch.record, interrupted  # type: ignore[assignment]
    try:
        code = main(
            [
                "rehearse",
                str(lock),
                "--content",
                str(course.content),
                "--recordings",
                str(course.recordings),
                "--cache",
                str(course.cache),
            ]
        )
    finally:
        builder.run.batch.record = original
    err = capsys.readouterr().err
    assert code == 130
    assert "(reused)" in err
    assert "rehearsal interrupted" in err and "recordings/, site/ and requirements.lock" in err
    assert digest(course.recordings) == before


def test_a_lock_that_cannot_be_installed_changes_nothing(tmp_path: Path) -> None:
    paths = make_paths(tmp_path)
    lock = tmp_path / "broken.lock"
    lock.write_text("this is !! not a requirement\n")
    with pytest.raises(BuildError, match="cannot be installed") as caught:
        rehearse(lock, Path("tests/fixture_course"), paths.recordings, paths.cache)
    assert "untouched" in str(caught.value)
    assert not list((paths.cache / "rehearse").glob("*/venv"))  # nothing half-made is kept


def test_the_rehearsal_folder_cannot_be_the_checkouts(course: Paths) -> None:
    with pytest.raises(BuildError, match="overlaps"):
        rehearse(
            course.content.parent / "other.lock",
            course.content,
            course.recordings,
            course.cache,
            out=course.recordings.parent,
        )
    assert load_course(course.content)  # still there


@pytest.mark.slow
def test_the_real_thing_records_on_another_jax(tmp_path: Path) -> None:
    """The fixture course rehearsed on another jax than the pinned one (0.10.1, the release
    before the pin: a real jax and jaxlib download; the lock pins only those two, the rest
    comes from this checkout's environment): its examples ran on that jax, and say so."""
    from builder.pipeline.build import build

    paths = copy_course(tmp_path, broken=False)
    build(paths, execute=True, jobs=2, runner=canned_run)
    lock = tmp_path / "next.lock"
    lock.write_text("jax==0.10.1\njaxlib==0.10.1\n")
    done = rehearse(lock, paths.content, paths.recordings, paths.cache, jobs=2)
    assert ("jax", metadata.version("jax"), "0.10.1") in done.versions
    assert not done.failures, done.failures
    side = json.loads((Path(done.recordings) / "basics-01.json").read_text())
    assert side["environment"]["jax"] == "0.10.1"
    assert not done.site_problem


ESCAPES = """\
try:
    open({target!r}, "w").write("out")
    print("wrote outside")
except OSError as error:
    print("refused:", type(error).__name__)
"""


@pytest.mark.skipif(bool(sandbox_problem()), reason="--sandbox cannot run here")
def test_rehearse_sandbox_runs_the_side_interpreter_in_the_sandbox(
    course: Paths, tmp_path: Path
) -> None:
    """Issue 38: a pull request's examples ran unsandboxed in a rehearsal. With --sandbox
    they run in it, on the side environment's interpreter (mounted read-only there): the
    other iniconfig is printed, and a write beside the course is refused."""
    content = tmp_path / "content"
    shutil.copytree(course.content, content)
    paths = Paths(content, course.recordings, tmp_path / "site", course.cache)
    target = tmp_path / "escaped.txt"
    add_lesson(paths, "basics-07", 7, ESCAPES.format(target=str(target)), "{{ output }}\n")
    out = tmp_path / "rehearsal"
    lock = course.content.parent / "other.lock"
    folders = ["--content", str(content), "--recordings", str(course.recordings)]
    options = ["--sandbox", "--out", str(out), "--format", "json", "--cache", str(course.cache)]
    code = main(["rehearse", str(lock), *options, *folders])
    assert code == 0
    side = out / "recordings"
    assert json.loads((side / "basics-05.json").read_text())["stdout"] == f"iniconfig {OTHER}\n"
    assert json.loads((side / "basics-07.json").read_text())["stdout"] == (
        "refused: FileNotFoundError\n"
    )
    assert not target.exists()
