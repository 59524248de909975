"""The Jinja environment every page is rendered with (autoescape on, StrictUndefined; a
course's own templates first, builder/render/theme.py, in a sandbox), and
the macros of templates/_macros.html: the markup of the recorded things (figures, tables,
code) that the prose places inside a page's body.

A value is escaped where it meets markup: by Jinja, or by markupsafe (`Markup("<x>%s</x>")
% value`) in the Markdown rules that splice one tag; HTML made elsewhere (Pygments,
markdown-it, another macro) is passed in as Markup. No HTML is built by escaping by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from functools import cache
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
    Template,
)
from jinja2.runtime import Context
from markupsafe import Markup

from ..core.observe import TEMPLATES
from .sandbox import CourseSandbox
from .theme import CourseTemplates

MACROS = "_macros.html"
# The blocks of base.html a page's parts are read from (renderer.page): its title, its
# description and link-preview metas, and its <main> element. A course's base.html that
# has none of them still renders; the preview then reloads its pages on every change.
PARTS = ("title", "about", "main_element")
Block = Callable[[Context], Iterator[str]]


class Mark(str):
    """Where a block of PARTS begins or ends in a page's parts: an empty string, so that
    whatever joins them (the page, a `self.block()` call) is what it would be without."""

    block: str

    def __new__(cls, block: str) -> Mark:
        mark = super().__new__(cls, "")
        mark.block = block
        return mark


def _marked(name: str, block: Block) -> Block:
    def marking(context: Context) -> Iterator[str]:
        yield Mark(name)  # streamed: a page is stopped at MAX_PAGE as it is made
        yield from block(context)
        yield Mark(name)

    marking.marks = name  # type: ignore[attr-defined]
    return marking


class _Marking(Environment):
    """Every template it loads (a page's, and the ones it extends) with its PARTS blocks
    marked (`Mark`), once: Jinja keeps the template it compiled."""

    def get_template(self, *args: Any, **kwargs: Any) -> Template:
        template = super().get_template(*args, **kwargs)
        blocks: MutableMapping[str, Block] = template.blocks
        for name in PARTS:
            block = blocks.get(name)
            if block is not None and getattr(block, "marks", None) != name:
                blocks[name] = _marked(name, block)
        return template


class _Courses(_Marking, CourseSandbox):
    pass


def environment(templates: str = "") -> Environment:
    """The course's templates folder first (`templates`, "" for none), then the builder's,
    which are also reachable as builder/NAME (a course's page can extend the builder's).
    With a course's templates, sandboxed (builder/render/sandbox.py: they come with a pull
    request); the builder's alone are the builder's code, and render without the sandbox's
    checks, which every page would pay for. One environment a folder: `environment()` is
    `environment("")`, and compiles each template once."""
    return _environment(templates)


@cache
def _environment(templates: str) -> Environment:
    builder = FileSystemLoader(TEMPLATES)
    if not templates:
        return _Marking(
            loader=ChoiceLoader([builder, PrefixLoader({"builder": builder})]),
            autoescape=True,
            undefined=StrictUndefined,
            keep_trailing_newline=True,
        )
    course = CourseTemplates(templates)
    return _Courses(ChoiceLoader([course, builder, PrefixLoader({"builder": builder})]))


def code_spans(text: str) -> Markup:
    """Plain text whose `name`s are set in code font (a glossary definition): escaped, the
    marked names in <code>."""
    parts = text.split("`")
    return Markup("").join(
        Markup("<code>%s</code>") % part if odd else Markup.escape(part)
        for odd, part in ((n % 2 == 1, part) for n, part in enumerate(parts))
    )


def macro(name: str, *args: Any) -> Markup:
    """The macro `name` of templates/_macros.html called with `args`: escaped HTML. The
    template is asked of the environment each time, as a page's is, so that an edit to it
    reaches a running preview (Jinja checks the file's mtime and keeps the compiled one)."""
    module = environment().get_template(MACROS).module
    made: Markup = getattr(module, name)(*args)  # Jinja gives Markup: autoescape is on
    return made
