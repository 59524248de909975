"""bench/stages.py --preview: a preview refresh's stages, timed in a Session on a generated
course. No figure is asserted (docs/benchmarks.md has them); what is asserted is that every
row is measured, and that a prose edit's refresh keys no page but the lessons' (its other
pages' keys are the last refresh's: builder.pipeline.reuse `pages`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_preview_table_times_every_row_and_keys_no_other_page() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "bench" / "stages.py"), "--preview"]
    done = subprocess.run(
        [*command, "--scales", "12", "--runs", "2"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = {
        line.split("|")[1].strip(" ·"): line.split("|")[2].strip()
        for line in done.stdout.splitlines()
        if line.startswith("| ") and "median ms" not in line
    }
    assert rows.pop("the other pages' keys") == "not run"
    assert "the refresh (Session.refresh)" in rows and "every lesson's unit" in rows
    assert all(float(value) >= 0 for value in rows.values()), rows
