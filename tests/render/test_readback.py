"""The builder's own pages read back (builder/render/readback.py), as a lesson's reading time
(builder/render/reading.py) reads them: one pass whatever a course's template writes."""

from __future__ import annotations

import json
import subprocess
import sys

from builder.render.readback import attributes, tokens
from builder.render.reading import prose_words


def _text(page: str) -> str:
    """The text of `page` as tokens gives it, a code block as its source."""
    parts = [rest for kind, _tag, rest in tokens(page) if kind in ("text", "pre")]
    return " ".join(" ".join(parts).split())


def test_scripts_styles_and_comments_hold_no_text_and_entities_are_read() -> None:
    """What a `<style>` (course.yml's colours, in every page's head), a `<script>` or a
    comment holds is not text, even with `<` and `>` in it; entities in text and attribute
    values are read; names come in lower case."""
    page = (
        "<!DOCTYPE html><html><head><style>a > b { color: red } p<q {}</style>"
        "<script>if (a < b && c > d) { x('</p>'); }</script></head><body>"
        "<h1>One &amp; two</h1><!-- <div>hidden</div> -->"
        "<p>x &lt; y &#x3E; z</p><h2 id='a&amp;b'>Single</h2><h2 id=bare class=\"k\">Bare</h2>"
        "<SCRIPT type=module>not text</SCRIPT ><P>UPPER<BR/>case</P>"
        '<pre><span class="k">def</span> f&lt;T&gt;()</pre></body></html>'
    )
    assert _text(page) == (
        'One & two x < y > z Single Bare UPPER case <span class="k">def</span> f&lt;T&gt;()'
    )
    starts = [(tag, attributes(rest)) for kind, tag, rest in tokens(page) if kind == "start"]
    assert [a for tag, a in starts if tag == "h2"] == [{"id": "a&b"}, {"id": "bare", "class": "k"}]
    assert ("empty", "br", "/") in list(tokens(page))
    assert ("p", {}) in starts and all(tag.islower() for tag, _ in starts)


HOSTILE_MARKUP = {  # a course's own template (content/templates/) may write any of these
    "unclosed quotes": '<a title="' * 20_000,
    "a quoted >": "<p>" + '<a title="x>y">t</a>' * 20_000 + "</p>",
    "unclosed tags": "<a" * 50_000,
    "unclosed code blocks": "<pre><a" * 20_000,
    "unclosed doctypes": "<!x" * 30_000,
    "unclosed comments and scripts": "<!--" * 20_000 + "<script>" * 20_000,
}


def test_hostile_markup_is_read_in_one_pass() -> None:
    """No page a course can make holds up the build: each of these took minutes with a
    pattern whose quoted values could run past the next `<`; read in one pass, all of them
    take well under a second. Run in a child process, so that a pattern that backtracks
    fails the test at its timeout instead of hanging the suite."""
    program = (
        "import json, sys\n"
        "from builder.render import reading\n"
        "for page in json.load(sys.stdin).values():\n"
        "    reading.prose_words(page)\n"
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
    assert prose_words(HOSTILE_MARKUP["a quoted >"][:203]) == 10  # the ten links' text, no `y">`
