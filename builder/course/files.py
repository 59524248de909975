"""Reading the files a course holds: one door for every input (`open_input`: no symbolic
links, regular files only), sizes bounded, text as UTF-8, YAML and JSON refused before they
nest deep enough to hurt the parser. Errors name the file and the next step. The door
notes each path it opens into the `Reads` it is handed (builder.pipeline.index keeps them).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from array import array
from collections.abc import Iterator
from contextlib import AbstractContextManager
from itertools import accumulate
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import BuildError, ContentError
from ..core.fsutil import file_kind

MAX_SOURCE_BYTES = 1024 * 1024  # an example, course.yml, glossary.yml
MAX_JSON_DEPTH = 64  # arrays and objects inside each other; a recording needs 7
READ_CHUNK = 16 * 1024 * 1024  # a data file has no limit: read in chunks, never a buffer of it all
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1, +1, -1, -1 as signed


COURSE_FILES = "course.yml"  # the owner course.yml and glossary.yml are read as (no id has a dot)


class Reads(Protocol):
    """Where the door notes each file it opens, by the value being read (`of(owner)`, a
    block): a lesson by its folder's name, its status and its sidecar by its id, the
    course's own files (course.yml, glossary.yml) as COURSE_FILES."""

    def note(self, path: str) -> None: ...

    def of(self, owner: str) -> AbstractContextManager[object]: ...


def reading(reads: Reads | None, owner: str) -> AbstractContextManager[object]:
    """The block in which `reads` notes what is opened for `owner` (none: nothing noted)."""
    return reads.of(owner) if reads is not None else contextlib.nullcontext()


def shallow_json(
    data: bytes, path: Path | str, error: type[BuildError] = ContentError, hint: str = ""
) -> bytes:
    """`data`, refused with `error` naming the file when its arrays and objects nest deeper
    than MAX_JSON_DEPTH: every JSON the builder reads with Python's parser passes here
    first (100,000 nested arrays made `json.loads` raise RecursionError in check, validate,
    render and diff). Strings are cut out first, so brackets in text do not count; the
    scan is linear and runs only where the fast parser (pydantic-core's) refused the file."""
    steps = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKET).translate(_DEPTH_STEP)
    deepest = max(accumulate(array("b", steps)), default=0)
    if deepest > MAX_JSON_DEPTH:
        raise error(
            f"nests arrays and objects {deepest} deep, over the {MAX_JSON_DEPTH} limit",
            path=path,
            hint=hint or "a file nested this deep is a mistake",
        )
    return data


def _shallow_yaml(text: str, path: Path | str) -> None:
    """Flow collections (`[`, `{`) nested deeper than MAX_JSON_DEPTH refused before PyYAML
    reads them: tens of thousands crash libyaml's loader (SIGSEGV). Every
    bracket counts, quoted or not (a false alarm needs 65 unclosed brackets in one value),
    and a closing one never goes below zero, so closers in a string cannot hide openers."""
    steps = text.encode("utf-8", "surrogateescape").translate(None, _NOT_BRACKET)
    if steps.count(b"[") + steps.count(b"{") <= MAX_JSON_DEPTH:
        return  # the common case: a few brackets at most
    depths = accumulate(array("b", steps.translate(_DEPTH_STEP)), lambda d, s: max(0, d + s))
    deepest = max(depths, default=0)
    if deepest > MAX_JSON_DEPTH:
        raise ContentError(
            f"nests lists and mappings {deepest} deep, over the {MAX_JSON_DEPTH} limit",
            path=path,
            hint="a file nested this deep is a mistake",
        )


