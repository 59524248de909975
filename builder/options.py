"""Every option the command line takes (`OPTIONS`), by the name builder/__main__.py's
COMMANDS gives it, with the types that bound each number at parse time: a wrong one is a
usage line naming the option and the range, never an OverflowError or a MemoryError later."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .run.shard import Shard

DIFF_FORMATS = ("text", "markdown", "json")
MAX_JOBS = max(256, os.cpu_count() or 1)  # more processes at once than this is a mistake
PORTS = (0, 65535)  # 0: any free port (the preview prints the one it got)


def _number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else one usage line naming
    the option (argparse does) and the range."""

    def parse(text: str) -> int:
        if not re.fullmatch(r"\s*[-+]?[0-9]{1,20}\s*", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low} to {high}")
        return int(text)

    parse.__name__ = "number"  # argparse names the type in some messages
    return parse


def _shard(text: str) -> Shard:
    from .run.shard import Shard

    try:
        return Shard.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


Option = tuple[tuple[str, ...], dict[str, Any]]  # argparse's add_argument(*flags, **settings)


def _option(flags: str, text: str | None = None, **settings: Any) -> Option:
    return tuple(flags.split()), {"help": text, **settings}


def _folder(name: str) -> Option:
    """--content, --recordings, --out, --cache: where a command reads and writes."""
    default = {"out": "site", "cache": ".cache"}.get(name, name)
    return _option(f"--{name}", type=Path, default=Path(default), metavar="DIR")


def _switch(flag: str, text: str) -> Option:
    return _option(flag, text, action="store_true")


FOLDERS = ("content", "recordings", "out", "cache")
# Every option a command may take, by the name COMMANDS gives it.
OPTIONS: MappingProxyType[str, Option] = MappingProxyType(
    {
        **{name: _folder(name) for name in FOLDERS},
        "no-execute": _switch(
            "--no-execute",
            "never run examples: render from recordings only; pages that are not fresh say so",
        ),
        "force": _switch(
            "--force",
            "re-record every lesson (with --no-execute: read every input again, trusting no "
            "file metadata)",
        ),
        "record-force": _switch("--force", "re-record every lesson"),
        "explain": _switch("--explain", "say why each lesson is read again: the path that changed"),
        "reread": _switch(
            "--force", "read every input again, trusting no file metadata (the last build's index)"
        ),
        "sandbox": _switch(
            "--sandbox",
            "run each example in a bubblewrap sandbox: only the system, the Python and the "
            "builder's package, read-only, its scratch folder writable, no network (needs bwrap; "
            "also with COURSEBUILDER_SANDBOX=1, or always for a course.yml with sandbox: true)",
        ),
        "jobs": _option(
            "-j --jobs",
            "examples to run, or processes rendering, at once (default: the number of cores; "
            f"at most {MAX_JOBS})",
            type=_number(1, MAX_JOBS),
            default=os.cpu_count() or 1,
        ),
        "dask": _option(
            "--dask",
            "run the examples on the dask.distributed cluster whose scheduler is at ADDRESS "
            "(tcp://HOST:PORT); recordings are written here",
            metavar="ADDRESS",
        ),
        "since": _option(
            "--since",
            "also make changes/index.html: what the recordings changed since this git revision",
            metavar="REV",
        ),
        "shard": _option(
            "--shard",
            "record only the K-th of N parts of what is due, balanced by the last run times "
            "(a CI matrix of N jobs; merge their recordings/ folders by copying the files)",
            metavar="K/N",
            type=_shard,
        ),
        "lessons": _option("lessons", "only these lesson ids or slugs", nargs="*"),
        "check-format": _option(
            "--format",
            "table (default), json (every lesson's state), or github (one ::error annotation "
            "per lesson that is not fresh, for GitHub Actions)",
            choices=("table", "json", "github"),  # builder.course.verdict.FORMATS
            default="table",
        ),
        "json": _option(
            "--json", "same as --format json", dest="format", action="store_const", const="json"
        ),
        "format": _option("--format", choices=DIFF_FORMATS, default="text"),
        "base": _option("base", "a git revision (default HEAD)", nargs="?", default="HEAD"),
        "head": _option("head", "a git revision (default: the work tree)", nargs="?"),
        "no-pages": _switch("--no-pages", "do not render pages to find changed numbers"),
        "lock": _option("lock", "the requirements to try", type=Path, metavar="LOCKFILE"),
        "rehearsal": _option(
            "--out",
            "the rehearsal's folder (recordings/ and site/ inside; default "
            ".cache/rehearse/<lock digest>/)",
            type=Path,
        ),
        "report": _option("--report", "also write the report to this file", type=Path),
        "port": _option(
            "--port",
            "port on 127.0.0.1 (default 8000; 0: any free port)",
            type=_number(*PORTS),
            default=8000,
        ),
        "files": _option("files", nargs="+", type=Path, metavar="FILE"),
        "schema-out": _option("--out", "write it to this file instead", type=Path),
        "page": _option(
            "page",
            "the notebook: a .ipynb file or a MyST Markdown .md file",
            type=Path,
            metavar="PAGE",
        ),
        "lesson-id": _option(
            "--id", "the new lesson's id and folder name (such as jit-01)", required=True
        ),
        "slug": _option("--slug", "its slug (default: from PAGE's file name)"),
        "arc": _option("--arc", "the arc of course.yml it belongs to (required)"),
        "order": _option(
            "--order",
            "its position in the arc (default: after the arc's last lesson)",
            type=_number(0, 999),  # FrontMatter.order
        ),
        "dir": _option(
            "--dir",
            "write every schema (recording, front matter, course.yml, glossary.yml) into DIR",
            type=Path,
        ),
    }
)
