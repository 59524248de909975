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
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ContentError
from ..core.observe import editor_file
from ..course.files import site_name
from ..course.model import Course

FOLDER = "templates"  # inside the course's content folder
MADE = ("static/pygments.css", "static/builder.py", "static/nav.js")  # the builder makes these


@dataclass(frozen=True)
class Theme:
    templates: str = ""  # the course's templates folder, "" when it has none
    digest: str = ""  # of every file in it, by name
    accent: str = ""
    accent_dark: str = ""

    @classmethod
    def of(cls, course: Course) -> Theme:
        colours = course.meta.colours
        accent = (colours.accent or "") if colours else ""
        dark = (colours.accent_dark or "") if colours else ""
        folder = course.root / FOLDER
        if not folder.is_dir():
            return cls("", "", accent, dark)
        files = own_files(folder)
        digest = hashlib.sha256()
        for name, path in files.items():
            digest.update(f"{name}\0{len(data := path.read_bytes())}\0".encode() + data)
        return cls(str(folder.resolve()), digest.hexdigest(), accent, dark)

    def static(self) -> dict[str, Path]:
        """The course's static files, by the name they are published under."""
        if not self.templates:
            return {}
        files = own_files(Path(self.templates))
        return {name: path for name, path in files.items() if name.startswith("static/")}


def own_files(folder: Path) -> dict[str, Path]:
    """Every file under the course's templates folder, by its name there, sorted; a link is
    refused (a template could otherwise publish any file of the machine that renders)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise ContentError(
                "is a link; templates and static files must be regular files in the course",
                path=path,
                hint="replace the link with a copy of the file",
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


NO_THEME = Theme()  # the builder's look: no templates of the course's, its colours
