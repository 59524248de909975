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
Standard library only: the no-op is decided before Jinja2 or markdown-it are imported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.artifact import Trace
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

if TYPE_CHECKING:
    from ..core.store import Store


@dataclass(frozen=True)
class Manifest:
    """The last good build: what it read, what it wrote, and what that was made from."""

    seen: Observed
    versions: dict[str, str]
    site: Snapshot  # the site folder after the build
    files: dict[str, str]  # every site file -> the key of the artifact it holds
    traces: dict[str, Trace] = field(default_factory=dict)  # by artifact key

    @classmethod
    def load(cls, store: Store) -> Manifest | None:
        last = store.manifest()
        return last if isinstance(last, cls) else None

    def unchanged(self, now: Observed) -> bool:
        """Nothing this build would read or write differs from what the last one saw."""
        before = self.seen  # newest: by mtime or ctime, as the index's racy rule has it
        newest = max((max(m[0], m[3]) for m in now.inputs.values() if len(m) > 1), default=0)
        return (
            now.settings == before.settings
            and now.out == before.out
            and now.inputs == before.inputs
            and now.environment == before.environment
            and now.site == self.site
            and newest < before.taken_ns - RACY_NS
        )

    def intact(self, out: Path, now: Observed) -> set[str]:
        """Site files that still hold exactly what the last build wrote there."""
        if now.out != self.seen.out:
            return set()
        left, found = site_files(out, self.site), site_files(out, now.site)
        return {name for name, meta in found.items() if left.get(name) == meta}


def installed_versions(environment: Snapshot, last: Manifest | None) -> dict[str, str]:
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
