"""`coursebuilder new DIR`: a course that builds on a fresh machine with `make site` and
`make check`, written from the files in builder/scaffold/starter/ (package data).

The starter holds course.yml, glossary.yml, one lesson (a small JAX example with a panel),
a Makefile, a lock file, .gitignore, .gitattributes (recordings and lessons byte-exact:
no core.autocrlf rewriting), the CI workflow, the pre-commit hook and a README for
the course's author. Files named `dot-x` there are written as `.x` (a wheel's package data
leaves dotfiles out); the lock's `coursebuilder==VERSION` line gets this builder's version.
Standard library only: `new` needs none of the builder's heavy dependencies.

Everything is written below DIR through the one door (fsutil.Staging with `refuse_links`):
a symbolic link anywhere inside DIR where a starter file or folder goes (`content`,
`content/lessons`, `.github/workflows`, `Makefile`...) is refused with an error naming it,
before anything is written, and nothing is written outside DIR. DIR itself may be a link:
the user named it, as `--out` of `render`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from ..core.errors import BuildError

STARTER = Path(__file__).resolve().parent / "starter"
DOT = "dot-"
LOCK = "requirements.lock"


def add_new_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "start a new course in DIR: a lesson, a Makefile, a lock, CI and a README"
    new = commands.add_parser("new", help=text, description=text)
    new.add_argument("dir", type=Path, metavar="DIR", help="a new or empty folder")
    new.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that is not empty (starter files of the same name are "
        "replaced; nothing else is touched)",
    )
    new.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    new_course(args.dir, force=args.force, out=sys.stdout)
    return 0


def starter_files() -> dict[str, bytes]:
    """Each file the new course gets, by its path inside the course, in sorted order."""
    from ..core.release import version

    files = {}
    for path in sorted(STARTER.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            parts = path.relative_to(STARTER).parts
            name = "/".join("." + p[len(DOT) :] if p.startswith(DOT) else p for p in parts)
            files[name] = path.read_bytes()
    files = dict(sorted(files.items()))
    pin = f"coursebuilder=={version()}".encode()
    files[LOCK] = files[LOCK].replace(b"coursebuilder==VERSION", pin)
    return files


def new_course(folder: Path, *, force: bool = False, out: TextIO = sys.stdout) -> list[str]:
    """Write the starter course into `folder` (made if absent); refuse a folder that holds
    anything unless `force`. Says what it wrote and what to type next."""
    if folder.exists() and not folder.is_dir():
        raise BuildError("is not a folder", path=folder, hint="choose a new or empty folder")
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if present and not force:
        shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
        raise BuildError(
            f"is not empty ({shown})",
            path=folder,
            hint="choose a new or empty folder, or add --force to write the starter files "
            "into it (files of the same name are replaced, nothing else is touched)",
        )
    files = starter_files()
    _refuse_links(folder, [*files, "recordings"])
    _write(folder, files)
    print(f"Wrote a new course into {folder}/ ({len(files)} files):", file=out)
    for name in files:
        print(f"  {name}", file=out)
    print(
        f"Next: cd {folder} && make site   (the first run sets up .venv from {LOCK}, "
        "records the example and renders site/; see README.md)",
        file=out,
    )
    return list(files)


def _refuse_links(folder: Path, names: list[str]) -> None:
    """A symbolic link inside `folder` where a starter file or folder goes is refused,
    naming it: `new` writes nothing through one (nor replaces it)."""
    seen = set()
    for name in names:
        parts = name.split("/")
        for n in range(1, len(parts) + 1):
            path = folder.joinpath(*parts[:n])
            if path in seen:
                continue
            seen.add(path)
            if path.is_symlink():
                raise BuildError(
                    f"is a symbolic link (to {os.readlink(path)!r}); `new` writes nothing "
                    "through a link, and nothing was written",
                    path=path,
                    hint="remove the link (or put a real folder or file there), or choose "
                    "another folder",
                )


def _write(folder: Path, files: dict[str, bytes]) -> None:
    """The starter files and an empty recordings/, all renamed into place at the end, never
    through a link below `folder` (one made there since it was checked is an error too)."""
    from ..core.fsutil import Staging, cannot_write  # not for every command that builds the parser

    try:
        with Staging(folder, durable=True, refuse_links=True) as staging:
            staging.add(files)
            staging.make("recordings")
            staging.commit()
    except OSError as error:
        raise cannot_write(error, "no starter file was replaced") from None
