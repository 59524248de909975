"""The offline search index (builder/render/offline.py): a bundle's pages as a script that a
page opened from disk can load, made from the fragments of the real Pagefind run over them,
holding what Pagefind indexed and nothing it leaves out, and safe whatever a lesson's text
says."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import pytest

from builder.core.errors import BuildError
from builder.render import search
from builder.render.offline import in_script, page_index, script

PAGE = (
    b"<html><head><title>T</title></head><body><nav>Lessons menu</nav><main>"
    b"<h1>The title</h1><p>outside the body</p>"
    b'<p class="teaches" data-pagefind-body data-pagefind-meta="teaches:jaxpr, tracer">'
    b"Teaches jaxpr.</p>"
    b"<div data-pagefind-body><p>Intro words.</p>"
    b'<div class="heading"><h2 id="first">First <em>part</em></h2>'
    b'<a class="anchor" href="#first" data-pagefind-ignore>#</a></div>'
    b'<p>Prose<br>here &amp; there.</p><figure data-pagefind-weight="0.5"><pre>code_x</pre>'
    b"<figcaption data-pagefind-ignore>caption words</figcaption></figure>"
    b'<details data-pagefind-ignore="all"><p>the secret answer</p></details>'
    b'<h2 id="second">Second</h2><p>More.</p></div></main></body></html>'
)


def _bundle(pages: dict[str, bytes]) -> dict[str, bytes]:
    """The files of a search bundle the real Pagefind makes of `pages`."""
    found = search.index("x-1", list(pages), pages.__getitem__)
    assert found, "Pagefind made nothing (is pagefind_bin installed?)"
    return found


def _entries(pages: dict[str, bytes]) -> list[dict]:
    made = script(list(pages), _bundle(pages)).decode()
    prefix = "(window.coursebuilderSearch = window.coursebuilderSearch || []).push("
    assert made.startswith(prefix) and made.endswith(");\n")
    return json.loads(made[len(prefix) : -3])


def test_a_page_is_its_body_in_sections_without_what_search_leaves_out() -> None:
    (entry,) = _entries({"l/x/index.html": PAGE})
    assert entry["url"] == "l/x/index.html"
    assert entry["title"] == "The title"
    assert entry["teaches"] == "jaxpr, tracer"
    assert entry["sections"] == [
        ["", "", "Teaches jaxpr. Intro words."],
        ["first", "First part", "Prose here & there. code_x"],  # code counts as prose here
        ["second", "Second", "More."],
    ]
    said = json.dumps(entry)
    for left_out in ("outside the body", "Lessons menu", "caption words", "secret", "#"):
        assert left_out not in said.replace('"#"', ""), left_out


def test_pages_keep_the_bundle_order_and_a_page_without_a_body_has_no_entry() -> None:
    pages = {
        "l/b/index.html": b"<html><body><h1>B</h1><div data-pagefind-body>two</div></body></html>",
        "l/a/index.html": b"<html><body><h1>A</h1><div data-pagefind-body>one</div></body></html>",
        "l/c/index.html": b"<html><body><h1>C</h1><p>no body</p></body></html>",
    }
    assert [e["url"] for e in _entries(pages)] == ["l/b/index.html", "l/a/index.html"]


HOSTILE = "a </script><script>alert(1)</script> <!-- b \u2028 c \u2029 d & e"


def _page(text: str) -> bytes:
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<html><body><h1>t</h1><div data-pagefind-body><p>{escaped}</p></div></body></html>".encode()


def test_the_script_holds_no_end_of_script_nor_line_separator() -> None:
    made = script(["l/x/index.html"], _bundle({"l/x/index.html": _page(HOSTILE)})).decode()
    assert "<" not in made and ">" not in made
    assert made.startswith("(window.coursebuilderSearch = window.coursebuilderSearch || [])")
    # A separator in prose is a space by then; a value that keeps one is escaped.
    kept = in_script({"text": HOSTILE})
    assert "<" not in kept and ">" not in kept and "&" not in kept
    assert "\u2028" not in kept and "\u2029" not in kept
    assert "\\u2028" in kept and json.loads(kept) == {"text": HOSTILE}


def _node(source: str) -> str:
    return subprocess.run(["node", "-e", source], capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the script")
def test_the_script_gives_back_the_text_as_it_was_when_run() -> None:
    pages = {"l/x/index.html": _page(HOSTILE), "l/y/index.html": _page("two")}
    made = script(list(pages), _bundle(pages))
    out = _node(
        "var window = {}; "
        + made.decode()
        + "console.log(JSON.stringify(window.coursebuilderSearch))"
    )
    (entries,) = json.loads(out)
    assert [p["url"] for p in entries] == ["l/x/index.html", "l/y/index.html"]
    assert entries[0]["sections"][0][2].rstrip(".") == " ".join(HOSTILE.split())
    # inlined in a page's <script>, the value is still whole: the element does not end early
    inline = f"<script>var v = {in_script(HOSTILE)};</script>"
    assert inline.count("</script>") == 1
    assert (
        json.loads(_node(f"var v = {in_script(HOSTILE)}; console.log(JSON.stringify(v))"))
        == HOSTILE
    )


def _zipped(text: bytes) -> bytes:
    return gzip.compress(text)


@pytest.mark.parametrize(
    "data",
    [
        b"not gzip at all",
        _zipped(b'{"url": "/l/x/index.html"}'),  # no signature
        _zipped(b"pagefind_dcd{not json"),
        _zipped(b"pagefind_dcd[1, 2]"),
        _zipped(b"pagefind_dcd\xff\xfe"),
        gzip.compress(b"pagefind_dcd{}")[:-4],  # cut short
    ],
)
def test_a_fragment_pagefind_did_not_write_is_an_error_naming_it(data: bytes) -> None:
    path = "search-index/x-1/fragment/en_1.pf_fragment"
    with pytest.raises(BuildError) as raised:
        script(["l/x/index.html"], {path: data})
    assert path in str(raised.value) and "offline search index was not built" in str(raised.value)


@pytest.mark.parametrize(
    "fragment",
    [
        {},
        {"url": 7, "content": None, "meta": "x", "anchors": "x"},
        {"url": "/a.html", "content": "a b", "anchors": [None, 3, {"element": "h2"}]},
        {
            "url": "/a.html",
            "content": "a b",
            "anchors": [{"element": "h2", "id": "x", "text": "   ", "location": 0}],
        },
        {
            "url": "/a.html",
            "content": "a b",
            "anchors": [{"element": "h2", "id": "x", "text": "t", "location": "0"}],
        },
        {
            "url": "/a.html",
            "content": "a",
            "anchors": [{"element": "h2", "id": "x", "text": "t " * 9, "location": 99}],
        },
    ],
)
def test_a_fragment_of_odd_shape_gives_an_entry_without_failing(fragment: dict) -> None:
    entry = page_index(fragment)
    assert isinstance(entry["url"], str) and isinstance(entry["sections"], list)
    assert all(len(s) == 3 and all(isinstance(x, str) for x in s) for s in entry["sections"])
