"""Atomic file writes: a reader sees the old bytes or the new bytes, never half.

Recordings are committed data and are synced to disk before the rename (`durable=True`, the
default); the site and the build cache are rebuilt after a crash, so their files skip the
fsync (a cold build writes thousands).

Below a root (the site folder, for `Staging`), nothing is written, read back or deleted
through a link: each folder is opened with O_NOFOLLOW, one part of the name at a time
(`open_below`), and a name not plainly inside the root (`name_problem`) is refused. The
root itself may be a link, as the user named it. A link where the builder's own folder goes
is replaced by a real folder (the link deleted, never its target), or with `refuse_links`
is an error. A folder a feature owns is `claim`ed with a marker file first, and the builder
deletes only inside a folder whose marker proves it made it. Folders are made 0755 and
files 0644 whatever the umask: a web server serves them.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType

from .errors import BuildError


def write_atomic(
    path: Path, data: bytes, *, durable: bool = True, root: Path | None = None
) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`; with
    `root`, no link below it is followed (as `Staging` does; a file already holding `data`
    is left as it is). Without `root` (a file a user named: `schema --out`, `rehearse
    --report`), what is at `path` must be a regular file or nothing: a link, a FIFO, a device
    or a folder there is a BuildError naming it, and left as it was."""
    if root is not None:
        with Staging(root, durable=durable) as staging:
            staging.add({path.relative_to(root).as_posix(): data})
            staging.commit()
        return
    replaceable(path)
    tmp = _stage(path, data, durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        _discard([tmp])
        raise


def replaceable(path: Path) -> None:
    """Nothing, or a regular file (not a link), at `path`; else a BuildError naming it (a
    command checks the file it is to write before its work, `write_atomic` again)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    if not stat.S_ISREG(mode):
        raise BuildError(
            f"is {file_kind(mode)}, not a file; the builder replaces only a regular file",
            path=path,
            hint="name a new file, or an ordinary file to write over",
        )


def file_kind(mode: int) -> str:
    """What a file of `mode` (from stat or lstat) is, in words: "a folder", "a FIFO (named
    pipe)", "a symbolic link", ...; "a regular file"."""
    kinds = {
        stat.S_ISREG: "a regular file",
        stat.S_ISLNK: "a symbolic link",
        stat.S_ISDIR: "a folder",
        stat.S_ISFIFO: "a FIFO (named pipe)",
        stat.S_ISSOCK: "a socket",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
    }
    return next((name for test, name in kinds.items() if test(mode)), "a special file")


class Staging:
    """Replace changed files under a root, all or nothing as far as a failure can tell.

    `add` writes each changed file in full to a temporary file beside its target, as the
    files come; `commit` renames them all into place. Leaving the block without committing
    (disk full, a read-only folder, Ctrl-C, a failed search index) deletes the temporary
    files and leaves every old file byte-for-byte as it was. No link under the root is
    followed (`open_below`); the root and the folders made are readable by everyone.
    """

    def __init__(self, root: Path, *, durable: bool = False, refuse_links: bool = False) -> None:
        self.root = root
        self.durable = durable
        self.refuse_links = refuse_links  # a link (or FIFO, device) below the root: an error
        self.staged: list[tuple[tuple[str, ...], str, Path]] = []  # folder, temporary, file
        self.committed = False
        self._root: int | None = None
        self._open: tuple[tuple[str, ...], int] | None = None  # the last folder: files come sorted

    def __enter__(self) -> Staging:
        try:
            make_folder(self.root)
            self._root = os.open(self.root, _FOLDER)
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.root)) from None
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if not self.committed:
                for folder, tmp, _ in self.staged:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, dir_fd=self._folder(folder))
        finally:
            self._close()

    def add(self, files: dict[str, bytes]) -> None:
        for name, data in sorted(files.items()):
            path = self.root / name
            *parts, leaf = name.split("/")
            try:
                folder = self._folder(tuple(parts))
                kind = _not_a_file(folder, leaf) if self.refuse_links else ""
                if kind == "a symbolic link":
                    raise OSError(errno.ELOOP, "is a symbolic link, which is not followed")
                if kind:
                    raise OSError(errno.EEXIST, f"is {kind}; only a regular file is replaced")
                if _holds(folder, leaf, data):
                    continue
                tmp, fd = _create(folder, leaf)
            except OSError as error:  # name the file we meant to write
                raise OSError(error.errno, error.strerror, str(path)) from None
            self.staged.append((tuple(parts), tmp, path))
            _fill(fd, data, self.durable, (folder, tmp), path)

    def commit(self) -> int:
        """Rename every staged file into place; the number of files replaced."""
        for folder, tmp, path in self.staged:
            try:
                fd = self._folder(folder)
                os.replace(tmp, path.name, src_dir_fd=fd, dst_dir_fd=fd)
            except OSError as error:
                raise OSError(error.errno, error.strerror, str(path)) from None
        self.committed = True
        return len(self.staged)

    def make(self, name: str) -> None:
        """The folder `name` below the root, made (as `add` makes a file's)."""
        try:
            self._folder(tuple(name.split("/")))
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.root / name)) from None

    def _folder(self, parts: tuple[str, ...]) -> int:
        """The folder `parts` below the root, open (made, and any link there replaced)."""
        if self._open is not None and self._open[0] == parts:
            return self._open[1]
        assert self._root is not None, "use Staging in a with block"
        fd = open_below(self._root, parts, make=True, refuse_links=self.refuse_links)
        assert fd is not None
        if self._open is not None:
            os.close(self._open[1])
        self._open = (parts, fd)
        return fd

    def _close(self) -> None:
        for fd in (self._open[1] if self._open else None, self._root):
            if fd is not None:
                os.close(fd)
        self._open = self._root = None


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
FOLDER_MODE = 0o755  # a web server lists and enters the site's folders
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode's control characters (Cc)
_SURROGATE = re.compile("[\ud800-\udfff]")


