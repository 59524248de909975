"""The search index a page opened from disk reads: a bundle's pages as a script
(`offline.js` beside its Pagefind files, builder/render/search.py).

A page opened from a file may load a script with a `<script>` tag, but not fetch a file or
import a module, as Pagefind does. So each bundle also carries its pages' text as a script
that adds them to a global list (as mkdocs-material's offline plugin keeps
`search_index.js`), which static/search.js searches when Pagefind cannot be loaded. The
text is Pagefind's own fragments (text, meta, anchors), so both indexes hold the same words
and no page is read twice; offline, code and output weigh as much as prose.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import BuildError

GLOBAL = "coursebuilderSearch"  # the list every bundle's script adds its pages to
FRAGMENT = "/fragment/"  # where a bundle keeps one file per page
_SIGNATURE = b"pagefind_dcd"  # what a fragment's JSON follows, once it is unzipped
_HEADING = frozenset(("h1", "h2", "h3", "h4", "h5", "h6", "dt"))  # with an id: a section
# What a script must not hold as it is: the end of its element or a comment's start (were
# it ever inlined), and the line and paragraph separators that end a line in older engines.
_UNSAFE = re.compile("[<>&\u2028\u2029]")


def script(names: Iterable[str], bundle: Mapping[str, bytes]) -> bytes:
    """The offline index of the pages `names` (their files in the site), made from the
    fragments among a Pagefind bundle's files (`bundle`, by path), as a script that adds
    them, in that order, to `window.coursebuilderSearch`."""
    entries = {}
    for path, data in bundle.items():
        if FRAGMENT in path and path.endswith(".pf_fragment"):
            entry = page_index(_fragment(path, data))
            entries[entry["url"]] = entry
    pages = [entries[name] for name in names if name in entries]
    return f"(window.{GLOBAL} = window.{GLOBAL} || []).push({in_script(pages)});\n".encode()


def in_script(value: object) -> str:
    """`value` as JSON that is the same value in a script, wherever it stands: no `<`, `>`
    or `&` (no `</script>` or `<!--`), no line or paragraph separator."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _fragment(path: str, data: bytes) -> dict[str, object]:
    """A fragment file's JSON: gzip around Pagefind's signature and the JSON."""
    try:
        raw = gzip.decompress(data)
        if not raw.startswith(_SIGNATURE):
            raise ValueError("it does not start with Pagefind's signature")
        found = json.loads(raw[len(_SIGNATURE) :])
        if not isinstance(found, dict):
            raise ValueError("it is not an object")
        return found
    except (OSError, EOFError, ValueError) as error:  # a Pagefind whose format changed
        raise BuildError(
            f"Pagefind's {path} cannot be read ({error}): the offline search index was not built",
            hint="reinstall the Pagefind the lock pins (pip install -r requirements.lock)",
        ) from None


def page_index(fragment: Mapping[str, object]) -> dict[str, object]:
    """One page's entry from its fragment: its file in the site, its title (its first h1,
    Pagefind's), the terms it teaches, and its sections (the text before its first heading,
    then one a heading or glossary term with an id and text): [id, heading, text]."""
    meta = fragment.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    words = str(fragment.get("content", "")).split()
    sections: list[list[str]] = []
    start, heading, section = 0, "", ""
    for anchor in _headings(fragment.get("anchors")):
        sections.append([section, heading, " ".join(words[start : anchor["location"]])])
        heading = " ".join(anchor["text"].split())
        section = anchor["id"]
        start = anchor["location"] + len(heading.split())  # its words: Pagefind ends them "."
    sections.append([section, heading, " ".join(words[start:])])
    return {
        "url": str(fragment.get("url", "")).lstrip("/"),
        "title": str(meta.get("title", "")),
        "teaches": str(meta.get("teaches", "")),
        "sections": [s for s in sections if s[1] or s[2]],
    }


def _headings(anchors: object) -> list[dict[str, Any]]:
    """The anchors that start a section, in the page's order."""
    if not isinstance(anchors, list):
        return []
    found = [
        a
        for a in anchors
        if isinstance(a, dict)
        and a.get("element") in _HEADING
        and a.get("id")
        and isinstance(a.get("text"), str)
        and a["text"].strip()
        and isinstance(a.get("location"), int)
    ]
    return sorted(found, key=lambda a: a["location"])
