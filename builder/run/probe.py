"""What a recording says about the machine, measured outside the example's process.

A probe is a fresh interpreter with the example's environment (its `env:` and the same
clean variables, in the sandbox when the example is) that imports jax and reports the
backend, the device count and the package versions a recording states. The example never
runs in it, so it cannot patch what the probe reads; it is started by the builder, not by
the example, so the example's supervisor and harness are not on its way.

Probes of the same environment give the same answer, so one is run per environment and
interpreter state (its package folders' metadata: an install in between is measured
again); a course whose lessons share their `env:` pays for one jax import, not one a lesson.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.observe import RECORDED as PACKAGES
from ..core.observe import environment_snapshot
from .sandbox import sandboxed

TIMEOUT = 120.0
SOURCE = f"""
import json, sys
from importlib import metadata
import jax
report = {{"backend": jax.default_backend(), "deviceCount": jax.device_count()}}
report.update({{name: metadata.version(name) for name in {PACKAGES!r}}})
sys.stdout.write(json.dumps(report))
"""


class ProbeError(Exception):
    """The probe could not say what the machine is; the message says why."""


def measure(env: Mapping[str, str], sandbox: bool, python: str = "") -> dict[str, Any]:
    """{backend, deviceCount, jax, numpy, matplotlib} as a process of `python` (this one by
    default) with `env` sees them (HOME and TMPDIR are the probe's own); raises ProbeError."""
    settled = tuple(sorted((k, v) for k, v in env.items() if k not in ("HOME", "TMPDIR")))
    installed = tuple(sorted(environment_snapshot().items()))
    return dict(_measured(settled, sandbox, python or sys.executable, installed))


@lru_cache(maxsize=32)
def _measured(
    env: tuple[tuple[str, str], ...], sandbox: bool, python: str, installed: object
) -> tuple[tuple[str, Any], ...]:
    with tempfile.TemporaryDirectory(prefix="course-probe-") as scratch:
        wrap = sandboxed(Path(scratch)) if sandbox else []
        try:
            ran = subprocess.run(
                [*wrap, python, "-c", SOURCE],
                env={**dict(env), "HOME": scratch, "TMPDIR": scratch},
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ProbeError(f"the environment probe could not run: {error}") from None
    if ran.returncode:
        tail = ran.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        raise ProbeError(f"the environment probe failed: {tail[0]}")
    return tuple(json.loads(ran.stdout).items())
