"""Every pattern the builder runs over course text is linear (issue 56, items 7 and 12).

`=== "a` + 120,000 spaces + `b"` took 129 s in the tab title's pattern: a lazy group
followed by `[ \\t]*$` retried the run of blanks at every character. Each module-level
pattern of the builder is a row here, applied as the builder applies it, and fed 10^5
blanks, `*`, `$`, quotes and newlines after its own trigger; a pattern added without a row
fails the second test."""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builder.cells import EXCEPTION as HARNESS_EXCEPTION
from builder.cells import NAME as HARNESS_NAME
from builder.core import escape, fsutil, machine, observe, scratch
from builder.course import files, recording, rules
from builder.pipeline import site_record
from builder.render import (
    anchors,
    bounded,
    chartsvg,
    code_notes,
    foreign,
    lessons,
    links,
    mathml,
    notebook_prose,
    offline,
    prose,
    reading,
    sandbox,
    shifted,
    tabs,
    terminal,
)
from builder.review import changes, lock, rehearse
from builder.run import figures, leaks
from builder.scaffold import cells, myst, rewrite

N = 10**5
FILLERS = (" ", "\t", "\n", "*", "$", '"', "'", "`", "}}", "\ue000")
BOUND = 1.0  # CPU seconds for one input; a linear pattern takes milliseconds

