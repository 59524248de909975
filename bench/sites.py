"""The generated course as other generators' sources, so that bench/run.py and bench/serve.py
time them on the same pages: each lesson's body as a Markdown page (prose, fenced code, a
table; the builder's placements and glossary brackets taken out), and a Hugo site of those
pages (a title in front matter each, one minimal layout, no theme, code fences highlighted).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

HUGO_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>
<body><main><h1>{{ .Title }}</h1>{{ .Content }}</main></body></html>
"""
HUGO_LIST = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>
<body><main><h1>{{ .Title }}</h1><ul>{{ range .Pages }}
<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}
</ul></main></body></html>
"""
HUGO_CONFIG = """baseURL = "http://127.0.0.1/"
title = "bench"
disableKinds = ["taxonomy", "term", "RSS", "sitemap"]
[markup.highlight]
codeFences = true
"""


def lesson_bodies(content: Path) -> Iterator[tuple[str, str, str]]:
    """Each lesson of the generated course's `content` folder: its folder name, title and
    body (prose and code: the builder's placements and glossary brackets taken out)."""
    for folder in sorted((content / "lessons").iterdir()):
        text = (folder / "lesson.md").read_text()
        front, body = text.split("\n---\n", 1)
        title = re.search(r"^title: (.*)$", front, re.MULTILINE)
        name = title.group(1) if title else folder.name
        yield folder.name, name, re.sub(r"\{\{[^}]*\}\}|\[\[|\]\]", "", body)


def hugo_site(dest: Path, content: Path) -> Path:
    """A Hugo site in `dest` of the lessons of `content`, each page at /l/<folder name>/;
    the folder of its pages (a lesson's is <folder name>.md there)."""
    pages, layouts = dest / "content" / "l", dest / "layouts" / "_default"
    pages.mkdir(parents=True)
    layouts.mkdir(parents=True)
    for name, title, body in lesson_bodies(content):
        (pages / f"{name}.md").write_text(f'---\ntitle: "{title}"\n---\n{body}')
    (layouts / "single.html").write_text(HUGO_PAGE)
    (layouts / "list.html").write_text(HUGO_LIST)
    (dest / "config.toml").write_text(HUGO_CONFIG)
    return pages
