"""What CI relies on: the workflow and the pre-commit hook name real make targets and
scripts, and `check` runs on the light install (requirements-check.txt), which holds
exactly what it imports: proved in subprocesses where jax, matplotlib, Jinja2 and
markdown-it cannot be imported, and in a virtual environment that has only the light
packages."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from builder.core.observe import Paths
from builder.pipeline.build import check
from tests.helpers import ROOT, edit, make_paths, write_course

WORKFLOW = ROOT / ".github" / "workflows" / "check.yml"
LIGHT = ROOT / "requirements-check.txt"
CARRIED = ROOT / "requirements-record.txt"  # beside a machine's own jax (issue 58)
MACHINES = ("jax", "jaxlib", "ml_dtypes", "opt_einsum", "scipy")  # a TPU machine's own
HEAVY = (
    "jax",
    "jaxlib",
    "numpy",
    "matplotlib",
    "jinja2",
    "markdown_it",
    "mdit_py_plugins",
    "pygments",
)


def _pins(path: Path) -> dict[str, str]:
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    pairs = [line.split("==") for line in lines if line]
    return {_normal(name): version for name, version in pairs}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):", text, re.MULTILINE))


def _run_lines(workflow: dict[str, Any]) -> list[str]:
    return [
        step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step
    ]


def test_workflow_parses_and_runs_on_push_and_pull_request() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"push", "pull_request"}
    assert set(workflow["jobs"]) == {"check", "site", "test"}
    steps = workflow["jobs"]["site"]["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)
    assert "GITHUB_STEP_SUMMARY" in steps[-1]["run"]


def test_ci_runs_lint_and_the_builders_tests() -> None:
    """The test job runs .ci/test, which ends in `make test` (lint, then pytest) after
    finding a Chromium for the browser tests."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert [s["run"] for s in workflow["jobs"]["test"]["steps"] if "run" in s] == [".ci/test"]
    script = (ROOT / ".ci" / "test").read_text()
    assert script.rstrip().endswith("make test") and "CHROMIUM" in script
    assert re.search(r"^test: .*\blint\b", (ROOT / "Makefile").read_text(), re.M)


def test_workflow_names_real_make_targets_scripts_and_files() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    runs = " ".join(_run_lines(workflow))
    assert set(re.findall(r"\bmake (?:--silent )?([a-z-]+)", runs)) <= _make_targets()
    assert {"check", "render"} <= set(re.findall(r"\bmake ([a-z-]+)", runs))
    assert re.findall(r"(\.ci/[\w.-]+)", runs) == [".ci/base-rev", ".ci/diff-summary", ".ci/test"]
    for script in re.findall(r"(\.ci/[\w.-]+)", runs):
        assert os.access(ROOT / script, os.X_OK), script
    for lock in re.findall(r"LOCK=(\S+)", runs):
        assert (ROOT / lock).is_file(), lock
    paths = [w["with"]["cache-dependency-path"] for w in _uses(workflow, "actions/setup-python")]
    assert all((ROOT / path).is_file() for path in paths)


def _uses(workflow: dict[str, Any], action: str) -> list[dict[str, Any]]:
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    return [step for step in steps if step.get("uses", "").startswith(action)]