def name_problem(name: str) -> str | None:
    """Why `name` is not plainly the name of a file inside a folder ('/' between its parts,
    none empty, `.` or `..`; no backslash or control character), or None when it is."""
    if not name:
        return "is empty"
    if _CONTROL.search(name):
        return "holds a control character"
    if _SURROGATE.search(name):  # bytes a file name holds that are not UTF-8 (surrogateescape)
        return "is not UTF-8"
    if "\\" in name:
        return "holds a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    parts = name.split("/")
    if ".." in parts:
        return "climbs out of its folder with '..'"
    if "" in parts or "." in parts:
        return "is not a normalised name (an empty part, '.' or a trailing '/')"
    return None


def open_below(
    root: int, parts: Sequence[str], *, make: bool = False, refuse_links: bool = False
) -> int | None:
    """The folder `parts` below the open folder `root`, opened one part at a time without
    following a link. With `make`, a missing folder is made (0755) and a link where a
    folder goes is replaced by one (the link deleted, never its target), or with
    `refuse_links` is an OSError (ELOOP); without `make`, None when a part is missing, a
    link or not a folder. A part that would leave `root` raises."""
    fd = os.dup(root)
    try:
        for part in parts:
            problem = name_problem(part) if "/" not in part else "holds a '/'"
            if problem:
                raise OSError(errno.EINVAL, f"a folder name that {problem}", part)
            below = _open_folder(fd, part, make, refuse_links)
            if below is None:
                os.close(fd)
                return None
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_folder(parent: int, part: str, make: bool, refuse_links: bool) -> int | None:
    try:
        fd = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
    except FileNotFoundError:
        if not make:
            return None
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, FOLDER_MODE, dir_fd=parent)
        fd = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as error:  # ELOOP: a link; ENOTDIR: a link, or a file where a folder goes
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        info = os.stat(part, dir_fd=parent, follow_symlinks=False)
        if not make:
            return None
        if not stat.S_ISLNK(info.st_mode):
            raise
        if refuse_links:
            linked = f"{part!r} is a symbolic link, which is not followed"
            raise OSError(errno.ELOOP, linked) from None
        os.unlink(part, dir_fd=parent)  # the link, not what it points to
        os.mkdir(part, FOLDER_MODE, dir_fd=parent)
        fd = os.open(part, _FOLDER | os.O_NOFOLLOW, dir_fd=parent)
    if make:
        _readable(fd)
    return fd


def _not_a_file(folder: int, name: str) -> str:
    """What is at `name` in the open `folder` when it is there and not a regular file."""
    try:
        mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return ""
    return "" if stat.S_ISREG(mode) else file_kind(mode)


def _readable(folder: int) -> None:
    """A folder the builder writes in: readable and enterable by everyone (an earlier build
    under umask 077 made it 0700)."""
    mode = stat.S_IMODE(os.fstat(folder).st_mode)
    if mode & 0o055 != 0o055:
        with contextlib.suppress(PermissionError):  # not ours to change: it still works
            os.fchmod(folder, mode | 0o055)


def make_folder(path: Path) -> None:
    """`path` and its missing parents, made; those this makes are readable by everyone."""
    made = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        made.append(folder)
    path.mkdir(parents=True, exist_ok=True)
    if _UMASK & 0o055:
        for folder in made:
            with contextlib.suppress(PermissionError):
                os.chmod(folder, FOLDER_MODE)


