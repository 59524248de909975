"""Pygments highlighting for example code and fenced blocks in prose."""

from __future__ import annotations

import html
from functools import cache
from typing import Any

from pygments import highlight as _highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound


@cache
def _formatter() -> Any:
    return HtmlFormatter(nowrap=True)


def code_block(code: str, language: str) -> str:
    try:
        lexer = get_lexer_by_name(language or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    body = _highlight(code, lexer, _formatter()) if language else html.escape(code)
    name = html.escape(language or "text")
    return f'<pre class="highlight" data-lang="{name}"><code>{body}</code></pre>'


def python(code: str) -> str:
    return code_block(code, "python")


def fenced(code: str, language: str, attrs: str) -> str:
    """markdown-it's highlight hook for ``` blocks in prose."""
    return code_block(code, language.split()[0] if language else "")


def stylesheet() -> str:
    light = HtmlFormatter(style="xcode").get_style_defs(".highlight")
    dark = HtmlFormatter(style="lightbulb").get_style_defs(":root[data-theme=dark] .highlight")
    return f"{light}\n{dark}\n"
