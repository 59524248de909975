"""Issue 38 item 5: a course's static file name cannot make the record of the site's files
(in the cache, builder/pipeline/site_record.py) list a file the builder never wrote, nor a line
the next build refuses. Names the record's rules refuse (fsutil.name_problem) are refused at
load (course/files.py site_name), naming the file, before anything is written; writing the
record asserts the same rule (pipeline/write.py _listable).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError
from builder.pipeline.site_record import record_path
from builder.pipeline.write import write
from tests.helpers import cli, snapshot, write_course


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A checkout rendered once, with the user's own file in site/ (a CNAME, say)."""
    course = tmp_path / "course"
    write_course(course, {"calm-01": "print(1)\n"})
    (course / "content" / "templates" / "static").mkdir(parents=True)
    assert main(cli(course, "render")[3:]) == 0
    (course / "site" / "KEEP.txt").write_text("the user's own file")
    return course


@pytest.mark.parametrize(
    "name",
    [b"x\nKEEP.txt", b"back\\slash.css", b"esc\x1b[31m.css", b"tab\t.css", b"\xff\xfe.css"],
    ids=["newline", "backslash", "ESC", "tab", "not UTF-8"],
)
def test_a_static_name_the_record_cannot_hold_is_refused_at_load(
    course: Path, name: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    static = course / "content" / "templates" / "static"
    with open(os.path.join(os.fsencode(static), name), "wb") as file:
        file.write(b"body {}")
    site = snapshot(course / "site")
    capsys.readouterr()
    assert main(cli(course, "render")[3:]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: "), err
    assert str(static) in err and "has a name that " in err and "-> rename the file" in err
    assert "Traceback" not in err and "\x1b" not in err
    assert snapshot(course / "site") == site


def test_the_user_file_a_newline_named_once_is_never_deleted(course: Path) -> None:
    """The attack end to end: the name comes and goes in a pull request; site/KEEP.txt stays."""
    static = course / "content" / "templates" / "static"
    bad = static / "x\nKEEP.txt"
    bad.write_text("body {}")
    assert main(cli(course, "render")[3:]) == 1
    bad.unlink()
    assert main(cli(course, "render")[3:]) == 0
    assert (course / "site" / "KEEP.txt").read_text() == "the user's own file"
    record = record_path(course / ".cache", course / "site")
    assert "KEEP.txt" not in record.read_text().splitlines()


@pytest.mark.parametrize("name", ["static/x\nKEEP.txt", "static/a\\b", "static/\udcff.css"])
def test_writing_the_record_asserts_its_own_rules(tmp_path: Path, name: str) -> None:
    out, cache = tmp_path / "site", tmp_path / "cache"
    with pytest.raises(BuildError, match="nothing was written or deleted"):
        write({name: b"x", "index.html": b"home"}, [name, "index.html"], out, cache)
    assert not out.exists() or list(out.iterdir()) == []
    assert not cache.exists() or list(cache.rglob("*")) == []
