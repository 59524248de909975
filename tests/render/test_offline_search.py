"""The offline search index (builder/render/offline.py): a bundle's pages as a script that a
page opened from disk can load, holding what Pagefind indexes and nothing it leaves out,
and safe whatever a lesson's text says."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

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


def test_a_page_is_its_body_in_sections_without_what_search_leaves_out() -> None:
    entry = page_index("l/x/index.html", PAGE)
    assert entry["url"] == "l/x/index.html"
    assert entry["title"] == "The title"
    assert entry["teaches"] == "jaxpr, tracer"
    assert entry["sections"] == [
        ["", "", "Teaches jaxpr. Intro words.", ""],
        ["first", "First part", "Prose here & there.", "code_x"],
        ["second", "Second", "More.", ""],
    ]
    said = json.dumps(entry)
    for left_out in ("outside the body", "Lessons menu", "caption words", "secret", "#"):
        assert left_out not in said.replace('"#"', ""), left_out


HOSTILE = "a </script><script>alert(1)</script> <!-- b \u2028 c \u2029 d & e"


def _page(text: str) -> bytes:
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"<h1>t</h1><div data-pagefind-body><p>{escaped}</p></div>".encode()


def test_the_script_holds_no_end_of_script_nor_line_separator() -> None:
    made = script([("l/x/index.html", _page(HOSTILE))]).decode()
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
    made = script([("l/x/index.html", _page(HOSTILE)), ("l/y/index.html", _page("two"))])
    out = _node(
        "var window = {}; "
        + made.decode()
        + "console.log(JSON.stringify(window.coursebuilderSearch))"
    )
    (pages,) = json.loads(out)
    assert [p["url"] for p in pages] == ["l/x/index.html", "l/y/index.html"]
    assert pages[0]["sections"][0][2] == " ".join(HOSTILE.split())
    # inlined in a page's <script>, the value is still whole: the element does not end early
    inline = f"<script>var v = {in_script(HOSTILE)};</script>"
    assert inline.count("</script>") == 1
    assert (
        json.loads(_node(f"var v = {in_script(HOSTILE)}; console.log(JSON.stringify(v))"))
        == HOSTILE
    )


def test_a_page_with_no_body_or_broken_markup_is_an_empty_entry() -> None:
    assert page_index("a.html", b"")["sections"] == []
    broken = page_index("b.html", b"<div data-pagefind-body><p>open <b>bold</div><p>after")
    assert broken["sections"] == [["", "", "open bold", ""]]


def test_scripts_styles_and_comments_hold_no_text_and_entities_are_read() -> None:
    """The pages are split by one regular expression (builder/render/offline.py): what a
    `<style>` (course.yml's colours, in every page's head), a `<script>` or a comment holds
    is not text, even with `<` and `>` in it, and entities in text and attributes are read."""
    page = (
        b"<!DOCTYPE html><html><head><style>a > b { color: red } p<q {}</style>"
        b"<script>if (a < b && c > d) { x('</p>'); }</script></head><body>"
        b"<h1>One &amp; two</h1><!-- <div data-pagefind-body>hidden</div> -->"
        b"<div data-pagefind-body><p>x &lt; y &#x3E; z</p>"
        b"<h2 id='a&amp;b'>Single quotes</h2><p>under</p>"
        b'<h2 id=bare class="k">Bare</h2><p>last</p>'
        b"<SCRIPT type=module>not text</SCRIPT ><P>UPPER<BR/>case</P>"
        b'<figure data-pagefind-weight="0.5"><pre><span class="k">def</span> f&lt;T&gt;'
        b'<a class="code-note" data-pagefind-ignore>7</a>()</pre>'
        b'<pre class="lineno" data-pagefind-ignore>1\n2</pre></figure></div></body></html>'
    )
    entry = page_index("l/x/index.html", page)
    assert entry["title"] == "One & two"
    assert entry["sections"] == [
        ["", "", "x < y > z", ""],
        ["a&b", "Single quotes", "under", ""],
        ["bare", "Bare", "last UPPER case", "def f<T>()"],  # no badge, no line numbers
    ]
    said = json.dumps(entry)
    for left_out in ("color", "hidden", "not text", "x('"):
        assert left_out not in said, left_out


HOSTILE_MARKUP = {  # a course's own template (content/templates/) may write any of these
    "unclosed quotes": '<a title="' * 20_000,
    "a quoted >": "<div data-pagefind-body>" + '<a title="x>y">t</a>' * 20_000 + "</div>",
    "unclosed tags": "<a" * 50_000,
    "unclosed code blocks": "<pre><a" * 20_000,
    "unclosed doctypes": "<!x" * 30_000,
    "unclosed comments and scripts": "<!--" * 20_000 + "<script>" * 20_000,
}


def test_hostile_markup_is_read_in_one_pass() -> None:
    """No page a course can make holds up the build: each of these took minutes with a
    pattern whose quoted values could run past the next `<` (builder/render/readback.py);
    read in one pass, all of them take well under a second. Run in a child process, so that
    a pattern that backtracks fails the test at its timeout instead of hanging the suite."""
    program = (
        "import json, sys\n"
        "from builder.render import offline, reading\n"
        "for page in json.load(sys.stdin).values():\n"
        "    offline.page_index('x', page.encode()); reading.prose_words(page)\n"
        "print('read')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=json.dumps(HOSTILE_MARKUP),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == "read\n"
    entry = page_index("x", HOSTILE_MARKUP["a quoted >"][:204].encode())
    assert entry["sections"] == [["", "", "t" * 9, ""]], entry  # the links' text, no `y">`