# (pattern, how the builder applies it: a method's name or the function that calls it,
# what makes it start matching)
RULES: dict[str, tuple[re.Pattern[Any], str | Callable[[str], object], str]] = {
    "cells.NAME": (HARNESS_NAME, "fullmatch", "a"),
    "cells.EXCEPTION": (HARNESS_EXCEPTION, "fullmatch", "a."),
    "scaffold.cells.NAME": (cells.NAME, "fullmatch", "a"),
    "scaffold.cells.EXCEPTION": (cells.EXCEPTION, "fullmatch", "a."),
    "scaffold.cells.MAGIC": (cells.MAGIC, "match", "a = "),
    "scaffold.cells.TIMEIT_OPTIONS": (cells.TIMEIT_OPTIONS, "match", " -n "),
    "scaffold.cells.MARKER": (cells.MARKER, "match", "# %%"),
    "scaffold.myst.HEADING": (myst.HEADING, "match", "# a"),
    "scaffold.myst.FENCE": (myst.FENCE, "match", "```"),
    "scaffold.myst.BACKTICKS": (myst.BACKTICKS, "finditer", "`"),
    "scaffold.myst.IMAGE": (myst.IMAGE, "finditer", "![a]("),
    "scaffold.myst.LINK": (myst.LINK, "finditer", "[a]("),
    "scaffold.myst.HTML": (myst.HTML, "search", "<a "),
    "scaffold.myst.MARKED_LINK": (myst.MARKED_LINK, "sub", "[a]("),
    "scaffold.myst.MARKS": (myst.MARKS, "sub", "*"),
    "scaffold.myst.BLANK_LINE": (myst.BLANK_LINE, "split", "\n"),
    "scaffold.myst.LIST_ITEM": (myst.LIST_ITEM, "match", "1"),
    "scaffold.myst.SENTENCE_END": (myst.SENTENCE_END, "split", "."),
    "scaffold.rewrite.TARGET": (rewrite.TARGET, "match", "(a"),
    "scaffold.rewrite.ROLE": (rewrite.ROLE, "sub", "{a}`"),
    "scaffold.rewrite.LINK": (rewrite.LINK, "sub", "[a]("),
    "scaffold.rewrite.API_NAME": (rewrite.API_NAME, "fullmatch", "a."),
    "scaffold.rewrite.OPEN": (rewrite.OPEN, "match", "```{note} a"),
    "scaffold.rewrite.OPTION": (rewrite.OPTION, "match", ":a: a"),
    "scaffold.rewrite.COMMENT": (rewrite.COMMENT, rewrite.uncommented, "<!--"),
    "pipeline.site_record.IDENTITY": (site_record.IDENTITY, "fullmatch", "# identity: 1"),
    "pipeline.site_record.PAGE": (site_record.PAGE, "fullmatch", "# index.html: "),
    "pipeline.site_record._ANY_WRONG": (site_record._ANY_WRONG, "search", "a"),
    "core.escape._CONTROL": (escape._CONTROL, "sub", "\x1b"),
    "core.escape._CONTROL_OR_LINE": (escape._CONTROL_OR_LINE, "sub", "\x1b"),
    "core.escape._COMMAND": (escape._COMMAND, "sub", "##"),
    "core.escape._COMMAND_START": (escape._COMMAND_START, "sub", "\n:"),
    "core.escape._MARKDOWN_SPECIAL": (escape._MARKDOWN_SPECIAL, "sub", "["),
    "core.escape._BLOCK_START": (escape._BLOCK_START, "sub", "1"),
    "core.escape._JSON_UNSAFE": (escape._JSON_UNSAFE, "sub", "##"),
    "core.fsutil._CONTROL": (fsutil._CONTROL, "search", "a"),
    "core.fsutil._SURROGATE": (fsutil._SURROGATE, "search", "a"),
    "core.fsutil.TEMPORARY": (fsutil.TEMPORARY, "fullmatch", "a/.a.1-"),
    "core.machine._VERSION": (machine._VERSION, "fullmatch", "1.1"),
    "core.observe.EDITOR_FILE": (observe.EDITOR_FILE, "fullmatch", ".a"),
    "core.scratch._NAME": (scratch._NAME, "fullmatch", "coursebuilder-1-"),
    "course.files._JSON_STRING": (files._JSON_STRING, "sub", '"'),
    "course.recording._KIND_IN_PATH": (recording._KIND_IN_PATH, "sub", "panels.1."),
    "course.rules.ENV_NAME_PATTERN": (rules.ENV_NAME_PATTERN, "match", "A"),
    "course.rules.DATA_NAME_PATTERN": (rules.DATA_NAME_PATTERN, "fullmatch", "a"),
    "course.rules.CONFLICT_MARKER": (rules.CONFLICT_MARKER, "search", "\n======="),
    "course.rules.PAGE_FILE": (rules.PAGE_FILE, "fullmatch", "index"),
    "course.rules.CONTROL": (rules.CONTROL, "search", "a"),
    "render.anchors._ANCHORED": (anchors._ANCHORED, "findall", "lesson:"),
    "render.anchors._CELL_LINE": (anchors._CELL_LINE, "match", "{{ cell "),
    "render.anchors._API_NAME": (anchors._API_NAME, "fullmatch", "a."),
    "render.bounded._SPEC": (bounded._SPEC, "fullmatch", ">"),
    "render.chartsvg._STYLE": (chartsvg._STYLE, "sub", 'style="'),
    "render.code_notes.MARKER": (code_notes.MARKER, "match", "# <"),
    "render.code_notes.LOOKS": (code_notes.LOOKS, "search", "#"),
    "render.foreign.ROLE_NAME": (foreign.ROLE_NAME, "fullmatch", "{a"),
    "render.foreign.ROLE": (foreign.ROLE, "sub", "{a}`"),
    "render.foreign.DIRECTIVE": (foreign.DIRECTIVE, "fullmatch", "{a} "),
    "render.foreign.LABELLED": (foreign.LABELLED, "fullmatch", "a"),
    "render.lessons._IMPORTS_BUILDER": (lessons._IMPORTS_BUILDER, "search", "\n"),
    "render.links._PAGE_IDS": (links._PAGE_IDS, "fullmatch", "tabs-1"),
    "render.mathml._ARG": (mathml._ARG, "sub", "\\arg"),
    "render.mathml._CONTROL": (mathml._CONTROL, "sub", "\x1b"),
    "render.mathml._COMMAND_TEXT": (mathml._COMMAND_TEXT, "search", "\\"),
    "render.mathml._ENVIRONMENT": (mathml._ENVIRONMENT, "sub", "\\begin"),
    "render.notebook_prose._INDENT": (notebook_prose._INDENT, "sub", " "),
    "render.offline._UNSAFE": (offline._UNSAFE, "sub", "<"),
    "render.prose._BLOCK_LINE": (prose._BLOCK_LINE, "match", "{{ example "),
    "render.prose._MARKUP": (prose._MARKUP, "sub", "*"),
    "render.reading._WORD": (reading._WORD, "findall", "a'"),
    "render.sandbox._PRINTF": (sandbox._PRINTF, "findall", "%"),
    "render.shifted._REFERENCE": (shifted._REFERENCE, "match", "{{ output "),
    "render.shifted._RANGE": (shifted._RANGE, "fullmatch", "1-"),
    "render.shifted._DIGITS": (shifted._DIGITS, "sub", "1"),
    "render.tabs._HEAD": (tabs._HEAD, "match", '=== "a'),
    "render.terminal._ANSI": (terminal._ANSI, "sub", "\x1b["),
    "render.terminal._CONTROL": (terminal._CONTROL, "sub", "\x1b"),
    "review.changes.TIME_QUANTITY": (changes.TIME_QUANTITY, "sub", "1,"),
    "review.changes.TIMING_YLABEL": (changes.TIMING_YLABEL, "search", "wall"),
    "review.changes._NUMBER": (changes._NUMBER, "match", "1,"),
    "review.changes._PADDED_HOLE": (changes._PADDED_HOLE, "sub", "\ue000"),
    "review.rehearse.CHECK_LINE": (rehearse.CHECK_LINE, "findall", "check passed:"),
    "review.lock.COMMENT": (lock.COMMENT, "search", " "),
    "review.lock.SCHEME": (lock.SCHEME, "match", "a"),
    "review.lock.NAMED": (lock.NAMED, "match", "a"),
    "run.figures.ADDRESS": (figures.ADDRESS, "sub", " at 0x"),
    "run.leaks.INVISIBLE": (leaks.INVISIBLE, "sub", "\u200b"),
    "run.leaks.ESCAPE": (leaks.ESCAPE, "sub", "\\u"),
    "run.leaks.SEPARATORS": (leaks.SEPARATORS, "sub", "/./"),
}


