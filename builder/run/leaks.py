"""What a recording must not keep: this machine's absolute paths and the builder's secrets,
in any spelling or encoding an example can print them in without trying hard.

Pure functions, used by builder/run/execute.py after each run: `leaked` is the one check,
over every string the recording would keep. Each guarded value is a set of needles, made
once (the value, reversed, rot13, hex, base64 at each byte alignment); what was printed is
read as a few views, each a linear pass (escapes undone, path spellings made one,
whitespace and invisible characters dropped, lower-cased), every string alone and all of
them joined, in order and in reverse, so a value split between prints or between stdout and
a panel is found. docs/isolation.md, What an example can reach, lists the spellings.

Out of reach, and not tried: encryption, values split over strings that are not next to
each other, encodings of encodings, compression. An example set on publishing what it can
read will find a way; `--sandbox` gives it nothing to leak.
"""

from __future__ import annotations

import base64
import codecs
import html
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote

MIN_SECRET = 8  # shorter values ("1", "true", "x86_64") turn up in honest output
MIN_ENCODED = 8  # an encoded form shorter than this turns up by chance
MIN_PART, MAX_PART = 6, 64  # of a value split between two strings (`_split`)
NAMED_LEVELS = 3  # how deep a message names the place of a string: "series[0].label"
# Unicode's format characters (category Cf: zero-width space and joiners, bidi controls,
# soft hyphen, word joiner, tags...) and the fillers and selectors that show as nothing;
# written out, as finding them in unicodedata walks every code point at each import.
INVISIBLE = re.compile(
    r"[\s\u00AD\u034F\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u115F\u1160\u17B4"
    r"\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF"
    r"\uFFA0\uFFF9-\uFFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3"
    r"\U0001D173-\U0001D17A\U000E0001-\U000E007F\U000E0100-\U000E01EF]+"
)
ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([0-7]{3})|([/\\]))")
SEPARATORS = re.compile(r"/(?:\.?/)+")  # "//", "/./", "/.//./": one "/"


@dataclass(frozen=True)
class Needle:
    """One spelling of a guarded value, as the views read it."""

    text: str
    what: str  # "the absolute path '/home/x'" or "the value of ... variable NAME"
    how: str  # "" or how it was encoded: " reversed", " as base64", ...
    secret: bool


def leaked(recorded: dict[str, Any], folders: Iterable[Path], secrets: dict[str, str]) -> str:
    """Why what a run recorded cannot be kept, or "": the one check of every string a
    recording keeps from the run (`recorded`: stdout, each panel, the environment, walked
    to the last string of every list and object), for an absolute path of this machine
    (one of `folders`, as given and resolved, or `HOME`: it makes the recording
    machine-specific and publishes the machine's layout) and for a value of `secrets`,
    in any of the spellings the module docstring lists."""
    paths = tuple(machine_paths(folders))
    needles = path_needles(paths) + secret_needles(tuple(sorted(secrets.items())))
    placed = list(strings(recorded))
    views = [_views(text) for _, text in placed]
    read = _joined(views)
    for needle in needles:
        if any(needle.text in view for view in read):
            return _message(needle, _place(needle, placed, views))
    split = _split(needles, views)
    return _message(split, SPLIT) if split else ""


SPLIT = "the end of one of stdout and the panels' strings and the start of another"
TOGETHER = "stdout and the panels, read together,"


def _message(needle: Needle, place: str) -> str:
    verb = "contain" if place in (SPLIT, TOGETHER) else "contains"
    if needle.secret:
        return (
            f"{place} {verb} {needle.what}{needle.how}, which the example was not given; "
            "a recording is committed and published: print only what the example computes"
        )
    return f"{place} {verb} {needle.what}{needle.how}; show paths relative to the cwd"


def _place(needle: Needle, placed: list[tuple[str, str]], views: list[tuple[str, str, str]]) -> str:
    """The first string whose views hold `needle`, else the strings read together."""
    pairs = zip(placed, views, strict=True)
    held = (name for (name, _), seen in pairs if any(needle.text in v for v in seen))
    return next(held, TOGETHER)


def _views(text: str) -> tuple[str, str, str]:
    """`text` as printed, with its escapes undone, and that with a path's spellings made
    one: each without whitespace or invisible characters, lower-cased."""
    plain = squash(text)
    undone = squash(decoded(text)) if any(c in text for c in "&\\%") else plain
    return plain, undone, tidy(undone)


def _joined(views: list[tuple[str, str, str]]) -> set[str]:
    """What every needle is looked for in: each kind of view of all the strings joined
    (a value split over lines or prints: stdout is one string), and the path-tidied view
    of each string that has one (joining can take a `..` past a string's start)."""
    read = {"".join(v[kind] for v in views) for kind in range(3)}
    read |= {v[2] for v in views if v[2] != v[1]}
    return read


def _split(needles: tuple[Needle, ...], views: list[tuple[str, str, str]]) -> Needle | None:
    """A needle cut in two, each part at least MIN_PART long at an edge (the start or the
    end) of a string (stdout ends with half a secret, a panel's title is the other half):
    a few set lookups a string and a needle, not a search."""
    edges: set[str] = set()
    for view in {view for each in views for view in each[:2]}:
        longest = min(len(view), MAX_PART) + 1
        edges.update(view[-size:] for size in range(MIN_PART, longest))
        edges.update(view[:size] for size in range(MIN_PART, longest))
    for needle in needles:
        text = needle.text
        for cut in range(MIN_PART, min(len(text) - MIN_PART, MAX_PART) + 1):
            if text[:cut] in edges and text[cut:] in edges:
                return needle
    return None


