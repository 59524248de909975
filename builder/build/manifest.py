"""What the last good build read and wrote, kept in the store (builder.core.store) when it ends.

- `inputs`: the metadata (mtime_ns, size, inode, ctime_ns) of every file a build reads -
  content/, recordings/, builder/ (its templates inside) - and of the interpreter and its
  site-packages folders (installing a package changes their mtime), taken *before* the
  build read anything, so an edit made during a build shows up in the next one;
- `site`: the same metadata of every file in the site folder after the build;
- `files`: the key of the artifact (builder.build.make) each site file holds, and `traces`
  what each artifact left behind besides its bytes (glossary terms, store keys it used);
- `versions`: the installed packages' versions (importlib.metadata, once per build;
  a build whose interpreter and package folders are unchanged takes them from here).

The first step of a build compares: when nothing differs, the build is over (the no-op).
Like make and git, this compares metadata, not bytes; as in git's "racy" rule, inputs
changed (their mtime or their ctime: a copy that keeps mtimes sets only the ctime) within
RACY_NS of the last build's observation are not trusted. Anything else the build decides
by content digests, never by metadata: the manifest only says which site files are still
exactly what the last build wrote. A build that fails leaves the last good manifest.

It is kept in two rows of the store's manifest table, each pickled on its own, as the index
keeps its parts (builder.build.index): MANIFEST holds what the no-op compares (the `Head`:
what the build observed and the site after it; and the versions, which `check` reads),
MANIFEST/made the rest (`files`, `traces`, the site before the build), unpickled only by a
build that is not a no-op: it is the larger part, and a no-op that unpickled it would pay
for every site file of a large course. The second row names the observation of the first;
a row missing, damaged or of another build means no manifest: a build from nothing, never
a wrong no-op. Standard library only: the no-op is decided before Jinja2 or markdown-it
are imported.
"""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.observe import (
    BUILDER,
    RACY_NS,
    TEMPLATES,
    Observed,
    Snapshot,
    editor_file,
    read_versions,
    site_files,
)
from ..core.store import MANIFEST

if TYPE_CHECKING:
    from ..core.artifact import Trace
    from ..core.store import Store

MADE = f"{MANIFEST}/made"  # the second row: read only by a build that is not a no-op


@dataclass(frozen=True)
class Head:
    """What a no-op compares, the manifest's first row: all a no-op unpickles."""

    seen: Observed  # what the last good build observed, but the site before it (not compared)
    site: Snapshot  # the site folder after the build
    total: int  # how many files the site has
    versions: dict[str, str]  # as Manifest.versions (`check` reads them from here)

    @classmethod
    def load(cls, store: Store) -> Head | None:
        head = store.manifest(MANIFEST)
        return head if isinstance(head, cls) else None

    def unchanged(self, now: Observed) -> bool:
        """Nothing this build would read or write differs from what the last one saw."""
        before = self.seen  # newest: by mtime or ctime, as the index's racy rule has it
        since = before.taken_ns - RACY_NS
        return (
            now.settings == before.settings
            and now.out == before.out
            and now.environment == before.environment
            and now.inputs == before.inputs
            and now.site == self.site
            and all(m[0] < since and m[3] < since for m in now.inputs.values() if len(m) > 1)
        )


@dataclass(frozen=True)
class Manifest:
    """The last good build: what it read, what it wrote, and what that was made from."""

    seen: Observed
    versions: dict[str, str]
    site: Snapshot  # the site folder after the build
    files: dict[str, str]  # every site file -> the key of the artifact it holds
    traces: dict[str, Trace] = field(default_factory=dict)  # by artifact key

    @classmethod
    def load(cls, store: Store, head: Head | None = None) -> Manifest | None:
        """Both rows (the first as `head`, when it was read already), or None when either is
        missing, damaged, or not of the same build."""
        head = head or Head.load(store)
        made = store.manifest(MADE)
        if head is None or not isinstance(made, tuple) or len(made) != 4:
            return None
        taken_ns, site_before, files, traces = made
        if taken_ns != head.seen.taken_ns or not isinstance(site_before, dict):
            return None
        seen = dataclasses.replace(head.seen, site=site_before)
        return cls(seen, head.versions, head.site, files, traces)

    def rows(self) -> dict[str, bytes]:
        """The store's rows (builder.core.store MANIFEST): the head, then the rest."""
        seen = dataclasses.replace(self.seen, site={})
        head = Head(seen, self.site, len(self.files), self.versions)
        made = (self.seen.taken_ns, self.seen.site, self.files, self.traces)
        return {MANIFEST: pickle.dumps(head, protocol=5), MADE: pickle.dumps(made, protocol=5)}

    def intact(self, out: Path, now: Observed) -> set[str]:
        """Site files that still hold exactly what the last build wrote there."""
        if now.out != self.seen.out:
            return set()
        left, found = site_files(out, self.site), site_files(out, now.site)
        return {name for name, meta in found.items() if left.get(name) == meta}


def installed_versions(environment: Snapshot, last: Manifest | Head | None) -> dict[str, str]:
    """Each package's installed version (or 'not installed'): the last build's when the
    interpreter and its package folders (`environment`) are as they were, else read."""
    if last is not None and last.seen.environment == environment:
        return last.versions
    return read_versions()


def code_digest(versions: dict[str, str]) -> str:
    """The builder's own code, its templates and the installed packages' versions: every
    key of the store is made with it, so that new code never serves an old artifact."""
    from ..core.store import digest

    parts: list[str | bytes] = [repr(sorted(versions.items()))]
    for folder, pattern in ((BUILDER, "**/*.py"), (TEMPLATES, "**/*")):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts and not editor_file(path.name):
                parts += [str(path.relative_to(folder)), path.read_bytes()]
    return digest(*parts)
