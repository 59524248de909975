"""What the site is made of: an Artifact is some files of the site, the pure function that
makes them (builder.render) and the digest of everything that function reads; `Made` is
what making it gave, and `Trace` what it left besides its files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import BuildError


@dataclass(frozen=True)
class Trace:
    """What making an artifact left besides its files."""

    names: tuple[str, ...] = ()  # the site files it made
    terms: tuple[str, ...] = ()  # glossary terms a lesson page uses, in order
    uses: tuple[str, ...] = ()  # store keys it was made with (highlighted code blocks)


@dataclass(frozen=True)
class Made:
    """An artifact's files by name in the site (None: the site holds them already) and
    what making it left besides."""

    files: dict[str, bytes] | None
    trace: Trace = field(default_factory=Trace)
    errors: tuple[BuildError, ...] = ()


@dataclass(frozen=True)
class Artifact:
    key: str  # the digest of everything `make` reads (and of the code)
    make: Callable[[], Made]
    kind: str = ""  # what it is ("page", "chart"): workers inherit one of each made (below)
