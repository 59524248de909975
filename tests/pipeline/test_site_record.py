"""Issue 43: the site folder holds nothing but the site. What the builder wrote there is
recorded in its cache (builder/pipeline/site_record.py), and the cases a user meets keep their
protections: the cache deleted (the site is recognised by its index.html and written over,
nothing deleted), an older builder's marker in the site (read once, then deleted), a folder
made again at the same path by someone else, a checkout copied or moved, two site folders for
one cache, a cache where the record cannot be written. The record's hostile lines and links
are in tests/pipeline/test_hostile_builds.py (`test_a_record_*`)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builder.__main__ import main
from builder.core.fsutil import name_problem
from builder.core.observe import Paths
from builder.pipeline import stages
from builder.pipeline.site_record import GENERATOR, LEGACY, first_problem, record_path
from tests.helpers import cli, read_only, snapshot, write_course


def test_the_site_folder_holds_only_the_sites_files(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker `.coursebuilder-site` was published with the site: a reader fetched the
    list of its files. Every file in the folder is one the build made, and none is hidden."""
    from builder.pipeline.build import build

    made: list[str] = []
    write = stages.write

    def noted(files: dict[str, bytes], names: Iterable[str], *args: object) -> object:
        made.extend(names)
        return write(files, names, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(stages, "write", noted)
    shutil.rmtree(recorded.out, ignore_errors=True)
    build(recorded, execute=False, jobs=2)
    held = {p.relative_to(recorded.out).as_posix() for p in recorded.out.rglob("*")}
    files = {name for name in held if (recorded.out / name).is_file()}
    assert made and files == set(made)
    assert not [name for name in held if any(p.startswith(".") for p in name.split("/"))]
    assert GENERATOR in (recorded.out / "index.html").read_bytes()
    assert record_path(recorded.cache, recorded.out).is_file()


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A checkout of three lessons rendered once."""
    write_course(tmp_path, {f"calm-0{n}": f"print({n})\n" for n in (1, 2, 3)})
    assert main(cli(tmp_path, "render")[3:]) == 0
    return tmp_path


def render(course: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main([*cli(course, "render")[3:], *extra])
    return code, capsys.readouterr().err


def retitle(course: Path, lesson: str) -> None:
    page = course / "content" / "lessons" / lesson / "lesson.md"
    page.write_text(page.read_text().replace("title: Lesson", "title: Renamed lesson"))


def test_a_deleted_cache_keeps_the_site_and_deletes_nothing(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rm -rf .cache && make site`: the marker survived that, the record does not. The
    site is the builder's (its index.html says so): written over, nothing of it deleted
    (which files are the builder's is no longer known), and one line says how many."""
    site = course / "site"
    (site / "CNAME").write_text("course.example.org")
    shutil.rmtree(course / ".cache")
    shutil.rmtree(course / "content" / "lessons" / "calm-03")  # its page is left
    retitle(course, "calm-01")
    code, err = render(course, capsys)
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if not line.startswith("Built ")]
    assert warning.startswith(f"warning: {site} holds ")
    assert "file(s) the site does not have, left in place" in warning
    assert "(make clean, or deleting the folder, removes them)" in warning
    assert int(warning.split(" holds ")[1].split()[0]) >= 3  # CNAME, calm-03's page and notebook
    assert (site / "CNAME").read_text() == "course.example.org"
    assert (site / "l" / "s3" / "index.html").is_file()
    assert b"Renamed lesson 1" in (site / "l" / "s1" / "index.html").read_bytes()
    assert record_path(course / ".cache", site).is_file()
    shutil.rmtree(course / "content" / "lessons" / "calm-02")
    code, err = render(course, capsys)  # the record is back: what it lists is deleted again
    assert code == 0 and "warning" not in err, err
    assert not (site / "l" / "s2").exists()
    assert (site / "CNAME").is_file() and (site / "l" / "s3" / "index.html").is_file()


