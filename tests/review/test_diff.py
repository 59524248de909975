"""`python -m builder diff` on a real git history made in a temporary repository.

The history: a base commit of the recorded fixture course (plus a lesson with timings and
one that HEAD removes), then a commit that re-records it: basics-01's output and panel value
change and its jax version is bumped, speed-01 only moves timings, basics-09 is removed and
basics-03 added. The three formats are compared with golden files in tests/diff_cases/
(`REGENERATE=1 pytest tests/review/test_diff.py` rewrites them; read the diff before committing).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace

import pytest

from builder.__main__ import main
from builder.core.observe import Paths
from builder.course.recording import Recording, dumps, loads
from builder.review.changes import PageMark, line_keys, output_change
from builder.review.report import mark_change
from tests.helpers import HERE, ROOT, git

CASES = HERE / "diff_cases"
TIMINGS = "first call: {first} ms\nsteady state: {steady} ms (median of 20 calls)\n"


def rewrite(paths: Paths, lesson_id: str, **changes: object) -> None:
    path = paths.recordings / f"{lesson_id}.json"
    recording = loads(path.read_bytes(), path)
    path.write_bytes(dumps(replace(recording, **changes)))  # type: ignore[arg-type]


def recording(paths: Paths, lesson_id: str) -> Recording:
    path = paths.recordings / f"{lesson_id}.json"
    return loads(path.read_bytes(), path)


def copy_lesson(paths: Paths, source: str, lesson_id: str, slug: str) -> None:
    folder = paths.content / "lessons" / lesson_id
    shutil.copytree(paths.content / "lessons" / source, folder)
    text = (folder / "lesson.md").read_text()
    old_slug = re.search(r"^slug: (.*)$", text, re.MULTILINE)
    assert old_slug
    text = text.replace(f"id: {source}", f"id: {lesson_id}").replace(old_slug[0], f"slug: {slug}")
    (folder / "lesson.md").write_text(text)
    shutil.copy(paths.recordings / f"{source}.json", paths.recordings / f"{lesson_id}.json")
    rewrite(paths, lesson_id, lessonId=lesson_id)


def timing_panel(first: float, steady: float) -> dict[str, object]:
    return {
        "kind": "bar",
        "title": "First call against the steady state",
        "labels": ["first call", "steady state"],
        "ylabel": "ms (wall clock)",
        "series": [{"label": "one call", "y": [first, steady]}],
    }


def with_timings(paths: Paths, first: float, steady: float, when: str) -> None:
    speed = recording(paths, "speed-01")
    data = json.loads(dumps(speed))
    data["stdout"] = data["stdout"].split("first call")[0] + TIMINGS.format(
        first=first, steady=steady
    )
    data["data"]["panels"] = [data["data"]["panels"][0], timing_panel(first, steady)]
    data["generatedAt"] = when
    (paths.recordings / "speed-01.json").write_bytes(dumps(loads(json.dumps(data).encode(), "x")))


BASE_TIME, HEAD_TIME = "2026-10-20T09:00:00+00:00", "2026-11-30T09:00:00+00:00"


@pytest.fixture
def history(recorded: Paths) -> Paths:
    """The recorded fixture course in a git repository: tags `base` and `head`."""
    root = recorded.content.parent
    (root / ".gitignore").write_text("/site/\n/.cache/\n")
    copy_lesson(recorded, "basics-02", "basics-09", "extra")
    for lesson_id in ("basics-01", "basics-02", "basics-09"):
        rewrite(recorded, lesson_id, generatedAt=BASE_TIME)
    with_timings(recorded, 333.65, 12.69, BASE_TIME)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    re_record(recorded)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "re-record")
    git(root, "tag", "head")
    return recorded


def re_record(paths: Paths) -> None:
    basics = recording(paths, "basics-01")
    panel = basics.panels[0]
    series = replace(panel.series[0], y=[4])
    rewrite(
        paths,
        "basics-01",
        stdout=basics.stdout.replace("  in (d,) }", "    e:f32[3] = neg d\n  in (e,) }").replace(
            "equations: 3", "equations: 4"
        ),
        data=replace(basics.data, panels=[replace(panel, series=[series])]),
        environment=replace(basics.environment, jax="0.10.3"),
        generatedAt=HEAD_TIME,
    )
    with_timings(paths, 291.14, 13.02, HEAD_TIME)
    shutil.rmtree(paths.content / "lessons" / "basics-09")
    (paths.recordings / "basics-09.json").unlink()
    copy_lesson(paths, "basics-02", "basics-03", "another")


def run_diff(paths: Paths, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    where = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    assert main(["diff", *args, *where]) == 0
    return re.sub(r"\((?:`)?[0-9a-f]{7,12}(?:`)?\)", "(<hash>)", capsys.readouterr().out)


@pytest.mark.parametrize("form, suffix", [("text", "txt"), ("markdown", "md"), ("json", "json")])
def test_diff_golden(
    history: Paths, capsys: pytest.CaptureFixture[str], form: str, suffix: str
) -> None:
    out = run_diff(history, capsys, "base", "head", "--format", form)
    golden = CASES / f"re-record.{suffix}"
    if os.environ.get("REGENERATE"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_diff_reads_the_work_tree_against_head_by_default(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "No recording differs (4 unchanged)." in run_diff(history, capsys)
    rewrite(history, "basics-02", stdout="line 1\nline two\nline 3\n")
    out = run_diff(history, capsys, "--no-pages")
    assert out.startswith("Recordings: HEAD (<hash>) -> work tree\n1 recording differs")
    assert "-line 2\n    +line two\n" in out


def test_timing_only_rerecord_reads_as_one_line(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    with_timings(history, 250.5, 11.0, HEAD_TIME)
    out = run_diff(history, capsys, "HEAD", "--format", "markdown")
    assert out.splitlines()[2:] == [
        "1 recording differs, 3 unchanged: 1 timing only.",
        "",
        "**Timings only:** `speed-01` (2 output lines, panel 2 (2 values))",
    ]


def test_diff_says_when_a_revision_is_unknown(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    where = ["--content", str(history.content), "--recordings", str(history.recordings)]
    assert main(["diff", "no-such-rev", *where]) == 1
    assert "error: git ls-tree failed" in capsys.readouterr().err


IMAGE = "<img src=https:&#47;&#47;example.org&#47;x.png>"  # no "/" in a file name
HOSTILE_NAME = f"basics-07\n{IMAGE}\n# Approved ##[warning]x"
ESCAPES = "\x1b]8;;https://example.org\x07click\x1b]8;;\x07 \x1b[31mred\x1b[0m \x9b2J"


def _hostile_rerecord(paths: Paths) -> None:
    """The work tree against HEAD: a recording under a name holding newlines and HTML
    (added), and basics-01 re-recorded with ANSI and OSC escapes in its output and a panel
    title holding a newline and an image."""
    basics = recording(paths, "basics-01")
    panel = replace(basics.panels[0], title="t\n<img src=https://example.org/y.png> ![i](z)")
    panel = replace(panel, series=[replace(panel.series[0], y=[4])])
    rewrite(
        paths,
        "basics-01",
        stdout=basics.stdout + ESCAPES + "\n  ::error file=README.md::context\n",
        data=replace(basics.data, panels=[panel]),
    )
    shutil.copy(paths.recordings / "basics-02.json", paths.recordings / f"{HOSTILE_NAME}.json")


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_markdown_report_keeps_every_name_in_its_heading_and_no_html_out(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording's file name broke out of its heading and put raw HTML and a remote image
    into the job summary: names are inline code on one line; titles are escaped text."""
    _hostile_rerecord(history)
    out = run_diff(history, capsys, "HEAD", "--format", "markdown", "--no-pages")
    assert _raw_controls(out) == []
    headings = [line for line in out.splitlines() if line.startswith("#")]
    assert headings == [
        "### Recordings: `HEAD (<hash>)` → `work tree`",
        "#### `basics-01` — changed",
        f"#### `basics-07\\n{IMAGE}\\n# Approved ##\\u005bwarning]x` — added",
    ]
    shown = "\n".join(line for line in out.splitlines() if not line.startswith("#"))
    assert "<img" not in shown.replace("\\<img", "") and "![" not in shown
    assert "**Panel 1**: t\\\\n\\<img src=https://example.org/y.png\\> \\!\\[i\\](z)" in out


