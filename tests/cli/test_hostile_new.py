"""Issue 38 item 4: `coursebuilder new --force DIR` writes nothing through a link inside DIR
(builder/scaffold/new.py, through fsutil.Staging with `refuse_links`): a link where a starter
folder or file goes is refused, naming it, before anything is written; nothing outside DIR
changes. DIR itself may be a link: the user named it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from builder.__main__ import main
from tests.helpers import snapshot


@pytest.mark.parametrize(
    "link",
    ["content", "content/lessons", ".github/workflows", "Makefile", "recordings"],
)
def test_a_link_inside_the_folder_is_refused_and_nothing_is_written(
    tmp_path: Path, link: str, capsys: pytest.CaptureFixture[str]
) -> None:
    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "course.yml").write_text("theirs")
    (elsewhere / "Makefile").write_text("theirs")
    (course / Path(link).parent).mkdir(parents=True)
    target = elsewhere / "Makefile" if link == "Makefile" else elsewhere
    (course / link).symlink_to(target)
    (course / "notes.txt").write_text("mine")
    before, inside = snapshot(elsewhere), snapshot(course)
    capsys.readouterr()
    assert main(["new", "--force", str(course)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {course / link}: is a symbolic link (to "), err
    assert "nothing was written" in err and "-> remove the link" in err
    assert snapshot(elsewhere) == before
    assert snapshot(course) == inside
    assert (course / link).is_symlink()


def test_the_folder_itself_may_be_a_link(tmp_path: Path) -> None:
    real, named = tmp_path / "real", tmp_path / "named"
    real.mkdir()
    named.symlink_to(real)
    assert main(["new", str(named)]) == 0
    assert (real / "content" / "course.yml").is_file()
    assert (real / "recordings").is_dir()


def test_a_link_made_after_the_check_is_still_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check names the link; the door (Staging) is what keeps writes inside DIR."""
    import builder.scaffold.new as new

    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setattr(new, "_refuse_links", lambda folder, names: None)
    course.mkdir()
    (course / "content").symlink_to(elsewhere)
    assert main(["new", "--force", str(course)]) == 1
    err = capsys.readouterr().err
    assert "'content' is a symbolic link, which is not followed" in err, err
    assert list(elsewhere.iterdir()) == []
    assert (course / "content").is_symlink()
