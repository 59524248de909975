"""The page's "Recorded on:" line, from the sidecar's machine facts."""

from __future__ import annotations

from builder.core.machine import sentence


def test_a_machine_that_names_no_cpu_model_reads_as_an_unknown_cpu() -> None:
    """A TPU VM's /proc/cpuinfo may name no model: the recorder then writes "unknown", which
    the page must not show as if it were a model's name."""
    facts = {"cpu": "unknown", "cores": 13, "os": "Linux 4.4.0", "python": "3.11.7"}
    assert sentence(facts) == "Recorded on: unknown CPU, 13 cores · Linux 4.4.0 · Python 3.11.7"
    named = sentence({**facts, "cpu": "AMD EPYC 7B12"})
    assert named.startswith("Recorded on: AMD EPYC 7B12, 13 cores ·")
