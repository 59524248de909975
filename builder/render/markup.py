"""The Jinja environment every page is rendered with (autoescape on, StrictUndefined; a
course's own templates first, builder/render/theme.py, in a sandbox), and
the macros of templates/_macros.html: the markup of the recorded things (figures, tables,
code) that the prose places inside a page's body.

A value is escaped where it meets markup: by Jinja, or by markupsafe (`Markup("<x>%s</x>")
% value`) in the Markdown rules that splice one tag; HTML made elsewhere (Pygments,
markdown-it, another macro) is passed in as Markup. No HTML is built by escaping by hand.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
)
from markupsafe import Markup

from ..core.observe import TEMPLATES
from .sandbox import CourseSandbox
from .theme import CourseTemplates

MACROS = "_macros.html"


@cache
def environment(templates: str = "") -> Environment:
    """The course's templates folder first (`templates`, "" for none), then the builder's,
    which are also reachable as builder/NAME (a course's page can extend the builder's).
    With a course's templates, sandboxed (builder/render/sandbox.py: they come with a pull
    request); the builder's alone are the builder's code, and render without the sandbox's
    checks, which every page would pay for."""
    builder = FileSystemLoader(TEMPLATES)
    if not templates:
        return Environment(
            loader=ChoiceLoader([builder, PrefixLoader({"builder": builder})]),
            autoescape=True,
            undefined=StrictUndefined,
            keep_trailing_newline=True,
        )
    course = CourseTemplates(templates)
    return CourseSandbox(ChoiceLoader([course, builder, PrefixLoader({"builder": builder})]))


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
