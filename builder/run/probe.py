"""What a recording says about the machine, measured outside the example's process.

A probe is a fresh interpreter that imports jax and reports the backend, the device count
and the package versions a recording states. The example chooses nothing of how it starts:
`python -I` in a scratch folder with HOME and TMPDIR of its own, in the sandbox when the
example ran in one, with the builder's PATH and locale, the machine's trusted settings
(builder/run/environment.py: the accelerator runtime's variables, and the folders of the
builder's own PYTHONPATH, put in front of the interpreter's path by the probe itself, as
-I ignores PYTHONPATH) and, of the lesson's `env:`, only the settings in MEASURED (those
that change what jax reports and cannot make it import anything else). A lesson's
PYTHONPATH, LD_PRELOAD and the like would let an example put a fake jax in front of the
real one and forge its provenance.

Without the sandbox, an example can still write into the interpreter's own site-packages,
which later probes read; `--sandbox` mounts the interpreter read-only.

Probes of the same environment and interpreter state (its package folders' metadata) give
the same answer, so one is run per environment: lessons that share their `env:` pay for one
jax import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..core.observe import RECORDED as PACKAGES
from ..core.observe import environment_snapshot
from ..core.scratch import scratch
from .environment import machine_environment, machine_path
from .sandbox import needed_by, sandboxed

# Of a lesson's `env:`, what reaches the probe: each changes what jax reports as it changed
# the example's run (XLA_FLAGS=--xla_force_host_platform_device_count=8: eight CPU devices;
# JAX_PLATFORMS=cpu: the CPU on a GPU machine). Nothing else does (see the docstring).
MEASURED = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "JAX_ENABLE_X64",
    "JAX_NUM_CPU_DEVICES",
    "JAX_PLATFORMS",
    "JAX_PLATFORM_NAME",
    "ROCR_VISIBLE_DEVICES",
    "TPU_VISIBLE_CHIPS",
    "XLA_FLAGS",
)
BASE = ("PATH", "SYSTEMROOT")  # the builder's, never the lesson's
TIMEOUT = 120.0
# The machine's folders come as arguments (never from the environment, which -I ignores).
# deviceKind: an accelerator's kind ('TPU v5 lite'); a CPU's model is the sidecar's
# (builder/core/machine.py), so that two CPU machines' recordings of a run are the same.
SOURCE = f"""
import json, sys
sys.path[0:0] = sys.argv[1:]
from importlib import metadata
import jax
report = {{"backend": jax.default_backend(), "deviceCount": jax.device_count()}}
report.update({{name: metadata.version(name) for name in {PACKAGES!r}}})
if report["backend"] != "cpu":
    report["deviceKind"] = " ".join(str(jax.devices()[0].device_kind).split())[:200]
sys.stdout.write(json.dumps(report))
"""
# Why a probe may not answer, for the message that says it did not.
BLOCKED = (
    "jax's backend may be blocking while it starts (a TPU runtime without its TPU_* "
    "variables waits on a metadata query; a GPU or TPU another program holds)"
)


class ProbeError(Exception):
    """The probe could not say what the machine is; the message says why."""


def measure(lesson_env: Mapping[str, str], sandbox: bool, python: str = "") -> dict[str, Any]:
    """{backend, deviceCount, jax, numpy, matplotlib} as an isolated process of `python`
    (this one by default) sees them with the MEASURED settings of `lesson_env` (the lesson's
    `env:`); raises ProbeError."""
    settled = tuple(sorted(probe_environment(lesson_env).items()))
    installed = tuple(sorted(environment_snapshot().items()))
    return dict(_measured(settled, machine_path(), sandbox, python or sys.executable, installed))


def probe_environment(lesson_env: Mapping[str, str]) -> dict[str, str]:
    """The probe's environment but HOME and TMPDIR: the builder's BASE variables, the
    machine's accelerator settings, and the MEASURED ones of `lesson_env`; an XLA_FLAGS
    that is not flags is left out (XLA reads flags from a file of that name, which the
    example could write after it ran)."""
    env = {name: os.environ[name] for name in BASE if name in os.environ}
    env |= {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"} | machine_environment()
    env |= {name: lesson_env[name] for name in MEASURED if name in lesson_env}
    if not env.get("XLA_FLAGS", "-").lstrip().startswith("-"):
        del env["XLA_FLAGS"]
    return env


@lru_cache(maxsize=32)
def _measured(
    env: tuple[tuple[str, str], ...],
    path: tuple[str, ...],
    sandbox: bool,
    python: str,
    installed: object,
) -> tuple[tuple[str, Any], ...]:
    with scratch("probe") as folder:
        wrap = sandboxed(folder, needed_by(python)) if sandbox else []
        try:
            ran = subprocess.run(
                [*wrap, python, "-I", "-c", SOURCE, *path],
                env={**dict(env), "HOME": str(folder), "TMPDIR": str(folder)},
                cwd=folder,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise ProbeError(_silent(env, path)) from None
        except OSError as error:
            raise ProbeError(f"the environment probe could not run: {error}") from None
    if ran.returncode:
        tail = ran.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ProbeError(f"the environment probe failed: {tail[0]}")
    return tuple(json.loads(ran.stdout).items())


def _silent(env: tuple[tuple[str, str], ...], path: tuple[str, ...]) -> str:
    """The probe did not answer: the likely cause, and what it was given (names only: a
    value may be a secret)."""
    names = ", ".join(name for name, _ in env) or "none"
    folders = f"; {len(path)} folder(s) of the builder's PYTHONPATH" if path else ""
    return (
        f"the environment probe did not answer in {TIMEOUT:g} s: {BLOCKED}. It was given "
        f"the variables {names}, HOME and TMPDIR{folders}"
    )