def read_text(
    path: Path | str,
    limit: int = MAX_SOURCE_BYTES,
    hint: str = "",
    reads: Reads | None = None,
    missing: str | None = None,
) -> str:
    """A content file as text (UTF-8, an optional BOM dropped); errors name the file.
    `missing`: the text of a file that is optional and absent (noted all the same)."""
    try:
        data = read_file(path, limit, hint=hint, reads=reads)
    except FileNotFoundError:
        if missing is not None:
            return missing
        raise ContentError("is missing", path=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ContentError(
            f"is not UTF-8 (invalid byte at offset {error.start})",
            path=path,
            hint="save the file as UTF-8",
        ) from None


def read_file(
    path: Path | str,
    limit: int | None,
    error: type[BuildError] = ContentError,
    hint: str = "",
    reads: Reads | None = None,
) -> bytes:
    """The bytes of the regular file at `path` (`open_input`), at most `limit` of them (None:
    a data file, whatever its size); anything else is `error` naming the file.
    FileNotFoundError is left to the caller."""
    fd = open_input(path, error, reads)
    try:
        size = os.fstat(fd).st_size
        within = limit is None or size <= limit
        data = _read_at_most(fd, (size if limit is None else limit) + 1) if within else b""
    finally:
        os.close(fd)
    if limit is not None and (size > limit or len(data) > limit):
        size = max(size, len(data))
        problem = f"is {_size(size)}, over the {_size(limit, 0)} limit"
        raise error(problem, path=path, hint=hint or "a file this large is a mistake")
    return data


def open_input(
    path: Path | str, error: type[BuildError] = ContentError, reads: Reads | None = None
) -> int:
    """The one door to every file of the course (content/ and recordings/): a descriptor of
    the regular file at `path`, or `error` naming it. FileNotFoundError is left to the caller.

    Never through a symbolic link (`example.py -> ../../../.git/config` would publish CI's
    token), and opened without waiting and checked to be a regular file before it is read (a
    FIFO would wait forever, /dev/zero fill the memory). The folders leading to it are
    checked by `input_folder` as they are listed. A hard link cannot be told from the file
    (a git checkout never holds one). The path is noted into `reads` first: a file missing
    now is read when it appears.
    """
    if reads is not None:
        reads.note(os.fspath(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise
    except OSError as failure:  # a link (ELOOP); a socket cannot be opened at all (ENXIO)
        if os.path.islink(path):
            raise error(linked(path), path=path, hint=LINK_HINT) from None
        raise error(_not_readable(path, failure), path=path) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise error(
            f"is {file_kind(mode)}, not a regular file",
            path=path,
            hint="replace it with an ordinary file",
        )
    return fd


LINK_HINT = "replace the link with the file or folder it points to (a copy, not a link)"


def linked(path: Path | str) -> str:
    """What is wrong with a symbolic link where the course has a file or folder."""
    try:
        target = os.readlink(path)
    except OSError:  # gone since
        target = "?"
    return f"is a symbolic link (to {_quoted(target)}), and links in the course are not followed"


def _quoted(text: str) -> str:
    """A name as the author wrote it, or its repr when it holds anything unprintable."""
    return text if text.isprintable() else repr(text)


def input_folder(path: Path, error: type[BuildError] = ContentError) -> Path:
    """A folder of the course the builder lists (content/, lessons/, a lesson's folder,
    recordings/): never a symbolic link, so that no file is read from outside the course."""
    if path.is_symlink():
        raise error(linked(path), path=path, hint=LINK_HINT)
    return path


def site_name(folder: Path, path: Path) -> str:
    """The name `path` (a file under `folder`) is published under in the site, or a
    ContentError naming it when that name breaks the rules of the record of the site's files
    (fsutil.name_problem: a newline would list two files there, a backslash or a control
    character a line the next build refuses, bytes that are not UTF-8 none at all)."""
    from ..core.fsutil import name_problem

    name = path.relative_to(folder).as_posix()
    problem = name_problem(name)
    if problem:
        raise ContentError(
            f"has a name that {problem}; the site cannot publish it",
            path=repr(str(path)) if not str(path).isprintable() else path,
            hint="rename the file (letters, digits, '-', '_' and '.' are safe)",
        )
    return name


def json_files(folder: Path) -> list[str]:
    """The names of `folder`'s .json files (and of anything else so named), in order, as
    `sorted(folder.glob("*.json"), key=str)` lists them, without a stat or a Path a name;
    none when the folder is not there or cannot be listed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(name for name in names if name.endswith(".json"))


def _read_at_most(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0 and (chunk := os.read(fd, min(count, READ_CHUNK))):
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def special_file(path: Path | str) -> str:
    """What is at `path` (links followed) when it is there but not a regular file: "a FIFO
    (named pipe)", "a folder", ...; "" otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else file_kind(mode)


def _not_readable(path: Path | str, failure: OSError) -> str:
    kind = special_file(path)
    return f"is {kind}, not a regular file" if kind else f"cannot be read: {failure.strerror}"


def _size(count: int, digits: int = 1) -> str:
    if count >= 2**20:
        return f"{count / 2**20:.{digits}f} MiB"
    return f"{count / 2**10:.{digits}f} KiB"


def load_yaml(text: str, path: Path | str) -> Any:
    """YAML by libyaml's safe loader when PyYAML has it (much faster than PyYAML's own),
    without aliases (`no_aliases`) nor deep nesting (`_shallow_yaml`)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    _shallow_yaml(text, path)
    no_aliases(text, path)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise ContentError(f"YAML error{where}: {problem}", path=path) from None


def no_aliases(text: str, path: Path | str) -> None:
    """A ContentError when the YAML `text` uses an alias (`*name`): nine nested aliases of
    ten ("billion laughs") expand to 10^9 values, which took 28 s and 3 GB before a
    MemoryError. Read as events, which are never expanded; a YAML mistake is left to the
    loader, which names it."""
    if "*" not in text:
        return  # no alias: the common case, unparsed
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with contextlib.suppress(yaml.YAMLError):
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                raise ContentError(
                    f"uses the YAML alias *{event.anchor}: aliases are not allowed",
                    path=path,
                    hint="write the value out where the alias stands",
                )


@contextlib.contextmanager
def yaml_without_aliases(path: Path | str) -> Iterator[None]:
    """Inside the block, PyYAML's `safe_load` and `safe_load_all` (which a third party's
    parser calls: Jupytext, on a notebook's front matter and cell options) refuse aliases
    as `load_yaml` does, naming `path`."""
    import yaml

    kept = yaml.safe_load, yaml.safe_load_all

    def checked(load: Any) -> Any:
        def load_checked(stream: Any) -> Any:
            no_aliases(stream if isinstance(stream, str) else str(stream), path)
            return load(stream)

        return load_checked

    yaml.safe_load, yaml.safe_load_all = map(checked, kept)
    try:
        yield
    finally:
        yaml.safe_load, yaml.safe_load_all = kept


def split_front_matter(text: str, path: Path | str) -> tuple[str, str, int]:
    """The YAML block between the opening and closing '---' lines (not parsed), the
    Markdown body after it, and the body's first line number."""
    lines = _head_lines(text)
    if not lines or lines[0].rstrip() != "---":
        raise ContentError(
            "has no front matter: the file must start with a '---' line",
            path=path,
            hint="see docs/authoring.md, 'Writing a lesson'",
        )
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise ContentError("front matter is not closed by a '---' line", path=path)
    return "".join(lines[1:end]), text[sum(map(len, lines[: end + 1])) :], end + 2


def front_matter_fields(block: str, path: Path | str) -> dict[str, Any]:
    """The front matter block's fields."""
    raw = load_yaml(block, path)
    if not isinstance(raw, dict):
        raise ContentError("front matter must be a YAML mapping of fields", path=path)
    return raw


def _head_lines(text: str) -> list[str]:
    """text.splitlines(keepends=True), or its first lines when they hold a closing '---'.

    A prefix ending just after a newline splits into the same first lines as the whole
    text, so splitting the body of a long lesson (the slow part) is needed only when the
    front matter does not end before the first newline-'---' line.
    """
    start = text.find("\n---")
    stop = text.find("\n", start + 1) if start >= 0 else -1
    if stop >= 0:
        lines = text[: stop + 1].splitlines(keepends=True)
        if any(line.rstrip() == "---" for line in lines[1:]):
            return lines
    return text.splitlines(keepends=True)
