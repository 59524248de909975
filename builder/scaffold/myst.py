"""What a notebook's Markdown holds that a lesson's cannot show besides foreign syntax
(images, raw HTML, links into the page's own site, the builder's own `{{` and `[[`), found
line by line; and its plain text, for a title and a summary. Used by
builder/scaffold/cells.py, which asks builder/render/syntax.py for the MyST and Sphinx syntax
the site refuses; every regex here runs in linear time on a line of any content.
"""

from __future__ import annotations

import re

from ..render.foreign import ROLE, role_shown

MAX_SUMMARY = 300  # the front matter's Line
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")  # its closing #s are taken off by `heading`
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
BACKTICKS = re.compile(r"`+")
IMAGE = re.compile(r"!\[[^\[\]]*\]\(\s*<?([^)\s>]*)")
LINK = re.compile(r"(?<!!)\[[^\[\]]*\]\(\s*<?([^)\s>]*)")
HTML = re.compile(r"<(?:!--|/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>)")
MARKED_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^)\[]*\)")  # `[` ends a try: one scan each
MARKS = re.compile(r"[*_`]")
BLANK_LINE = re.compile(r"\n\s*\n")
LIST_ITEM = re.compile(r"\d+[.)]\s")
SENTENCE_END = re.compile(r"(?<=[.!?])\s")
SAFE_LINKS = ("http://", "https://", "mailto:", "#", "lesson:")
MAX_CHECKED = 20_000  # a longer line of prose is noted, not searched


def line_notes(line: str) -> tuple[list[tuple[str, str]], bool]:
    """What `line` of prose holds that lesson.md cannot show, each as (what, what to do);
    and whether it opens a $$ block that does not close on it."""
    notes: list[tuple[str, str]] = []

    def note(what: str, todo: str) -> None:
        notes.append((what, todo))

    if len(line) > MAX_CHECKED:
        note(f"a line of {len(line)} characters, not checked", "")
        return notes, False
    plain = without_code(ROLE.sub("", line))  # a role's body is no link
    for image in IMAGE.finditer(plain):
        what = f"image {image.group(1)!r}"
        note(what, "copy the file beside example.py and list it in data:")
    for link in LINK.finditer(plain):
        if not link.group(1).startswith(SAFE_LINKS):
            what = f"link to {link.group(1)!r}, a page or label of the page's own site"
            todo = "link a lesson (lesson:SLUG) or a full https:// address"
            note(what, todo)
    if html := HTML.search(plain):
        note(f"raw HTML {short(html.group(0))}, shown as text", "delete it")
    return notes, plain.count("$$") % 2 == 1


def builder_marks(line: str) -> list[tuple[str, str]]:
    """The builder's own marks in a line of the page as written (before rewrite.py makes
    its own), each as (what, what to do)."""
    plain = without_code(line)
    return [
        (f"{mark} would be read as {meaning}", "put it in a code span (`...`)")
        for mark, meaning in (("{{", "a placeholder"), ("[[", "a glossary term"))
        if mark in plain
    ]


def without_code(line: str) -> str:
    """`line` without its code spans."""
    kept, at = [], 0
    for start, end in code_spans(line):
        kept.append(line[at:start])
        at = end
    return "".join(kept) + line[at:]


def code_spans(line: str) -> list[tuple[int, int]]:
    """Where `line`'s code spans are, backticks included: a run of n backticks up to the
    next run of exactly n (CommonMark's rule), in one pass (a regex with a backreference
    took quadratic time on a line of backticks)."""
    runs = [(m.start(), m.end()) for m in BACKTICKS.finditer(line)]
    closer: dict[int, int] = {}  # a run's index -> the next run of its length
    following: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        size = runs[index][1] - runs[index][0]
        if size in following:
            closer[index] = following[size]
        following[size] = index
    spans, index = [], 0
    while index < len(runs):
        if index in closer:
            spans.append((runs[index][0], runs[closer[index]][1]))
            index = closer[index] + 1
        else:
            index += 1
    return spans


def short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def plain(text: str) -> str:
    """Markdown as plain text, for the title and summary: roles, links and marks undone."""
    text = ROLE.sub(lambda m: role_shown(m[2]), text)
    text = MARKED_LINK.sub(r"\1", text)
    return " ".join(MARKS.sub("", text).split())


def heading(line: str) -> str | None:
    """The text of `line` when it is a heading (`## Title ##`: its closing #s taken off, as
    CommonMark does), else None."""
    if not (match := HEADING.match(line)):
        return None
    text = match[2].rstrip()
    bare = text.rstrip("#")
    return bare if bare != text and (not bare or bare[-1].isspace()) else text


def summary(lines: list[str]) -> str:
    """The first sentence of the first paragraph of plain prose, at most MAX_SUMMARY long."""
    for paragraph in BLANK_LINE.split("\n".join(lines)):
        first = paragraph.lstrip()
        if not first or first[0] in "#(<`:~-*+>|$!{[" or LIST_ITEM.match(first):
            continue
        text = plain(paragraph)
        sentence = SENTENCE_END.split(text, maxsplit=1)[0]
        if len(sentence) > MAX_SUMMARY:
            sentence = sentence[: MAX_SUMMARY - 3].rsplit(" ", 1)[0] + "..."
        return sentence
    return ""
