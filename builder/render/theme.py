"""What a course chooses of its look: its own templates and static files, which override the
builder's by name, and the accent colours of course.yml.

`content/templates/NAME` is used instead of the builder's template NAME (a Jinja loader
chain: the course's folder first, then the builder's), and the builder's own stays reachable
as `builder/NAME`, so a course's base.html can `{% extends "builder/base.html" %}` and
replace one block. `content/templates/static/NAME` is published as static/NAME, over the
builder's file of that name. The theme carries a digest of the course's files, so every
page's key changes when one of them does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, TemplateNotFound

from ..core.errors import ContentError
from ..core.fsutil import name_problem
from ..core.observe import editor_file
from ..course.files import input_folder, read_file, read_text, site_name, special_file
from ..course.model import Course

FOLDER = "templates"  # inside the course's content folder
MADE = ("static/pygments.css", "static/builder.py", "static/nav.js")  # the builder makes these


@dataclass(frozen=True)
class Theme:
    # the course's templates folder ("" when it has none), hidden from templates (a path)
    templates: str = field(default="", metadata={"template": False})
    digest: str = ""  # of every file in it, by name
    accent: str = ""
    accent_dark: str = ""

    @classmethod
    def of(cls, course: Course) -> Theme:
        colours = course.meta.colours
        accent = (colours.accent or "") if colours else ""
        dark = (colours.accent_dark or "") if colours else ""
        folder = input_folder(course.root / FOLDER)  # a link is refused: it may lead to /
        if not folder.is_dir():
            return cls("", "", accent, dark)
        files = own_files(folder)
        digest = hashlib.sha256()
        for name, path in files.items():
            data = read_file(path, None)
            digest.update(f"{name}\0{len(data)}\0".encode() + data)
        return cls(str(folder.resolve()), digest.hexdigest(), accent, dark)

    def static(self) -> dict[str, Path]:
        """The course's static files, by the name they are published under."""
        if not self.templates:
            return {}
        files = own_files(Path(self.templates))
        return {name: path for name, path in files.items() if name.startswith("static/")}


def own_files(folder: Path) -> dict[str, Path]:
    """Every file under the course's templates folder, by its name there, sorted; a link is
    refused (a template could otherwise publish any file of the machine that renders), and
    so is a FIFO, a device or a socket (reading one waits for ever, or never ends)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise ContentError(
                "is a link; templates and static files must be regular files in the course",
                path=path,
                hint="replace the link with a copy of the file",
            )
        if not path.is_dir() and (kind := special_file(path)):
            raise ContentError(
                f"is {kind}, not a regular file", path=path, hint="replace it with a file"
            )
        if path.is_file() and not editor_file(path.name) and "__pycache__" not in path.parts:
            name = site_name(folder, path)
            if name in MADE:
                raise ContentError(
                    "the builder makes this file itself; it cannot be overridden",
                    path=path,
                    hint="rename it, or override the template that uses it",
                )
            files[name] = path
    return files


class CourseTemplates(BaseLoader):
    """The course's templates, read through the course's one door (`read_text`: no link,
    a regular file of at most 1 MiB, UTF-8; a folder on the way that is a link is refused),
    by a name plainly inside the folder: an absolute name or one with `..` is not found
    here, nor then among the builder's."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Callable[[], bool]]:
        if name_problem(template):
            raise TemplateNotFound(template)
        path = self.folder / template
        for parent in (self.folder, *reversed(path.parents[: template.count("/")])):
            input_folder(parent)
        try:
            mtime = os.stat(path, follow_symlinks=False).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            raise TemplateNotFound(template) from None
        hint = "a template this large is a mistake"
        source = read_text(path, hint=hint)
        return source, str(path), lambda: _mtime(path) == mtime


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return None


NO_THEME = Theme()  # the builder's look: no templates of the course's, its colours
