"""Full-text search: the search bundles, as artifacts (builder.pipeline.make), made of what
each page's making left (`Trace.searched`: its title, taught terms and sections, kept as
its prose was rendered), never of its HTML.

static/search.js asks the bundles and merges them in the reader's browser: the main one in
search-index/main/ (the glossary), and one per run of up to BUNDLE_LESSONS lessons of an arc
in search-index/<arc>-<n>/. Each is one script (builder/render/offline.py), which a page
loads with a `<script>` tag whether the site is served or opened from disk. A bundle's key
is made of its pages' keys, so it is never older than its pages, and an edit makes again
only its page's bundle. What a page's search holds is what its templates mark
`data-pagefind-body` and do not mark `data-pagefind-ignore` (the markers the site's own
in-page highlighter reads).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..core.artifact import Artifact, Made, Searched
from .offline import script

if TYPE_CHECKING:
    from ..course.model import Course
    from .renderer import Renderer

MERGED = "search-index"
MAIN = "main"  # the bundle of the pages that are not lessons'
OFFLINE = "offline.js"  # in each bundle's folder: its pages, as a script
BUNDLE_LESSONS = 50


def bundles(course: Course) -> dict[str, list[str]]:
    """The pages of each search bundle, by bundle id ("" for the main one)."""
    result = {"": ["glossary/index.html"]}
    for arc, lessons in course.by_arc().items():
        for n, start in enumerate(range(0, len(lessons), BUNDLE_LESSONS), start=1):
            chunk = lessons[start : start + BUNDLE_LESSONS]
            result[f"{arc}-{n}"] = [f"{lesson.url}index.html" for lesson in chunk]
    return result


def bundle_folder(bundle: str) -> str:
    """Where a bundle lives inside the site."""
    return f"{MERGED}/{bundle or MAIN}/"


def bundle_artifacts(
    course: Course,
    keys: Mapping[str, str],
    found: Callable[[str], Searched | None],
    renderer: Renderer,
) -> list[Artifact]:
    """Each search bundle, keyed by the keys of its pages (`keys`: the key of the artifact
    each site file came from) and made of what a search finds on each (`found(name)`)."""
    return [
        renderer.artifact("", _made, bundle, Pages(tuple((n, keys[n]) for n in names), found))
        for bundle, names in bundles(course).items()
    ]


class Pages:
    """Pages of the site, each with the key of the artifact it came from, and what a search
    finds on them. As an argument, it is its names and keys: a key says what its page is."""

    def __init__(
        self, keys: tuple[tuple[str, str], ...], found: Callable[[str], Searched | None]
    ) -> None:
        self.keys = keys
        self.found = found

    def __digest__(self) -> tuple[tuple[str, str], ...]:
        return self.keys


def _made(bundle: str, pages: Pages) -> Made:
    """The bundle's script: its pages, in order (a page a search does not find is left out)."""
    found = [(name, pages.found(name)) for name, _ in pages.keys]
    entries = [(name, page) for name, page in found if page is not None]
    return Made({f"{bundle_folder(bundle)}{OFFLINE}": script(entries)})
