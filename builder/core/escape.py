"""Text written for a machine or a terminal, escaped in one place per kind of output.

Names, paths, titles and recorded output come from a course, and a course comes from a pull
request: written raw, a newline in a file name forges a GitHub annotation, a recording name
breaks out of its Markdown heading, ANSI and OSC escapes reach the reviewer's terminal. So
every output kind has one function here, and the places that write call it:

    terminal   the CLI's stdout and stderr (`TerminalStream`, installed by `cli.main` for
               every command): control characters, escape sequences, bidirectional
               overrides and lone surrogates shown as `\\x1b`, `\\u202e`, ...; `\\n` and `\\t`
               kept; what GitHub's runner reads as a workflow command (`::` starting a line,
               `##[` anywhere) defused; characters the stream cannot encode (an ASCII
               locale) as backslash escapes
    one_line   a single name inside a line (a path, a lesson id, a title): the same, and
               `\\n`, `\\r`, `\\t` shown too, so no name can start a line of its own
    workflow   GitHub's workflow-command encoding of a message or a property
               (actions/runner ActionCommand.cs: `%`, CR, LF; in a property also `:`, `,`)
    markdown   text in a paragraph or table cell (`markdown_text`), a name as inline code
               (`markdown_code`): no raw HTML, link, image or new block
    address    `encoded_address`: an address in a Markdown link or an XML file, everything
               but its own syntax percent-encoded
    json       `json_text`: what a tool reads; the characters a terminal would act on as
               `\\uXXXX` escapes, so the JSON is equal and inert
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, TextIO
from urllib.parse import quote

# C0 but tab and newline, DEL, C1, bidirectional embeddings, overrides and isolates (text
# shown in another order than it is read), line and paragraph separators, lone surrogates
# (a file name that is not UTF-8).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_CONTROL_OR_LINE = re.compile(f"[{_CONTROLS}\t\n]")
_COMMAND = re.compile(f"[{_CONTROLS}]|##\\[")  # GitHub's runner reads `##[command]` anywhere
_COMMAND_START = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)  # `::command::`, after spaces
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    found = match[0]
    if found == "##[":
        return "##\\u005b"  # the same text inside a JSON string
    if found in _NAMED:
        return _NAMED[found]
    code = ord(found)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """Text with its control characters shown escaped; newlines and tabs kept."""
    return _CONTROL.sub(_shown, text)


def one_line(text: str) -> str:
    """A name or path inside a line of output: nothing in it acts, nothing starts a line."""
    return _CONTROL_OR_LINE.sub(_shown, text)


def terminal(text: str, line_start: bool = True) -> str:
    """Text for a terminal or a CI log: newlines and tabs kept, everything else that a
    terminal or GitHub's runner acts on shown escaped. `line_start`: what is before `text`
    on its line is only spaces (the runner skips them before `::`)."""
    text = _COMMAND.sub(_shown, text)
    if not line_start:  # the first line continues one already written: not a line start
        head, newline, rest = text.partition("\n")
        return head + newline + _COMMAND_START.sub(r"\1\\x3a", rest) if newline else head
    return _COMMAND_START.sub(r"\1\\x3a", text)


def workflow_data(text: str) -> str:
    """A workflow command's message (after `::`): shown as one line in the log too."""
    return _workflow(one_line(text))


def workflow_property(text: str) -> str:
    """A workflow command's property value (`file=`, `title=`)."""
    return _workflow(one_line(text)).replace(":", "%3A").replace(",", "%2C")


def _workflow(text: str) -> str:
    """GitHub's encoding, and `##[` defused: should the runner not read the line as a
    `::` command, it would look for the old `##[command]` form anywhere in it."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace("##[", "##\\u005b")


def workflow_command(command: str, message: str, **properties: str) -> str:
    """`::error file=...,title=...::message`, every field escaped by GitHub's rules."""
    fields = ",".join(f"{key}={workflow_property(value)}" for key, value in properties.items())
    return f"::{command}{' ' + fields if fields else ''}::{workflow_data(message)}"


# -- Markdown --------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~&])")
_BLOCK_START = re.compile(r"^(\d*)([-+=.)])")  # a list item ("-", "+", "1.", "1)"), a setext line


