"""An example cannot choose what its recording says of the machine (issue 38, item 6).

Each attack runs for real: the example writes what would fool an interpreter that reads
the lesson's `env:` (a fake `jax` and its dist-info, a `sitecustomize`, a user site with a
`.pth` or a `usercustomize`, a jax plugin found as a namespace package or an entry point,
a preloaded library), and the lesson's `env:` points there. The provenance probe
(builder/run/probe.py) runs after the example, isolated, and still reports this machine.
Each of these recorded "gpu" and 8 devices, or a fake version, before the probe was.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builder.run.execute import Limits, run_example
from builder.run.probe import measure, probe_environment
from tests.helpers import make_lesson

SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
PATCH = (
    "import sys, types\n"
    "fake = types.ModuleType('jax')\n"
    "fake.default_backend = lambda: 'gpu'\n"
    "fake.device_count = lambda: 8\n"
    "sys.modules['jax'] = fake\n"
)
PLUGIN = "def initialize():\n    import jax\n    jax.device_count = lambda *a, **k: 8\n"
METADATA = "Metadata-Version: 2.1\nName: {name}\nVersion: 9.9.9\n"


def _dist_infos(forge: Path, *names: str) -> dict[str, str]:
    """A dist-info folder of version 9.9.9 for each of `names`, on the lesson's path."""
    forge.mkdir(parents=True, exist_ok=True)
    for name in names:
        dist = forge / f"{name}-9.9.9.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(METADATA.format(name=name))
    return {"PYTHONPATH": str(forge)}


def _fake_jax(forge: Path) -> dict[str, str]:
    (forge / "jax").mkdir(parents=True)
    (forge / "jax" / "__init__.py").write_text(
        "def default_backend(): return 'gpu'\ndef device_count(): return 8\n"
    )
    return _dist_infos(forge, "jax", "numpy", "matplotlib")


def _fake_versions(forge: Path) -> dict[str, str]:
    """Only dist-info folders: importlib.metadata finds them first on the path."""
    return _dist_infos(forge, "jax", "numpy")


def _sitecustomize(forge: Path) -> dict[str, str]:
    forge.mkdir(parents=True)
    (forge / "sitecustomize.py").write_text(PATCH)
    return {"PYTHONPATH": str(forge)}


def _user_pth(forge: Path) -> dict[str, str]:
    site = forge / SITE
    site.mkdir(parents=True)
    (site / "forge_patch.py").write_text(PATCH)
    (site / "forge.pth").write_text("import forge_patch\n")
    return {"PYTHONUSERBASE": str(forge)}


def _usercustomize(forge: Path) -> dict[str, str]:
    site = forge / SITE
    site.mkdir(parents=True)
    (site / "usercustomize.py").write_text(PATCH)
    return {"PYTHONUSERBASE": str(forge)}


def _namespace_plugin(forge: Path) -> dict[str, str]:
    (forge / "jax_plugins" / "forge").mkdir(parents=True)
    (forge / "jax_plugins" / "forge" / "__init__.py").write_text(PLUGIN)
    return {"PYTHONPATH": str(forge)}


def _entry_point_plugin(forge: Path) -> dict[str, str]:
    dist = forge / "forge_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(METADATA.format(name="forge-plugin"))
    (dist / "entry_points.txt").write_text("[jax_plugins]\nforge = forge_plugin\n")
    (forge / "forge_plugin.py").write_text(PLUGIN)
    return {"PYTHONPATH": str(forge)}


def _preload(forge: Path) -> dict[str, str]:
    """A library whose constructor gives the process eight CPU devices."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the preloaded library")
    forge.mkdir(parents=True)
    source = forge / "forge.c"
    source.write_text(
        "#include <stdlib.h>\n__attribute__((constructor)) static void forge(void) {\n"
        '  setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=8", 1);\n}\n'
    )
    library = forge / "forge.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", library, source], check=True)
    return {"LD_PRELOAD": str(library)}


ATTACKS = {
    "fake jax and dist-info on PYTHONPATH": _fake_jax,
    "fake dist-info versions on PYTHONPATH": _fake_versions,
    "sitecustomize on PYTHONPATH": _sitecustomize,
    "a .pth in a PYTHONUSERBASE site": _user_pth,
    "usercustomize in a PYTHONUSERBASE site": _usercustomize,
    "jax_plugins namespace package": _namespace_plugin,
    "jax_plugins entry point": _entry_point_plugin,
    "LD_PRELOAD": _preload,
}


@pytest.fixture(scope="module")
def honest() -> dict[str, object]:
    return measure({}, sandbox=False)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_example_cannot_forge_the_machine_its_recording_names(
    tmp_path: Path, honest: dict[str, object], attack: str
) -> None:
    """The files are made before the run here, as an example would make them in its run
    (the probe runs after it, so it would see them): what matters is what the lesson's
    `env:` points the probe at."""
    env = ATTACKS[attack](tmp_path / "forge")
    lesson = make_lesson(tmp_path / "course", "print('ran')\n", env=env)
    execution = run_example(lesson, Limits(timeout=120))
    assert execution.ok, execution
    assert execution.environment == honest
    assert execution.environment["deviceCount"] != 8


FORGES_ITSELF = """\
import pathlib
forge = pathlib.Path({forge!r})
(forge / "jax").mkdir(parents=True)
(forge / "jax" / "__init__.py").write_text(
    "def default_backend(): return 'gpu'\\ndef device_count(): return 8\\n")
