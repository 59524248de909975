"""The machine's environment is trusted, the course's is not (issue 58).

A machine that brings its own jax (a TPU machine: jax, jaxlib and libtpu in a folder its
PYTHONPATH names, a runtime that needs its TPU_* variables) is simulated here: a fake `jax`
reachable only through the builder's PYTHONPATH, which says it is a 'TPU v5 lite' and, as
the real runtime does without its variables, blocks at its start when TPU_ACCELERATOR_TYPE
is not set. The example and the provenance probe must both find it and the variable; the
same fake jax on a lesson's `env:` PYTHONPATH must not reach the probe.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from builder.course.load import load_course
from builder.course.verdict import say
from builder.pipeline.build import build, check
from builder.run import probe
from builder.run.batch import record, record_stale
from builder.run.environment import BUILDER_ROOT, child_environment
from builder.run.execute import Limits, Outcome, run_example
from builder.run.probe import ProbeError, measure
from tests.helpers import logged, make_lesson, make_paths, write_course

FAKE_TPU_JAX = """\
import os, time
if "TPU_ACCELERATOR_TYPE" not in os.environ:  # as libtpu's metadata query: it waits
    time.sleep(600)
class _Device:
    device_kind = "TPU v5 lite"
def default_backend():
    return "tpu"
def device_count():
    return 1
def devices():
    return [_Device()]
"""
SHOWS = (
    "import os, jax\n"
    "print(jax.default_backend(), jax.devices()[0].device_kind)\n"
    "print(os.environ['TPU_ACCELERATOR_TYPE'])\n"
)


def _fake_tpu(folder: Path) -> Path:
    (folder / "jax").mkdir(parents=True)
    (folder / "jax" / "__init__.py").write_text(FAKE_TPU_JAX)
    return folder


@pytest.fixture
def tpu_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The builder run as on the TPU machine: jax only on its PYTHONPATH, TPU_* set."""
    machine = _fake_tpu(tmp_path / "machine-site")
    monkeypatch.setenv("PYTHONPATH", str(machine))
    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    return machine


def _tpu_course(root: Path) -> None:
    """A CPU lesson (hostile-01) and one that `requires: tpu` (hostile-02)."""
    write_course(root, {"hostile-01": "print('on any machine')\n", "hostile-02": SHOWS})
    lesson_md = root / "content" / "lessons" / "hostile-02" / "lesson.md"
    text = lesson_md.read_text().replace("\n---\n", "\nrequires: tpu\ntimeout: 30\n---\n", 1)
    lesson_md.write_text(text)


def test_the_example_gets_the_machines_path_and_runtime_settings_after_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", f"/opt/machine/jax{':'}{BUILDER_ROOT}{':'}")
    monkeypatch.setenv("TPU_WORKER_ID", "0")
    monkeypatch.setenv("LIBTPU_INIT_ARGS", "--x")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    lesson = make_lesson(tmp_path, "", env={"PYTHONPATH": "lib", "TPU_WORKER_ID": "3"})
    env = child_environment(lesson, tmp_path)
    assert env["PYTHONPATH"] == f"{BUILDER_ROOT}:lib:/opt/machine/jax"
    assert env["TPU_WORKER_ID"] == "3"  # the lesson's own setting wins in its example
    assert env["LIBTPU_INIT_ARGS"] == "--x"
    # what changes what an example prints is the lesson's to say, never the shell's
    assert not {"XLA_FLAGS", "JAX_PLATFORMS", "AWS_SECRET_ACCESS_KEY"} & set(env)


def test_a_tpu_lesson_records_on_a_machine_whose_jax_comes_through_its_pythonpath(
    tmp_path: Path, tpu_machine: Path
) -> None:
    _tpu_course(tmp_path)
    paths = make_paths(tmp_path)
    with logged() as log:
        recorded = record_stale(
            load_course(paths.content), check(paths).statuses, paths, 1, only=("hostile-02",)
        )
    assert recorded == ("hostile-02",), log.getvalue()
    recording = json.loads((paths.recordings / "hostile-02.json").read_bytes())
    assert recording["stdout"] == "tpu TPU v5 lite\nv5litepod-1\n"
    assert recording["provenance"] == "recorded_tpu_computation"
    assert recording["environment"]["deviceKind"] == "TPU v5 lite"
    assert recording["environment"]["deviceCount"] == 1
    statuses = {s.lesson_id: str(s.state) for s in check(paths).statuses}
    assert statuses == {"hostile-01": "missing", "hostile-02": "fresh"}
    build(paths, execute=False, jobs=1)
    page = (paths.out / "l" / "s2" / "index.html").read_text()
    assert "Recorded TPU computation · jax " in page
    assert "1 device · TPU v5 lite" in page
    # the recordings page names the device by its kind (a row's, or every row's above them)
    assert "TPU v5 lite</" in (paths.out / "recordings" / "index.html").read_text()


