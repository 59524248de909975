"""Notice when an example writes into the checkout the builder owns.

An example runs as the user, so without a sandbox nothing stops it from writing through an
absolute path: it can find the builder's folder in `/proc/<pid>/cwd` and change another
lesson's recording, a lesson, or the builder's code. The builder cannot forbid that, but
it can see it. `Watch.take(folders)` records the size, mtime_ns and inode of every file
under `folders` (content/, recordings/, builder/, templates/; `__pycache__` left out, the
builder's own imports write there); `changed()` names the first file that differs from
that record, apart from the files the builder itself wrote since (`wrote(path)`), so a
recording is never written once anything else has changed. Metadata only: a few thousand
stat calls, no file is read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SKIPPED = frozenset({"__pycache__"})
Seen = dict[str, tuple[int, int, int]]


def fingerprint(folders: Iterable[Path]) -> Seen:
    """size, mtime_ns and inode of each file under `folders`, by path; links not followed."""
    seen: Seen = {}
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = [name for name in dirs if name not in SKIPPED]
            for name in files:
                path = os.path.join(root, name)
                try:
                    info = os.lstat(path)
                except OSError:  # gone while we looked: the next look reports it
                    continue
                seen[path] = (info.st_size, info.st_mtime_ns, info.st_ino)
    return seen


@dataclass(frozen=True)
class Watch:
    folders: tuple[Path, ...]
    seen: Seen

    @classmethod
    def take(cls, folders: Iterable[Path]) -> Watch:
        unique = tuple(dict.fromkeys(Path(folder) for folder in folders))
        return cls(unique, fingerprint(unique))

    def wrote(self, path: Path) -> None:
        """The builder wrote `path` itself: its new metadata is the expected one."""
        info = os.lstat(path)
        self.seen[str(path)] = (info.st_size, info.st_mtime_ns, info.st_ino)

    def changed(self) -> str:
        """What changed that the builder did not write: 'recordings/x.json changed', or ""."""
        now = fingerprint(self.folders)
        for path in sorted(self.seen.keys() | now.keys()):
            before, after = self.seen.get(path), now.get(path)
            if before != after:
                what = (
                    "appeared" if before is None else "was removed" if after is None else "changed"
                )
                return f"{path} {what}"
        return ""