def test_actions_are_pinned_and_no_step_keeps_the_token_or_expands_a_template() -> None:
    """zizmor's findings on the old workflow (`make lint` runs it): actions pinned to a tag
    that can move, both checkouts leaving the token in .git/config while site/ is uploaded,
    and `${{ }}` expanded into shell commands."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    uses = re.findall(r"^\s*- uses: (\S+)(.*)$", WORKFLOW.read_text(), re.MULTILINE)
    assert len(uses) == 7
    for action, comment in uses:
        assert re.fullmatch(r"actions/[\w-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r"\s+# v\d+\.\d+\.\d+", comment), f"{action}: say which release"
    checkouts = _uses(workflow, "actions/checkout")
    assert len(checkouts) == 3
    assert all(step["with"]["persist-credentials"] is False for step in checkouts)
    assert not [line for line in _run_lines(workflow) if "${{" in line]


def test_make_lint_runs_zizmor_from_the_lock() -> None:
    lint = re.search(r"^lint:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.M | re.S)
    assert lint and "zizmor --offline" in lint[0] and "actionlint" in lint[0]
    assert "zizmor" in _pins(ROOT / "requirements.lock")


REHEARSE_WORKFLOW = ROOT / ".github" / "workflows" / "rehearse.yml"


def test_the_weekly_rehearsal_is_scheduled_read_only_and_pinned_as_check_is() -> None:
    """It runs on a schedule (and by hand), may only read the repository, uses the same
    action versions as the check workflow, and puts the report in the job summary."""
    workflow = yaml.safe_load(REHEARSE_WORKFLOW.read_text())
    triggers = workflow.get("on", workflow.get(True))
    assert set(triggers) == {"schedule", "workflow_dispatch"}
    assert triggers["schedule"][0]["cron"].split()[4] != "*"  # weekly: one day of the week
    assert workflow["permissions"] == {"contents": "read"}
    assert all(job.get("permissions") is None for job in workflow["jobs"].values())
    check = yaml.safe_load(WORKFLOW.read_text())
    pinned = {
        step["uses"] for job in check["jobs"].values() for step in job["steps"] if "uses" in step
    }
    used = {s["uses"] for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s}
    assert used <= pinned
    runs = " ".join(_run_lines(workflow))
    assert "GITHUB_STEP_SUMMARY" in _run_lines(workflow)[-1]
    assert "${{" not in runs  # inputs reach the shell through env, never pasted into it
    for script in [*re.findall(r"(\.ci/[\w.-]+)", runs), ".ci/next-jax-lock"]:
        assert os.access(ROOT / script, os.X_OK), script
    script = (ROOT / ".ci" / "rehearse-next").read_text()
    assert set(re.findall(r"\bmake --silent ([a-z-]+)", script)) == {"rehearse"} <= _make_targets()


def test_the_next_jax_lock_changes_only_the_jax_pins() -> None:
    done = subprocess.run(
        [str(ROOT / ".ci" / "next-jax-lock"), "9.8.7"], capture_output=True, text=True, check=True
    )
    old = _pins(ROOT / "requirements.lock")
    new = {
        k: v
        for k, v in (
            line.split("==")
            for line in done.stdout.splitlines()
            if "==" in line and not line.startswith("#")
        )
    }
    new = {_normal(k): v for k, v in new.items()}
    assert {k for k in old if old[k] != new[k]} == {"jax", "jaxlib"}
    assert new["jax"] == new["jaxlib"] == "9.8.7"


def test_the_diff_summary_script_runs_make_diff() -> None:
    script = (ROOT / ".ci" / "diff-summary").read_text()
    assert set(re.findall(r"\bmake --silent ([a-z-]+)", script)) == {"diff"} <= _make_targets()


def test_pre_commit_hook_runs_make_check() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [hook["id"] for hook in hooks] == ["recordings-fresh"]
    target = hooks[0]["entry"].split()[-1]
    assert hooks[0]["entry"].startswith("make ") and target in _make_targets()
    assert re.search(hooks[0]["files"], "recordings/performance-05.json")
    assert not re.search(hooks[0]["files"], "builder/render/lessons.py")


def test_light_requirements_are_pinned_as_in_the_lock() -> None:
    light, lock = _pins(LIGHT), _pins(ROOT / "requirements.lock")
    assert light == {name: lock[name] for name in light}
    assert not set(light) & {_normal(name) for name in HEAVY}


def _blocked_check(paths: Paths, *args: str, path: str = "") -> subprocess.CompletedProcess[str]:
    """`check` in a fresh interpreter where importing a heavy module raises ImportError;
    prints the distributions of every third-party module it imported."""
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"  # what site.py loaded (setuptools' distutils hack)
        f"for name in {HEAVY!r}: sys.modules[name] = None\n"
        "from builder.__main__ import main\n"
        "code = main(sys.argv[1:])\n"
        "import importlib.metadata as md\n"
        "owners = md.packages_distributions()\n"
        "new = [m for m, v in list(sys.modules.items()) if v is not None and m not in before]\n"
        # builder itself is not a dependency, even where `pip install .` made it one
        "tops = {m.split('.')[0] for m in new} - {'builder'}\n"
        "print(sorted({d for top in tops for d in owners.get(top, [])}))\n"
        "sys.exit(code)\n"
    )
    where = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    command = [sys.executable, "-c", code, "check", *args, *where, "--cache", str(paths.cache)]
    env = {**os.environ, "PYTHONPATH": path} if path else None
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)


def test_check_runs_where_heavy_modules_cannot_be_imported(recorded: Paths) -> None:
    shutil.rmtree(recorded.cache)  # a fresh clone: every recording validated by pydantic
    first = _blocked_check(recorded)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("All 3 recordings are fresh.\n")
    imported = {_normal(name) for name in ast.literal_eval(first.stdout.splitlines()[-1])}
    assert imported == set(_pins(LIGHT)), "requirements-check.txt must hold what check imports"
    edit(recorded.content / "lessons" / "basics-01" / "example.py", "* 2.0 + 1.0", "* 7.0")
    stale = _blocked_check(recorded, "--format", "github")
    assert stale.returncode == 1, stale.stderr
    assert stale.stdout.startswith("::error file=")


def test_check_imports_the_light_install_where_coursebuilder_is_installed(
    recorded: Paths, tmp_path: Path
) -> None:
    """After `pip install .` in this checkout a `coursebuilder` distribution owns the
    `builder` package: the builder is not one of what `check` imports from elsewhere. (Its
    metadata alone, on the path after this checkout: the shared venv is not installed into.)"""
    info = tmp_path / "site" / "coursebuilder-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: coursebuilder\nVersion: 0.1.0\n")
    (info / "top_level.txt").write_text("builder\n")
    shutil.rmtree(recorded.cache)  # a fresh clone: every recording validated by pydantic
    done = _blocked_check(recorded, path=f"{ROOT}{os.pathsep}{info.parent}")
    assert done.returncode == 0, done.stderr
    imported = {_normal(name) for name in ast.literal_eval(done.stdout.splitlines()[-1])}
    assert imported == set(_pins(LIGHT))


def _light_venv(dest: Path) -> Path:
    """A virtual environment holding only requirements-check.txt's packages, linked from
    this interpreter's (no network, no pip): jax and the rest are not there to import."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = dest / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _link(_pins(LIGHT), Path(site))
    return python


