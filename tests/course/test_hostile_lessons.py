"""Lessons with mistakes or hostile content: each is named, nothing reaches a page unescaped.

test_course.py covers single front-matter fields; here: the rest of the catalogue, the
messages through the CLI, and a Hypothesis property over everything an author or a
recording can put on a page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder.__main__ import main
from builder.core.errors import BuildError
from builder.course import recording
from builder.course.load import load_course
from builder.course.model import Course, CourseMeta, FrontMatter, GlossaryTerm, Lesson
from builder.course.status import LessonStatus, State
from builder.course.validation import validate, validate_json
from builder.render import charts, prose
from tests.helpers import REFERENCE, cli, lesson_md, rendered, set_front, write_course


def cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str = "check") -> str:
    capsys.readouterr()
    assert main(cli(tmp_path, command)[3:]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


@pytest.fixture
def two(tmp_path: Path) -> Path:
    write_course(tmp_path, {"calm-01": "print(1)\n", "calm-02": "print(2)\n"})
    return tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has no front matter: the file must start with a '---' line"),
        ("Just prose.\n", "has no front matter"),
        ("---\nid: calm-01\n", "front matter is not closed by a '---' line"),
        ("---\n- id\n- slug\n---\n", "front matter must be a YAML mapping of fields"),
        ("---\nid: calm-01\n  slug: [\n---\n", "YAML error at line"),
        (
            "---\nid: calm-01\nslug: s1\ntittle: T\narc: hostile\norder: 1\nsummary: S\n---\n",
            "front matter field 'title': Field required; front matter field 'tittle': Extra "
            "inputs are not permitted",
        ),
    ],
)
def test_missing_or_mistyped_front_matter_is_named(
    two: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    lesson_md(two).write_text(text)
    err = cli_error(two, capsys)
    assert err.startswith(f"error: {lesson_md(two)}: ")
    assert message in err


def test_a_slug_that_is_another_lessons_id_is_a_duplicate(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    set_front(two, "slug", "calm-01", lesson_id="calm-02")
    err = cli_error(two, capsys)
    assert f"{lesson_md(two, 'calm-02')}: slug 'calm-01' is already the slug or id of" in err
    assert "-> give each lesson its own slug" in err


def test_two_folders_cannot_share_an_id(two: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_front(two, "id", "calm-01", lesson_id="calm-02")
    err = cli_error(two, capsys)
    assert "front matter id 'calm-01' does not match its folder name 'calm-02'" in err
    assert "-> rename the folder or the id so they agree" in err


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("slug", "../../etc"),
        ("slug", "a/b"),
        ("slug", "a..b"),
        ("slug", '"%2e%2e"'),
        ("slug", "a?b"),
        ("slug", "a#b"),
        ("slug", "caf\u00e9"),
        ("slug", "Upper"),
        ("slug", '"a b"'),
        ("slug", "x" * 65),
        ("id", "../calm-01"),
        ("id", "calm/01"),
        ("id", "calm..01"),
        ("id", "calm-01%00"),
    ],
)
def test_ids_and_slugs_cannot_escape_their_folder_or_the_url(
    two: Path, capsys: pytest.CaptureFixture[str], field: str, value: str
) -> None:
    set_front(two, field, value)
    err = cli_error(two, capsys)
    assert f"{lesson_md(two)}: front matter field '{field}': String should " in err


def test_a_glossary_term_taught_in_an_unknown_lesson(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    glossary = two / "content" / "glossary.yml"
    glossary.write_text("- id: jit\n  term: jit\n  definition: Compile.\n  taught_in: calm-09\n")
    err = cli_error(two, capsys)
    assert f"{glossary}: term 'jit' is taught_in 'calm-09', which is not a lesson id" in err
    assert "-> set taught_in to the id of the lesson that teaches it" in err


@pytest.mark.parametrize("name", ["example.py", "lesson.md", "../../course.yml"])
def test_non_utf8_source_files_are_named(
    two: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = (lesson_md(two).parent / name).resolve()
    path.write_bytes(path.read_bytes() + b"# caf\xe9\n")
    err = cli_error(two, capsys)
    assert f"{path}: is not UTF-8 (invalid byte at offset" in err
    assert "-> save the file as UTF-8" in err


def test_an_empty_example_is_named(two: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = lesson_md(two).parent / "example.py"
    example.write_text("\n  \n")
    err = cli_error(two, capsys)
    assert f"{example}: is empty: every lesson needs a runnable example" in err


def body(tmp_path: Path, text: str) -> None:
    path = lesson_md(tmp_path)
    head, _, _ = path.read_text().rpartition("---\n")
    path.write_text(head + "---\n" + text)


@pytest.mark.parametrize(
    ("markdown", "message"),
    [
        ("See [next](lesson:nowhere).\n", "link to lesson 'nowhere': no lesson has"),
        ("[x](ftp://host/file)\n", "link 'ftp://host/file': only http, https, mailto"),
        ("[x](irc://host/chan)\n", "only http, https, mailto and relative links"),
        ("A [[nonsense]] term.\n", "[[nonsense]] is not a glossary term"),
        ("{{ value line=1 }} {{ example lines=1 }}\n", "'example' must stand alone"),
    ],
)
def test_broken_references_and_unsafe_links_fail_the_render_naming_file_and_line(
    two: Path, capsys: pytest.CaptureFixture[str], markdown: str, message: str
) -> None:
    body(two, "Prose.\n\n" + markdown)
    number = lesson_md(two).read_text().splitlines().index(markdown.strip()) + 1
    err = cli_error(two, capsys, "render")
    assert f"{lesson_md(two)}: line {number}: " in err
    assert message in err
    assert not (two / "site").exists(), "nothing is written when a page is broken"


def test_a_reference_to_a_recorded_value_that_does_not_exist(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    lesson = course.lessons[0]
    rec = recording.loads(REFERENCE.read_bytes(), REFERENCE)
    cases = {
        '{{ value panel=9 label="x" }}': "the recording has 2 panel(s)",
        '{{ value panel=2 label="nope" }}': "panel 2 has labels",
        '{{ value output="no such text" }}': "the pattern matches nothing in the recorded output",
        "{{ value line=999 }}": "the recorded output has",
        "{{ value }}": 'say panel=N label=..., output="regex" or line=N',
        '{{ value panel=1 label="ordinary" fmt="q" }}': "cannot format",
    }
    for reference, message in cases.items():
        changed = replace(lesson, body=f"It was {reference}.\n")
        _, errors = prose.render_prose(changed, course, rec, root="../../")
        assert len(errors) == 1, (reference, errors)
        assert str(errors[0]).startswith(f"{lesson.lesson_path}: line {lesson.body_line}: ")
        assert reference in str(errors[0]) and message in str(errors[0])


def test_script_and_data_links_are_left_as_text(tmp_path: Path) -> None:
    """markdown-it refuses javascript:, vbscript:, file: and data: links: they stay text."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    hostile = "[a](javascript:alert(1)) [b](JaVaScRiPt:x) [c](data:text/html,hi) [d](vbscript:x)"
    changed = replace(course.lessons[0], body=hostile)
    rendered, _ = prose.render_prose(changed, course, None, root="../../")
    check_html(rendered.html)
    assert "<a " not in rendered.html and "[a](javascript:alert(1))" in rendered.html


