"""What a lesson's prose can ask for, and what a damaged cache or a full disk can do (issue 18).

Each family ends in an error naming the lesson file, the line and the reference (or the
file that could not be written), or in the same bytes as a clean build: never a hang, a
traceback, a gigabyte of memory, a page that fetches from outside the site, or half a file.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from builder.core.errors import RenderError
from builder.course import recording
from builder.course.model import Course, Lesson, load_course
from builder.render import bounded, prose
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
    "[Below](#below)": '<a href="#below">Below</a>',
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
    from tests.test_hostile_builds import cli

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


# -- a damaged store: ignored, with at most one line of warning ----------------------------


@pytest.fixture(scope="module")
def small_course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench.generate import generate

    root = tmp_path_factory.mktemp("course")
    generate(4, root)
    return root


@pytest.fixture
def built(small_course: Path, tmp_path: Path) -> Path:
    """A copy of a small synthetic course (recorded, nothing executes), built once."""
    shutil.copytree(small_course / "content", tmp_path / "content")
    shutil.copytree(small_course / "recordings", tmp_path / "recordings")
    assert build_cli(tmp_path) == (0, "")
    return tmp_path


def build_cli(root: Path, *extra: str) -> tuple[int, str]:
    """`python -m builder render` in this process: the exit code, and what it said on
    stderr besides the closing "Built ..." line."""
    from builder.__main__ import main
    from tests.test_hostile_builds import cli

    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = main([*cli(root, "render")[3:], *extra])
    said = stderr.getvalue().splitlines(keepends=True)
    return code, "".join(line for line in said if not line.startswith("Built "))


def site_files(site: Path) -> dict[str, bytes]:
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in sorted(site.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def clean_site(small_course: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The site a build from nothing makes of the small course."""
    clean = tmp_path_factory.mktemp("clean")
    for name in ("content", "recordings"):  # copies: the course is read through no link
        shutil.copytree(small_course / name, clean / name)
    assert build_cli(clean)[0] == 0
    return site_files(clean / "site")


def _truncate(store: Path) -> None:
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])


