"""Every course string escaped for where it goes, control characters refused at load
(issue 56, item 8): `site_url` with `)![pixel](https://...)` put an external image into
every example.ipynb, an `env:` value with backticks raw HTML; NUL, BEL or ESC in
`site_url`, `source_url`, the course title, a tab or callout title were accepted and made
sitemap.xml ill-formed XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from builder.core.errors import BuildError
from builder.course.load import load_course
from builder.render import notebook, prose, sitemap
from tests.helpers import COURSE_YML, lesson_md, write_course

CONTROLS = ["\x00", "\x07", "\x1b", "\x9b"]


def _course(tmp_path: Path) -> Path:
    write_course(tmp_path, {"calm-01": "print(1)\n"})
    return tmp_path / "content"


def _yaml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar: "\u0007" is BEL


FIELDS = [  # (file, how the field is written, the field as the error names it)
    (
        "course.yml",
        lambda v: COURSE_YML.replace("title: ", f"title: {v} #", 1),
        "course field 'title'",
    ),
    ("course.yml", lambda v: COURSE_YML + f"site_url: {v}\n", "course field 'site_url'"),
    ("course.yml", lambda v: COURSE_YML + f"source_url: {v}\n", "course field 'source_url'"),
    ("lesson.md", lambda v: f"title: {v}\n", "front matter field 'title'"),
    ("lesson.md", lambda v: f"summary: {v}\n", "front matter field 'summary'"),
    ("lesson.md", lambda v: f"env:\n  X: {v}\n", "front matter field 'env.X'"),
]
VALUES = {"title": "A{}b", "site_url": "https://x.org/{}/", "source_url": "https://x.org/{}e"}


@pytest.mark.parametrize("control", CONTROLS, ids=ascii)
@pytest.mark.parametrize(("file", "write", "field"), FIELDS, ids=[f[2] for f in FIELDS])
def test_a_control_character_is_refused_at_load_naming_the_file_and_field(
    tmp_path: Path, file: str, write: object, field: str, control: str
) -> None:
    content = _course(tmp_path)
    name = field.split("'")[1].split(".")[0]
    value = _yaml_string(VALUES.get(name, "A{}b").format(control))
    if file == "course.yml":
        (content / "course.yml").write_text(write(value))  # type: ignore[operator]
    else:
        path = lesson_md(tmp_path)
        kept = [x for x in path.read_text().split("\n") if not x.startswith(f"{name}:")]
        kept.insert(1, write(value).rstrip("\n"))  # type: ignore[operator]
        path.write_text("\n".join(kept))
    with pytest.raises(BuildError) as raised:
        load_course(content)
    said = str(raised.value)
    assert file in said and f"{field}: holds the control character \\x{ord(control):02x}" in said


def test_tabs_and_newlines_in_prose_fields_are_text(tmp_path: Path) -> None:
    content = _course(tmp_path)
    (content / "course.yml").write_text(
        COURSE_YML.replace("summary: ", 'summary: "a\\tb\\nc" #', 1)
    )
    assert load_course(content).meta.summary == "a\tb\nc"


@pytest.mark.parametrize(
    ("markdown", "said"),
    [
        (
            '=== "A\x1bB"\n\n    Body.\n',
            "tab title holds the control character \\x1b at character 2",
        ),
        (
            '!!! tip "A\x07B"\n    Body.\n',
            "callout title holds the control character \\x07 at character 2",
        ),
    ],
)
def test_a_control_character_in_a_tab_or_callout_title_is_named(
    tmp_path: Path, markdown: str, said: str
) -> None:
    course = load_course(_course(tmp_path))
    lesson = replace(course.lessons[0], body=markdown)
    _, errors = prose.render_prose(lesson, course, None, "../../")
    where = f"{lesson.lesson_path}: line {lesson.body_line}: "
    assert [str(e) for e in errors] == [
        f"{where}{said}, which no page, sitemap or notebook can show: remove it"
    ]


def _intro(page: str, settings: tuple[str, ...] = ()) -> str:
    made = (
        notebook.example_notebook(
            "l/s1/", "T", "C", b"print(1)\n", ((), settings), None, "", page
        ).files
        or {}
    )
    return "".join(json.loads(made["l/s1/example.ipynb"])["cells"][0]["source"])


def _tokens(markdown: str) -> list[str]:
    parsed = MarkdownIt("commonmark").parse(markdown)
    return [t.type for t in parsed] + [c.type for t in parsed for c in t.children or ()]


def test_a_site_url_puts_no_image_or_second_link_into_the_notebook() -> None:
    page = "https://x.org/)![pixel](https://evil.example/p.png)/l/s1/index.html"
    intro = _intro(page)
    kinds = _tokens(intro)
    assert "image" not in kinds and kinds.count("link_open") == 1, intro
    link = next(
        c
        for t in MarkdownIt("commonmark").parse(intro)
        for c in t.children or ()
        if c.type == "link_open"
    )
    assert (
        link.attrs["href"]
        == "https://x.org/%29%21%5Bpixel%5D%28https://evil.example/p.png%29/l/s1/index.html"
    )


def test_an_env_value_with_backticks_is_code_not_html() -> None:
    value = "`<img src=x onerror=alert(1)>`"
    intro = _intro("index.html", (f"X={value}",))
    kinds = _tokens(intro)
    assert "html_inline" not in kinds and "html_block" not in kinds, intro
    spans = [
        c.content
        for t in MarkdownIt("commonmark").parse(intro)
        for c in t.children or ()
        if c.type == "code_inline"
    ]
    assert f"X={value}" in spans


def test_the_sitemap_is_well_formed_xml_whatever_its_addresses_hold() -> None:
    """Control characters are refused at load; the writer encodes them all the same."""
    site = "https://x.org/a&b<\x07>\x00/"
    made = sitemap._sitemap(site, ("index.html",)).files or {}
    tree = ET.fromstring(made["sitemap.xml"])
    locs = [e.text for e in tree.iter() if e.tag.endswith("loc")]
    assert locs == ["https://x.org/a&b%3C%07%3E%00/"]
    assert not re.search("[\x00-\x08]", made["sitemap.xml"].decode())


def test_a_site_url_in_the_notebooks_prose_links_is_one_address() -> None:
    """The notebook's prose makes a link to another lesson absolute under site_url."""
    from builder.render.notebook_prose import _address

    site = "https://x.org/)![pixel](https://evil.example/p.png)/"
    made = _address("../../l/s2/index.html#part", None, site)  # type: ignore[arg-type]
    kinds = _tokens(f"[next]({made})")
    assert "image" not in kinds and kinds.count("link_open") == 1, made
    assert made.endswith("/l/s2/#part") and not set("()[]!") & set(made)
