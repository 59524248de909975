"""The machine a recording was made on, for the page that shows its timings.

Kept in the lesson's sidecar (recordings/_inputs/<id>.json, key "machine"), never in the
recording: a recording stays schemaVersion 1 and two recordings of the same run on two
machines differ only where the run differs. Read in the builder's process (the example's
process is the harness's, whose files are in every recording's rendererHash), with the
interpreter and packages the examples run with. Every fact is optional: a sidecar written
before this existed, or a fact a platform does not give, reads as unknown.
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any

FACTS = ("cpu", "cores", "os", "python", "jaxlib", "xla_flags")


def facts(env: dict[str, str]) -> dict[str, Any]:
    """This machine, as a run with the environment `env` sees it."""
    from importlib import metadata  # a recording's: a build that renders never loads it

    try:
        jaxlib = metadata.version("jaxlib")
    except metadata.PackageNotFoundError:
        jaxlib = "not installed"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": _cpu(),
        "cores": cores or 0,
        "os": f"{platform.system()} {platform.release()}".strip() or "unknown",
        "python": platform.python_version(),
        "jaxlib": jaxlib,
        "xla_flags": env.get("XLA_FLAGS", ""),
    }


def _cpu() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return " ".join(value.split())[:200]
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def of(sidecar: Any) -> dict[str, Any] | None:
    """The machine a sidecar (rules.read_inputs' entry) names, or None: only known facts of
    the right types are kept, so a damaged sidecar shows nothing rather than fails."""
    machine = sidecar.get("machine") if isinstance(sidecar, dict) else None
    if not isinstance(machine, dict):
        return None
    kept = {
        key: machine[key]
        for key in FACTS
        if isinstance(machine.get(key), str | int) and not isinstance(machine.get(key), bool)
    }
    return kept or None


_VERSION = re.compile(r"[1-9]\d?\.\d{1,3}(?:\.\d{1,4})?")


def python(machine: dict[str, Any] | None) -> str:
    """The Python version the recording ran with ("3.11.7"), which the page's venv command
    names; "" when the sidecar does not say, or says something that is no version (a
    command line shows it as it is)."""
    version = str((machine or {}).get("python", ""))
    return version if _VERSION.fullmatch(version) else ""


def sentence(machine: dict[str, Any] | None) -> str:
    """'Recorded on: Intel Xeon ..., 2 cores · Linux 6.1 · Python 3.13.1 · jaxlib 0.9.2 ·
    XLA_FLAGS not set' for the page; the unknown when the sidecar says nothing."""
    if not machine:
        return (
            "Recorded on: a machine this recording does not name (recorded before machine "
            "facts were kept; re-recording names it)"
        )
    parts = []
    cpu, cores = str(machine.get("cpu", "")), machine.get("cores")
    if cpu or cores:  # "unknown": what _cpu says on a machine that names no model
        cpu_text = cpu if cpu not in ("", "unknown") else "unknown CPU"
        parts.append(f"{cpu_text}, {cores} core{'s' if cores != 1 else ''}" if cores else cpu_text)
    if machine.get("os"):
        parts.append(str(machine["os"]))
    if machine.get("python"):
        parts.append(f"Python {machine['python']}")
    if machine.get("jaxlib"):
        parts.append(f"jaxlib {machine['jaxlib']}")
    flags = machine.get("xla_flags")
    if isinstance(flags, str):
        parts.append(f"XLA_FLAGS={flags}" if flags else "XLA_FLAGS not set")
    return "Recorded on: " + " · ".join(parts)
