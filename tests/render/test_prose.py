"""Lesson Markdown -> HTML. Golden cases in tests/render_cases/*.md are readable in a diff:

    <!-- title -->
    Markdown...
    ======
    expected HTML

Regenerate them on purpose only: UPDATE_GOLDEN=1 pytest tests/render/test_prose.py
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from builder.course.model import Course, Lesson
from builder.course.recording import Recording
from builder.render import anchors, bounded, figures, prose
from tests.helpers import FIXTURE_COURSE, HERE

CASES = HERE / "render_cases"
SEPARATOR = "\n======\n"


def _lesson(course: Course, body: str) -> Lesson:
    lesson = course.lesson("basics-01")
    assert lesson is not None
    return replace(lesson, body=body)


def _render(course: Course, recording: Recording | None, body: str) -> tuple[str, list[str]]:
    """`body` as basics-01's prose, its anchored links checked against the other lessons'
    headings and figures (none recorded: no panel-N)."""
    lesson = _lesson(course, body)
    edited = replace(
        course, lessons=tuple(lesson if x.id == lesson.id else x for x in course.lessons)
    )
    [linked] = [row for x, row in zip(edited.lessons, _linked(edited), strict=True) if x is lesson]
    rendered, errors = prose.render_prose(lesson, course, recording, "../../", linked=linked)
    return rendered.html, [str(error) for error in errors]


def _linked(course: Course) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    return anchors.linked_ids(course, [], lambda x: anchors.page_ids(prose.parser(), x))


@pytest.mark.parametrize("case", sorted(CASES.glob("*.md")), ids=lambda p: p.stem)
def test_golden_render_cases(case: Path, course: Course, reference: Recording) -> None:
    markdown, expected = case.read_text().split(SEPARATOR)
    html, errors = _render(course, reference, markdown)
    assert errors == []
    if os.environ.get("UPDATE_GOLDEN"):
        case.write_text(markdown + SEPARATOR + html)
    assert html == expected


@pytest.mark.parametrize(
    ("markdown", "message"),
    [
        ('{{ value panel=3 label="ordinary" }}', "the recording has 2 panel(s)"),
        ('{{ value panel=1 label="nope" }}', "panel 1 has labels ['ordinary', 'layer remat']"),
        ('{{ value output="no such (text)" }}', "the pattern matches nothing"),
        ("{{ value line=999 }}", "the recorded output has 21 lines"),
        ("{{ value }}", 'say panel=N label=..., output="regex" or line=N'),
        ('{{ value output="(unclosed" }}', "regex '(unclosed'"),
        ('{{ value output="Compiler (memory)" fmt=".2f" }}', "cannot format 'memory'"),
        ("text {{ output }} text", "'output' must stand alone in its paragraph"),
        ("{{ panel 7 }}", "panel 7: the recording has 2 panel(s)"),
        ("{{ output lines=30-40 }}", "output lines=30-40: it has 21 lines"),
        ('{{ output match="^zzz" }}', "matches no line of the recorded output"),
        ('{{ output from="^zzz" }}', "output from='^zzz' matches no line of the recorded output"),
        (
            '{{ output from="^remat" to="^plain" }}',
            "output to='^plain' matches no line of the recorded output after the line from= "
            "matched ('remat')",
        ),
        ('{{ output to="^zzz" match="f32" }}', "output to='^zzz' matches no line"),
        ("[[no-such-term]]", "[[no-such-term]] is not a glossary term"),
        ("[x](lesson:nowhere)", "link to lesson 'nowhere': no lesson has that slug or id"),
        ("[x](ftp://example.com/a)", "only http, https, mailto and relative links"),
    ],
)
def test_a_reference_to_nothing_fails_naming_file_and_line(
    course: Course, reference: Recording, markdown: str, message: str
) -> None:
    html, errors = _render(course, reference, "Intro.\n\n" + markdown + "\n")
    assert len(errors) == 1
    assert message in errors[0]
    assert errors[0].startswith(f"{FIXTURE_COURSE}/lessons/basics-01/lesson.md: line 12:")
    assert 'class="broken"' in html or "{{" not in html


def test_values_carry_their_provenance(course: Course, reference: Recording) -> None:
    html, _ = _render(course, reference, '{{ value panel=2 label="layer remat" }} bytes')
    assert (
        '<data class="rv" value="256" tabindex="0" aria-describedby="value-note-1">256</data>'
        '<span class="rv-note" role="tooltip" id="value-note-1" data-pagefind-ignore>From '
        '<span class="rv-source">panel 2 “Compiler memory estimate”, compiler temporaries, '
        'layer remat, in estimated temporary bytes</span>. <span class="rv-by">Recorded CPU '
        "computation · jax 0.9.2 · 1 device · 2026-10-20</span></span></span> bytes"
    ) in html


def test_without_a_recording_the_page_says_so_instead_of_failing(course: Course) -> None:
    html, errors = _render(course, None, "{{ output }}\n\nIt was {{ value line=1 }}.\n")
    assert errors == []
    assert "Output: not recorded yet." in html and "[not recorded]" in html


def test_raw_html_and_script_urls_are_not_passed_through(course: Course) -> None:
    html, _ = _render(
        course,
        None,
        '<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror="alert(1)">\n',
    )
    assert "<script" not in html and "<img" not in html
    assert 'href="javascript' not in html


def test_recorded_stdout_is_escaped_and_control_codes_made_visible(
    course: Course, reference: Recording
) -> None:
    hostile = replace(reference, stdout="</pre><script>x</script>\x1b[31mred\x00\n")
    html, _ = _render(course, hostile, "{{ output }}\n")
    assert "&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;red\u2400" in html
    assert "<script>" not in html


PROGRESS = (
    "loading 10%\rloading 60%\rloading 100%\n"  # a progress bar: only its last state shows
    "step 1 of 3\rstep 3 of 3\r\n"  # \r then \r\n: the line stays as it was
    "downloading\rdone\n"  # a shorter overwrite leaves the rest of the line
    "\x1b[32m50%\x1b[0m\r\x1b[32m100%\x1b[0m\n"  # colour takes no room on a terminal
    "total\x0bsize 42\n"
)
SHOWN = ["loading 100%", "step 3 of 3", "doneloading", "100%", "total\u240bsize 42"]


def test_recorded_output_shows_what_a_terminal_would_show(
    course: Course, reference: Recording
) -> None:
    """Issue 25: a carriage return overwrites the line on a terminal (progress bars); the
    page showed every state with a visible \u240d, and only "\n" ends a line on the page."""
    progress = replace(reference, stdout=PROGRESS)
    html, errors = _render(course, progress, "{{ output }}\n")
    assert errors == []
    assert _shown(html) == SHOWN
    html, errors = _render(course, progress, "{{ output lines=2-3 }}\n")
    assert errors == [] and _shown(html) == SHOWN[1:3]


def test_references_count_lines_as_the_page_shows_them(
    course: Course, reference: Recording
) -> None:
    """`line=`, `lines=`, `output=`, `match=`, `from=`/`to=` read the output as the page
    shows it (builder/render/marks.py `terminal_lines`): `line=2` was "loading 60%", and
    `output=` found a state the page never shows."""
    progress = replace(reference, stdout=PROGRESS)
    cases = {
        "{{ value line=1 }}": ">loading 100%<",
        "{{ value line=3 }}": ">doneloading<",
        "{{ value line=5 }}": ">total\x0bsize 42<",
        '{{ value output="size (\\d+)" }}': ">42<",
        '{{ value output="step (\\d) of" }}': ">3<",
    }
    for markdown, expected in cases.items():
        html, errors = _render(course, progress, markdown)
        assert errors == [], markdown
        assert expected in html, (markdown, html)
    html, _ = _render(course, progress, '{{ value output="size (\\d+)" }}')
    assert "recorded output, line 5" in html
    html, errors = _render(course, progress, '{{ value output="loading 60%" }}')
    assert len(errors) == 1 and errors[0].endswith(
        '{{ value output="loading 60%" }}: the pattern matches nothing in the recorded output'
    )
    html, errors = _render(course, progress, "{{ value line=6 }}")
    assert errors and "the recorded output has 5 lines" in errors[0]
    html, errors = _render(course, progress, '{{ output from="^step" to="^done" match="o" }}\n')
    assert errors == [] and _shown(html) == SHOWN[1:3]


def test_value_formats(course: Course, reference: Recording) -> None:
    cases = {
        '{{ value output="argument_size_in_bytes.: (\\d+)" fmt="bytes" }}': ">64 B<",
        '{{ value panel=2 label="ordinary" fmt="bytes" }}': ">256 B<",
        '{{ value panel=2 label="ordinary" fmt=".1f" }}': ">256.0<",
        '{{ value output="samples: \\[\\[([0-9.e-]+)" fmt=".2e" }}': ">3.18e-05<",
        "{{ value line=1 }}": ">Saved residual descriptions:<",
    }
    for markdown, expected in cases.items():
        html, errors = _render(course, reference, markdown)
        assert errors == [], markdown
        assert expected in html, (markdown, html)
    assert bounded.format_bytes(786452) == "768.0 KiB"
    assert figures.format_number(12345) == "12,345"


def _shown(html: str) -> list[str]:
    """The lines an output figure shows."""
    import html as html_module

    code = html.split('class="output"><code>', 1)[1].split("</code></pre>", 1)[0]
    return html_module.unescape(code).splitlines()


def test_output_from_to_markers_slice_a_block_that_follows_its_markers(
    course: Course, reference: Recording
) -> None:
    stdout = reference.stdout.splitlines()
    cases = {
        # both markers included; `to` is looked for after the `from` line, not on it
        '{{ output from="^plain" to="^remat" }}': stdout[1:12],
        '{{ output from="output of tanh" to="output of tanh" }}': stdout[3:6],
        # without `to` the block runs to the end; without `from` it starts at the top
        '{{ output from="^Compiler memory" }}': stdout[18:],
        '{{ output to="^plain" }}': stdout[:2],
        # `match` keeps the block's matching lines
        '{{ output from="^remat" to="^Compiler" match="tanh" }}': stdout[14:18],
    }
    for markdown, expected in cases.items():
        html, errors = _render(course, reference, markdown + "\n")
        assert errors == [], markdown
        assert _shown(html) == expected, markdown
    # A re-record that adds lines above the block moves it; the markers still find it.
    grown = replace(reference, stdout="warming up\nstill warming\n" + reference.stdout)
    html, errors = _render(course, grown, '{{ output from="^plain" to="^remat" }}\n')
    assert errors == [] and _shown(html) == stdout[1:12]


def _numbered(figure: str) -> tuple[list[str], list[str]]:
    """The numbers and the code lines a rendered example figure shows."""
    import html as html_module
    import re

    numbers = re.search(r'<pre class="lineno"[^>]*>(.*?)</pre>', figure, re.S)
    code = re.search(r"<code>(.*?)</code>", figure, re.S)
    assert numbers and code
    text = html_module.unescape(re.sub(r"<[^>]+>", "", code[1]))
    return numbers[1].split("\n"), text.removesuffix("\n").split("\n")


def test_example_slices_are_numbered_as_the_file_and_keep_blank_lines(course: Course) -> None:
    """Output cites `<id>-example:LINE:COL`: the numbers beside the code must be the file's,
    blank lines at a slice's ends included (Pygments would drop them)."""
    source = course.lesson("basics-01").source.decode().splitlines()  # type: ignore[union-attr]
    html, errors = _render(course, None, "{{ example lines=3-8 }}\n\n{{ example lines=9-12 }}")
    assert errors == []
    first, whole, second = html.split("<figure")[1:]
    numbers, code = _numbered(first)
    assert numbers == [str(n) for n in range(3, 9)] and code == source[2:8]
    assert code[0] == "" and code[-1].startswith("    return")
    numbers, code = _numbered(second)
    assert numbers == ["9", "10", "11", "12"] and code == source[8:12]
    # After the first slice only: the whole file, collapsed, numbered from 1.
    assert html.count('<details class="example-whole"') == 1 and " open" not in html
    numbers, code = _numbered(whole)
    assert numbers == [str(n) for n in range(1, len(source) + 1)] and code == source
    assert 'href="example.py" download="example.py"' in first


