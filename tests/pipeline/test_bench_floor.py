"""bench/floor.py's `index` figure: a process reading the index of a built course as a build
reads it. No figure is asserted (docs/benchmarks.md has them); what is asserted is that it
reads the entries a prose edit takes (an index of other code has none: no figure)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.floor import INDEX
from builder.pipeline.build import build
from tests.helpers import make_paths

ROOT = Path(__file__).resolve().parents[2]


def test_the_index_figure_is_a_time_of_a_read_with_every_entry(tmp_path: Path) -> None:
    from bench.generate import generate

    generate(3, tmp_path)
    paths = make_paths(tmp_path)
    build(paths, execute=False, jobs=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", INDEX.replace('".cache"', repr(str(paths.cache)))]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stderr.strip().splitlines()[-1]
    assert said != "no entries" and float(said) > 0