def _inputs(trigger: str) -> list[str]:
    """The trigger, then a long run of each filler, in the shapes that made patterns slow:
    one run and an end that does not match, the trigger repeated, the run between two
    words (the tab title's case)."""
    made = [trigger * (N // max(len(trigger), 1))]
    for filler in FILLERS:
        run = filler * (N // len(filler))
        made += [trigger + run + "x", (trigger + filler) * (N // (len(trigger) + len(filler)))]
        made.append(f"{trigger}a{run}b{trigger}")
    return made


def _apply(pattern: re.Pattern[Any], method: str | Callable[[str], object], text: str) -> None:
    if callable(method):
        method(text)
        return
    given: Any = (
        text.encode("utf-8", "surrogatepass") if isinstance(pattern.pattern, bytes) else text
    )
    if method == "sub":
        pattern.sub(given[:0], given)
    elif method in ("findall", "finditer", "split"):
        list(getattr(pattern, method)(given))
    else:
        getattr(pattern, method)(given)


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_pattern_over_course_text_takes_linear_time(name: str) -> None:
    pattern, method, trigger = RULES[name]
    for text in _inputs(trigger):
        started = time.process_time()
        _apply(pattern, method, text)
        took = time.process_time() - started
        assert took < BOUND, (
            f"{name} ({method}) took {took:.1f} s on {text[:20]!r}... ({len(text):,})"
        )


def test_every_pattern_of_the_builder_has_a_row() -> None:
    """A module-level `re.compile` anywhere in builder/ without a row above fails here."""
    root = Path(__file__).parents[2] / "builder"
    found = set()
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and "re.compile" in ast.unparse(node.value):
                found |= {f"{module}.{t.id}" for t in node.targets if isinstance(t, ast.Name)}
    assert found - set(RULES) == set(), "add a row to RULES for each"
