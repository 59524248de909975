"""Pygments highlighting for example code and fenced blocks in prose, remembered by content.

Pygments compiles a lexer's regular expressions on first use (0.2 s for Python), so a
build that re-renders one page would spend most of its time there. Highlighted blocks are
kept in `.cache/highlight.pickle` by a hash of (Pygments version, language, code): a page
whose code blocks were highlighted before does not import Pygments at all.
"""

from __future__ import annotations

import hashlib
import html
import pickle
from functools import cache
from pathlib import Path
from typing import Any

STORE_FILE = "highlight.pickle"
MAX_STORED = 50_000  # blocks

_known: dict[str, str] = {}  # key -> highlighted HTML, loaded from the store
_made: dict[str, str] = {}  # highlighted in this process since the store was loaded
_used: set[str] = set()


def load_store(cache_dir: Path) -> None:
    """Read the blocks highlighted by earlier builds (a damaged store is ignored)."""
    _known.clear()
    _made.clear()
    _used.clear()
    try:
        known = pickle.loads((cache_dir / STORE_FILE).read_bytes())
    except (OSError, ValueError, EOFError, pickle.UnpicklingError):
        return
    if isinstance(known, dict):
        _known.update(known)


def made() -> dict[str, str]:
    """Blocks highlighted in this process (forked renderers hand them back)."""
    return dict(_made)


def adopt(blocks: dict[str, str]) -> None:
    _made.update(blocks)
    _used.update(blocks)


def save_store(cache_dir: Path) -> None:
    """Add what this build highlighted; written only when that is something new.

    A build that re-renders a few pages uses few blocks, so unused ones are kept; the store
    is cut back to this build's blocks only when it grows past MAX_STORED.
    """
    if not _made:
        return
    from .fsutil import write_atomic

    store = _known | _made
    if len(store) > MAX_STORED:
        store = {key: store[key] for key in _used}
    write_atomic(cache_dir / STORE_FILE, pickle.dumps(store, protocol=5), durable=False)


def code_block(code: str, language: str) -> str:
    key = hashlib.sha256(f"{_pygments_version()}\0{language}\0{code}".encode()).hexdigest()
    _used.add(key)
    body = _known.get(key) or _made.get(key)
    if body is None:
        body = _made[key] = _highlight(code, language)
    name = html.escape(language or "text")
    return f'<pre class="highlight" data-lang="{name}"><code>{body}</code></pre>'


def _highlight(code: str, language: str) -> str:
    if not language:
        return html.escape(code)
    from pygments import highlight
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    return str(highlight(code, lexer, _formatter()))


@cache
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(nowrap=True)


@cache
def _pygments_version() -> str:
    from .buildcache import package_version  # known from the last build's state, usually

    return package_version("pygments")


def python(code: str) -> str:
    return code_block(code, "python")


def fenced(code: str, language: str, attrs: str) -> str:
    """markdown-it's highlight hook for ``` blocks in prose."""
    return code_block(code, language.split()[0] if language else "")


def stylesheet() -> str:
    key = f"stylesheet\0{_pygments_version()}"
    _used.add(key)
    css = _known.get(key) or _made.get(key)
    if css is None:
        from pygments.formatters import HtmlFormatter

        light = HtmlFormatter(style="xcode").get_style_defs(".highlight")
        dark = HtmlFormatter(style="lightbulb").get_style_defs(":root[data-theme=dark] .highlight")
        css = _made[key] = f"{light}\n{dark}\n"
    return css
