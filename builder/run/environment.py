"""The environments of a run: the example's (a clean one: PATH and a few BLAS settings, the
locale, PYTHONPATH to the builder, then the lesson's `env:`) and the supervisor's own, which
holds the example's only to hand it to the command it starts."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..course.model import Lesson
from .supervise import EXAMPLE_ENV

PASS_THROUGH = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")


BUILDER_ROOT = Path(__file__).resolve().parents[2]


# A change to what the example's process gets here can change what it prints: bump
# builder.course.fingerprint.RUN_PROTOCOL with it (every recording goes stale).
def child_environment(lesson: Lesson, scratch: Path) -> dict[str, str]:
    """The example's environment: a clean one, and the lesson's `env:` over it, but its
    `PYTHONPATH` goes after the builder's (the harness imports `builder` from there). The
    supervisor hands it to the command it starts (the harness, or bwrap around it) and runs
    itself with `supervisor_environment`."""
    env = clean_environment(scratch)
    own = dict(lesson.meta.env)
    if "PYTHONPATH" in own:
        own["PYTHONPATH"] = os.pathsep.join(filter(None, (env["PYTHONPATH"], own["PYTHONPATH"])))
    return env | own


def clean_environment(scratch: Path) -> dict[str, str]:
    """What every process of the course's code starts with (an example, and `rehearse`'s
    render by the side interpreter): PASS_THROUGH of the builder's, and no other of its
    variables; HOME and TMPDIR `scratch`, the locale, PYTHONPATH to the builder."""
    env = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    return env | {
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(BUILDER_ROOT),
        "MPLBACKEND": "Agg",
    }


def supervisor_environment(example: dict[str, str]) -> dict[str, str]:
    """The supervisor's own: nothing of the lesson's `env:` (a `PYTHONPATH`, `LD_PRELOAD` or
    `PYTHONWARNINGS=error` would break it); it hands `example` to the command it runs
    (builder/run/supervise.py)."""
    base = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    return base | {"LC_ALL": "C.UTF-8", EXAMPLE_ENV: json.dumps(example)}
