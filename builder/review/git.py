"""Files as they were at a git revision: the one door to git (`diff` reads both sides here).

A revision is anything `git rev-parse` accepts (`HEAD`, `main`, `origin/main~3`, a hash);
`None` is the work tree as it is on disk. Paths are folders of this checkout; git is asked
about them relative to the repository's top level, so commands work from any folder.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

from ..core.errors import BuildError, RecordingError
from ..core.observe import editor_file
from ..course.files import input_folder, read_file
from ..course.rules import MAX_RECORDING_BYTES

WORK_TREE = "work tree"


def describe(folder: Path, rev: str | None) -> str:
    """How a revision reads in a report: `HEAD (3e57684)`, a commit hash by its short form
    alone (`3e57684`), or `work tree`."""
    if rev is None:
        return WORK_TREE
    root, _ = _locate(folder)
    short = _git(root, "rev-parse", "--short", f"{rev}^{{commit}}").decode().strip()
    if short.startswith(rev) or rev.startswith(short):
        return short
    return f"{rev} ({short})"


def commit(folder: Path, rev: str) -> str:
    """The full hash of the commit `rev` names (a build keys its `--since` page on it)."""
    root, _ = _locate(folder)
    return _git(root, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()


def json_files(folder: Path, rev: str | None) -> dict[str, bytes]:
    """The `*.json` files directly in `folder` (not the `_inputs/` sidecars), by stem."""
    if rev is None:
        paths = sorted(input_folder(folder, RecordingError).glob("*.json"))
        wanted = [p for p in paths if not p.name.startswith("_") and not editor_file(p.name)]
        return {p.stem: data for p in wanted if (data := _read(p)) is not None}
    root, where = _locate(folder)
    listed = _git(root, "ls-tree", "-z", "--name-only", rev, "--", f"{where}/")
    names = [Path(n).name for n in _text(listed).split("\0") if n]
    names = sorted(n for n in names if n.endswith(".json") and not n.startswith("_"))
    blobs = _cat_files(root, [f"{rev}:{where}/{name}" for name in names])
    return {Path(name).stem: blob for name, blob in zip(names, blobs, strict=True)}


def _read(path: Path) -> bytes | None:
    """A recording in the work tree, read only when it is a regular file within the size
    limit (a FIFO there would hang `diff`; a link to /dev/zero, fill the memory)."""
    try:
        return read_file(path, MAX_RECORDING_BYTES, RecordingError)
    except FileNotFoundError:  # removed since it was listed
        return None


def extract(folder: Path, rev: str, dest: Path) -> Path:
    """`folder` as it was at `rev`, written under `dest`; the path of the copy.

    A symbolic link committed there is made again as the same link, after every file is
    written (so nothing is written through one), wherever it points: the course loaded
    from the copy then refuses it as it would in the work tree (builder.course.files.open_input),
    naming the file. Extracting it was a `LinkOutsideDestinationError` traceback.
    """
    root, where = _locate(folder)
    data = _git(root, "archive", "--format=tar", rev, "--", f"{where}/")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = archive.getmembers()
        files = [m for m in members if not (m.issym() or m.islnk())]
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: no odd modes, no paths out
            archive.extractall(dest, members=files, filter="data")
        else:  # git wrote this archive from the repository's own tree
            archive.extractall(dest, members=files)
    for link in members:  # git writes each path once, as a plain relative path
        name = Path(link.name)
        if link.issym() and not name.is_absolute() and ".." not in name.parts:
            os.symlink(link.linkname, dest / name)
    return dest / where


def built_from(folder: Path) -> str:
    """The checkout's revision for a site's footer: 'a1b2c3d', 'a1b2c3d with local changes',
    or '' outside a git checkout (or without git): a build never fails for want of it."""
    try:
        root, _ = _locate(folder)
        short = _git(root, "rev-parse", "--short", "HEAD").decode().strip()
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no").strip()
    except BuildError:
        return ""
    return f"{short} with local changes" if dirty else short


def _locate(folder: Path) -> tuple[Path, str]:
    """The repository's top level, and `folder` relative to it (POSIX, no trailing /)."""
    start = folder.resolve()
    probe = next((p for p in (start, *start.parents) if p.is_dir()), Path("/"))
    root = Path(_text(_git(probe, "rev-parse", "--show-toplevel")).strip()).resolve()
    try:
        return root, start.relative_to(root).as_posix()
    except ValueError:
        raise BuildError(f"is not inside the git repository {root}", path=folder) from None


def _cat_files(root: Path, specs: list[str]) -> list[bytes]:
    """Each `rev:path` blob, read by one `git cat-file --batch`."""
    if not specs:
        return []
    out = io.BytesIO(_git(root, "cat-file", "--batch", stdin="".join(f"{s}\n" for s in specs)))
    blobs = []
    for spec in specs:
        header = out.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise BuildError(f"git cannot read {spec}", hint="is the revision right?")
        blobs.append(out.read(int(header[2])))
        out.read(1)  # the newline after each blob
    return blobs


def _text(data: bytes) -> str:
    """Names git printed, as the file system reads names (os.fsdecode): every byte kept,
    so a name that is not UTF-8, or not in an ASCII locale's encoding, is the same file."""
    return os.fsdecode(data)


def _git(cwd: Path, *args: str, stdin: str | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            input=os.fsencode(stdin) if stdin else None,
            capture_output=True,
        )
    except FileNotFoundError:
        raise BuildError("git is not installed", hint="install git to compare revisions") from None
    if done.returncode:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise BuildError(
            f"git {args[0]} failed: {message[-1] if message else done.returncode}",
            hint="run it inside a git checkout, with revisions git knows (git log --oneline)",
        )
    return done.stdout
