"""What every page is rendered with besides the course (`Renderer`: the memo that keeps
highlighted code and charts in the store, and the digests that key every artifact), and
`page`, which renders one template: shared by the lesson pages (builder/render/lessons.py),
the other pages (pages.py), the sitemap and the search bundles."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..core.artifact import Artifact, Made
from ..core.observe import TEMPLATES
from ..core.store import Memo
from ..course.addresses import page_url
from ..course.model import Lesson
from ..course.recording import BarPanel
from . import charts, figures
from .highlight import code_block
from .links import Target, target
from .markup import environment
from .nav import NavItem, SiteHead, SiteNav, item
from .sandbox import render


class Renderer:
    """What every page is rendered with besides the course: the memo that keeps highlighted
    code in the store (Pygments would cost a one-page edit more than the rest of its page),
    and with it the digests that key every artifact (`artifact`)."""

    def __init__(self, memo: Memo) -> None:
        self.memo = memo

    def artifact(self, kind: str, fn: Callable[..., Made], *args: Any, label: str = "") -> Artifact:
        """`fn(*args)` as an artifact keyed by `fn` and `args` (builder.core.artifact)."""
        return Artifact.of(self.memo.digests, kind, fn, *args, label=label)

    def items(self, lessons: Sequence[Lesson], numbers: Sequence[str]) -> tuple[NavItem, ...]:
        """The lessons' entries in the navigation, each the last build's object when made of
        the same (`Digests.again_each`): a navigation, or the links, of a thousand such
        entries is then told to be the last build's by their identity, not compared entry
        by entry, and a refresh makes (and compares) the entries of the lessons it read
        again alone."""
        digests = self.memo.digests
        numbers = digests.kept(tuple(numbers), slot="numbers")  # made again: told in C
        return digests.again_each(item, lessons, numbers, slot="nav")

    def targets(self, lessons: Sequence[Lesson]) -> tuple[Target, ...]:
        """The lessons as links lead to them, each the last build's object when made of the
        same (as `items`)."""
        return self.memo.digests.again_each(target, lessons, slot="links")

    def highlight(self, code: str, language: str) -> str:
        return self.memo("highlight", (language, code), lambda: code_block(code, language))

    def size(self, panel: BarPanel, narrow: bool) -> tuple[int, int]:
        """A chart's size on the page (figures.chart_size), kept in the store by what it
        draws, as the chart is: panels that differ only in their title are measured once."""
        parts = (charts.drawing(panel), str(narrow))
        return self.memo("chart-size", parts, lambda: figures.chart_size(panel, narrow))

    def chart(self, panel: BarPanel) -> dict[str, dict[str, bytes]]:
        """A chart's SVGs by size and theme (charts.sized_svgs), kept in the store by what it
        draws: drawn once however many lessons show the same chart."""
        parts = (charts.drawing(panel), repr(charts.SIZES))
        return self.memo("chart-svgs", parts, lambda: charts.sized_svgs(panel))

    def __digest__(self) -> str:
        """As an argument of a page or chart: what it gives is a pure function of the code (its
        highlighted blocks and charts, of what they are given), in every key."""
        return "renderer"


def page(template: str, nav: SiteNav | SiteHead, path: str = "", **context: Any) -> bytes:
    """The page `template` makes; `path`: its file in the site, which with the site's
    address (course.yml's site_url) is its canonical address (base.html)."""
    canonical = page_url(nav.url, path) if nav.url and path else ""
    templates = nav.theme.templates
    folders = (
        (templates + os.sep, str(TEMPLATES) + os.sep) if templates else (f"{TEMPLATES}{os.sep}",)
    )
    made = render(
        environment(templates), template, folders, site=nav, canonical=canonical, **context
    )
    return made.encode("utf-8")
