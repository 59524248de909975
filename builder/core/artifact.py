"""What the site is made of: an Artifact is some files of the site, the pure function that
makes them (builder.render) and the arguments it makes them from, which are all it reads.
`Made` is what making it gave, and `Trace` what it left besides its files. Keys are the
build's (builder.pipeline.keys)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import BuildError


@dataclass(frozen=True)
class Parts:
    """A page's parts, as its template placed them (builder.render.renderer.page): what the
    preview swaps in place of the open page's, and what says whether it may."""

    name: str  # the page's file in the site
    main: tuple[int, int]  # where its <main> element is in the file's bytes
    title: str | None  # the document's title, as a browser shows it (None: not a part)
    frame: str  # a digest of the rest but its description and link-preview metas


@dataclass(frozen=True)
class Searched:
    """A page as its search bundle holds it (builder.render.search), made as the page is:
    its title, the glossary terms it teaches (joined, as a result shows them) and its
    sections: the text above its first anchored heading (id and heading ""), then one an
    anchored heading or glossary term, each (id, heading, the text under it)."""

    title: str
    teaches: str
    sections: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Trace:
    """What making an artifact left besides its files."""

    names: tuple[str, ...] = ()  # the site files it made
    terms: tuple[str, ...] = ()  # glossary terms a lesson page uses, in order
    uses: tuple[str, ...] = ()  # store keys it was made with (highlighted code blocks)
    page: Parts | None = None  # the parts of the page it made, if any
    searched: Searched | None = None  # what a search finds on the page, if it is searched


@dataclass(frozen=True)
class Made:
    """An artifact's files by name in the site (None: the site holds them already) and
    what making it left besides."""

    files: dict[str, bytes] | None
    trace: Trace = field(default_factory=Trace)
    errors: tuple[BuildError, ...] = ()


@dataclass(frozen=True)
class Artifact:
    """`fn(*args)`: `fn` is a module-level function (its code is in the code digest) and
    reads nothing but `args`, which are values a key can take (frozen dataclasses, tuples,
    strings, numbers...)."""

    fn: Callable[..., Made]
    args: tuple[Any, ...]
    kind: str = ""  # what it is ("page", "chart")
    label: str = ""  # whose it is (a lesson id), for the progress line; not in the key

    def make(self) -> Made:
        return self.fn(*self.args)
