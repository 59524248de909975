"""`coursebuilder new` and `--version`, in place (fast): what a new course is made of, that it
loads as a valid course, that its lock pins what this checkout's lock pins, and that a
folder with something in it is refused. The wheel, a fresh venv and the new course's own
`make site` are tests/cli/test_wheel.py's (slow)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from builder.__main__ import main
from builder.core.release import version
from builder.course.load import load_course
from tests.helpers import ROOT

EXPECTED = {
    ".github/workflows/check.yml",
    ".gitattributes",
    ".gitignore",
    ".pre-commit-config.yaml",
    "Makefile",
    "README.md",
    "content/course.yml",
    "content/glossary.yml",
    "content/lessons/basics-01/example.py",
    "content/lessons/basics-01/lesson.md",
    "requirements.lock",
}


def _pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return {_normal(a): b for a, b in (line.split("==") for line in lines if line)}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_version_is_the_source_trees_when_run_in_place(capsys: pytest.CaptureFixture[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"coursebuilder {project['version']}\n"
    assert version() == project["version"]


def test_new_writes_a_course_that_loads_and_says_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mine"
    assert main(["new", str(folder)]) == 0
    written = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert written == EXPECTED
    out = capsys.readouterr().out
    assert all(f"  {name}\n" in out for name in EXPECTED)
    assert f"Next: cd {folder} && make site" in out
    course = load_course(folder / "content")
    assert [x.id for x in course.lessons] == ["basics-01"]
    assert "from builder import panels" in course.lessons[0].source.decode()
    assert (folder / "recordings").is_dir()


def test_new_refuses_a_folder_that_is_not_empty_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "Makefile").write_text("old")
    assert main(["new", str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"error: {tmp_path}: is not empty (Makefile, notes.txt)\n")
    assert "--force" in error
    assert (tmp_path / "Makefile").read_text() == "old"
    assert main(["new", "--force", str(tmp_path)]) == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"  # nothing else is touched
    assert (tmp_path / "Makefile").read_text() != "old"


def test_the_new_courses_lock_pins_the_builders_dependencies_as_this_lock_does(
    tmp_path: Path,
) -> None:
    """Every distribution coursebuilder needs at run time, and nothing else, pinned as in
    this checkout's requirements.lock; and the builder itself, at this version."""
    assert main(["new", str(tmp_path)]) == 0
    pins = _pins(tmp_path / "requirements.lock")
    assert pins.pop("coursebuilder") == version()
    ours = _pins(ROOT / "requirements.lock")
    assert pins == {name: ours[name] for name in pins}
    assert set(pins) == _closure(tomllib.loads((ROOT / "pyproject.toml").read_text()))


def test_every_package_the_builder_imports_is_one_it_declares() -> None:
    """An import of a distribution pyproject.toml does not name (nor its dependencies) works
    here, where the lock installed it, and fails in an author's environment: nbformat once
    reached the wheel undeclared. Extras count for the modules that need them (dask)."""
    import ast
    import sys

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = _closure(pyproject)
    extras = {
        _normal(Requirement(r).name)
        for rs in pyproject["project"]["optional-dependencies"].values()
        for r in rs
    }
    distributions = metadata.packages_distributions()
    missing = set()
    for path in (ROOT / "builder").rglob("*.py"):
        if "starter" in path.parts:  # the new course's example: the course's own imports
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for top in {name.split(".")[0] for name in names}:
                if top in sys.stdlib_module_names or top == "builder":
                    continue
                found = {_normal(d) for d in distributions.get(top, [top])}
                if not found & (declared | extras):
                    missing.add(f"{path.relative_to(ROOT)}: {top}")
    assert not missing, sorted(missing)


def _closure(pyproject: dict[str, dict[str, list[str]]]) -> set[str]:
    """The distributions the builder's dependencies need, as installed here (no extras)."""
    todo = [Requirement(r).name for r in pyproject["project"]["dependencies"]]
    seen: set[str] = set()
    while todo:
        name = _normal(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for text in metadata.requires(name) or []:
            need = Requirement(text)
            if need.marker is None or need.marker.evaluate({"extra": ""}):
                todo.append(need.name)
    return seen


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_a_clone_with_autocrlf_keeps_recordings_and_lessons_byte_for_byte(tmp_path: Path) -> None:
    """Issue 56, item 9: with core.autocrlf=true every recording was checked out with CRLF
    (`check`: 19 of 19 not canonical). The new course's .gitattributes keeps them LF; the
    same clone without it gets CRLF (what the test would catch)."""
    course = tmp_path / "course"
    assert main(["new", str(course)]) == 0
    (course / "recordings").mkdir(exist_ok=True)
    kept = {
        "recordings/basics-01.json": b'{\n  "schemaVersion": 1\n}',
        "content/lessons/basics-01/numbers.txt": b"1\n2\n",
    }
    for name, data in kept.items():
        (course / name).write_bytes(data)
    _git("init", "-q", cwd=course)
    _git("add", "-A", cwd=course)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "course", cwd=course)
    for attributes in (True, False):
        if not attributes:
            _git("rm", "-q", ".gitattributes", cwd=course)
            _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "-", cwd=course)
        clone = tmp_path / f"clone-{attributes}"
        _git("clone", "-q", "-c", "core.autocrlf=true", str(course), str(clone), cwd=tmp_path)
        for name, data in kept.items():
            assert ((clone / name).read_bytes() == data) is attributes, name


def test_this_repository_keeps_recordings_and_lessons_byte_for_byte() -> None:
    """The repository's own .gitattributes says what the starter's says, and more."""
    rules = set((ROOT / ".gitattributes").read_text().splitlines())
    starter = (ROOT / "builder" / "scaffold" / "starter" / "dot-gitattributes").read_text()
    assert {line for line in starter.splitlines() if not line.startswith("#")} <= rules