def squash(text: str) -> str:
    """`text` without whitespace or invisible characters, lower-cased."""
    return INVISIBLE.sub("", text).lower()


def decoded(text: str) -> str:
    r"""`text` with HTML character references, JSON and Python escapes (`\/`, `\u002f`,
    `\x2f`, `\057`) and URL escapes (twice: `%252F`) undone, each where there is one."""
    if "&" in text:
        text = html.unescape(text)
    for _ in range(2):  # `\\u002f` too: JSON of JSON
        if "\\" in text:
            text = ESCAPE.sub(_unescape, text)
    for _ in range(2):
        if "%" in text:
            text = unquote(text, errors="replace")
    return text


def _unescape(match: re.Match[str]) -> str:
    four, two, octal, itself = match.groups()
    if itself:
        return itself
    return chr(int(four or two, 16) if four or two else int(octal, 8))


def tidy(text: str) -> str:
    """`text` with the spellings of a path made one: `//` and `/./` a `/`, `a/../b` `b`."""
    text = SEPARATORS.sub("/", text) if "/" in text else text
    if "/.." not in text:
        return text
    kept: list[str] = []
    for part in text.split("/"):
        if part == ".." and kept and kept[-1] not in ("", ".."):
            kept.pop()
        else:
            kept.append(part)
    return "/".join(kept)


@lru_cache(maxsize=8)
def path_needles(paths: tuple[str, ...]) -> tuple[Needle, ...]:
    return tuple(
        needle
        for path in paths
        for needle in _needles(path, f"the absolute path {path!r}", secret=False)
    )


@lru_cache(maxsize=8)
def secret_needles(secrets: tuple[tuple[str, str], ...]) -> tuple[Needle, ...]:
    what = "the value of the builder's environment variable {}"
    return tuple(
        needle
        for value, name in secrets
        for needle in _needles(value, what.format(name), secret=True)
    )


def _needles(value: str, what: str, *, secret: bool) -> list[Needle]:
    """`value`'s spellings (module docstring), each as the views read it; a secret's
    encoded ones only when it is long enough not to turn up by chance ("true" does), a
    path's whatever its length (a checkout at `/tmp/cc`), each encoded form kept only when
    it is long enough itself."""
    plain = squash(value)
    forms = {(plain, ""), (tidy(plain), "")}
    if not secret or len(plain) >= MIN_SECRET:
        data = value.encode("utf-8", "surrogateescape")
        forms |= {(plain[::-1], " reversed"), (codecs.encode(plain, "rot13"), " in rot13")}
        forms |= {(data.hex(), " as hex")}
        forms |= {(form, " as base64") for form in _base64(data)}
    return [
        Needle(text, what, how, secret)
        for text, how in sorted(forms)
        if text and (not how or len(text) >= MIN_ENCODED)
    ]


def _base64(data: bytes) -> set[str]:
    """The base64 characters that only `data` decides, at each of the 3 byte offsets it
    can start at inside a longer text, standard and URL-safe, lower-cased."""
    forms = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode()
        part = encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6]
        forms |= {part.lower(), part.translate(URLSAFE).lower()}
    return forms


URLSAFE = str.maketrans("+/", "-_")


def machine_paths(folders: Iterable[Path]) -> list[str]:
    """`folders` as given and resolved, and `HOME`, longest first; never `/`."""
    home = os.path.expanduser("~")
    candidates = {str(path) for folder in folders for path in (folder, folder.resolve())}
    candidates |= {home}
    return sorted((c for c in candidates if len(c) > 1), key=lambda path: (-len(path), path))


def strings(places: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every string in `places`' values, in order, each with where it is: ("stdout", ...),
    ("panel 1 (labels[2])", ...), named to the third level. A loop, not recursion, and
    names that stop growing: the example chooses how deep its panels nest."""
    todo: list[tuple[str, str, int, Any]] = [(name, "", 0, item) for name, item in places.items()]
    todo.reverse()
    while todo:
        name, inner, depth, value = todo.pop()
        if isinstance(value, str):
            yield (f"{name} ({inner.lstrip('.')})" if inner else name), value
            continue
        if isinstance(value, dict):
            items = [(f".{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            items = [(f"[{index}]", item) for index, item in enumerate(value)]
        else:
            continue
        named = depth < NAMED_LEVELS
        todo.extend(
            (name, inner + step if named else inner, depth + 1, item)
            for step, item in reversed(items)
        )


def builder_secrets(child: dict[str, str]) -> dict[str, str]:
    """The builder's environment variables the example was not given, by value: the
    example can still read them (from /proc/<parent>/environ, as the same user), so what it
    prints is checked for them. Values shorter than MIN_SECRET are left out."""
    given = set(child.values())
    return {
        value: name
        for name, value in sorted(os.environ.items())
        if len(value) >= MIN_SECRET and value not in given
    }


def redact(text: str, secrets: dict[str, str]) -> str:
    """`text` with each secret value replaced by the name of its variable, as `$NAME`."""
    for value, name in secrets.items():
        text = text.replace(value, f"${name}")
    return text
