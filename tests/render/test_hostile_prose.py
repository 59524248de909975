"""What a lesson's prose can ask for, and what a damaged cache or a full disk can do (issue 18).

Each family ends in an error naming the lesson file, the line and the reference (or the
file that could not be written), or in the same bytes as a clean build: never a hang, a
traceback, a gigabyte of memory, a page that fetches from outside the site, or half a file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from builder.core.errors import RenderError
from builder.course import recording
from builder.course.load import load_course
from builder.course.model import Course, Lesson
from builder.render import bounded, prose
from tests.helpers import REFERENCE, ROOT, write_course


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
        from tests.render.test_hostile_prose import render
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


# -- links and images: a page fetches nothing from outside the site ------------------------

REFUSED = [
    # (Markdown, what the error says after "<kind> '<url>': ")
    ("![x](https://example.com/pixel.gif)", "image", "it is not a file of the site"),
    ("![x](HTTP://example.com/pixel.gif)", "image", "it is not a file of the site"),
    ("![x](//example.com/pixel.gif)", "image", "it leads to another host"),
    ("![x](\\/\\/example.com/pixel.gif)", "image", "it leads to another host"),
    ("![x](/pixel.gif)", "image", "it leads to the root of the disk or host"),
    ("![x](data:image/png;base64,iVBORw0KGgo=)", "image", "it is not a file of the site"),
    ("![x](javascript:alert(1))", "", ""),  # markdown-it leaves it as text
    ("![x](file:///etc/passwd)", "", ""),
    ("![x](../../../pixel.gif)", "image", "it climbs out of the site's folder"),
    ("![x](%2e%2e/%2E%2E/%2e%2e/pixel.gif)", "image", "it climbs out of the site's folder"),
    ("![x](a/../../../../pixel.gif)", "image", "it climbs out of the site's folder"),
    ("![x][ref]\n\n[ref]: https://example.com/pixel.gif", "image", "it is not a file"),
    ("[x](//example.com/x)", "link", "it leads to another host"),
    ("[x](/x)", "link", "it leads to the root of the disk or host"),
    ("[x](../../../x)", "link", "it climbs out of the site's folder"),
    ("[x][ref]\n\n[ref]: //example.com/x", "link", "it leads to another host"),
    ("[x](ftp://example.com/x)", "link", "only http, https, mailto and relative links"),
    ("[x](data:image/png;base64,iVBORw0KGgo=)", "link", "only http, https, mailto"),
    ("[![x](https://example.com/badge.svg)](https://example.com)", "image", "it is not a file"),
]


@pytest.mark.parametrize(("markdown", "kind", "reason"), REFUSED)
def test_an_outside_image_or_a_host_relative_link_fails_naming_file_line_and_url(
    tmp_path: Path, markdown: str, kind: str, reason: str
) -> None:
    html, errors = render(tmp_path, "Prose.\n\n" + markdown + "\n")
    assert "<img" not in html and " src=" not in html
    if not kind:
        assert not errors and "<a " not in html  # shown as the text it is
        return
    url = re.search(r"\]\(([^)]*(?:\([^)]*\))?)\)|\]: (\S+)", markdown)
    assert url is not None
    shown = (url[1] or url[2]).replace("\\/", "/")
    error = only_error(errors, lesson_path(tmp_path), 11)
    assert f"{kind} {shown!r}: {reason}" in error


ALLOWED = {
    "![A diagram](diagram.png)": '<img src="diagram.png" alt="A diagram" />',
    "![Up](../../static/x.png)": '<img src="../../static/x.png" alt="Up" />',
    "![Here](./diagram.png?v=1#a)": '<img src="./diagram.png?v=1#a" alt="Here" />',
    "[Docs](https://jax.readthedocs.io/)": '<a href="https://jax.readthedocs.io/">Docs</a>',
    "[Home](../../index.html)": '<a href="../../index.html">Home</a>',
    "[Mail](mailto:a@example.com)": '<a href="mailto:a@example.com">Mail</a>',
    "## Below\n\n[Below](#below)": '<a href="#below">Below</a>',  # an anchor it has
}


@pytest.mark.parametrize("markdown", ALLOWED)
def test_relative_images_and_outside_links_a_reader_clicks_are_kept(
    tmp_path: Path, markdown: str
) -> None:
    html, errors = render(tmp_path, markdown + "\n")
    assert not errors and ALLOWED[markdown] in html, (errors, html)


RAW_HTML = """\
<img src="https://example.com/a.gif" srcset="https://example.com/b.gif 2x">

