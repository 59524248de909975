"""Where a lesson's prose lands when it is rendered into another page of the site: the
printable course (builder/render/printed.py) renders every lesson's prose again, from its
tokens, with the rules of its own page (builder/render/prose.py with a `Move`).

Moved, the prose's ids are made to hold in the page it joins: each gets its lesson's
prefix (`<slug>--`, which no slug holds, so two lessons' ids never meet), and so does each
reference to one (`#x`, `aria-describedby`, ...); a link to a lesson (or page) the page
holds leads to its place there, and every other relative address is written from the new
page's folder. Its headings go down `shift` levels, under the page's own.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


def prefix(slug: str) -> str:
    """What a lesson's ids start with in the page it is moved into."""
    return f"{slug}--"


def place(slug: str) -> str:
    """The id of a lesson's own place (its title) in the page it is moved into."""
    return f"lesson-{slug}"


@dataclass(frozen=True)
class Move:
    """The prose of `page` (l/<slug>/index.html) rendered into `to` (print/index.html),
    which holds the lessons (and pages) of `held` (each one's file -> its slug); `label`
    tells its regions from other lessons' ("lesson 2.3")."""

    page: str
    to: str
    held: Mapping[str, str]
    shift: int = 0
    label: str = ""

    @property
    def own(self) -> str:
        return prefix(self.held[self.page])

    def id(self, name: str) -> str:
        return self.own + name

    def heading(self, tag: str) -> str:
        """`tag` (h1-h6) `shift` levels down, h6 at most."""
        return f"h{min(6, int(tag[1]) + self.shift)}"

    def address(self, address: str, authored: bool) -> str:
        """`address` as the new page must write it: a lesson it holds, by its id there.
        `authored`: written by the lesson's author, so relative to its own page; else made
        by the builder with the new page's way up to the site's root."""
        parts = urlsplit(address)
        if parts.scheme or parts.netloc or address.startswith("/"):
            return address  # not in the site, or not relative: as it was
        if not parts.path:  # "#x" or "?q": this lesson's own
            return f"#{self.own}{parts.fragment}" if parts.fragment else address
        here = posixpath.dirname(self.to) or "."
        base = posixpath.dirname(self.page) if authored else here
        path = posixpath.normpath(posixpath.join(base, parts.path))
        target = self.held.get(path) or self.held.get(f"{path}/index.html")
        if target is not None:
            return f"#{prefix(target)}{parts.fragment}" if parts.fragment else f"#{place(target)}"
        moved = posixpath.relpath(path, here) + ("/" if parts.path.endswith("/") else "")
        query = f"?{parts.query}" if parts.query else ""
        return moved + query + (f"#{parts.fragment}" if parts.fragment else "")
