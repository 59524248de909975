"""The floor to compare with: markdown-it-py + Jinja2 + Pygments in one loop, no site logic.

    python bench/baseline.py CONTENT OUT

Renders every lesson.md under CONTENT/lessons (front matter dropped, fenced code
highlighted) into one HTML file each under OUT. No recordings, charts, navigation,
glossary or caching: what any static-site generator must at least do for these pages.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jinja2 import Environment
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{{ title }}</title></head>
<body><main>{{ body }}</main></body></html>
"""


def main(content: Path, out: Path) -> None:
    formatter = HtmlFormatter(nowrap=True)

    def fenced(code: str, language: str, attrs: str) -> str:
        lexer = get_lexer_by_name(language.split()[0] if language else "text")
        return f"<pre><code>{highlight(code, lexer, formatter)}</code></pre>"

    md = MarkdownIt("commonmark", {"highlight": fenced}).enable("table")
    template = Environment(autoescape=False).from_string(PAGE)
    for folder in sorted((content / "lessons").iterdir()):
        text = (folder / "lesson.md").read_text("utf-8")
        body = text.split("\n---\n", 1)[1]
        page = template.render(title=folder.name, body=md.render(body))
        target = out / folder.name / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, "utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