<picture><source srcset="//example.com/c.webp"></picture>

<p style="background: url(https://example.com/d.png)">styled</p>

<link rel="stylesheet" href="https://example.com/e.css">

<style>@import url(https://example.com/f.css);</style>

<svg><image href="https://example.com/g.png"/></svg>

<iframe src="https://example.com/h"></iframe> <video poster="https://example.com/i.jpg"></video>

Inline <img src=//example.com/j.gif> and <span style="background-image:url('//example.com/k')">.
"""

FETCHING = {"src", "srcset", "poster", "data", "background", "xlink:href", "action", "formaction"}


class Fetches(HTMLParser):
    """Every URL an HTML or SVG file makes a browser fetch (not the links a reader clicks)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_style = tag == "style"
        for name, value in attrs:
            if value is None:
                continue
            if name == "srcset":
                self.urls += [part.split()[0] for part in value.split(",") if part.strip()]
            elif name in FETCHING or (name == "href" and tag in ("link", "image", "use")):
                self.urls.append(value)
            elif name == "style":
                self.urls += css_urls(value)

    def handle_data(self, data: str) -> None:
        if self.in_style:
            self.urls += css_urls(data)


def css_urls(text: str) -> list[str]:
    found = re.findall(r"url\(\s*['\"]?([^'\")]*)", text)
    return found + re.findall(r"@import\s+['\"]([^'\"]*)", text)


def fetches_outside(site: Path) -> list[tuple[str, str]]:
    """(file, URL) for every fetch from a site file that is not a file inside the site."""
    outside = []
    for path in sorted(site.rglob("*")):
        name = path.relative_to(site).as_posix()
        if path.suffix in (".html", ".svg"):
            parser = Fetches()
            parser.feed(path.read_text("utf-8"))
            urls = parser.urls
        elif path.suffix == ".css":
            urls = css_urls(path.read_text("utf-8"))
        else:
            continue
        root = "../" * name.count("/")
        for url in urls:
            if url.startswith(("#", "data:")) or not url:  # data: fetches nothing
                continue
            target = (site / name).parent / url.split("#")[0].split("?")[0]
            inside = str(target.resolve()).startswith(str(site.resolve()) + "/")
            if prose._scheme(url) or prose._outside(url, root) or not inside:
                outside.append((name, url))
    return outside


def test_no_site_file_fetches_from_outside_the_site(tmp_path: Path) -> None:
    """A lesson with raw HTML of every fetching kind (shown as text: raw HTML is off), a
    relative image among its data files and outside links a reader clicks: across every
    HTML, SVG and CSS file of the built site, each fetch is a file inside the site."""
    from builder.__main__ import main
    from tests.helpers import cli

    write_course(tmp_path, {"calm-01": "print(1)\n"})
    folder = tmp_path / "content" / "lessons" / "calm-01"
    lesson = folder / "lesson.md"
    text = lesson.read_text().replace("---\nProse.", "data: [diagram.png]\n---\nProse.")
    body = RAW_HTML + "\n![A diagram](diagram.png) [Docs](https://jax.readthedocs.io/)\n"
    lesson.write_text(text + "\n" + body)
    (folder / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    assert main(cli(tmp_path, "render")[3:]) == 0
    site = tmp_path / "site"
    page = (site / "l" / "s1" / "index.html").read_text("utf-8")
    assert '<img src="diagram.png" alt="A diagram" />' in page
    assert (site / "l" / "s1" / "diagram.png").is_file()
    assert "&lt;img src=&quot;https://example.com/a.gif&quot;" in page
    assert fetches_outside(site) == []


def test_the_fetch_scanner_catches_what_it_must(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "l" / "s").mkdir(parents=True)
    (site / "l" / "s" / "index.html").write_text(
        RAW_HTML + '<img src="../../ok.png"><a href="https://example.com/fine">x</a>'
    )
    (site / "style.css").write_text("body { background: url(//example.com/l.png) }")
    (site / "x.svg").write_text('<svg><image xlink:href="https://example.com/m"/></svg>')
    found = {url for _, url in fetches_outside(site)}
    assert found == {
        *[f"https://example.com/{n}" for n in ("a.gif", "b.gif", "d.png", "e.css", "f.css")],
        *[f"https://example.com/{n}" for n in ("g.png", "h", "i.jpg", "m")],
        *[f"//example.com/{n}" for n in ("c.webp", "j.gif", "k", "l.png")],
    }
