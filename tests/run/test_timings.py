"""Timings declared, not guessed: `panels.timing` and `bar(timing=True)` in the example, the
spans the recording keeps (`timings`), and `diff` folding exactly those and nothing else."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from builder import panels
from builder.core.errors import RecordingError
from builder.course.model import FrontMatter, Lesson
from builder.course.recording import BarPanel, Recording, Series, Span, Timings, dumps, loads
from builder.review.changes import compare, line_keys
from builder.review.report import render
from builder.run.execute import Limits, run_example
from builder.run.result import declared_timings, to_recording
from tests.helpers import REFERENCE


@pytest.fixture(autouse=True)
def _empty() -> None:
    panels.emitted.clear()
    panels.timings.clear()
    panels.timing_panels.clear()


def test_timing_formats_the_value_and_declares_it() -> None:
    assert panels.timing(12.3456, "8.2f") == "   12.35"
    assert panels.timing(3) == "3.00"
    assert panels.timings == [{"text": "   12.35", "after": 0}, {"text": "3.00", "after": 0}]
    with pytest.raises(panels.PanelError, match="timing: 'x' is text"):
        panels.timing("x")
    with pytest.raises(panels.PanelError, match="nan is not finite"):
        panels.timing(float("nan"))


def test_a_panel_is_declared_a_timing_panel_by_its_number() -> None:
    panels.bar("Memory", labels=["a"], ylabel="bytes", series={"s": [1]})
    panels.bar("Time", labels=["a"], ylabel="ms", series={"s": [1]}, timing=True)
    assert panels.timing_panels == [2]
    assert "timing" not in panels.emitted[1]  # the panel itself is the schema's, unchanged


def test_each_printed_timing_is_found_where_it_was_printed() -> None:
    """From where the output was when the timing was made: the same text printed before it
    (a jaxpr holding `1.50`) is not taken for it, and two equal timings are two places."""
    stdout = "w = 1.50\nfirst:   1.50 ms\nsecond:   1.50 ms\nnever printed\n"
    declared = {
        "output": [
            {"text": "  1.50", "after": 9},
            {"text": "  1.50", "after": 9},
            {"text": "99.0", "after": 20},  # made, never printed: dropped
            {"text": 5, "after": 0},  # not what the harness sends: ignored
        ],
        "panels": [1, 7, "2", 1],
    }
    assert declared_timings(stdout, declared, 2) == {
        "output": [{"line": 2, "start": 7, "end": 13}, {"line": 3, "start": 8, "end": 14}],
        "panels": [1],
    }


def make_lesson(root: Path, source: str) -> Lesson:
    folder = root / "lessons" / "timed-01"
    folder.mkdir(parents=True)
    data = textwrap.dedent(source).encode()
    (folder / "example.py").write_bytes(data)
    meta = FrontMatter(
        id="timed-01", slug="timed", title="Timed", arc="timed", order=1, summary="Times."
    )
    return Lesson(meta=meta, folder=folder, body="", body_line=1, source=data)


def test_the_harness_tells_where_each_timing_was_printed(tmp_path: Path) -> None:
    """Through the real subprocess: the recording's spans cover exactly the timings, and
    running by hand prints the same text (timing() only formats)."""
    lesson = make_lesson(
        tmp_path,
        """
        import sys
        from builder import panels
        print("w = 12.50")                      # the same digits, not a timing
        first = panels.timing(12.5, "7.2f")
        sys.stdout.write(f"first: {first} ms\\n")
        print(f"ratio: {panels.timing(12.5 / 2.5, '.0f')}x; answer: 44")
        panels.bar("Time", labels=["a"], ylabel="ms", series={"s": [12.5]}, timing=True)
        """,
    )
    execution = run_example(lesson, Limits(timeout=60))
    assert execution.ok, execution.stderr
    recording = to_recording(lesson, execution, "0" * 64, "0" * 64)
    assert recording.stdout == "w = 12.50\nfirst:   12.50 ms\nratio: 5x; answer: 44\n"
    assert recording.timings == Timings([Span(2, 7, 14), Span(3, 7, 8)], [1])
    lines = recording.stdout.splitlines()
    assert [lines[s.line - 1][s.start : s.end] for s in recording.timings.output] == [
        "  12.50",
        "5",
    ]


def recording(stdout: str, spans: list[tuple[int, int, int]] | None, *panel: BarPanel) -> bytes:
    base = loads(REFERENCE.read_bytes(), REFERENCE)
    timings = None if spans is None else Timings([Span(*s) for s in spans], [2])
    data = replace(base.data, panels=[base.panels[0], *panel])
    return dumps(replace(base, stdout=stdout, timings=timings, data=data))


def ms_panel(*values: float) -> BarPanel:
    return BarPanel("bar", "Time", ["a", "b"], "ms", [Series("one call", list(values))])


OLD = "first call:     9.50 ms\nfirst / steady: 67x\nanswer: 44 equations, took 3 ms\n"
SPANS = [(1, 12, 20), (2, 16, 18)]  # f"{9.5:8.2f}" and the ratio; not `3 ms`


def test_declared_timings_fold_padding_and_ratios() -> None:
    """A timing that outgrew its field (the line shifted) and a ratio of timings: timing only."""
    new = "first call: 123456.50 ms\nfirst / steady: 42x\nanswer: 44 equations, took 3 ms\n"
    old_bytes = recording(OLD, SPANS, ms_panel(9.5, 1.0))
    new_bytes = recording(new, [(1, 12, 21), (2, 16, 18)], ms_panel(123456.5, 2.0))
    changes = compare({"x": old_bytes}, {"x": new_bytes}, "a", "b")
    [lesson] = changes.lessons
    assert lesson.category == "timing", render(changes, "text")
    assert lesson.output and lesson.output.timing_lines == 2
    assert [p.timing for p in lesson.panels] == [True]


def test_only_declared_timings_fold() -> None:
    """In a recording that declares its timings, a number with a unit it did not declare
    (`took 3 ms`), and a panel in ms it did not declare, are real changes, shown."""
    new = "first call:  1234.50 ms\nfirst / steady: 42x\nanswer: 44 equations, took 4 ms\n"
    old_bytes = recording(OLD, SPANS)
    new_bytes = recording(new, SPANS)
    changes = compare({"x": old_bytes}, {"x": new_bytes}, "a", "b")
    [lesson] = changes.lessons
    assert lesson.category == "changed"
    assert lesson.output and lesson.output.diff[2:] == (
        "-answer: 44 equations, took 3 ms",
        "+answer: 44 equations, took 4 ms",
    )
    base = loads(old_bytes, "x")
    undeclared = replace(base, timings=Timings(base.timings.output, []))  # type: ignore[union-attr]
    one, two = (
        dumps(replace(undeclared, data=replace(base.data, panels=[base.panels[0], p])))
        for p in (ms_panel(9.5, 1.0), ms_panel(9.6, 1.0))
    )
    [panel] = compare({"x": one}, {"x": two}, "a", "b").lessons[0].panels
    assert not panel.timing


def test_a_changed_number_beside_a_timing_is_shown_with_that_number() -> None:
    new = "first call:    10.25 ms\nfirst / steady: 67x\nanswer: 45 equations, took 3 ms\n"
    changes = compare({"x": recording(OLD, SPANS)}, {"x": recording(new, SPANS)}, "a", "b")
    text = render(changes, "text")
    assert changes.lessons[0].category == "changed"
    assert "+answer: 45 equations, took 3 ms" in text
    assert "timings moved: 1 output line" in text


def test_a_recording_without_timings_is_read_by_units() -> None:
    """Recordings made before examples declared timings: a number with a unit of time is a
    timing, and a line that only moved one (with its padding) is a timing line."""
    keys = line_keys("call only:     0.010 ms\ncall only:    10.010 ms\nratio: 5x\n", None)
    assert keys[0] == keys[1] != "ratio: 5x"
    assert keys[2] == "ratio: 5x"


def test_timings_are_optional_and_never_null() -> None:
    data = json.loads(REFERENCE.read_bytes())
    assert "timings" not in data and dumps(loads(REFERENCE.read_bytes(), "r")) == (
        REFERENCE.read_bytes()
    )
    data["timings"] = None
    with pytest.raises(RecordingError, match="field timings"):
        loads(json.dumps(data).encode(), "r")
    data["timings"] = {"output": [{"line": 0, "start": 0, "end": 1}], "panels": []}
    with pytest.raises(RecordingError, match=r"timings\.output\.0\.line"):
        loads(json.dumps(data).encode(), "r")
    data["timings"] = {"output": [{"line": 1, "start": 2, "end": 3}], "panels": [1]}
    text = json.dumps(data, indent=2, ensure_ascii=False).encode()
    assert dumps(loads(text, "r")) == text
    assert isinstance(loads(text, "r"), Recording)