def test_text_report_shows_escape_sequences_instead_of_sending_them(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    """The text report copied ANSI and OSC escapes from a recording to the reviewer's
    terminal; a name with a newline printed lines of its own."""
    _hostile_rerecord(history)
    out = run_diff(history, capsys, "HEAD", "--no-pages")
    assert _raw_controls(out) == []
    assert "    +\\x1b]8;;https://example.org\\x07click\\x1b]8;;\\x07 \\x1b[31mred" in out
    assert "    +  ::error file=README.md::context" in out  # "+" first: not a command
    assert "##[" not in out and not [x for x in out.splitlines() if x.lstrip().startswith("::")]
    assert f"basics-07\\n{IMAGE}\\n# Approved ##\\u005bwarning]x: added" in out
    assert "  panel 1 “t\\n<img src=https://example.org/y.png> ![i](z)”" in out


def test_json_report_is_the_same_value_with_nothing_a_terminal_acts_on(
    history: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    _hostile_rerecord(history)
    out = run_diff(history, capsys, "HEAD", "--format", "json", "--no-pages")
    assert _raw_controls(out) == [] and "##[" not in out
    report = json.loads(out)
    assert [x["lessonId"] for x in report["lessons"]] == ["basics-01", HOSTILE_NAME]
    diff = report["lessons"][0]["output"]["diff"]
    assert f"+{ESCAPES}" in diff


def test_an_environment_bump_alone_is_a_change(history: Paths) -> None:
    from builder.review.changes import lesson_change

    before = recording(history, "basics-02")
    after = replace(before, environment=replace(before.environment, numpy="2.4.5"))
    change = lesson_change("basics-02", dumps(before), dumps(after), "a", "b")
    assert change.category == "changed"
    assert [(f.name, f.old, f.new) for f in change.environment] == [
        ("environment.numpy", "2.4.4", "2.4.5")
    ]


@pytest.mark.parametrize(
    "line, other, same",
    [
        ("call only:     0.015 ms", "call only:    12.015 ms", True),
        ("(116.3 us per call)", "(99.1 us per call)", True),
        ("took 2s, 1.5 seconds, 3µs", "took 3s, 2.5 seconds, 4µs", True),
        ("16 slices xs[i]: 6.036 ms", "16 slices xs[i]: 7.1 ms", True),
        (
            "make_jaxpr cost 49.5 ms  answer: 44 equations",
            "make_jaxpr cost 52.0 ms  answer: 44 equations",
            True,
        ),
        (
            "make_jaxpr cost 49.5 ms  answer: 44 equations",
            "make_jaxpr cost 49.5 ms  answer: 43 equations",
            False,
        ),
        ("f32[256,512] 4 seconds_left", "f32[256,512] 5 seconds_left", False),
    ],
)
def test_timings_are_numbers_with_a_unit_of_time(line: str, other: str, same: bool) -> None:
    """Without declared timings, two lines differ only in timings when every difference is a
    number with a unit of time (and the padding it shifted)."""
    assert (line_keys(line, None) == line_keys(other, None)) is same


def test_a_figure_counts_the_lines_that_changed_not_the_timings_that_shifted() -> None:
    """The rehearsal said "2 of its 5 line(s) changed" where one line changed: a timing that
    gained a digit moved its padding, and the count did not mask the padding as the diff did."""
    old = "first call:    500.06 ms, traces now: 2\njaxpr equations: 77\nstage trace:       45.32 ms\nstage lower:      334.64 ms\nok"
    new = "first call:     42.05 ms, traces now: 2\njaxpr equations: 76\nstage trace:      123.02 ms\nstage lower:       26.10 ms\nok"
    mark = PageMark("l/first-call/", "", "", "output", "recorded output", old, new, False)
    assert mark_change(mark) == "1 of its 5 line(s) changed, 3 more only in timings"
    moved = PageMark("l/x/", "", "", "output", "recorded output", "a\nb\nc", "b\nc\na", False)
    assert mark_change(moved) == "2 of its 3 line(s) changed"


def test_output_folds_timing_lines_and_shows_the_rest() -> None:
    old = "a 1\ncall: 3.5 ms\nanswer: 44 equations, 9.1 ms\nz\n"
    new = "a 1\ncall: 2.5 ms\nanswer: 45 equations, 9.0 ms\nz\n"
    change = output_change(old, new)
    assert change is not None
    assert change.timing_lines == 1 and (change.added, change.removed) == (1, 1)
    assert change.diff == (
        "@@ -2,3 +2,3 @@",
        " call: 2.5 ms",
        "-answer: 44 equations, 9.1 ms",
        "+answer: 45 equations, 9.0 ms",
        " z",
    )


def test_without_the_renderer_diff_reports_all_but_the_pages(history: Paths) -> None:
    """On a light install (no markdown-it, Jinja2, jax or matplotlib) diff still compares
    the recordings, and says that it did not compare pages."""
    code = (
        "import sys\n"
        "for name in ('jax', 'matplotlib', 'jinja2', 'markdown_it', 'pygments'):\n"
        "    sys.modules[name] = None\n"
        "from builder.__main__ import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    where = ["--content", str(history.content), "--recordings", str(history.recordings)]
    done = subprocess.run(
        [sys.executable, "-c", code, "diff", "base", "head", *where],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2].startswith("(pages not compared: import of markdown_it halted")
    assert "  panel 1 “Equations per function” [equations]" in lines
    assert "on its page:" not in done.stdout


def test_site_since_rev_has_a_what_changed_page_linking_to_each_change(history: Paths) -> None:
    from builder.pipeline.build import build

    build(history, execute=False, jobs=1)
    assert not (history.out / "changes").exists()
    build(history, execute=False, jobs=1, since="base")
    page = (history.out / "changes" / "index.html").read_text()
    assert (
        "1 lesson prints something different, 1 only moved its timings and 1 prints the same; "
        "1 is new, 1 no longer in the course." in page
    )
    jax = recording(history, "basics-02").environment.jax  # what the fixture was recorded on
    assert f"They were recorded again with jax {jax} → 0.10.3 (1 of 3 lessons)." in page
    assert '<a href="../l/first/index.html#panel-1">Chart 1: Equations per function' in page
    assert '<a href="../l/first/index.html#tracing">§ Tracing</a>: value: recorded output' in page
    assert '<span class="diff-add">+equations: 4</span>' in page
    assert 'moved:</strong> <a href="../l/settings/index.html">Settings and data</a>.' in page
    assert (
        'the same:</strong> <a href="../l/no-panels/index.html">A lesson without panels</a>.'
        in page
    )
    # issue 43: words for a reader; the revisions only in the small line that names them
    text = re.sub(r"<[^>]+>", " ", page[page.index("<main") : page.index("</main>")])
    for author in ("recordings differ", "re-recorded", "folded", "work tree", "unchanged"):
        assert author not in text, author
    compared = re.findall(r'<p class="muted compared">([^<]*)</p>', page)
    assert compared == [
        f"Recordings compared: base ({_short(history, 'base')}) and the "
        "recordings this site was built from."
    ]
    assert text.count(_short(history, "base")) == 1
    lesson = (history.out / "l" / "first" / "index.html").read_text()
    for anchor in re.findall(r'href="\.\./l/first/index\.html#([^"]+)"', page):
        assert f'id="{anchor}"' in lesson, anchor
    git(history.content.parent, "tag", "-f", "base", "head")
    build(history, execute=False, jobs=1, since="base")  # the revision moved: a new page
    page = (history.out / "changes" / "index.html").read_text()
    assert "0 lessons print something different, 0 only moved their timings" in page


def _short(paths: Paths, rev: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=paths.content, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_an_ascii_locale_renders_and_reports_with_escapes(history: Paths) -> None:
    """`LC_ALL=POSIX PYTHONUTF8=0`: a child's output was decoded with the locale's codec
    (render and site failed: Pagefind's, before issue 60), and `·`, `→` were written to an ASCII stdout (diff failed).
    Child output is read as UTF-8; what the stream cannot encode is written as \\uXXXX."""
    env = {**os.environ, "LC_ALL": "POSIX", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    env.pop("LANG", None)
    where = ["--content", str(history.content), "--recordings", str(history.recordings)]
    site = [*where, "--out", str(history.out), "--cache", str(history.cache)]

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "builder", *args],
            capture_output=True,
            env=env,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
        assert done.stderr.isascii() and done.stdout.isascii()
        return done.stdout.decode("ascii")

    run("render", "--since", "base", *site)
    assert (history.out / "search-index" / "main" / "offline.js").is_file()
    assert (history.out / "changes" / "index.html").is_file()
    text = run("diff", "base", "head", *where)
    assert "(re-recorded with the same example and harness \\u00b7 recorded 2026-10-20" in text
    assert "  panel 1 \\u201cEquations per function\\u201d [equations]" in text
    markdown = run("diff", "base", "head", "--format", "markdown", *where).splitlines()
    assert re.fullmatch(r"### Recordings: `base \(\w+\)` \\u2192 `head \(\w+\)`", markdown[0])
    report = json.loads(run("diff", "base", "head", "--format", "json", *where))
    assert report["lessons"][0]["panels"][0]["title"] == "Equations per function"


@pytest.mark.parametrize("target", ["../../../../outside/config", "/etc/hostname", "lesson.md"])
def test_a_link_in_heads_content_is_named_on_one_line_and_never_read(
    history: Paths, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Issue 25: HEAD's content/ holds a link, leaving the checkout or not: extracting it
    was a `LinkOutsideDestinationError` traceback. The recordings are still compared; the
    pages are not, and the note names the link as the build would (builder.course.rules)."""
    root = history.content.parent
    example = history.content / "lessons" / "basics-01" / "example.py"
    example.unlink()
    example.symlink_to(target)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a link")
    out = run_diff(history, capsys, "base", "HEAD")
    assert out.splitlines()[1].startswith("4 recordings differ, 1 unchanged")
    named = str(example).replace(str(history.content), f"{history.content} (at HEAD)")
    assert out.splitlines()[2] == (
        f"(pages not compared: {named}: is a symbolic link (to {target}), and links in the "
        "course are not followed -> replace the link with the file or folder it points to "
        "(a copy, not a link))"
    )