def _garble_middle(store: Path) -> None:
    data = bytearray(store.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes((b * 37 + 11) % 256 for b in range(4096))
    store.write_bytes(bytes(data))


def _garble_header(store: Path) -> None:
    data = bytearray(store.read_bytes())
    data[:100] = b"\xff" * 100
    store.write_bytes(bytes(data))


def _folder(store: Path) -> None:
    store.unlink()
    store.mkdir()
    (store / "something").write_text("a user's file")


def _wrong_layout(store: Path) -> None:
    store.unlink()
    db = sqlite3.connect(store)
    db.execute("CREATE TABLE artifacts (key TEXT PRIMARY KEY, value TEXT, extra INTEGER)")
    db.execute("CREATE TABLE manifest (name TEXT)")
    db.execute("INSERT INTO artifacts VALUES ('k', 'v', 1)")
    db.commit()
    db.close()


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(store: Path) -> None:
        db = sqlite3.connect(store)
        db.execute(statement)
        db.commit()
        db.close()

    return damage


def _flip_bits(store: Path) -> None:
    """Damage that leaves every row readable: one letter of each page and chart changed."""
    db = sqlite3.connect(store)
    for key, data in db.execute("SELECT key, data FROM artifacts").fetchall():
        flipped = data.replace(b"</html>", b"</htmX>").replace(b"</svg>", b"</svX>")
        db.execute("UPDATE artifacts SET data = ? WHERE key = ?", (flipped, key))
    db.commit()
    db.close()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "garbled in the middle": _garble_middle,
    "garbled header": _garble_header,
    "empty file": lambda store: store.write_bytes(b""),
    "not a database": lambda store: store.write_bytes(b"<html>not sqlite</html>" * 500),
    "a folder": _folder,
    "wrong table layout": _wrong_layout,
    "tables dropped": _sql("DROP TABLE artifacts"),
    "every blob garbled": _sql("UPDATE artifacts SET data = randomblob(length(data))"),
    "every blob cut short": _sql("UPDATE artifacts SET data = substr(data, 1, length(data)/2)"),
    "blobs of the wrong type": _sql(
        "UPDATE artifacts SET data = CASE abs(random()) % 3 WHEN 0 THEN NULL "
        "WHEN 1 THEN 'text' ELSE 42 END"
    ),
    "a bit flipped in every page and chart": _flip_bits,
    "manifest garbled": _sql("UPDATE manifest SET data = randomblob(200)"),
    "manifest of the wrong type": _sql(
        "UPDATE manifest SET data = X'80059505000000000000008c01789400942e'"  # pickle of ('x',)
    ),
    "manifest a NULL": _sql("UPDATE manifest SET data = NULL"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_store_is_ignored_and_the_site_is_as_from_nothing(
    built: Path, clean_site: dict[str, bytes], damage: str
) -> None:
    """The store is damaged, and the site lost pages (so the build must take them from the
    store or make them): the build succeeds with at most one line of warning, and the site
    equals a build from nothing, and so does the one after it."""
    store = built / ".cache" / "store.sqlite"
    DAMAGE[damage](store)
    for page in ("index.html", "l/sa01-002/index.html", "l/sa01-002/panel-1.svg"):
        (built / "site" / page).unlink()
    code, err = build_cli(built)
    assert code == 0, err
    assert len(err.splitlines()) <= 1 and "Traceback" not in err, err
    assert err == "" or str(store) in err, err
    assert site_files(built / "site") == clean_site
    code, err = build_cli(built)
    assert code == 0 and site_files(built / "site") == clean_site
    if damage == "a folder":
        assert "is not a usable database" in err and "building without the cache" in err
        assert (store / "something").read_text() == "a user's file", "never deleted"


# -- a full, read-only or size-limited disk: the file named, nothing half-written ----------


@contextlib.contextmanager
def small_disk(path: Path, size: str = "32m") -> Iterator[Path]:
    """A tmpfs of `size` at `path` (root only: elsewhere the test is skipped, and the
    size-limit test below covers the same code path)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)])
    if mounted.returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def fill(disk: Path) -> None:
    """Leave no free block on `disk`."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError as error:
        assert error.errno == errno.ENOSPC
    finally:
        os.close(fd)


def read_only_mount(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)


def restore(disk: Path) -> None:
    subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    (disk / "filler").unlink(missing_ok=True)


def no_temporary_files(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert not left, f"half-written files left behind: {left}"


def rename_every_lesson(root: Path) -> None:
    """Every page shows every title in its navigation: all of them change."""
    for lesson in sorted((root / "content" / "lessons").glob("*/lesson.md")):
        lesson.write_text(lesson.read_text().replace("title: Lesson", "title: Renamed lesson"))


@pytest.fixture
def three(tmp_path: Path) -> Path:
    write_course(tmp_path, {f"calm-0{n}": f"print({n})\n" for n in (1, 2, 3)})
    return tmp_path


FAILURES = {
    "full": (fill, "No space left on device", "-> free space on that disk, then run"),
    "read-only": (read_only_mount, "Read-only file system", "-> that file system is mounted"),
}


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_site_names_the_file_and_keeps_the_site(
    three: Path, failure: str
) -> None:
    """The issue's "cannot write a file: No space left on device": the file is named, with
    what to do; no temporary file is left; the previous site stays byte for byte."""
    damage, reason, remedy = FAILURES[failure]
    with small_disk(three / "disk") as disk:
        site = disk / "site"
        assert build_cli(three, "--out", str(site)) == (0, "")
        before = site_files(site)
        rename_every_lesson(three)
        damage(disk)
        code, err = build_cli(three, "--out", str(site))
        assert code == 1 and "Traceback" not in err, err
        assert re.match(rf"error: cannot write {re.escape(str(site))}/\S+: {reason}; ", err), err
        assert "the previous site is unchanged" in err and remedy in err, err
        no_temporary_files(site)
        marker = ".coursebuilder-site"  # it lists the files this build may leave behind
        after = site_files(site)
        assert {k: v for k, v in after.items() if k != marker} == {
            k: v for k, v in before.items() if k != marker
        }
        restore(disk)
        assert build_cli(three, "--out", str(site)) == (0, "")
        assert b"Renamed lesson 2" in (site / "l" / "s2" / "index.html").read_bytes()


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_cache(three: Path, failure: str) -> None:
    """A full disk under the store leaves the build without a cache (one warning naming
    it) and the site right; a read-only one stops the build before anything, naming the
    lock file."""
    damage, reason, remedy = FAILURES[failure]
    with small_disk(three / "disk") as disk:
        cache = disk / ".cache"
        assert build_cli(three, "--cache", str(cache)) == (0, "")
        before = site_files(three / "site")
        rename_every_lesson(three)
        damage(disk)
        code, err = build_cli(three, "--cache", str(cache))
        no_temporary_files(three / "site")
        if failure == "full":
            assert code == 0 and len(err.splitlines()) == 1, err
            assert err.startswith(f"warning: the build cache {cache / 'store.sqlite'} ")
            assert b"Renamed lesson 2" in (three / "site" / "l" / "s2" / "index.html").read_bytes()
        else:
            assert code == 1 and err.startswith(
                f"error: cannot write {cache / 'build.lock'}: {reason}; nothing was built\n"
            ), err
            assert remedy in err and site_files(three / "site") == before
        restore(disk)
        assert build_cli(three, "--cache", str(cache)) == (0, "")


@pytest.mark.parametrize("failure", FAILURES)
def test_a_full_or_read_only_disk_under_the_recordings(tmp_path: Path, failure: str) -> None:
    """A full disk: the example runs and its recording cannot be saved, named with the
    reason; read-only: nothing runs. Either way the old recording stays byte for byte."""
    from builder.build.pipeline import build
    from builder.core.errors import BuildError
    from builder.core.observe import Paths
    from tests.conftest import canned_run, copy_course

    damage, reason, _ = FAILURES[failure]
    with small_disk(tmp_path / "disk") as disk:
        course = copy_course(tmp_path, broken=False)
        paths = Paths(course.content, disk / "recordings", course.out, course.cache)
        build(paths, execute=True, jobs=2, runner=canned_run, log=io.StringIO())
        before = site_files(paths.recordings)
        example = next(paths.content.glob("lessons/*/example.py"))
        example.write_text(example.read_text() + "\n# changed\n")
        damage(disk)
        with pytest.raises(BuildError) as caught:
            build(paths, execute=True, jobs=2, runner=canned_run, log=io.StringIO())
        said = str(caught.value)
        lesson = example.parent.name
        if failure == "full":
            assert f"{paths.recordings / lesson}.json could not be written: {reason}" in said
        else:
            assert said.startswith(f"cannot write {paths.recordings}: {reason}; nothing was ")
        no_temporary_files(paths.recordings)
        assert site_files(paths.recordings) == before
        restore(disk)


def test_a_file_size_limit_names_the_file_without_root(three: Path) -> None:
    """RLIMIT_FSIZE (ulimit -f) makes a write fail with EFBIG, as a full disk fails it with
    ENOSPC, on any machine: the real CLI in a subprocess, the file it could not write named
    (a temporary one, here). One page is made larger than the limit; every other file
    (Pagefind's too) stays under it."""
    import resource

    from tests.test_hostile_builds import cli

    lesson = three / "content" / "lessons" / "calm-02" / "lesson.md"
    lesson.write_text(lesson.read_text() + "\n\n".join(["Long prose. " * 3750] * 5))
    assert build_cli(three) == (0, "")
    site = three / "site"
    before = site_files(site)
    others = max(len(data) for name, data in before.items() if name != "l/s2/index.html")
    assert len(before["l/s2/index.html"]) > LIMIT > others
    rename_every_lesson(three)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    args = cli(three, "render")
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=limited, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    # Pagefind's scratch copy of the page is the first write over the limit
    copy = r"/\S+/coursebuilder-search-\w+/pages/l/s2/index\.html"
    said = rf"^error: cannot write {copy}: File too large; the search index was not built"
    assert re.search(said, done.stderr, re.M), done.stderr
    assert "-> raise the file size limit (ulimit -f), then run" in done.stderr
    no_temporary_files(site)
    marker = ".coursebuilder-site"
    assert {k: v for k, v in site_files(site).items() if k != marker} == {
        k: v for k, v in before.items() if k != marker
    }


LIMIT = 200 * 1024  # bytes: over every file of the site but one, and what Pagefind writes


def test_an_unwritable_cache_folder_costs_only_time(three: Path) -> None:
    """EACCES (EPERM for root: chattr +i): the store cannot be written or replaced; the
    build runs without it, says so in one line, and the site is right."""
    from tests.test_hostile_builds import read_only

    assert build_cli(three) == (0, "")
    rename_every_lesson(three)
    with read_only(three / ".cache"):
        code, err = build_cli(three)
    assert code == 0 and len(err.splitlines()) == 1, err
    assert err.startswith(f"warning: the build cache {three / '.cache' / 'store.sqlite'} ")
    assert b"Renamed lesson 2" in (three / "site" / "l" / "s2" / "index.html").read_bytes()
    assert build_cli(three) == (0, "")


@pytest.mark.parametrize(
    ("number", "remedy"),
    [
        (errno.ENOSPC, "free space on that disk"),
        (errno.EDQUOT, "free space within your disk quota, or ask for a larger one"),
        (errno.EFBIG, "raise the file size limit (ulimit -f)"),
        (errno.EROFS, "that file system is mounted read-only: pass a folder on a writable one"),
        (errno.EACCES, "make the folder writable"),
        (errno.EPERM, "make the folder writable (chattr -i if it is immutable)"),
        (errno.EIO, "make the folder writable (and check the disk is not full)"),
    ],
)
def test_each_write_failure_says_what_to_do(number: int, remedy: str) -> None:
    """EDQUOT cannot be made here (no quota on tmpfs, and root is exempt): its message is
    checked as the others are, on the one function that words them all."""
    from builder.core.fsutil import cannot_write

    error = cannot_write(OSError(number, os.strerror(number), "/site/x.html"), "kept")
    assert str(error) == (
        f"cannot write /site/x.html: {os.strerror(number)}; kept\n"
        f"  -> {remedy}, then run the command again"
    )
