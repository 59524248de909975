"""What the last good build read and wrote, kept in the store (builder.store) when it ends.

- `inputs`: the metadata (mtime_ns, size, inode, ctime_ns) of every file a build reads -
  content/, recordings/, templates/, builder/ - and of the interpreter and its
  site-packages folders (installing a package changes their mtime), taken *before* the
  build read anything, so an edit made during a build shows up in the next one;
- `site`: the same metadata of every file in the site folder after the build;
- `files`: the key of the artifact (builder.make) each site file holds, and `traces`
  what each artifact left behind besides its bytes (glossary terms, store keys it used);
- `versions`: the installed packages' versions (importlib.metadata, once per build;
  a build whose interpreter and package folders are unchanged takes them from here).

The first step of a build compares: when nothing differs, the build is over (the no-op).
Like make and git, this compares metadata, not bytes; as in git's "racy" rule, inputs
changed within RACY_NS of the last build are not trusted. Anything else the build decides
by content digests, never by metadata: the manifest only says which site files are still
exactly what the last build wrote. A build that fails leaves the last good manifest.
Standard library only: the no-op is decided before Jinja2 or markdown-it are imported.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Store

RACY_NS = 2_000_000_000
BUILDER = Path(__file__).resolve().parent
TEMPLATES = BUILDER.parent / "templates"
PACKAGES = (  # whose versions a recording's environment or a page's bytes depend on
    "jax",
    "numpy",
    "matplotlib",
    "pygments",
    "jinja2",
    "markdown-it-py",
    "mdit-py-plugins",
    "pagefind-bin",
)

Snapshot = dict[str, tuple[int, ...]]

# What editors leave beside the file being edited: Emacs' lock (.#name, a dangling link)
# and auto-save (#name#), backups (name~), Vim's swap files (.name.swp, .swo, ...) and the
# file it writes to test a folder (4913). No build reads them, and none is a change.
EDITOR_FILE = re.compile(r"\.#.*|#.*#|.*~|\..*\.sw[a-p]|4913")


def editor_file(name: str) -> bool:
    """Whether a file name is an editor's lock, swap or backup file."""
    return EDITOR_FILE.fullmatch(name) is not None


def snapshot(roots: Iterable[Path], deep: bool = True) -> Snapshot:
    """Metadata of every file under each root (each root itself when it is a file, or when
    `deep` is off). Links under a root are listed, never followed; a root that is a link to
    a folder is walked (the user named it: `--out` may be one); folders are listed as (-1,)."""
    files: Snapshot = {}
    for root in roots:
        try:
            info = root.lstat()
        except OSError:
            files[str(root)] = ()  # absent: its appearance is a change
            continue
        if deep and root.is_dir():
            _walk(str(root), files)
        else:
            files[str(root)] = _meta(info)
    return files


def _walk(folder: str, files: Snapshot) -> None:
    """Editor files are left out; a file or folder deleted while it is walked is absent
    (an editor's lock or swap file comes and goes while an author saves)."""
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name == "__pycache__" or editor_file(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    _walk(entry.path, files)
                    continue
                with contextlib.suppress(FileNotFoundError):
                    files[entry.path] = _meta(entry.stat(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return
    files[folder] = (-1,)


def _meta(info: os.stat_result) -> tuple[int, ...]:
    """What says a file changed. ctime too, as git does: a write always sets it, and unlike
    mtime it cannot be set back (an edit of the same size with its mtime restored shows)."""
    return (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)


def environment_files() -> list[Path]:
    """The interpreter and the folders packages are installed into (not their contents:
    installing or removing a package adds or removes a *.dist-info folder, which changes
    the folder's own mtime)."""
    folders = [Path(p) for p in sys.path if p and "site-packages" in p and Path(p).is_dir()]
    return [Path(sys.executable), *folders]


def environment_snapshot() -> Snapshot:
    return snapshot(environment_files(), deep=False)


def site_files(out: Path, site: Snapshot) -> dict[str, tuple[int, ...]]:
    """The files of a snapshot of the site folder, by their name inside it."""
    prefix = len(str(out)) + 1
    return {
        path[prefix:].replace(os.sep, "/"): meta
        for path, meta in site.items()
        if len(meta) > 1 and path != str(out)
    }


@dataclass(frozen=True)
class Observed:
    """What a build is about to read and the site folder as it is, taken before reading."""

    settings: tuple[str, ...]  # what the build was asked, and where it reads
    out: str  # the site folder, resolved
    inputs: Snapshot
    environment: Snapshot
    site: Snapshot
    taken_ns: int

    @classmethod
    def take(cls, roots: list[Path], out: Path, *settings: str) -> Observed:
        taken = time.time_ns()
        where = tuple(str(p.resolve()) for p in roots)
        environment = environment_snapshot()
        inputs = snapshot([*roots, TEMPLATES, BUILDER])
        site = snapshot([out])
        return cls((*settings, *where), str(out.resolve()), inputs, environment, site, taken)


@dataclass(frozen=True)
class Trace:
    """What making an artifact left besides its files."""

    names: tuple[str, ...] = ()  # the site files it made
    terms: tuple[str, ...] = ()  # glossary terms a lesson page uses, in order
    uses: tuple[str, ...] = ()  # store keys it was made with (highlighted code blocks)


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
        before = self.seen
        newest = max((meta[0] for meta in now.inputs.values() if len(meta) > 1), default=0)
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


def read_versions() -> dict[str, str]:
    from importlib import metadata

    from .rules import NOT_INSTALLED

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = NOT_INSTALLED
    return versions


def code_digest(versions: dict[str, str]) -> str:
    """The builder's own code, its templates and the installed packages' versions: every
    key of the store is made with it, so that new code never serves an old artifact."""
    from .store import digest

    parts: list[str | bytes] = [repr(sorted(versions.items()))]
    for folder, pattern in ((BUILDER, "*.py"), (TEMPLATES, "**/*")):
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts and not editor_file(path.name):
                parts += [str(path.relative_to(folder)), path.read_bytes()]
    return digest(*parts)