@pytest.mark.parametrize(
    "index",
    ["someone else's page", "a link to the builder's page", "no index.html"],
)
def test_a_folder_with_no_record_and_no_index_html_of_ours_is_refused(
    course: Path, index: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache deleted, and a site folder the builder cannot tell for its own: nothing
    written, nothing deleted (`--out ~/Documents`)."""
    site = course / "site"
    shutil.rmtree(course / ".cache")
    page = site / "index.html"
    if index == "someone else's page":
        page.write_text('<meta name="generator" content="Hugo 0.125">')
    elif index == "a link to the builder's page":
        shutil.move(page, course / "ours.html")
        page.symlink_to(course / "ours.html")
    else:
        page.unlink()
    before = snapshot(site)
    code, err = render(course, capsys)
    assert code == 1
    assert err.startswith(f"error: {site}: is not empty and was not made by this builder"), err
    assert snapshot(site) == before


def test_an_old_marker_is_read_once_as_the_record_then_deleted(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every checkout built before issue 43 has `site/.coursebuilder-site` and no record:
    the marker says which files are the builder's (those the site no longer has are
    deleted, the others kept), and is itself deleted."""
    site, record = course / "site", record_path(course / ".cache", course / "site")
    lines = record.read_text().splitlines(True)[3:]  # the names, without the record's header
    (site / LEGACY).write_text("# made by python -m builder; every file listed\n" + "".join(lines))
    record.unlink()
    (site / "CNAME").write_text("course.example.org")
    shutil.rmtree(course / "content" / "lessons" / "calm-03")
    code, err = render(course, capsys)
    assert code == 0 and "warning" not in err, err
    assert not (site / LEGACY).exists()
    assert not (site / "l" / "s3").exists(), "a page the old marker listed is deleted"
    assert (site / "CNAME").read_text() == "course.example.org"
    assert LEGACY not in record.read_text() and "l/s1/index.html" in record.read_text()


@pytest.mark.parametrize("inode", ["another inode", "its inode back"])
def test_a_folder_made_again_by_someone_else_is_not_taken_for_the_recorded_one(
    course: Path, inode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder deleted and made again at the same path by someone else, holding their own
    index.html and a file the record does not list, is not the builder's, even when the file
    system gives it the old folder's inode number back (as ext4 and tmpfs often do: the
    record is edited to say so)."""
    site, record = course / "site", record_path(course / ".cache", course / "site")
    shutil.rmtree(site)
    (site / "l" / "s3").mkdir(parents=True)
    (site / "index.html").write_text("<title>the user's own page</title>")
    (site / "l" / "s3" / "notes.txt").write_text("the user's own notes")
    if inode == "its inode back":
        now = site.stat()
        text = re.sub(
            r"# identity: \d+ \d+", f"# identity: {now.st_dev} {now.st_ino}", record.read_text()
        )
        record.write_text(text)
    before = snapshot(site)
    code, err = render(course, capsys)
    assert code == 1 and "is not empty and was not made by this builder" in err, err
    assert snapshot(site) == before
    shutil.rmtree(site)  # `rm -rf site && make site`: a new folder, the old record replaced
    assert render(course, capsys)[0] == 0
    assert (site / "l" / "s3" / "index.html").is_file()


BASE = """<!doctype html>
<html><head><title>{{ title }}</title></head>
<body>{% block main %}{% endblock %}</body></html>
"""


def test_a_base_html_without_the_generator_meta_keeps_its_site_recognised(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A course's own base.html, written from nothing, need not carry the generator meta:
    the record holds the digest of the index.html the build wrote, so the folder is still
    the builder's with a file of the user's in it (a CNAME), and pages the site no longer
    has are deleted. With the cache deleted too there is nothing left to know it by."""
    (course / "content" / "templates").mkdir(exist_ok=True)
    (course / "content" / "templates" / "base.html").write_text(BASE)
    site = course / "site"
    assert render(course, capsys)[0] == 0
    assert GENERATOR not in (site / "index.html").read_bytes()
    (site / "CNAME").write_text("course.example.org")
    shutil.rmtree(course / "content" / "lessons" / "calm-03")
    code, err = render(course, capsys)
    assert code == 0 and "warning" not in err, err
    assert not (site / "l" / "s3").exists() and (site / "CNAME").is_file()
    shutil.rmtree(course / ".cache")
    before = snapshot(site)
    code, err = render(course, capsys)
    assert code == 1 and "is not empty and was not made by this builder" in err, err
    assert snapshot(site) == before


@pytest.mark.parametrize("how", ["copied", "moved"])
def test_a_checkout_copied_or_moved_keeps_its_record(
    course: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record is named by where the site folder is from the cache folder (`../site`), so
    a checkout copied (the site folder's identity differs, its index.html is the builder's)
    or moved with both still deletes what its site no longer has, and says nothing."""
    elsewhere = course.parent / f"{course.name}-{how}"
    shutil.copytree(course, elsewhere, symlinks=True) if how == "copied" else course.rename(
        elsewhere
    )
    shutil.rmtree(elsewhere / "content" / "lessons" / "calm-03")
    code, err = render(elsewhere, capsys)
    assert code == 0 and "warning" not in err, err
    assert not (elsewhere / "site" / "l" / "s3").exists()
    assert (elsewhere / "site" / "l" / "s2" / "index.html").is_file()
    if how == "copied":
        assert (course / "site" / "l" / "s3" / "index.html").is_file(), "the original is kept"


def test_two_site_folders_of_one_cache_each_have_their_record(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = course / "preview-site"
    assert render(course, capsys, "--out", str(other))[0] == 0
    assert record_path(course / ".cache", other) != record_path(course / ".cache", course / "site")
    shutil.rmtree(course / "content" / "lessons" / "calm-03")
    assert render(course, capsys)[0] == 0
    assert not (course / "site" / "l" / "s3").exists()
    assert (other / "l" / "s3" / "index.html").is_file(), "the other folder is untouched"
    assert render(course, capsys, "--out", str(other))[0] == 0
    assert not (other / "l" / "s3").exists()


def test_a_record_that_cannot_be_written_costs_a_warning_not_the_site(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only folder of records: the site is written and its old files deleted by the
    record as it was; one line says the next build may leave files behind."""
    records = record_path(course / ".cache", course / "site").parent
    shutil.rmtree(course / "content" / "lessons" / "calm-03")
    retitle(course, "calm-01")
    with read_only(records):
        code, err = render(course, capsys)
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if not line.startswith("Built ")]
    assert warning.startswith(f"warning: cannot write {records}/"), warning
    assert "the site is written without it, and a later build may leave behind" in warning
    assert b"Renamed lesson 1" in (course / "site" / "l" / "s1" / "index.html").read_bytes()
    assert not (course / "site" / "l" / "s3").exists()


# Names made of the parts the name rules are about, a few with one odd character in them.
_PARTS = st.lists(st.sampled_from(["a", "b.html", "/", ".", ".."]), max_size=5).map("".join)
_ODD = st.sampled_from(["\\", "\n", "\t", "\x00", "\x7f", "\x85", "\udc80", "é"])
_NAME = st.one_of(_PARTS, _PARTS, _PARTS, st.tuples(_PARTS, _ODD, _PARTS).map("".join))


@given(st.lists(_NAME, max_size=6))
@settings(max_examples=3000, derandomize=True, database=None)
def test_names_checked_together_find_what_one_by_one_finds(names: list[str]) -> None:
    """site_record.first_problem looks at every name at once and fsutil.name_problem at one:
    a rule added to one and not the other would let a record list a name outside the site."""
    one_by_one = next(((n, p) for n in names if (p := name_problem(n))), None)
    assert first_problem(names) == one_by_one
