"""The lock file `rehearse` installs: read through the course's one input door (no link, no
FIFO or device, at most MAX_LOCK_BYTES) and checked line by line before pip sees it.

A lock is code (a `.pth` in a wheel runs in every interpreter of the side environment), and
pip reads more than packages: `-r /proc/self/environ` or `-r /etc/shadow` put the file's
lines in its error message, `--index-url` and `--find-links` choose a server, `${VAR}` is
filled in from pip's environment (a secret sent in a URL), `-e` and a VCS URL build a
folder or a repository cloned with your keys. So a lock holds requirements (`name==1.0`,
extras, markers, `--hash=...`), `https://` URLs and wheels or archives inside the checkout,
and the options in ALLOWED; any other line is refused naming the lock and the line, before
anything is installed (docs/isolation.md, A rehearsal's lock). What pip installs is the
checked text (`Lock.text`, local paths made absolute), never the file read a second time.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ..core.errors import BuildError
from ..course.files import MAX_SOURCE_BYTES, read_file

MAX_LOCK_BYTES = MAX_SOURCE_BYTES  # the course's lock has 84 lines: a few KiB
ALLOWED = ("--pre", "--prefer-binary", "--only-binary", "--require-hashes")
REFUSED = {
    "reads another file; a rehearsal installs what the lock itself says (copy those lines "
    "into it)": ("-r", "--requirement", "-c", "--constraint"),
    "chooses where packages come from, and a lock from a pull request could name its own "
    "server (set PIP_INDEX_URL, PIP_FIND_LINKS or pip.conf on the machine instead)": (
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--no-index",
        "--trusted-host",
    ),
    "installs a folder's code as it stands (editable); pin a version or name a wheel": (
        "-e",
        "--editable",
    ),
}
COMMENT = re.compile(r"(?:^|\s)#")  # pip's rule (a `#` at the start or after a blank), linear
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # https:, file:, git+ssh:
NAMED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*(?:\s*\[[^\]]*\])?)\s*@\s*(.*)$")  # name @ where
ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar")


@dataclass(frozen=True)
class Lock:
    """A lock file as read (`digest`: sha256 of its bytes, line endings normalized) and as
    checked (`text`: what pip installs)."""

    path: Path
    digest: str
    text: str


def read_lock(path: Path, checkout: Path) -> Lock:
    """The lock at `path`, read and checked (module docstring); a local path in it must lie
    inside `checkout` (the folder that holds the course). Raises BuildError naming the file."""
    data = _read(path)
    digest = hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BuildError(
            f"is not UTF-8 (invalid byte at offset {error.start})", path=path
        ) from None
    lines = [_checked(line, number, path, checkout.resolve()) for number, line in _lines(text)]
    return Lock(path, digest, "".join(f"{line}\n" for line in lines if line))


def _read(path: Path) -> bytes:
    try:
        return read_file(path, MAX_LOCK_BYTES, BuildError, hint="name the lock file itself")
    except FileNotFoundError:
        raise BuildError("cannot be read: it is missing", path=path) from None


def _lines(text: str) -> list[tuple[int, str]]:
    """pip's logical lines, each with the number of its first physical line: a line ending
    in `\\` goes on with the next; comments dropped."""
    joined: list[tuple[int, str]] = []
    start, parts = 0, []
    for number, line in enumerate(text.splitlines(), 1):
        start = start or number
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        joined.append((start, _uncommented("".join([*parts, line]))))
        start, parts = 0, []
    if parts:
        joined.append((start, _uncommented("".join(parts))))
    return joined


def _uncommented(line: str) -> str:
    comment = COMMENT.search(line)
    return (line[: comment.start()] if comment else line).strip()


def _checked(line: str, number: int, path: Path, checkout: Path) -> str:
    """`line` as pip is to read it, or a BuildError naming the lock and `number`."""
    if not line:
        return ""
    if "${" in line:
        _refuse(path, number, line, "asks pip to fill in an environment variable (`${...}`)")
    if line.startswith("-"):
        return _option(line, number, path)
    requirement, *options = re.split(r"\s--", line)  # one blank: linear
    if any(not option.startswith("hash") for option in options):
        _refuse(path, number, line, "passes settings to a package's build (only --hash is kept)")
    return " --".join([_requirement(requirement.strip(), number, path, checkout), *options])


def _option(line: str, number: int, path: Path) -> str:
    name = re.split(r"[\s=]", line, maxsplit=1)[0]
    if name in ALLOWED:
        return line
    short = name[:2] if not name.startswith("--") else name
    reason = next((why for why, names in REFUSED.items() if short in names), "")
    other = f"is not an option a lock may hold (only {', '.join(ALLOWED)})"
    _refuse(path, number, line, reason or other)


def _requirement(text: str, number: int, path: Path, checkout: Path) -> str:
    """A requirement: a name (left as it is), an https URL, or a local file inside
    `checkout` (made absolute); `name @ where` checks `where` the same way."""
    named = NAMED.match(text)
    name, at, where = (named[1], " @ ", named[2]) if named else ("", "", text)
    first = re.split(r"[\s;]", where, maxsplit=1)[0]
    rest = where[len(first) :]
    if first.startswith("file:"):
        local = Path(re.sub(r"^file:(//localhost|//)?", "", first).split("#")[0])
        return f"{name}{at}{_file(local, text, number, path, checkout).as_uri()}{rest}"
    if SCHEME.match(first) and not first.startswith("https://"):
        why = "names a package by a URL other than https:// (a VCS URL clones with your keys)"
        _refuse(path, number, text, why)
    if not SCHEME.match(first) and _local(first):
        return f"{name}{at}{_file(Path(first), text, number, path, checkout)}{rest}"
    return text


def _local(first: str) -> bool:
    return "/" in first or "\\" in first or first.startswith((".", "~")) or first.endswith(ARCHIVES)


def _file(local: Path, text: str, number: int, path: Path, checkout: Path) -> Path:
    """`local` (relative to the working folder, as pip reads it) made absolute, when it is a
    regular file inside `checkout` and no link; else a BuildError naming the line `text`."""
    where = Path(os.path.abspath(local))
    if not where.resolve().is_relative_to(checkout):
        _refuse(path, number, text, f"names a file outside the checkout ({checkout})")
    try:
        mode = os.lstat(where).st_mode
    except OSError:
        _refuse(path, number, text, "names a file that is not there")
    if not stat.S_ISREG(mode):
        _refuse(path, number, text, "names a link, a folder or a special file, not a wheel")
    return where


def _refuse(path: Path, number: int, line: str, why: str) -> NoReturn:
    shown = line if len(line) <= 80 else f"{line[:77]}..."
    raise BuildError(
        f"line {number}: `{shown}` {why}",
        path=path,
        hint="a rehearsal's lock pins packages (name==version, --hash=...), https:// URLs and "
        "wheels inside the checkout; see docs/isolation.md, A rehearsal's lock",
    )
