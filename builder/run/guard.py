"""Notice when an example writes into the checkout the builder owns.

An example runs as the user, so without a sandbox nothing stops it from writing through an
absolute path: it can find the builder's folder in `/proc/<pid>/cwd` and change another
lesson's recording, another lesson's example or data, or the builder's code. The builder
cannot forbid that, but it can see it. `Watch.take(folders)` keeps the file metadata of
everything under `folders` (the course, recordings/, builder/ with its templates) as the build's
own `manifest.snapshot` takes it (editor files and `__pycache__` left out); `changed()`
names the first file that differs, apart from the files the builder itself wrote since
(`wrote(path)`), so a recording is never written once anything else has changed.

The interpreter's package folders (`site-packages`) are watched by their names only: a
`.pth` or a `jax_plugins` module an example drops there runs in every later interpreter, the
provenance probe's included, and could make a recording claim another machine. A name that
appears or goes is a change; `__pycache__` is not (Python makes it). A change to a file
already there is not seen: only `--sandbox` (the interpreter read-only) prevents both.

The prose an author edits while examples run (`lesson.md`, `course.yml`, `glossary.yml`:
with `make serve` open, or beside a long `make record`) is left out: no recording depends
on it, and an edit there is not an example escaping. Metadata only, no file is read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.observe import Snapshot, environment_files, snapshot

PROSE = frozenset({"lesson.md", "course.yml", "glossary.yml"})


def fingerprint(folders: Iterable[Path]) -> Snapshot:
    """The metadata of each file under `folders` but the prose, by path."""
    files = snapshot(folders)
    return {path: meta for path, meta in files.items() if os.path.basename(path) not in PROSE}


def site_entries() -> frozenset[str]:
    """The paths of what the interpreter's package folders hold, but `__pycache__`."""
    held: set[str] = set()
    for folder in environment_files()[1:]:
        with contextlib.suppress(OSError):
            held |= {os.path.join(folder, n) for n in os.listdir(folder) if n != "__pycache__"}
    return frozenset(held)


@dataclass(frozen=True)
class Watch:
    folders: tuple[Path, ...]
    seen: Snapshot
    site: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def take(cls, folders: Iterable[Path]) -> Watch:
        unique = tuple(dict.fromkeys(Path(folder) for folder in folders))
        return cls(unique, fingerprint(unique), site_entries())

    def wrote(self, path: Path) -> None:
        """The builder wrote `path` itself: its new metadata is the expected one."""
        self.seen.update(snapshot([path], deep=False))
        self.seen[str(path.parent)] = (-1,)  # a folder, as snapshot lists one it walks

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
        moved = sorted(self.site ^ site_entries())
        if moved:
            return f"{moved[0]} {'was removed' if moved[0] in self.site else 'appeared'}"
        return ""
