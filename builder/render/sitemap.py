"""sitemap.xml: every page of the site that has a canonical address, as absolute
addresses under course.yml's `site_url` (sitemaps.org 0.9). Without a site_url there is
none: a sitemap of relative addresses is not one.

The pages are those base.html gives a canonical link: the home, arc, lesson, glossary,
recordings and search pages, and the What-changed page when the build makes it; not the
404 page (served at any address) nor the redirects at old addresses (`aliases:`). No
<lastmod>: the same commit gives the same bytes (a date would change with every build).
"""

from __future__ import annotations

from ..core.artifact import Artifact, Made
from ..core.escape import encoded_address
from ..course.addresses import page_url
from .markup import environment
from .nav import SiteNav
from .renderer import Renderer

NAME = "sitemap.xml"


def artifacts(nav: SiteNav, renderer: Renderer, changes: tuple[str, ...]) -> list[Artifact]:
    """The sitemap, when the site's address is known (`changes`: the pages of what the
    recordings changed that the build makes, and the printable course when it has one)."""
    if not nav.url:
        return []
    return [renderer.artifact("", _sitemap, nav.url, pages(nav, changes))]


def pages(nav: SiteNav, changes: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The site's files that have a canonical address, in course order."""
    return (
        "index.html",
        *(
            name
            for arc in nav.arcs
            for name in (f"a/{arc.id}/index.html", *(f"{x.url}index.html" for x in arc.lessons))
        ),
        "glossary/index.html",
        "recordings/index.html",
        "search/index.html",
        *changes,
    )


def _sitemap(site_url: str, names: tuple[str, ...]) -> Made:
    """templates/sitemap.xml, each address percent-encoded (a control character is no XML)
    and escaped by Jinja (autoescape holds for XML too)."""
    urls = [encoded_address(page_url(site_url, name)) for name in names]
    text = environment().get_template(NAME).render(urls=urls)
    return Made({NAME: text.encode("utf-8")})
