"""The Jinja environment every page is rendered with (autoescape on, StrictUndefined), and
the macros of templates/_macros.html: the markup of the recorded things (figures, tables,
code) that the prose places inside a page's body.

A value is escaped where it meets markup: by Jinja, or by markupsafe (`Markup("<x>%s</x>")
% value`) in the Markdown rules that splice one tag; HTML made elsewhere (Pygments,
markdown-it, another macro) is passed in as Markup. No HTML is built by escaping by hand.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from ..core.observe import TEMPLATES

MACROS = "_macros.html"


@cache
def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def macro(name: str, *args: Any) -> Markup:
    """The macro `name` of templates/_macros.html called with `args`: escaped HTML. The
    template is asked of the environment each time, as a page's is, so that an edit to it
    reaches a running preview (Jinja checks the file's mtime and keeps the compiled one)."""
    module = environment().get_template(MACROS).module
    made: Markup = getattr(module, name)(*args)  # Jinja gives Markup: autoescape is on
    return made
