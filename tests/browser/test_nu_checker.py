"""The W3C Nu HTML checker (tests/vnu.py) finds no error in the real course's site nor in
the fixture course that uses every construct of issue 41: its HTML, its SVG charts and its
stylesheets. Without java or npm the tests skip, saying which is missing; in CI (CI=true)
they fail instead."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from tests import vnu


@pytest.fixture(scope="session")
def nu() -> None:
    """The checker, fetched once (.cache/vnu/), or the test skipped saying why."""
    try:
        vnu.tools()
    except vnu.Unavailable as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the W3C Nu checker must run in CI: {missing}", pytrace=False)
        pytest.skip(f"the W3C Nu checker cannot run here: {missing}")
    vnu.jar()


def _none(errors: list[str]) -> str:
    return f"the Nu checker found {len(errors)} error(s):\n" + "\n".join(errors)


def test_the_course_site_has_no_errors(nu: None, course_site: Path) -> None:
    errors = vnu.check(course_site)
    assert not errors, _none(errors)


def test_the_site_with_every_construct_has_no_errors(nu: None, constructs_site: Path) -> None:
    assert (constructs_site / "l" / "every-construct" / "index.html").is_file()
    errors = vnu.check(constructs_site)
    assert not errors, _none(errors)


def test_an_error_is_named_by_its_file_and_line(nu: None, tmp_path: Path) -> None:
    """What the two tests above would print: each error at its file (from the site's root,
    a space in a folder's name kept) and its line, in HTML and in CSS alike."""
    site = tmp_path / "a site"
    (site / "l" / "a b").mkdir(parents=True)
    page = "<!doctype html>\n<html lang=en><title>x</title>\n<p><div>x</div></p>\n"
    (site / "l" / "a b" / "index.html").write_text(page + '<i id=a></i><i id="a"></i>\n')
    (site / "style.css").write_text("p { color: red }\nmath { display: inline-block math }\n")
    (site / "notes.txt").write_text("<p>not a page</p>")  # not HTML: skipped
    errors = vnu.check(site)
    assert len(errors) == 3, errors
    assert errors[0].startswith("l/a b/index.html:3:"), errors
    assert "“p” end tag" in errors[0]
    assert errors[1].startswith("l/a b/index.html:4:") and "Duplicate ID" in errors[1]
    assert errors[2].startswith("style.css:2:") and "“display”" in errors[2]


def test_a_download_that_is_not_the_published_jar_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An npm that hands back another vnu.jar: refused, and nothing left in the cache."""
    fake = io.BytesIO()
    with tarfile.open(fileobj=fake, mode="w:gz") as archive:
        member = tarfile.TarInfo(vnu.MEMBER)
        member.size = 4
        archive.addfile(member, io.BytesIO(b"evil"))
    tarball = tmp_path / "fake.tgz"
    tarball.write_bytes(fake.getvalue())
    tools = tmp_path / "bin"
    tools.mkdir()
    npm = tools / "npm"  # `npm pack NAME --pack-destination DIR`: copies the fake there
    npm.write_text(f'#!/bin/sh\ncp "{tarball}" "$4/vnu-jar-{vnu.VERSION}.tgz"\n')
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match="not the published vnu-jar"):
        vnu.jar(cache)
    assert list(cache.iterdir()) == []