def test_a_whole_example_needs_no_collapsed_copy(course: Course) -> None:
    html, errors = _render(course, None, "{{ example }}")
    assert errors == [] and "<details" not in html
    assert 'tabindex="0" role="region" aria-label="example.py"' in html


def test_reveal_folds_what_follows_into_a_details_up_to_its_end_mark(course: Course) -> None:
    body = "Predict it.\n\n{{ reveal }}\n\n## The answer\n\nIt is 3.\n\n{{ reveal end }}\n\nAfter."
    html, errors = _render(course, None, body)
    assert errors == []
    folded = html[html.index('<details class="reveal"') : html.index("</details>")]
    assert '<details class="reveal" data-pagefind-ignore="all">' in folded  # never searched
    assert "<summary>Show the solution and the recorded answer</summary>" in folded
    assert "The answer" in folded and "It is 3." in folded
    assert html.index("Predict it.") < html.index("<details") < html.index("After.")
    assert "After." not in folded


def test_reveal_without_its_end_runs_to_the_end_and_names_its_button(course: Course) -> None:
    html, errors = _render(course, None, 'Try.\n\n{{ reveal summary="Show my answer" }}\n\nIt.')
    assert errors == []
    assert html.rstrip().endswith("</details>")
    assert "<summary>Show my answer</summary>" in html


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{{ reveal end }}", "{{ reveal end }} without a {{ reveal }} before it"),
        ("{{ reveal now }}", 'takes summary="..." or end'),
    ],
)
def test_a_reveal_mark_that_makes_no_sense_names_its_line(
    course: Course, body: str, message: str
) -> None:
    _, errors = _render(course, None, "Text.\n\n" + body)
    assert len(errors) == 1 and message in errors[0] and "line " in errors[0]