def test_a_cpu_machine_never_records_a_tpu_lesson_says_so_and_check_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    _tpu_course(tmp_path)
    paths = make_paths(tmp_path)
    with logged() as log:
        recorded = record_stale(load_course(paths.content), check(paths).statuses, paths, 1)
    assert recorded == ("hostile-01",)
    assert "need a TPU machine (requires: tpu): hostile-02" in log.getvalue()
    statuses = check(paths).statuses
    assert [str(s.state) for s in statuses] == ["fresh", "needs a TPU machine"]
    assert all(status.passes for status in statuses)
    table, github = io.StringIO(), io.StringIO()
    say(statuses, "table", paths.content, table)
    assert "1 lesson(s) need a TPU machine to be recorded (requires: tpu)" in table.getvalue()
    say(statuses, "github", paths.content, github)
    assert "::warning " in github.getvalue() and "on a TPU machine" in github.getvalue()


def test_a_lessons_own_path_to_a_fake_tpu_cannot_make_its_recording_claim_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example itself sees the fake (its env: is its own), the probe does not: the run
    of a `requires: tpu` lesson is refused, and nothing is written."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    forge = _fake_tpu(tmp_path / "forge")
    env = {"PYTHONPATH": str(forge), "TPU_ACCELERATOR_TYPE": "v5litepod-1"}
    _tpu_course(tmp_path)
    course = load_course(tmp_path / "content")
    lesson = course.lesson("hostile-02")
    assert lesson is not None
    lesson = replace(lesson, meta=replace(lesson.meta, env=env))
    report = record([lesson], tmp_path / "recordings")
    (execution,) = report.executions
    assert execution.outcome is Outcome.WRONG_DEVICE, execution
    assert "requires: tpu`, but jax ran it on 'cpu'" in execution.detail
    assert not (tmp_path / "recordings" / "hostile-02.json").exists()


def test_a_probe_that_does_not_answer_names_the_likely_cause_and_the_names_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine = _fake_tpu(tmp_path / "machine-site")
    monkeypatch.setenv("PYTHONPATH", str(machine))  # but no TPU_ACCELERATOR_TYPE: it blocks
    monkeypatch.delenv("TPU_ACCELERATOR_TYPE", raising=False)
    monkeypatch.setenv("NVIDIA_DRIVER_CAPABILITIES", "secret-value")
    monkeypatch.setattr(probe, "TIMEOUT", 3.0)
    with pytest.raises(ProbeError) as raised:
        measure({"XLA_FLAGS": "--xla_cpu_foo"}, sandbox=False)
    said = str(raised.value)
    assert "did not answer in 3 s" in said and "blocking while it starts" in said
    assert "TPU_* variables" in said
    assert "NVIDIA_DRIVER_CAPABILITIES" in said and "XLA_FLAGS" in said
    assert "1 folder(s) of the builder's PYTHONPATH" in said
    assert "secret-value" not in said and str(machine) not in said


def test_the_machines_settings_change_no_recordings_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's inputs are the lesson's: recorded on a bare machine, fresh on one whose
    shell sets the accelerator's variables and a PYTHONPATH."""
    monkeypatch.delenv("PYTHONPATH", raising=False)
    write_course(tmp_path, {"hostile-01": "print('hello')\n"})
    paths = make_paths(tmp_path)
    record_stale(load_course(paths.content), check(paths).statuses, paths, 1)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert [str(s.state) for s in check(paths).statuses] == ["fresh"]


def test_a_machine_path_folder_reaches_an_example_in_the_sandbox(
    tmp_path: Path, tpu_machine: Path
) -> None:
    from builder.run.sandbox import sandbox_problem

    if sandbox_problem():
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    lesson = make_lesson(tmp_path / "course", SHOWS, timeout=30)
    execution = run_example(lesson, Limits(timeout=30, sandbox=True))
    assert execution.ok, execution
    assert execution.stdout == "tpu TPU v5 lite\nv5litepod-1\n"
    assert execution.environment["deviceKind"] == "TPU v5 lite"