def markdown_text(text: str) -> str:
    """Text safe inside a Markdown paragraph, heading or table cell: one line, every
    character that could make HTML, a link, an image, emphasis or a table column escaped."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text))
    return _BLOCK_START.sub(r"\1\\\2", escaped)


def markdown_code(text: str) -> str:
    """A name as inline code: one line, fenced by more backticks than it holds (nothing in
    a code span is Markdown or HTML)."""
    text = one_line(text)
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def encoded_address(address: str) -> str:
    """An address as a Markdown link's destination or in XML: every character that could
    end the link or make other Markdown (a blank, brackets, parentheses, `!`, `*`, a
    backtick, a quote), or that XML cannot hold (a control character), percent-encoded, so
    it stays one address, the same one."""
    return quote(address, safe="/:?#=&%@+,;~._-")


def markdown_fence(language: str, lines: list[str]) -> str:
    """Lines as a fenced code block, its fence longer than any backtick run in them."""
    shown = [visible(line) for line in lines]
    runs = [len(run) for line in shown for run in re.findall("`{3,}", line)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return "\n".join([f"{fence}{language}", *shown, fence])


# -- JSON ------------------------------------------------------------------------------------

_JSON_UNSAFE = re.compile(f"[{_CONTROLS}]|(?<=##)\\[")


def json_text(value: Any) -> str:
    """`value` as indented JSON, non-ASCII text kept, but every character a terminal or
    GitHub's runner would act on written as a `\\uXXXX` escape (inside strings: nothing else
    can hold them), so a tool reads the same value."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


# -- the CLI's streams -----------------------------------------------------------------------


def _as_u_escapes(error: UnicodeError) -> tuple[str, int]:
    """What a stream cannot encode, as `\\uXXXX` (a surrogate pair past U+FFFF): readable,
    and the same value inside a JSON string."""
    assert isinstance(error, UnicodeEncodeError)
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    codes = [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]
    return "".join(f"\\u{code:04x}" for code in codes), error.end


_UNENCODABLE = "coursebuilder-u-escapes"
codecs.register_error(_UNENCODABLE, _as_u_escapes)


class TerminalStream(io.TextIOBase):
    """A text stream that writes `terminal(text)` to the stream it wraps (`unescaped`, for
    the builder's own workflow commands and terminal controls), encoding what the wrapped
    stream cannot (an ASCII locale) as backslash escapes."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.unescaped = stream
        self._line_start = True
        name = getattr(stream, "encoding", None) or "utf-8"
        try:
            self._codec = codecs.lookup(name).name
        except LookupError:
            self._codec = "utf-8"

    def write(self, text: str) -> int:
        shown = terminal(text, self._line_start)
        _, newline, last = text.rpartition("\n")
        self._line_start = not last.strip() and (bool(newline) or self._line_start)
        self.unescaped.write(self._encodable(shown))
        return len(text)

    def command(self, line: str) -> None:
        """A line the builder means as a workflow command (built by `workflow_command`)."""
        self.unescaped.write(self._encodable(line) + "\n")
        self._line_start = True

    def _encodable(self, text: str) -> str:
        if self._codec == "utf-8":
            return text
        return text.encode(self._codec, _UNENCODABLE).decode(self._codec)

    def flush(self) -> None:
        self.unescaped.flush()

    def fileno(self) -> int:
        return self.unescaped.fileno()

    def isatty(self) -> bool:
        return self.unescaped.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.unescaped.encoding


def write_command(stream: TextIO, line: str) -> None:
    """Write a workflow command as it is (a stream that is not a TerminalStream: as text)."""
    if isinstance(stream, TerminalStream):
        stream.command(line)
    else:
        stream.write(line + "\n")


def write_control(stream: TextIO, text: str) -> None:
    """Terminal controls the builder itself means (a live progress line's `\\r\\033[K`)."""
    if isinstance(stream, TerminalStream):
        stream.unescaped.write(text)
        stream._line_start = True  # GitHub's runner reads a carriage return as a new line
    else:
        stream.write(text)


@contextmanager
def terminal_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr as TerminalStreams while a command runs."""
    import sys

    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalStream(saved[0])
    sys.stderr = TerminalStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a reader gone away: main() said so
                stream.flush()
        sys.stdout, sys.stderr = saved