def test_the_marks_a_page_places_are_the_ones_it_shows(
    course: Course, reference: Recording
) -> None:
    """What the renderer hands `diff` as data (marks.Placed) is what the HTML shows, mark
    for mark: each kind as many times as its element, each text inside the page, each
    under the heading it follows."""
    import html as html_module

    body = (
        '## Timing\n\nIt took {{ value panel=2 label=ordinary series="compiler temporaries" }}, '
        "and {{ value line=99 }} is not a line.\n\n{{ output lines=1-2 }}\n\n"
        "## Charts\n\n{{ panel 2 }}\n\n{{ panel 9 }}\n"
    )
    rendered, _ = prose.render_prose(_lesson(course, body), course, reference, root="../../")
    kinds = [mark.kind for mark in rendered.placed]
    assert kinds == ["value", "broken", "output", "panel", "broken"]
    text = html_module.unescape(rendered.html)
    assert kinds.count("broken") == rendered.html.count('<mark class="broken">')
    assert kinds.count("output") == rendered.html.count('<figure class="output"')
    assert kinds.count("panel") == rendered.html.count('<figure class="panel"')
    for mark in rendered.placed:
        if mark.kind == "panel":  # its table's rows, as the page's table has them
            rows = figures.panel_rows(reference.panels[1])
            assert mark.shown == " / ".join(" ".join([label, *cells]) for label, cells in rows)
            for label, cells in rows:
                row = f'<th scope="row">{label}</th>' + "".join(f"<td>{c}</td>" for c in cells)
                assert row in text
        else:
            assert mark.shown in text
    sections = [(mark.section, mark.anchor) for mark in rendered.placed]
    assert sections[:3] == [("Timing", "timing")] * 3
    assert sections[3] == ("Charts", "panel-2") and sections[4] == ("Charts", "charts")
