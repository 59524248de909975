"""`record --shard K/N`: deterministic, balanced parts whose union is one full record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.pipeline.build import check
from builder.run.batch import record_stale
from builder.run.shard import Shard, split
from tests.helpers import canned_run, copy_course, logged, make_paths


def test_a_shard_is_k_of_n() -> None:
    assert Shard.parse("2/3") == Shard(2, 3)
    assert str(Shard.parse(" 1 / 1 ")) == "1/1"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="is not K/N"):
            Shard.parse(bad)


def test_a_bad_shard_is_refused_by_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["record", "--shard", "4/3"])
    assert stop.value.code == 2
    assert "'4/3' is not K/N with 1 <= K <= N" in capsys.readouterr().err


def test_the_parts_are_balanced_longest_first(tmp_path: Path) -> None:
    lessons = list(load_course(copy_course(tmp_path).content).lessons)  # four lessons
    seconds = {"basics-01": 10.0, "basics-02": 6.0, "speed-01": 5.0}  # speed-02 untimed: 7 s
    parts = split(lessons, seconds, 2)
    assert [[x.id for x in part] for part in parts] == [
        ["basics-01", "speed-01"],
        ["speed-02", "basics-02"],
    ]
    assert split(list(reversed(lessons)), seconds, 2) == parts  # the course order is no input
    assert [len(part) for part in split(lessons, {}, 3)] == [2, 1, 1]
    assert split(lessons, seconds, 6)[4:] == [[], []]  # more shards than lessons: some idle


def test_shards_merged_by_copying_equal_one_full_record(tmp_path: Path, recorded: Paths) -> None:
    merged = make_paths(tmp_path / "merged")
    shutil.copytree(recorded.content, merged.content)
    seen: list[str] = []
    for index in (1, 2, 3):
        job = copy_course(tmp_path / f"job{index}", broken=False)  # one CI job's checkout
        course, statuses = load_course(job.content), check(job).statuses
        with logged() as log:
            done = record_stale(course, statuses, job, 1, runner=canned_run, shard=Shard(index, 3))
        assert f"Shard {index}/3: {len(done)} of the 3 lesson(s) to record." in log.getvalue()
        seen += done
        shutil.copytree(job.recordings, merged.recordings, dirs_exist_ok=True)  # the merge
    assert sorted(seen) == ["basics-01", "basics-02", "speed-01"]
    for path in sorted(recorded.recordings.glob("**/*.json")):
        mine = json.loads((merged.recordings / path.relative_to(recorded.recordings)).read_bytes())
        theirs = json.loads(path.read_bytes())
        mine.pop("generatedAt", None), theirs.pop("generatedAt", None)
        assert mine == theirs, path.name
    args = ["--content", str(merged.content), "--recordings", str(merged.recordings)]
    assert main(["check", *args, "--cache", str(merged.cache)]) == 0
