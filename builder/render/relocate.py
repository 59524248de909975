"""A lesson page's body, as it was rendered, moved into another page of the site: the
printable course (builder/render/printed.py) holds every lesson's body, so it takes each
from the lesson's page rather than render it twice.

Moved, the body's ids and links are made to hold in the page it joins: each id gets its
lesson's prefix (`<slug>--`, which no slug holds, so two lessons' ids never meet) and so
does each attribute that names one (`for`, `aria-describedby`, ...); a link to a lesson
the page holds leads to that lesson's place in it, and every other relative address is
written from the new page's folder. Its headings go down `shift` levels, under the page's
own. Nothing else of the markup changes.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlsplit

from markupsafe import Markup

_ID_LISTS = ("aria-describedby", "aria-labelledby", "aria-controls", "for", "headers")
# A start tag with one of these attributes is written again (see _attribute)
_CHANGED = re.compile(r"\s(?:id|href|src|srcset|loading|aria-[a-z]+|for|headers)\s*=", re.I)
_VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "source", "track", "wbr"})


def prefix(slug: str) -> str:
    """What a lesson's ids start with in the page it is moved into."""
    return f"{slug}--"


def place(slug: str) -> str:
    """The id of a lesson's own place (its title) in the page it is moved into."""
    return f"lesson-{slug}"


@dataclass(frozen=True)
class Move:
    """`page` (l/<slug>/index.html) into `to` (print/index.html), which holds the lessons
    of `held` (each lesson page's file -> its slug)."""

    page: str
    to: str
    held: Mapping[str, str]
    shift: int = 0


def moved_body(html: bytes, move: Move) -> Markup:
    """What the first element of class `prose` holds in `html`, moved (see the module)."""
    mover = _Mover(move)
    mover.feed(html.decode("utf-8", "replace"))
    mover.close()
    return Markup("".join(mover.out))  # the page's own markup, its changed tags escaped


class _Mover(HTMLParser):
    def __init__(self, move: Move) -> None:
        super().__init__(convert_charrefs=False)
        self.move = move
        self.own = prefix(move.held[move.page])
        self.out: list[str] = []
        self.tag = ""  # the body's element, once found
        self.depth = 0  # how many of its kind are open, itself included
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=True)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], closed: bool) -> None:
        if self.done:
            return
        if not self.depth:
            classes = (dict(attrs).get("class") or "").split()
            if "prose" in classes and not closed and tag not in _VOID:
                self.tag, self.depth = tag, 1
            return
        self.depth += tag == self.tag and not closed
        text = self.get_starttag_text() or ""
        if not _CHANGED.search(text) and self._heading(tag) == tag:
            self.out.append(text)  # most tags (a highlighted token's span): as they were
            return
        shown = Markup("").join(self._attribute(name, value) for name, value in attrs)
        end = Markup(" />") if closed else Markup(">")
        self.out.append(Markup("<%s%s%s") % (self._heading(tag), shown, end))

    def handle_endtag(self, tag: str) -> None:
        if not self.depth or self.done:
            return
        if tag == self.tag:
            self.depth -= 1
            if not self.depth:
                self.done = True
                return
        self.out.append("</" + self._heading(tag) + ">")  # a name the parser read: [a-z0-9]

    def _inside(self) -> bool:
        return self.depth > 0 and not self.done

    def handle_data(self, data: str) -> None:
        if self._inside():
            self.out.append(data)  # the page's own text, escaped as it was

    def handle_entityref(self, name: str) -> None:
        if self._inside():
            self.out.append(Markup("&%s;") % name)

    def handle_charref(self, name: str) -> None:
        if self._inside():
            self.out.append(Markup("&#%s;") % name)

    def handle_comment(self, data: str) -> None:
        pass  # a comment says nothing to a reader

    def _heading(self, tag: str) -> str:
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            return f"h{min(6, int(tag[1]) + self.move.shift)}"
        return tag

    def _attribute(self, name: str, value: str | None) -> Markup:
        if value is None:
            return Markup(" %s") % name
        if name == "loading":  # a lazy image may not be loaded when the page is printed
            return Markup("")
        if name == "id":
            value = self.own + value
        elif name in _ID_LISTS:
            value = " ".join(self.own + x for x in value.split())
        elif name in ("href", "src"):
            value = self._address(value)
        elif name == "srcset":
            value = ", ".join(self._candidate(x) for x in value.split(","))
        return Markup(' %s="%s"') % (name, value)

    def _candidate(self, candidate: str) -> str:
        address, _, size = candidate.strip().partition(" ")
        return f"{self._address(address)} {size}".strip()

    def _address(self, address: str) -> str:
        """`address` as the moved page must write it: a lesson it holds, by its id there."""
        parts = urlsplit(address)
        if parts.scheme or parts.netloc or address.startswith("/"):
            return address  # not in the site, or not relative: as it was
        if not parts.path:  # "#x" or "?q": this lesson's own
            return f"#{self.own}{parts.fragment}" if parts.fragment else address
        path = posixpath.normpath(posixpath.join(posixpath.dirname(self.move.page), parts.path))
        target = self.move.held.get(path) or self.move.held.get(f"{path}/index.html")
        if target is not None:
            return f"#{prefix(target)}{parts.fragment}" if parts.fragment else f"#{place(target)}"
        here = posixpath.dirname(self.move.to) or "."
        moved = posixpath.relpath(path, here) + ("/" if parts.path.endswith("/") else "")
        query = f"?{parts.query}" if parts.query else ""
        return moved + query + (f"#{parts.fragment}" if parts.fragment else "")