dist = forge / "jax-9.9.9.dist-info"
dist.mkdir()
(dist / "METADATA").write_text("Metadata-Version: 2.1\\nName: jax\\nVersion: 9.9.9\\n")
print("ran")
"""


def test_the_issues_attack_an_example_writes_a_fake_jax_its_env_points_at(
    tmp_path: Path, honest: dict[str, object]
) -> None:
    """Issue 38 as it was found: the example itself writes the fake jax while it runs."""
    forge = tmp_path / "forge"
    source = FORGES_ITSELF.format(forge=str(forge))
    lesson = make_lesson(tmp_path / "course", source, env={"PYTHONPATH": str(forge)})
    execution = run_example(lesson, Limits(timeout=120))
    assert execution.ok, execution
    assert (forge / "jax" / "__init__.py").exists()  # the forgery was there to be read
    assert execution.environment == honest


def test_what_honestly_changes_the_machine_still_reaches_the_probe(tmp_path: Path) -> None:
    """XLA_FLAGS gives the example 4 CPU devices: its recording says 4, as it printed."""
    flags = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    source = "import jax\nprint(jax.device_count(), jax.default_backend())\n"
    lesson = make_lesson(tmp_path, source, env=flags)
    execution = run_example(lesson, Limits(timeout=120))
    assert execution.ok, execution
    assert execution.stdout == "4 cpu\n"
    assert execution.environment["deviceCount"] == 4
    assert execution.environment["backend"] == "cpu"


def test_the_probe_gets_only_the_named_settings_of_a_lessons_env() -> None:
    lesson = {
        "PYTHONPATH": "/tmp/forge",
        "PYTHONUSERBASE": "/tmp/forge",
        "PYTHONSTARTUP": "/tmp/forge/s.py",
        "LD_PRELOAD": "/tmp/forge/f.so",
        "LD_LIBRARY_PATH": "/tmp/forge",
        "PJRT_NAMES_AND_LIBRARY_PATHS": "gpu:/tmp/forge/pjrt.so",
        "PATH": "/tmp/forge",
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
    }
    env = probe_environment(lesson)
    assert {k: env[k] for k in ("JAX_PLATFORMS", "XLA_FLAGS")} == {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
    }
    assert not any("forge" in value for value in env.values())


def test_an_xla_flags_that_names_a_file_does_not_reach_the_probe() -> None:
    """XLA reads its flags from a file when XLA_FLAGS is not flags: a file the example
    could write after its own run read it."""
    assert "XLA_FLAGS" not in probe_environment({"XLA_FLAGS": "/tmp/forge/flags"})


def test_a_pth_dropped_into_site_packages_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 56 item 11: outside the sandbox an example can write a `.pth` into the
    interpreter's own site-packages, which the probe after it then runs (its recording said
    TPU, 256 devices). The record's watch lists those folders' names: a name that appears
    while examples run fails the run, naming it, and nothing is recorded."""
    import builder.run.guard
    from builder.course.load import load_course
    from builder.run.batch import record
    from builder.run.outcome import Outcome
    from tests.helpers import canned_run, copy_course

    site = tmp_path / "site-packages"
    (site / "__pycache__").mkdir(parents=True)
    monkeypatch.setattr(
        builder.run.guard, "environment_files", lambda: [Path(sys.executable), site]
    )
    paths = copy_course(tmp_path / "course", broken=False)
    lessons = list(load_course(paths.content).lessons)

    def drops_a_pth(lesson, limits):  # type: ignore[no-untyped-def]
        (site / "__pycache__" / "x.pyc").write_bytes(b"")  # Python's own: not a change
        if lesson.id == lessons[0].id:
            (site / "zz-forge.pth").write_text("import os\n")
        return canned_run(lesson, limits)

    report = record(lessons[:1], paths.recordings, runner=drops_a_pth)
    (failed,) = report.failures
    assert failed.outcome is Outcome.TAMPERED
    assert f"{site / 'zz-forge.pth'} appeared while examples ran" in failed.detail
    assert not list(paths.recordings.glob("*.json"))
