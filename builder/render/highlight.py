"""Pygments highlighting for example code and fenced blocks in prose: pure functions.

Pygments compiles a lexer's regular expressions on first use (a tenth of a second for
Python), so a build that re-renders one page would spend much of its time there: the build
hands rendering a `Highlighter` whose results the store keeps (builder.render.renderer.Renderer).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from markupsafe import Markup

Highlighter = Callable[[str, str], str]  # (code, language) -> the block's HTML


def code_block(code: str, language: str) -> Markup:
    """A `<pre>` block of `code` highlighted as `language` (plain text when unknown)."""
    return Markup('<pre class="highlight" data-lang="%s"><code>%s</code></pre>') % (
        language or "text",
        _highlight(code, language),
    )


def _highlight(code: str, language: str) -> str:
    """Pygments' HTML (Markup), or `code` itself, to be escaped, when it has no language."""
    if not language:
        return code
    from pygments import highlight
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    return Markup(highlight(code, lexer, _formatter()))


@cache
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


def stylesheet() -> str:
    """The CSS of both themes' highlighting; paper gets the light one whatever the screen's
    theme (a printer leaves out backgrounds: the dark theme's pale text would be all there is)."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="xcode").get_style_defs(".highlight")
    dark = HtmlFormatter(style="lightbulb").get_style_defs(":root[data-theme=dark] .highlight")
    return f"{light}\n@media screen {{\n{dark}\n}}\n"
