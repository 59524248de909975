"""The environments of a run: the example's (a clean one: PATH and a few BLAS settings, the
locale, PYTHONPATH to the builder, the machine's trusted settings (`machine_environment`),
then the lesson's `env:`) and the supervisor's own, which holds the example's only to hand
it to the command it starts.

The machine's environment is trusted, the course's is not: what the person running the
builder set for the accelerator's runtime (MACHINE, MACHINE_PREFIXES) and their import path
reach the example and the provenance probe; a lesson's `env:` reaches the example only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..course.model import Lesson
from .supervise import EXAMPLE_ENV

PASS_THROUGH = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")
# What the machine's accelerator runtime reads, taken from the builder's own environment
# (docs/isolation.md): without TPU_* a TPU backend blocks at its start on a metadata query;
# the *_VISIBLE_DEVICES say which devices this machine lends; LD_LIBRARY_PATH is where a
# cluster's CUDA or ROCm libraries are found outside pip. Not XLA_FLAGS nor JAX_*: they
# change what an example computes and prints, so they are the lesson's (its `env:`, an
# input of its recording), never the shell's.
MACHINE = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "ROCR_VISIBLE_DEVICES",
)
MACHINE_PREFIXES = ("TPU_", "LIBTPU_", "NVIDIA_")


BUILDER_ROOT = Path(__file__).resolve().parents[2]


# A change to what the example's process gets here can change what it prints: bump
# builder.course.fingerprint.RUN_PROTOCOL with it (every recording goes stale).
def child_environment(lesson: Lesson, scratch: Path) -> dict[str, str]:
    """The example's environment: a clean one, and the lesson's `env:` over it, but its
    `PYTHONPATH` goes after the builder's (the harness imports `builder` from there) and
    before the machine's. The supervisor hands it to the command it starts (the harness, or
    bwrap around it) and runs itself with `supervisor_environment`."""
    env = clean_environment(scratch)
    own = dict(lesson.meta.env)
    path = (str(BUILDER_ROOT), own.pop("PYTHONPATH", ""), *machine_path())
    return env | own | {"PYTHONPATH": os.pathsep.join(filter(None, path))}


def clean_environment(scratch: Path) -> dict[str, str]:
    """What every process of the course's code starts with (an example, and `rehearse`'s
    render by the side interpreter): PASS_THROUGH and the machine's settings
    (`machine_environment`) of the builder's, and no other of its variables; HOME and
    TMPDIR `scratch`, the locale, PYTHONPATH to the builder (then the machine's folders)."""
    env = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    env |= {
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
    }
    env |= machine_environment()
    return env | {"PYTHONPATH": os.pathsep.join((str(BUILDER_ROOT), *machine_path()))}


def machine_environment() -> dict[str, str]:
    """The accelerator runtime's settings of the builder's own environment (MACHINE and
    MACHINE_PREFIXES): they reach the example and the probe, under the lesson's `env:`."""
    return {
        name: value
        for name, value in os.environ.items()
        if name in MACHINE or name.startswith(MACHINE_PREFIXES)
    }


def machine_path() -> tuple[str, ...]:
    """The folders of the builder's own PYTHONPATH (where a machine that brings its own jax
    keeps it), made absolute, the builder's root and empty entries left out: the example
    has them after the builder's root and its lesson's, and the probe in front of its
    interpreter's own (builder/run/probe.py)."""
    found = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    folders = dict.fromkeys(os.path.abspath(entry) for entry in found if entry)
    return tuple(folder for folder in folders if Path(folder) != BUILDER_ROOT)


def supervisor_environment(example: dict[str, str]) -> dict[str, str]:
    """The supervisor's own: nothing of the lesson's `env:` (a `PYTHONPATH`, `LD_PRELOAD` or
    `PYTHONWARNINGS=error` would break it); it hands `example` to the command it runs
    (builder/run/supervise.py)."""
    base = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    return base | {"LC_ALL": "C.UTF-8", EXAMPLE_ENV: json.dumps(example)}
