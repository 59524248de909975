"""A template's mistake as one line: the template file and line it came from, what is
wrong and what to do (a syntax error, a name it does not have, a sandbox refusal, a
recursion, a page past its deadline...)."""

from __future__ import annotations

import os
import traceback
from types import MappingProxyType

from jinja2.exceptions import (
    SecurityError,
    TemplateNotFound,
    TemplateSyntaxError,
    UndefinedError,
)

from ..core.errors import ContentError
from . import deadline
from .deadline import SECONDS, OverBudget, Overtime


def template_error(error: BaseException, name: str, folders: tuple[str, ...]) -> ContentError:
    """`error`, raised while the template `name` rendered, as one line naming the template
    file (the innermost in the traceback, which Jinja gives each template's own lines)."""
    path, line = _where(error, folders)
    problem = " ".join(str(getattr(error, "message", None) or error).split())[:300]
    kind, hint = type(error).__name__, "fix the template at that line"
    for known, (label, advice) in _KINDS.items():
        if isinstance(error, known):
            kind, hint = label, advice
            break
    if isinstance(error, OverBudget):
        problem = f"this build's pages took over {deadline.BUILD_SECONDS:g} s of rendering in all"
    elif isinstance(error, Overtime):
        problem = f"rendering ran over {SECONDS:g} s"
    elif isinstance(error, TemplateNotFound):
        problem = f"no template {error.name!r}"
    return ContentError(f"{kind}: {problem}", path=path or _shown(name), hint=hint, line=line or 0)


_KINDS: MappingProxyType[type[BaseException], tuple[str, str]] = MappingProxyType(
    {
        TemplateSyntaxError: ("template syntax error", "fix the template's Jinja syntax"),
        TemplateNotFound: (
            "template not found",
            "name a file of content/templates/, or builder/NAME for the builder's own",
        ),
        UndefinedError: (
            "undefined",
            "use only what the page is given "
            "(docs/isolation.md, 'What a course template may reach')",
        ),
        SecurityError: (
            "not allowed in a course template",
            "templates run sandboxed: see docs/isolation.md, 'What a course template may reach'",
        ),
        RecursionError: ("a macro or include calls itself without end", "stop the recursion"),
        MemoryError: ("out of memory", "make the template build smaller values"),
        OverBudget: ("too slow", "a template slow on every page: make it do less on each"),
        Overtime: ("too slow", "a loop that does not end, or nested loops: make it do less"),
    }
)


def _where(error: BaseException, folders: tuple[str, ...]) -> tuple[str, int | None]:
    """The template file the error came from and its line: a syntax error says it; other
    errors, the innermost template frame of the traceback (Jinja rewrites an Exception's
    frames to the template's lines; an Overtime's are mapped here)."""
    if isinstance(error, TemplateSyntaxError) and error.filename:
        return _shown(error.filename), error.lineno
    found: tuple[str, int | None] = ("", None)
    for frame, line in traceback.walk_tb(error.__traceback__):
        template = frame.f_globals.get("__jinja_template__")
        if template is not None and template.filename:
            found = template.filename, template.get_corresponding_lineno(line)
        elif frame.f_code.co_filename.startswith(folders):
            found = frame.f_code.co_filename, line
    return (_shown(found[0]), found[1]) if found[0] else found


def _shown(path: str) -> str:
    """`path` relative to the working folder when it is inside it (as the course's other
    errors name their files)."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
