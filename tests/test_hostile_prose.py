"""What a lesson's prose can ask for, and what a damaged cache or a full disk can do (issue 18).

Each family ends in an error naming the lesson file, the line and the reference (or the
file that could not be written), or in the same bytes as a clean build: never a hang, a
traceback, a gigabyte of memory, a page that fetches from outside the site, or half a file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from builder import bounded, prose, recording
from builder.course import Course, Lesson, load_course
from builder.errors import RenderError
from tests.conftest import REFERENCE
from tests.test_hostile_builds import write_course

ROOT = Path(__file__).resolve().parent.parent


def one_lesson(tmp_path: Path) -> tuple[Course, Lesson]:
    if not (tmp_path / "content").exists():
        write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    return course, course.lessons[0]


def recorded_stdout(stdout: str) -> recording.Recording:
    raw = json.loads(REFERENCE.read_bytes())
    raw["lessonId"], raw["stdout"] = "calm-01", stdout
    return recording.loads(json.dumps(raw).encode(), "calm-01.json")


def render(tmp_path: Path, body: str, stdout: str = "x\n") -> tuple[str, list[RenderError]]:
    course, lesson = one_lesson(tmp_path)
    rendered, errors = prose.render_prose(
        replace(lesson, body=body), course, recorded_stdout(stdout), root="../../"
    )
    return rendered.html, errors


def only_error(errors: list[RenderError], lesson: Path, line: int = 9) -> str:
    """The one error, which names the lesson file and the line."""
    assert len(errors) == 1, [str(e) for e in errors]
    text = str(errors[0])
    assert text.startswith(f"{lesson}: line {line}: "), text
    return text


def lesson_path(tmp_path: Path) -> Path:
    return tmp_path / "content" / "lessons" / "calm-01" / "lesson.md"


# -- regexes: linear time, bounded size ----------------------------------------------------

EVIL = "a" * 32 + "!\n" + "ab" * 40 + "\n"
CATASTROPHIC = ["^(a+)+$", "^(a|aa)+$", "^(a|a)*b", "(.*a){25}!x", r"^(\w+\s?)+$", "^(a*)*$"]
PLACES = [
    '{{{{ value output="{}" }}}}',
    '{{{{ output match="{}" }}}}',
    '{{{{ output from="{}" }}}}',
    '{{{{ output to="{}" }}}}',
]


def test_catastrophic_patterns_in_every_reference_end_at_once(tmp_path: Path) -> None:
    """Python's `re` backtracks: `^(a+)+$` against 32 `a` and a `!` took hours. In a
    subprocess, so that the engine that hung fails the test instead of hanging it."""
    cases = [place.format(p) for place in PLACES for p in CATASTROPHIC]
    script = textwrap.dedent(
        f"""
        import json, sys, time
        sys.path[:0] = [{str(ROOT)!r}]
        from pathlib import Path
        from tests.test_hostile_prose import render
        started = time.perf_counter()
        for n, body in enumerate({cases!r}):
            html, errors = render(Path(sys.argv[1]) / str(n), body, {EVIL!r})
            print(json.dumps([body, [str(e) for e in errors]]))
        print(json.dumps(time.perf_counter() - started))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    *results, seconds = (json.loads(line) for line in done.stdout.splitlines())
    assert seconds < 10, f"{len(cases)} renders took {seconds:.1f} s"
    for (body, errors), n in zip(results, range(len(cases)), strict=True):
        assert all(str(tmp_path / str(n)) in e and "line 9" in e for e in errors), (body, errors)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\\1", "invalid escape sequence: \\1"),
        ("(?=a)a", "invalid perl operator: (?="),
        ("(?<!b)a", "invalid perl operator: (?<"),
        ("(a", "missing ): (a"),
        ("a{1001}", "invalid repetition size"),
        ("((a{500}){500}){500}", "invalid repetition size"),
    ],
)
def test_a_pattern_the_linear_engine_cannot_run_is_named(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    for place in PLACES:
        body = "Prose.\n\n" + place.format(pattern) + "\n"
        _, errors = render(tmp_path / str(PLACES.index(place)), body, EVIL)
        text = only_error(errors, lesson_path(tmp_path / str(PLACES.index(place))), 11)
        assert f"regex {pattern.replace(chr(92) * 2, chr(92))!r}: " in text
        assert reason in text and "RE2 syntax" in text


def test_a_pattern_over_the_length_limit_is_refused(tmp_path: Path) -> None:
    pattern = "a" * (bounded.MAX_PATTERN + 1)
    _, errors = render(tmp_path, f'{{{{ value output="{pattern}" }}}}', EVIL)
    assert "is 1,001 characters long, over the 1,000 limit" in only_error(
        errors, lesson_path(tmp_path)
    )


def test_the_course_patterns_match_as_they_did(tmp_path: Path) -> None:
    """RE2 reads the course's patterns ((?s), lazy `.*?`, classes, groups) as `re` did,
    and finds the same text; `^`/`$` match at every line."""
    stdout = "head\n=== no remat\nx\njaxpr  dot=12 tanh=3\ncafé: 7 ms\n"
    cases = {
        r'{{ value output="(?s)=== no remat.*?\njaxpr +dot=\d+ +tanh=(\d+)" }}': ">3<",
        r'{{ value output="^café: (\d+) ms$" }}': ">7<",
        r'{{ value output="jaxpr +dot=(\d+)" fmt=".1f" }}': ">12.0<",
    }
    for body, shown in cases.items():
        html, errors = render(tmp_path / str(len(shown)) / body[-6:-3], body, stdout)
        assert not errors and shown in html, (body, errors)


def test_the_text_a_page_searches_is_bounded(tmp_path: Path) -> None:
    """A recording may hold 20 MiB of stdout: a page of references searching it again and
    again is refused once, when its references have searched MAX_SEARCHED in all."""
    stdout = ("x" * 1023 + "\n") * 2048  # 2 MiB
    count = bounded.MAX_SEARCHED // len(stdout) + 3
    body = "\n\n".join(f'{{{{ value output="never {n}" }}}}' for n in range(count))
    started = time.perf_counter()
    _, errors = render(tmp_path, body, stdout)
    assert time.perf_counter() - started < 30
    over = [str(e) for e in errors if "MiB of recorded output in all" in str(e)]
    assert len(over) == 1 and "quote less of it" in over[0], over
    assert len(errors) == count - 2, "every reference before it failed for itself"


# -- formats: every spec against every kind of value ----------------------------------------

FORMATS = [
    # (recorded text, fmt, what the page shows, or the error's reason)
    ("1234567", ",d", "1,234,567"),
    ("123456789012345678901", ",d", "123,456,789,012,345,678,901"),  # exactly, not a float
    ("256.0", "d", "256"),
    ("0.125", ".1%", "12.5%"),
    ("-5", ">10d", "        -5"),
    ("-5", "+.2f", "-5.00"),
    ("786452", "bytes", "768.0 KiB"),
    ("-2048", "bytes", "-2.0 KiB"),
    ("3e-7", ".2e", "3.00e-07"),
    ("inf", "d", "it is not a finite number"),
    ("-inf", ".2f", "it is not a finite number"),
    ("nan", ",", "it is not a finite number"),
    ("NaN", "g", "it is not a finite number"),
    ("inf", "bytes", "it is not a finite number"),  # was "inf GiB"
    ("nan", "bytes", "it is not a finite number"),
    ("1e999", "e", "it is not a finite number"),  # a float's overflow
    ("9" * 5000, "d", "it is not a finite number"),  # past int's digit limit
    ("2.5", "d", "it is not a whole number: use '.0f' to round it"),  # was 2
    ("1e308", "d", "it makes 309 characters: use an 'e' or 'g' format"),
    ("1e308", ",.0f", "it makes 411 characters"),
    ("1e300", "bytes", "it makes"),
    ("5", "999999999d", "a width or precision is at most 64"),  # was a gigabyte
    ("5", ".999999999f", "a width or precision is at most 64"),
    ("5", "9" * 5000 + "d", "a width or precision is at most 64"),
    ("5", "065d", "a width or precision is at most 64"),
    ("5", "x", "a format is a Python format spec of type d e E f F g G %, or bytes"),
    ("5", "c", "a format is a Python format spec of type"),
    ("5", "s", "a format is a Python format spec of type"),
    ("5", "n", "a format is a Python format spec of type"),  # locale-dependent
    ("5", "%%", "a format is a Python format spec of type"),
    ("5", "{}", "a format is a Python format spec of type"),
    ("5", "1.2.3f", "a format is a Python format spec of type"),
    ("5", "bytes ", "a format is a Python format spec of type"),
    ("abc", ".2f", "could not convert string to float: 'abc'"),
]


@pytest.mark.parametrize(("text", "spec", "expected"), FORMATS)
def test_every_format_against_every_kind_of_value(
    tmp_path: Path, text: str, spec: str, expected: str
) -> None:
    reference = f'{{{{ value output="v: (\\S+)" fmt="{spec}" }}}}'
    started = time.perf_counter()
    html, errors = render(tmp_path, f"It was {reference}.\n", f"v: {text}\n")
    assert time.perf_counter() - started < 2
    if not expected.startswith(("it ", "a ", "could")):
        assert not errors and f">{expected}</data>" in html, errors
        return
    error = only_error(errors, lesson_path(tmp_path))
    assert f"{reference}: cannot format {text!r} with {spec!r}: {expected}" in error


def test_a_panel_value_takes_the_same_formats(tmp_path: Path) -> None:
    html, errors = render(tmp_path, '{{ value panel=1 label="ordinary" fmt="999999999d" }}')
    assert "a width or precision is at most 64" in only_error(errors, lesson_path(tmp_path))
    html, errors = render(tmp_path, '{{ value panel=1 label="ordinary" fmt="bytes" }}')
    assert not errors and ">9 B</data>" in html