def test_raw_html_and_event_handlers_in_markdown_are_shown_as_text(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    hostile = (
        "<script>alert(1)</script>\n\n"
        '<img src=x onerror="alert(1)">\n\n'
        "Inline <b onmouseover=alert(1)>bold</b> and <a href='javascript:x'>a</a>.\n\n"
        "<javascript:alert(1)>\n"
    )
    changed = replace(course.lessons[0], body=hostile)
    rendered, _ = prose.render_prose(changed, course, None, root="../../")
    check_html(rendered.html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered.html
    assert "onerror=" not in rendered.html.replace("&quot;", '"').split("&lt;img")[0]


# -- nothing outside an allow-list reaches a page ---------------------------------------

ELEMENTS = {
    *[
        "a",
        "abbr",
        "article",
        "aside",
        "b",
        "blockquote",
        "body",
        "br",
        "button",
        "caption",
        "code",
        "data",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "head",
        "header",
        "hr",
        "html",
        "i",
        "img",
        "input",
        "kbd",
        "label",
        "li",
        "link",
        "main",
        "mark",
        "meta",
        "nav",
        "ol",
        "p",
        "picture",
        "pre",
        "s",
        "script",
        "section",
        "small",
        "source",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "template",
        "tfoot",
        "th",
        "thead",
        "time",
        "title",
        "tr",
        "ul",
    ]
}
ATTRIBUTES = {
    *[
        "action",  # the header's search form
        "alt",
        "autocomplete",
        "charset",
        "class",
        "colspan",
        "content",
        "datetime",
        "decoding",
        "defer",
        "download",
        "for",
        "height",
        "hidden",
        "href",
        "id",
        "lang",
        "loading",
        "media",
        "name",
        "placeholder",
        "property",  # OpenGraph's <meta property="og:...">
        "rel",
        "role",
        "rowspan",
        "scope",
        "spellcheck",
        "src",
        "srcset",
        "start",
        "tabindex",
        "title",
        "type",
        "value",
        "width",
    ]
}
URL_ATTRIBUTES = {"href", "src", "srcset", "action"}
SAFE_URL = re.compile(r"^(?:https?:|mailto:|[^:]*$|[^:]*[/?#])", re.IGNORECASE)
SAFE_DATA = re.compile(r"^data:(?:,|image/(?:png|gif|jpeg|webp)[;,])")
SAFE_STYLE = re.compile(r"^text-align:\s*(?:left|right|center);?$")


# The builder's own callout icons (builder/render/callouts.py): these shapes, inside an
# <svg class="admonition-icon">, and nowhere else.
ICON = {"svg": {"class", "viewbox", "width", "height", "aria-hidden"}, "path": {"d"}}
ICON |= {"circle": {"cx", "cy", "r"}}


class AllowList(HTMLParser):
    """Collects every element, attribute and URL outside the allow-list."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []
        self.in_script = False
        self.in_icon = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg" and ("class", "admonition-icon") in attrs:
            self.in_icon = True
        if self.in_icon and tag in ICON:
            self.bad += [f"attribute {n} on <{tag}>" for n, _ in attrs if n not in ICON[tag]]
            return
        if tag not in ELEMENTS:
            self.bad.append(f"element <{tag}>")
        for name, value in attrs:
            self._attribute(tag, name, value or "")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            if not re.fullmatch(r"(?:\.\./)*static/[a-z-]+\.js", src):
                self.bad.append(f"script src={src!r}")
            self.in_script = True

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False
        self.in_icon = self.in_icon and tag != "svg"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # <path .../> inside an icon: not its end

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.bad.append(f"inline script {data[:40]!r}")

    def _attribute(self, tag: str, name: str, value: str) -> None:
        if name == "style":
            if not SAFE_STYLE.match(value):
                self.bad.append(f"style={value!r}")
        elif not (name in ATTRIBUTES or name.startswith(("aria-", "data-"))):
            self.bad.append(f"attribute {name} on <{tag}>")
        elif name in URL_ATTRIBUTES:
            url = re.sub(r"[\x00-\x20]", "", value)
            if not (SAFE_URL.match(url) and not url.lower().startswith("data:")) and not (
                SAFE_DATA.match(url)
            ):
                self.bad.append(f"{name}={value!r} on <{tag}>")


def check_html(text: str) -> None:
    parser = AllowList()
    parser.feed(text)
    parser.close()
    assert parser.bad == [], parser.bad


FRAGMENTS = [
    "<script>alert(1)</script>",
    "</pre><script>",
    "<img src=x onerror=alert(1)>",
    '" onmouseover="alert(1)',
    "' onfocus='x",
    "javascript:alert(1)",
    "JaVaScRiPt:",
    "java\tscript:",
    "vbscript:x",
    "data:text/html;base64,PHNjcmlwdD4=",
    "&#106;avascript:",
    "[x](",
    "](javascript:alert(1))",
    "![i](",
    "<javascript:alert(1)>",
    "<http://a.b/c>",
    '[x](lesson:s1#" onclick="y)',
    "[[",
    "]]",
    "|",
    "{{ value line=1 }}",
    "{{ output }}",
    "{{ panel 1 }}",
    '!!! note "',
    "```",
    "`",
    "\n",
    "\n\n",
    "    ",
    "# ",
    "| a | b |\n|:-|-:|\n",
    "[^1]",
    "\x00",
    "\x1b[31m",
    "<style>",
    "<!--",
    "<![CDATA[",
    "<svg onload=x>",
    "<iframe>",
    "&lt;",
    "\u2028",
]
hostile_text = st.lists(
    st.sampled_from(FRAGMENTS) | st.text(max_size=6), min_size=1, max_size=12
).map("".join)
line = hostile_text.map(lambda s: s.strip()[:300] or "x")
label = hostile_text.map(lambda s: s[:200] if s.strip() else "x")


def hostile_course(tmp_path: Path, title: str, summary: str, body: str, term: str) -> Course:
    folder = tmp_path / "lessons" / "calm-01"
    meta = FrontMatter(
        id="calm-01", slug="s1", title=title, arc="hostile", order=1, summary=summary
    )
    lesson = Lesson(meta=meta, folder=folder, body=body, body_line=8, source=b"print(1)\n")
    course_meta = validate(
        CourseMeta,
        {
            "title": title,
            "summary": summary,
            "arcs": [{"id": "hostile", "title": title, "summary": summary}],
        },
    )
    glossary = GlossaryTerm(id="word", term=term, definition=summary, taught_in="calm-01")
    return Course(root=tmp_path, meta=course_meta, lessons=(lesson,), glossary=(glossary,))


def hostile_recording(stdout: str, title: str, labels: list[str], ylabel: str) -> Any:
    raw = json.loads(REFERENCE.read_bytes())
    raw["lessonId"] = "calm-01"
    raw["stdout"] = stdout
    raw["data"]["panels"] = [
        {
            "kind": "bar",
            "title": title,
            "labels": labels,
            "ylabel": ylabel,
            "series": [{"label": labels[0], "y": [1.5] * len(labels)}],
        }
    ]
    return validate_json(recording.Recording, json.dumps(raw))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    stdout=hostile_text,
    title=line,
    summary=line,
    markdown=hostile_text,
    labels=st.lists(label, min_size=1, max_size=3, unique=True),
    panel_title=label,
    term=line,
)
def test_nothing_recorded_or_authored_reaches_a_page_outside_the_allow_list(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stdout: str,
    title: str,
    summary: str,
    markdown: str,
    labels: list[str],
    panel_title: str,
    term: str,
) -> None:
    svgs = dict.fromkeys(charts.THEMES, b"<svg/>")
    monkeypatch.setattr(charts, "sized_svgs", lambda panel: dict.fromkeys(charts.SIZES, svgs))
    course = hostile_course(tmp_path, title, summary, markdown + "\n\n{{ output }}\n", term)
    rec = hostile_recording(stdout, panel_title, labels, panel_title)
    status = LessonStatus("calm-01", State.FRESH, "", tmp_path / "calm-01.json", rec)
    lesson = course.lessons[0]
    body, _ = prose.render_prose(lesson, course, rec, root="../../")
    check_html(body.html)
    try:
        files = rendered(course, [status], tmp_path / "cache")
    except BuildError:
        return  # a broken page stops the build: nothing is written
    for name, data in files.items():
        if name.endswith(".html"):
            check_html(_without_404_script(name, data.decode()))


def _without_404_script(name: str, text: str) -> str:
    """The 404 page finds its site root with a script of its own (builder/render/templates/404.html), which
    the allow-list would refuse: checked apart, nothing authored or recorded in it."""
    if name != "404.html":
        return text
    start = text.index("<script>\n// A host serves this page")
    end = text.index("</noscript>", start) + len("</noscript>")
    own = text[start:end]
    assert "alert" not in own and "evil" not in own and "onerror" not in own.lower(), own
    return text[:start] + text[end:]


@pytest.mark.parametrize(
    "html",
    [
        "<script>alert(1)</script>",
        '<script src="https://evil/x.js"></script>',
        '<img src="x" onerror="alert(1)">',
        '<a href="javascript:alert(1)">x</a>',
        '<a href=" JaVaScRiPt:x">x</a>',
        '<a href="data:text/html,x">x</a>',
        '<p style="background:url(x)">x</p>',
        "<iframe></iframe>",
        "<svg onload=x>",
    ],
)
def test_the_allow_list_itself_catches_what_it_must(html: str) -> None:
    with pytest.raises(AssertionError):
        check_html(html)


# -- issue 17: size limits, linear time, values that cannot be formatted -------------------


def test_a_lesson_over_the_size_limit_is_refused_before_it_is_read_whole(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = lesson_md(two)
    path.write_text(path.read_text() + "{{" * 200_000)
    err = cli_error(two, capsys)
    size = path.stat().st_size / 1024
    assert f"error: {path}: is {size:.1f} KiB, over the 256 KiB limit" in err
    assert "-> split it into several lessons" in err


def render_seconds(lesson: Lesson, course: Course, text: str) -> float:
    """The least CPU time of five renders of `text` as the lesson's body: CPU time, not the
    wall clock, since the host is shared (a render takes milliseconds, and one wait for a
    core would look like a quadratic)."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        prose.render_prose(replace(lesson, body=text), course, None, root="../../")
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("mark", ["{{", "[[", "[", "`", "!!! ", "{{ value", "[[a|", "]]"])
def test_rendering_grows_linearly_with_a_run_of_unclosed_marks(tmp_path: Path, mark: str) -> None:
    """A run four times as long takes about four times as long, not sixteen: each unclosed
    `{{` or `[[` used to scan to the end of its line (a 400 KB line took minutes). Growth is
    compared, never absolute time; the best of three tries absorbs a busy host."""
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    lesson = course.lessons[0]
    ratios = []
    for _ in range(3):
        short = render_seconds(lesson, course, mark * (6000 // len(mark)))
        long = render_seconds(lesson, course, mark * (24000 // len(mark)))
        ratios.append(long / short)
        if ratios[-1] < 6:
            break
    assert min(ratios) < 6, f"4x the text took {min(ratios):.1f}x the time: not linear"


def test_a_paragraph_over_the_limit_is_refused_quickly_naming_its_line(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    lesson = course.lessons[0]
    text = "Fine.\n\n" + "}}" * (prose.MAX_PARAGRAPH // 2 + 1) + "\n\nFine again.\n"
    started = time.perf_counter()
    _, errors = prose.render_prose(replace(lesson, body=text), course, None, root="../../")
    assert time.perf_counter() - started < 5
    assert [str(e) for e in errors] == [
        f"{lesson.lesson_path}: line {lesson.body_line + 2}: a paragraph of 64 KiB is over the "
        "64 KiB limit: break it up with blank lines"
    ]


def test_a_value_that_cannot_be_formatted_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    raw = json.loads(REFERENCE.read_bytes())
    raw["lessonId"], raw["stdout"] = "calm-01", "speed: inf\n"
    rec = recording.loads(json.dumps(raw).encode(), "calm-01.json")
    reference = '{{ value output="speed: (\\S+)" fmt="d" }}'
    changed = replace(course.lessons[0], body=f"It ran at {reference}.\n")
    _, errors = prose.render_prose(changed, course, rec, root="../../")
    assert len(errors) == 1 and "cannot format 'inf' with 'd'" in str(errors[0])


# -- issue 17: one name, however Unicode spells it; one id, once --------------------------

CAFE_NFC, CAFE_NFD = "caf\u00e9", "cafe\u0301"


def test_two_glossary_terms_equal_in_unicode_are_one_term_defined_twice(
    two: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    glossary = two / "content" / "glossary.yml"
    glossary.write_text(
        f"- id: cafe-a\n  term: {CAFE_NFC}\n  definition: One.\n  taught_in: calm-01\n"
        f"- id: cafe-b\n  term: {CAFE_NFD.upper()}\n  definition: Two.\n  taught_in: calm-02\n",
        encoding="utf-8",
    )
    err = cli_error(two, capsys)
    assert f"{glossary}: term '{CAFE_NFC}' is defined twice" in err


def test_a_term_is_found_however_the_prose_spells_it_in_unicode(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    glossary = tmp_path / "content" / "glossary.yml"
    glossary.write_text(
        f"- id: cafe\n  term: {CAFE_NFC}\n  definition: Coffee.\n  taught_in: calm-01\n",
        encoding="utf-8",
    )
    course = load_course(tmp_path / "content")
    changed = replace(course.lessons[0], body=f"A [[{CAFE_NFD}]] and a [[{CAFE_NFC.upper()}]].\n")
    rendered, errors = prose.render_prose(changed, course, None, root="../../")
    assert errors == [] and rendered.terms == ["cafe", "cafe"]


def test_a_duplicate_arc_id_is_an_error(two: Path, capsys: pytest.CaptureFixture[str]) -> None:
    course_yml = two / "content" / "course.yml"
    arc = "  - id: hostile\n    title: Again\n    summary: The same id twice.\n"
    course_yml.write_text(course_yml.read_text() + arc)
    err = cli_error(two, capsys)
    assert f"{course_yml}: arc id 'hostile' is defined 2 times" in err
    assert "-> give each arc its own id" in err


def test_a_panel_label_is_found_however_the_prose_spells_it_in_unicode(tmp_path: Path) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    course = load_course(tmp_path / "content")
    raw = json.loads(REFERENCE.read_bytes())
    raw["lessonId"] = "calm-01"
    raw["data"]["panels"][0]["labels"][0] = CAFE_NFC
    rec = recording.loads(json.dumps(raw).encode(), "calm-01.json")
    reference = f'{{{{ value panel=1 label="{CAFE_NFD}" }}}}'
    changed = replace(course.lessons[0], body=f"It took {reference} bytes.\n")
    rendered, errors = prose.render_prose(changed, course, rec, root="../../")
    expected = raw["data"]["panels"][0]["series"][0]["y"][0]
    assert errors == [] and f">{expected}</data>" in rendered.html


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("content/lessons/calm-01/lesson.md", "is a FIFO (named pipe), not a regular file"),
        ("content/lessons/calm-01/example.py", "is a FIFO (named pipe), not a regular file"),
        ("content/course.yml", "is a FIFO (named pipe), not a regular file"),
        ("content/glossary.yml", "is a FIFO (named pipe), not a regular file"),
        (
            "content/lessons/calm-01/numbers.txt",
            "declares data file 'numbers.txt', which is a FIFO",
        ),
    ],
)
def test_a_fifo_where_a_content_file_should_be_is_named_without_hanging(
    two: Path, where: str, message: str
) -> None:
    path = two / where
    set_front(two, "summary", "Number 1.\ndata: [numbers.txt]")
    (path.parent / "numbers.txt").write_text("1 2 3\n")
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    done = subprocess.run(cli(two, "check"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert message in done.stderr


@pytest.mark.parametrize(
    "where", ["lessons/basics-01/lesson.md", "course.yml", "glossary.yml"], ids=str
)
def test_yaml_nesting_100000_deep_is_named_not_a_crash(course_copy: Any, where: str) -> None:
    """50,000 nested flow lists crashed the interpreter in libyaml's loader (SIGSEGV: no
    message, CI's `check` just died); in a subprocess, so that the old crash fails the test
    instead of ending pytest."""
    deep = "[" * 100_000 + "]" * 100_000
    after, added = {
        "lessons/basics-01/lesson.md": ("\nslug:", f"\nextra: {deep}\nslug:"),
        "course.yml": ("\narcs:", f"\nextra: {deep}\narcs:"),
        "glossary.yml": ("\n- id: primitive", f"\n- extra: {deep}\n  id: primitive"),
    }[where]
    path = course_copy.content / where
    text = path.read_text()
    assert after in text
    path.write_text(text.replace(after, added, 1))
    done = subprocess.run(
        cli(course_copy.content.parent, "check"), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stderr[-500:]
    assert f"{path}: nests lists and mappings 100000 deep, over the 64 limit" in done.stderr
