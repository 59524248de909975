"""The builder's version: the installed distribution's, or the source tree's when the
builder runs in place from a checkout (`python -m builder` there, or an editable install).

Standard library only, and read only when asked (`--version`, `coursebuilder new`):
importlib.metadata is imported then, not by every command that builds its parser (it
pulls in the email package, a noticeable share of a no-op).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib import metadata

DISTRIBUTION = "coursebuilder"
PACKAGE = Path(__file__).resolve().parents[1]  # builder/


def version() -> str:
    """The version of the builder that is running: the installed distribution's when it is
    the one that holds this very package, else pyproject.toml's beside it (a checkout)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None and _holds_this_package(dist):
        return dist.version
    return source_version() or (dist.version if dist is not None else "unknown")


def _holds_this_package(dist: metadata.Distribution) -> bool:
    here = PACKAGE / "__init__.py"
    mine = [f for f in dist.files or () if str(f).replace("\\", "/") == "builder/__init__.py"]
    return any(Path(str(dist.locate_file(f))).resolve() == here for f in mine)


def source_version(tree: Path | None = None) -> str | None:
    """`version = "..."` of the [project] table in the checkout's pyproject.toml, if any."""
    import tomllib

    try:
        project = tomllib.loads(((tree or PACKAGE.parent) / "pyproject.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    table = project.get("project", {})
    found = table.get("version") if table.get("name") == DISTRIBUTION else None
    return found if isinstance(found, str) else None


class VersionAction(argparse.Action):
    """`--version`: the version is read only when asked (a distribution lookup walks the
    path), never by the commands themselves."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(f"{DISTRIBUTION} {version()}")
        parser.exit()