def _stage(path: Path, data: bytes, durable: bool) -> Path:
    """`data` in a complete temporary file beside `path` (synced to disk when `durable`)."""
    try:
        make_folder(path.parent)
        name, fd = _create(None, path.name, path.parent)
    except OSError as error:  # name the file we meant to write, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from None
    tmp = path.parent / name
    _fill(fd, data, durable, (None, str(tmp)), path)
    return tmp


def _fill(fd: int, data: bytes, durable: bool, tmp: tuple[int | None, str], path: Path) -> None:
    """Write `data` to the new temporary file `fd` (`tmp`: its folder and name, deleted on
    failure), readable by everyone; `path` is the file it is for."""
    try:
        with os.fdopen(fd, "wb") as handle:
            if _UMASK & 0o044:  # the site must be readable by a web server whatever the umask
                os.fchmod(handle.fileno(), 0o644)
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp[1], dir_fd=tmp[0])
        if isinstance(error, OSError):  # a full disk, found writing: it has no file name
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise


TEMPORARY = re.compile(r"(?:.*/)?\.[^/]+\.[0-9]+-[0-9]+\.tmp")  # `_create`'s names, beside a file
_UMASK = os.umask(0o022)
os.umask(_UMASK)
_numbers = itertools.count()


def _create(folder: int | None, name: str, where: Path | None = None) -> tuple[str, int]:
    """A new, empty temporary file in the open `folder` (or the folder `where`), named
    after `name` and never an old one, nor a link: its name, and the file open."""
    while True:
        tmp = f".{name}.{os.getpid()}-{next(_numbers)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            return tmp, os.open(tmp if where is None else where / tmp, flags, 0o644, dir_fd=folder)
        except FileExistsError:  # left by a process that had this pid before
            continue


def _discard(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _holds(folder: int, name: str, data: bytes) -> bool:
    """The file `name` in the open `folder` itself (not a link, a FIFO or a device) holds
    exactly `data`."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except OSError:  # absent, a link (ELOOP), a socket (ENXIO), unreadable: write it again
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        held = bytearray()
        while len(held) <= len(data) and (chunk := os.read(fd, len(data) + 1 - len(held))):
            held += chunk
        return held == data
    finally:
        os.close(fd)


def claim(folder: Path, marker: str, what: str, *, adopt: bool = False) -> None:
    """Make `folder` one this builder owns, as its `marker` file proves: a new or empty folder
    (or, with `adopt`, one of the builder's own cache folders an older version made without
    a marker) gets the marker; one that holds it (a regular file, not a link) is ours
    already; any other is refused with a BuildError naming it, and left as it was. Only
    inside a claimed folder does the builder delete what it made (`what`: by whom)."""
    try:
        make_folder(folder)
        held = os.listdir(folder)
    except OSError as error:
        raise cannot_write(OSError(error.errno, error.strerror, str(folder)), "") from None
    if marker in held and stat.S_ISREG(os.lstat(folder / marker).st_mode):
        return
    if held and not adopt:
        shown = ", ".join(sorted(held)[:5]) + (", ..." if len(held) > 5 else "")
        raise BuildError(
            f"holds files {what} did not make ({shown}) and no {marker} that says it made "
            "the rest; refusing to write or delete anything there",
            path=folder,
            hint=f"give a new or empty folder (it gets a {marker} file), or delete that one",
        )
    write_atomic(folder / marker, f"# made by {what} of python -m builder\n".encode(), root=folder)


def check_writable(folder: Path) -> None:
    """Make `folder` if needed and prove a file can be written there, before any work."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        from tempfile import mkstemp

        fd, probe = mkstemp(prefix=".write-check.", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as error:
        raise cannot_write(
            OSError(error.errno, error.strerror, str(folder)), "nothing was executed"
        ) from None


def cannot_write(error: OSError, kept: str) -> BuildError:
    """A failed write as a BuildError naming the file, what was kept and what to do."""
    where = error.filename or "a file"
    kept = f"; {kept}" if kept else ""
    return BuildError(f"cannot write {where}: {error.strerror or error}{kept}", hint=_remedy(error))


REMEDIES = MappingProxyType(
    {
        errno.ENOSPC: "free space on that disk",
        errno.EDQUOT: "free space within your disk quota, or ask for a larger one",
        errno.EFBIG: "raise the file size limit (ulimit -f)",
        errno.EROFS: "that file system is mounted read-only: pass a folder on a writable one",
        errno.EACCES: "make the folder writable",
        errno.EPERM: "make the folder writable (chattr -i if it is immutable)",
        errno.EEXIST: "remove what is there (or put an ordinary file there), or choose "
        "another folder",
    }
)


def _remedy(error: OSError) -> str:
    first = REMEDIES.get(
        error.errno or 0, "make the folder writable (and check the disk is not full)"
    )
    return f"{first}, then run the command again"
