"""The search index (builder/render/offline.py): what a search finds on a page, kept as its
prose is rendered (no parse of the page), in sections, without what a search leaves out;
and a bundle's pages as a script that a page opened from disk can load, safe whatever a
lesson's text says."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace

import pytest

from builder.core.artifact import Searched
from builder.course.model import Course
from builder.course.recording import Recording
from builder.render import offline, prose
from builder.render.offline import in_script, script

BODY = """Intro words, a [[jaxpr]] and {{ value line=1 }} of it.

## First *part*

Prose
here & there.

```python
code_x = 1
```

{{ reveal }}

## The answer

the secret answer

{{ reveal end }}

## Second

More.
"""


def _found(course: Course, recording: Recording | None, body: str) -> tuple:
    lesson = course.lesson("basics-01")
    assert lesson is not None
    rendered, errors = prose.render_prose(replace(lesson, body=body), course, recording, "")
    assert errors == [], errors
    return offline.sections(rendered.found, "Teaches jaxpr.")


def test_a_page_is_its_text_in_sections_without_what_search_leaves_out(
    course: Course, reference: Recording
) -> None:
    found = _found(course, reference, BODY)
    assert [(anchor, heading) for anchor, heading, _ in found] == [
        ("", ""),
        ("first-part", "First part"),
        ("second", "Second"),  # the answer's heading is in the fold: not a section
    ]
    assert found[0][2].startswith("Teaches jaxpr. Intro words, a jaxpr and ")
    assert found[1][2] == "Prose here & there. code_x = 1"  # code counts as prose here
    said = json.dumps(found)
    for left_out in ("secret", "The answer", "Show the solution", "Recorded value", "#"):
        assert left_out not in said, left_out  # a fold, a value's note, a heading's link


def _entries(pages: list[tuple[str, Searched]]) -> list[dict]:
    made = script(pages).decode()
    prefix = "(window.coursebuilderSearch = window.coursebuilderSearch || []).push("
    assert made.startswith(prefix) and made.endswith(");\n")
    return json.loads(made[len(prefix) : -3])


def test_pages_keep_the_bundle_order() -> None:
    pages = [(f"l/{x}/index.html", Searched(x, "", (("", "", x),))) for x in "bac"]
    assert [e["url"] for e in _entries(pages)] == [f"l/{x}/index.html" for x in "bac"]
    assert _entries(pages)[0] == {
        "url": "l/b/index.html",
        "title": "b",
        "teaches": "",
        "sections": [["", "", "b"]],
    }


HOSTILE = "a </script><script>alert(1)</script> <!-- b \u2028 c \u2029 d & e"


def _page(text: str) -> Searched:
    return Searched("t", "", (("", "", text),))


def test_the_script_holds_no_end_of_script_nor_line_separator() -> None:
    made = script([("l/x/index.html", _page(HOSTILE))]).decode()
    assert "<" not in made and ">" not in made and "\u2028" not in made
    assert made.startswith("(window.coursebuilderSearch = window.coursebuilderSearch || [])")
    kept = in_script({"text": HOSTILE})
    assert "<" not in kept and ">" not in kept and "&" not in kept
    assert "\u2028" not in kept and "\u2029" not in kept
    assert "\\u2028" in kept and json.loads(kept) == {"text": HOSTILE}


def test_a_lesson_whose_text_would_end_the_script_is_kept_whole(course: Course) -> None:
    (section,) = _found(course, None, HOSTILE.replace("<", "\\<"))
    made = script([("l/x/index.html", Searched("t", "", (section,)))]).decode()
    assert "<" not in made and "</script>" not in made
    assert "alert(1)" in json.loads(made[made.index("(", 10) + 1 : -3])[0]["sections"][0][2]


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
    (entries,) = json.loads(out)
    assert [p["url"] for p in entries] == ["l/x/index.html", "l/y/index.html"]
    assert entries[0]["sections"][0][2] == HOSTILE
    inline = f"<script>var v = {in_script(HOSTILE)};</script>"
    assert inline.count("</script>") == 1
    assert (
        json.loads(_node(f"var v = {in_script(HOSTILE)}; console.log(JSON.stringify(v))"))
        == HOSTILE
    )
