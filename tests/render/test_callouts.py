"""Callouts (builder/render/callouts.py): five types, each with its own look and icon in
both themes, folded into a <details> by `???`, and an error for any other type."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from builder.course.colours import contrast
from builder.render.callouts import KINDS
from tests.helpers import ROOT
from tests.render.test_hostile_prose import lesson_path, only_error, render

TYPES = ("note", "tip", "important", "warning", "danger")
STYLE = ROOT / "builder" / "render" / "templates" / "static" / "style.css"


@pytest.mark.parametrize("kind", TYPES)
def test_each_type_has_its_class_icon_and_spoken_name(tmp_path: Path, kind: str) -> None:
    html, errors = render(tmp_path, f'!!! {kind} "Look here"\n    The *body*.\n')
    assert errors == []
    assert f'<div class="admonition {kind}" role="note">' in html
    title = re.search(r'<p class="admonition-title">(.*?)</p>', html)
    assert title is not None
    assert '<svg class="admonition-icon"' in title[1] and 'aria-hidden="true"' in title[1]
    label = kind.capitalize()
    assert f'<span class="visually-hidden">{label}: </span>Look here' in title[1]
    assert "<p>The <em>body</em>.</p>\n</div>" in html


def test_the_five_icons_differ() -> None:
    assert tuple(KINDS) == TYPES
    assert len({kind.icon for kind in KINDS.values()}) == len(TYPES)


def test_a_callout_without_a_title_is_titled_with_its_type_once(tmp_path: Path) -> None:
    for body in ("!!! tip\n    Body.\n", '!!! tip ""\n    Body.\n', '!!! TIP "Tip: be quick"\n'):
        html, errors = render(tmp_path / str(len(body)), body)
        assert errors == []
        assert 'class="admonition tip"' in html
        assert "visually-hidden" not in html  # the title says "Tip" already
        assert re.search(r"</svg>Tip(: be quick)?</p>", html), html


def test_a_folded_callout_is_a_details_closed_or_open(tmp_path: Path) -> None:
    html, errors = render(
        tmp_path, '??? warning "Hidden"\n    Inside.\n\n???+ danger "Shown"\n    Open.\n'
    )
    assert errors == []
    closed, opened = html.split("</details>")[:2]
    assert closed.startswith(
        '<details class="admonition warning">\n<summary class="admonition-title">'
    )
    assert '</svg><span class="visually-hidden">Warning: </span>Hidden</summary>' in closed
    assert "<p>Inside.</p>" in closed
    assert '<details class="admonition danger" open>' in opened and "Open." in opened
    assert html.count("<summary") == 2 and html.count("</summary>") == 2


def test_a_folded_callout_without_a_title_has_a_summary(tmp_path: Path) -> None:
    html, errors = render(tmp_path, '??? note ""\n    Inside.\n')
    assert errors == []
    assert re.search(r"<summary class=\"admonition-title\"><svg[^>]*>.*</svg>Note</summary>", html)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "!!! caution",
            "'caution' is not a callout type; the types are note, tip, important, "
            "warning, danger (for caution, write warning)",
        ),
        (
            '??? error "Boom"',
            "'error' is not a callout type; the types are note, tip, important, "
            "warning, danger (for error, write danger)",
        ),
        ('!!! aside "x"', "'aside' is not a callout type; the types are note, tip"),
        ('!!! note danger "Two"', "a callout has one type, one of note, tip, important"),
        ('!!! note inline end "Two"', "'inline' is not a callout type"),
    ],
)
def test_another_type_is_an_error_naming_the_line_and_the_types(
    tmp_path: Path, line: str, said: str
) -> None:
    html, errors = render(tmp_path, f"Prose.\n\n{line}\n    Body.\n")
    text = only_error(errors, lesson_path(tmp_path), line=11)
    assert said in text
    assert '<mark class="broken">' in html and "Body." in html  # the page still renders


def test_what_a_callout_says_is_escaped(tmp_path: Path) -> None:
    html, errors = render(
        tmp_path,
        '!!! <img src=x onerror=alert(1)> "t"\n    b\n\n!!! note "<script>alert(1)</script>"\n',
    )
    assert len(errors) == 1 and "'<img' is not a callout type" in str(errors[0])
    assert "<img" not in html and "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;</p>" in html


def test_many_and_deeply_nested_callouts_render_at_once(tmp_path: Path) -> None:
    nested = "".join("    " * depth + f'??? tip "{depth}"\n' for depth in range(200))
    flat = '!!! warning "w"\n    x\n\n' * 2000
    html, errors = render(tmp_path, nested + "\n" + flat)
    assert errors == []
    assert html.count('class="admonition warning"') == 2000
    assert html.count("<details") == html.count("</details>") > 0


def _colours(css: str, selector: str) -> tuple[str, str]:
    found = re.search(
        re.escape(selector) + r" \{ --callout: (#\w{6}); --callout-bg: (#\w{6});", css
    )
    assert found, selector
    return found[1], found[2]


@pytest.mark.parametrize(
    ("prefix", "page", "text"),
    [
        ("", "#fdfdfc", "#1a202c"),
        (":root[data-theme=dark] ", "#12161d", "#e2e8f0"),
        (":root:not([data-theme]) ", "#12161d", "#e2e8f0"),
    ],
    ids=["light", "dark", "dark-by-system"],
)
def test_each_type_reads_in_both_themes(prefix: str, page: str, text: str) -> None:
    """WCAG: the title (in the type's colour) and the body text 4.5:1 on the type's tint,
    its edge and icon 3:1 on the page; and no two types look alike."""
    css = STYLE.read_text()
    seen = set()
    for kind in TYPES:
        selector = f"{prefix}.admonition" + ("" if kind == "note" else f".{kind}")
        colour, tint = _colours(css, selector)
        assert contrast(colour, tint) >= 4.5, kind
        assert contrast(text, tint) >= 4.5, kind
        assert contrast(colour, page) >= 3, kind
        seen.add(colour)
    assert len(seen) == len(TYPES)