def _link(names: Iterable[str], folder: Path) -> Path:
    """`folder` holding the distributions `names` (their files and dist-info) as links to
    this interpreter's: as `pip install --target folder` would leave them, without pip."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        dist = importlib.metadata.distribution(name)
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if ".." not in str(f)}:
            source = Path(str(dist.locate_file(top)))
            if not (folder / top).exists() and source.exists():
                (folder / top).symlink_to(source)
    return folder


def test_check_runs_in_a_venv_with_only_the_light_install(recorded: Paths, tmp_path: Path) -> None:
    python = _light_venv(tmp_path / "venv")
    assert subprocess.run([str(python), "-c", "import jax"], capture_output=True).returncode
    shutil.rmtree(recorded.cache)
    where = ["--content", str(recorded.content), "--recordings", str(recorded.recordings)]
    done = subprocess.run(
        [str(python), "-m", "builder", "check", *where, "--cache", str(recorded.cache)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert (done.returncode, done.stdout) == (0, "All 3 recordings are fresh.\n"), done.stderr


def test_what_record_carries_to_a_machine_with_its_own_jax_is_pinned_as_in_the_lock() -> None:
    carried, lock = _pins(CARRIED), _pins(ROOT / "requirements.lock")
    assert carried == {name: lock[name] for name in carried}
    assert set(_pins(LIGHT)) <= set(carried), "record imports what check imports"
    assert {"numpy", "matplotlib"} <= set(carried), "the probe reads their versions"
    assert not {"jax", "jaxlib"} & set(carried), "the machine's jax is the one used"
    make = (ROOT / "Makefile").read_text()
    assert "wheels-offline:" in make and "-r requirements-record.txt" in make


def test_record_on_a_machine_whose_jax_is_only_on_its_pythonpath(tmp_path: Path) -> None:
    """docs/recordings.md's offline path, without pip: an interpreter with no packages, the
    machine's jax in a folder its PYTHONPATH names, requirements-record.txt's packages in
    another put in front (as `pip install --target` leaves them), and a variable the
    machine's runtime needs. `record hostile-01` records the one lesson named, and the
    recording is fresh where the lock's versions are installed."""
    python = _light_venv(tmp_path / "venv")  # the light packages; jax cannot be imported
    machine = _link(MACHINES, tmp_path / "machine-site")
    carried = _link(_pins(CARRIED), tmp_path / "record-deps")
    write_course(
        tmp_path,
        {
            "hostile-01": "import os, jax\nprint(jax.numpy.ones(3).sum(), os.environ['TPU_X'])\n",
            "hostile-02": "print('not chosen')\n",
        },
    )
    where = [f"--{name}={tmp_path / name}" for name in ("content", "recordings")]
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": f"{carried}{os.pathsep}{machine}",
        "TPU_X": "from-the-machine",
    }
    done = subprocess.run(
        [str(python), "-m", "builder", "record", *where, "-j", "1", "hostile-01"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    recording = json.loads((tmp_path / "recordings" / "hostile-01.json").read_text())
    assert recording["stdout"] == "3.0 from-the-machine\n"
    assert recording["environment"]["jax"] == importlib.metadata.version("jax")
    assert not (tmp_path / "recordings" / "hostile-02.json").exists()
    statuses = {s.lesson_id: str(s.state) for s in check(make_paths(tmp_path)).statuses}
    assert statuses == {"hostile-01": "fresh", "hostile-02": "missing"}
