"""What every page is rendered with besides the course (`Renderer`), and `page`, which
renders one template: shared by the lesson pages, the other pages, the sitemap and the
search bundles.

A Renderer is handed, never asks for, what makes its expensive pure calls cheap: a `cache`
(builder.course.validation.Cache) for highlighted code and charts. It gives what the plain
call gives, so what is rendered is a pure function of its arguments.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from ..core.artifact import Artifact, Made, Parts
from ..core.observe import TEMPLATES
from ..course.addresses import page_url
from ..course.model import Lesson
from ..course.recording import Panel
from ..course.validation import Cache, uncached
from . import anchors, charts, figures, prose
from .highlight import code_block
from .markup import Mark, environment
from .nav import SiteHead, SiteNav
from .sandbox import render


class Renderer:
    """What every page is rendered with besides the course: a cache of highlighted code and
    charts (Pygments would cost a one-page edit more than the rest of its page)."""

    def __init__(self, cache: Cache = uncached) -> None:
        self.cache = cache

    def artifact(self, kind: str, fn: Callable[..., Made], *args: Any, label: str = "") -> Artifact:
        """`fn(*args)` as an artifact: `fn` reads nothing but `args` (builder.core.artifact)."""
        return Artifact(fn, args, kind, label)

    def highlight(self, code: str, language: str) -> str:
        return self.cache("highlight", (language, code), lambda: code_block(code, language))

    def size(self, panel: Panel, narrow: bool) -> tuple[int, int]:
        """A chart's size on the page (figures.chart_size), cached by what it draws, as the
        chart is: panels that differ only in their title are measured once."""
        parts = (charts.drawing(panel), str(narrow))
        return self.cache("chart-size", parts, lambda: figures.chart_size(panel, narrow))

    def page_ids(self, lesson: Lesson) -> tuple[str, ...]:
        """The ids a lesson's page gives its headings and placed cells (anchors.page_ids),
        cached by its body and its cells' names: another lesson's anchored link reads them."""
        cells = " ".join(cell.name for cell in lesson.cells if not cell.hide)
        parts = (lesson.body, cells)
        return self.cache("page-ids", parts, lambda: anchors.page_ids(prose.parser(), lesson))

    def chart(self, panel: Panel) -> dict[str, dict[str, bytes]]:
        """A chart's SVGs by size and theme (charts.sized_svgs), cached by what it draws:
        drawn once however many lessons show the same chart."""
        parts = (charts.drawing(panel), repr(charts.SIZES))
        return self.cache("chart-svgs", parts, lambda: charts.sized_svgs(panel))

    def __digest__(self) -> str:
        """As an argument of a page or chart: what it gives is a pure function of the code (its
        highlighted blocks and charts, of what they are given), in every key."""
        return "renderer"


def page(
    template: str, nav: SiteNav | SiteHead, path: str = "", **context: Any
) -> tuple[bytes, Parts | None]:
    """The page `template` makes, and its parts (`parts`); `path`: its file in the site,
    which with the site's address (course.yml's site_url) is its canonical address
    (base.html)."""
    canonical = page_url(nav.url, path) if nav.url and path else ""
    templates = nav.theme.templates
    folders = (
        (templates + os.sep, str(TEMPLATES) + os.sep) if templates else (f"{TEMPLATES}{os.sep}",)
    )
    made = render(
        environment(templates), template, folders, site=nav, canonical=canonical, **context
    )
    text = "".join(made)
    return text.encode("utf-8"), parts(path, text, made)


def parts(path: str, text: str, made: list[str]) -> Parts | None:
    """Where the template placed the blocks a page's parts are (markup.PARTS), as it made
    them (`made`, whose marks say where each block begins and ends): its <main> element
    (by byte, in the page's file), its title as a browser shows it, and a digest of the
    rest but its description and link-preview metas (its frame: what the preview cannot
    swap in place). None when the template has no <main> block."""
    spans: dict[str, tuple[int, int]] = {}
    at = 0
    for part in made:
        if isinstance(part, Mark):
            spans[part.block] = (spans[part.block][0], at) if part.block in spans else (at, at)
        at += len(part)
    if "main_element" not in spans:
        return None
    frame, last = [], 0
    for start, end in sorted(spans.values()):
        frame.append(text[last:start])
        last = end
    frame.append(text[last:])
    start, end = spans["main_element"]
    main = (len(text[:start].encode()), len(text[:end].encode()))
    title = Markup(text[slice(*spans["title"])]).unescape() if "title" in spans else None
    frame_digest = hashlib.blake2b("\0".join(frame).encode(), digest_size=16).hexdigest()
    return Parts(path, main, title, frame_digest)
