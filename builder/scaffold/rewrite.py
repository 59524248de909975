"""A MyST page's prose rewritten into the builder's Markdown, where the rewrite is mechanical
(docs/authoring.md, "Importing a notebook"): roles to `[](api:NAME)` links, code spans,
glossary terms, `$math$` and links; `(label)=` targets dropped and links to them made links
to the heading they stand on (or to a lesson already in the course); admonition directives
to callouts, `{tab-set}` to tabs, `{math}` to `$$`, `{code-block}` to a fence; HTML
comments removed. Each rewrite that loses something is a Note-like tuple (line, text, what,
todo); what is not rewritten is left as written, for builder/scaffold/cells.py to list.

Pure: the page's labels (`labels`) are found first, over every Markdown cell, so that a
link may lead forward. Every regex here runs in linear time on a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..render.callouts import ALIASES, KINDS
from ..render.foreign import CODE_ROLES, LABELLED, role_shown
from . import myst

TARGET = re.compile(r"^ {0,3}\(([^()\s]+)\)=\s*$")
# {func}`jax.jit` (MyST), and :func:`jax.jit` (reStructuredText) pasted into MyST
ROLE = re.compile(r"(?<![\\`\w])(?:\{([A-Za-z0-9_+:.-]+)\}|:([a-z]+(?::[a-z]+)?):)`([^`]*)`")
LINK = re.compile(r"(?<![!\\])\[([^\[\]]*)\]\(\s*+<?([^()\s<>]*)>?\s*\)")  # *+: linear
API_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# A line's last part up to its last non-blank, greedy: a lazy `(.*?)\s*$` retried the run of
# blanks at every character (`OPEN` on "```{note} a" + 10^5 blanks + "b" took 35 s).
_REST = r"\s*+((?:\S(?:.*\S)?)?)\s*$"
OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,}|:{3,})\s*\{([A-Za-z0-9_:.-]+)\}" + _REST)
OPTION = re.compile(r"^:([A-Za-z0-9_-]+):" + _REST)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
PAGE_SUFFIXES = (".md", ".ipynb", ".myst", ".rst", ".html", ".htm", ".txt")
LINK_ROLES = frozenset({"ref", "doc", "numref"})
API_ROLES = frozenset(
    {"func", "meth", "class", "mod", "attr", "data", "obj", "exc", "const", "any", "function"}
)
NAMED = MappingProxyType(  # directives with a callout's meaning that are not callouts
    {
        "seealso": ("note", "See also"),
        "versionadded": ("note", "New in version"),
        "versionchanged": ("note", "Changed in version"),
        "deprecated": ("warning", "Deprecated since version"),
    }
)
DROPPED = frozenset({"toctree", "contents", "tableofcontents"})
CODE = frozenset({"code", "code-block", "sourcecode"})
TABS = frozenset({"tab-set", "tab-set-code"})

Found = tuple[int, str, str, str]  # (line, its text, what, what to do)


@dataclass(frozen=True)
class Context:
    """What the course has that a rewrite leads to: course.yml's `api_links` prefixes, the
    glossary's terms, the lessons (a page's file name or a label -> its slug); and this
    page's own labels (label -> (anchor, heading title); anchor "" for the page's top)."""

    api: frozenset[str] = frozenset()
    has_term: Callable[[str], bool] = lambda _: False
    lesson: Callable[[str], str | None] = lambda _: None
    labels: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def uncommented(source: str, replace: str | Callable[[re.Match[str]], str] = "") -> str:
    """COMMENT.sub(replace, source) on the text up to its last `-->`: an unclosed `<!--`
    after it scanned to the end at every try (`<!--` repeated: quadratic); none there can
    close."""
    end = source.rfind("-->") + 3 if "-->" in source else 0
    return COMMENT.sub(replace, source[:end]) + source[end:]


def rewrite(source: str, context: Context) -> tuple[str, list[Found]]:
    """`source` (a Markdown cell) rewritten, and what each rewrite could not keep."""
    found: list[Found] = []
    lines = _blocks(uncommented(source, _comment_lines).split("\n"), 0, context, found)
    return "\n".join(lines), found


def _comment_lines(match: re.Match[str]) -> str:
    """A comment's text gone, its lines kept (as blank ones), so lines keep their numbers."""
    return "\n" * match[0].count("\n") + "\0"  # \0: a line that held only a comment


# -- blocks --------------------------------------------------------------------------------


def _blocks(lines: list[str], first: int, context: Context, found: list[Found]) -> list[str]:
    """The lines rewritten: a directive fence becomes what it means, an ordinary fence stays
    as it is, a target goes, every other line has its roles and links rewritten."""
    out: list[str] = []
    at, fence = 0, ""
    while at < len(lines):
        line = lines[at]
        if fence:
            fence = "" if _closes(line, fence) else fence
            out.append(line)
        elif opened := OPEN.match(line):
            end = _close(lines, at + 1, opened[2])
            body = lines[at + 1 : end]
            out += _directive(opened, body, first + at, context, found)
            at = end + 1
            continue
        elif (plain := myst.FENCE.match(line)) and "{" not in line:
            fence = plain[1]
            out.append(line)
        elif TARGET.match(line):
            pass  # its heading is its own anchor (`labels`)
        elif line.strip("\0 \t") or "\0" not in line:
            found += [(first + at, line, *m) for m in myst.builder_marks(line[: myst.MAX_CHECKED])]
            out.append(_inline(line.replace("\0", ""), first + at, context, found))
        at += 1
    return out


def _closes(line: str, fence: str) -> bool:
    closing = line.strip()
    return closing.startswith(fence) and not closing.strip(fence[0])


def _close(lines: list[str], start: int, fence: str) -> int:
    """The line that closes a fence opened with `fence` (len(lines): none does)."""
    return next(
        (n for n in range(start, len(lines)) if _closes(lines[n], fence)),
        len(lines),
    )


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's `:name: value` options (or a `---` YAML block of them) and its body."""
    options: dict[str, str] = {}
    if body and body[0].strip() == "---":
        end = next((n for n in range(1, len(body)) if body[n].strip() == "---"), 0)
        for line in body[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        return options, body[end + 1 :]
    at = 0
    while at < len(body) and (option := OPTION.match(body[at].strip())):
        options[option[1]] = option[2]
        at += 1
    return options, body[at:]


def _directive(
    opened: re.Match[str], body: list[str], line: int, context: Context, found: list[Found]
) -> list[str]:
    name, arg = opened[3].lower(), opened[4]
    options, text = _options(body)
    start = line + 1 + len(body) - len(text)
    inner = _blocks(text, start, context, found)
    said = opened[0].strip()
    if name in DROPPED:
        found.append((line, opened[0], f"{said}, deleted", "the site makes its own navigation"))
        return []
    if name in TABS:
        return _tab_set(inner)
    if name == "tab-item":
        return _tab(arg, inner, True)
    if name == "math":
        return ["$$", *(x for x in inner if x.strip()), "$$"]
    if name in CODE:
        fence = "`" * max(
            3, 1 + max((len(m) for m in re.findall("`+", "\n".join(text))), default=0)
        )
        return [f"{fence}{arg.split()[0] if arg else ''}", *text, fence]
    callout = _callout(name, arg, options)
    if callout is None:
        closing = opened[2][0] * len(opened[2])
        return [opened[0], *body, closing]  # as written: cells.py lists it
    return [callout, *_indented(inner)]


def _callout(name: str, arg: str, options: Mapping[str, str]) -> str | None:
    """The `!!! kind "Title"` line of an admonition directive; None for another directive."""
    classes = options.get("class", "").lower().split()
    folded = name == "dropdown" or "dropdown" in classes
    if name in ("admonition", "dropdown"):
        kind = next((_kind(c) for c in classes if _kind(c)), "note")
        title = arg
    elif name in NAMED:
        kind, said = NAMED[name]
        title = f"{said} {arg}".strip()
    elif kind := _kind(name):
        title = arg or (name.capitalize() if name not in KINDS else "")
    else:
        return None
    mark = ("???+" if "open" in options else "???") if folded else "!!!"
    return f'{mark} {kind} "{title.replace(chr(34), chr(39))}"' if title else f"{mark} {kind}"


def _kind(name: str) -> str:
    return name if name in KINDS else ALIASES.get(name, "")


def _indented(lines: Iterable[str]) -> list[str]:
    return [f"    {x}" if x.strip() else "" for x in lines]


def _tab(title: str, body: list[str], first: bool) -> list[str]:
    title = (title or "Tab").replace("\\", "\\\\").replace('"', '\\"')
    head = f'===! "{title}"' if first else f'=== "{title}"'
    return [head, "", *_indented(body or ["\u2014"]), ""]


def _tab_set(inner: list[str]) -> list[str]:
    """A tab-set's tab-items (rewritten already into `===! "Title"` groups) as one group."""
    out, first = [], True
    for line in inner:
        if line.startswith('===! "'):
            line = line if first else "===" + line[4:]
            first = False
        out.append(line)
    return out


# -- inline ----------------------------------------------------------------------------------


def _inline(line: str, number: int, context: Context, found: list[Found]) -> str:
    def role(match: re.Match[str]) -> str:
        made, lost = _role((match[1] or match[2]).lower(), match[3], context)
        if lost:
            found.append((number, line, *lost))
        return made

    def link(match: re.Match[str]) -> str:
        made, lost = _link(match[1], match[2], context)
        if lost:
            found.append((number, line, *lost))
        return made

    return _outside_code(ROLE.sub(role, line), lambda text: LINK.sub(link, text))


def _outside_code(line: str, change: Callable[[str], str]) -> str:
    """`line` with `change` made to its text outside code spans."""
    out, at = [], 0
    for start, end in myst.code_spans(line):
        out += [change(line[at:start]), line[start:end]]
        at = end
    return "".join(out) + change(line[at:])


def _role(typed: str, body: str, context: Context) -> tuple[str, tuple[str, str] | None]:
    """A role as the builder writes it, and (what, what to do) when something is lost."""
    name = typed.split(":")[-1]
    labelled = LABELLED.fullmatch(body)
    target = body[len(labelled[1]) :].strip(" <>") if labelled else body
    shown = role_shown(body)
    if name in API_ROLES:
        target = target.lstrip("~.!")
        if API_NAME.fullmatch(target) and target.split(".")[0] in context.api:
            return (f"[](api:{target})" if shown == target else f"[`{shown}`](api:{target})"), None
        return f"`{shown}`", None
    if name in CODE_ROLES:
        return f"`{shown}`", None
    if name == "term":
        if context.has_term(target):
            return (f"[[{shown}|{target}]]" if labelled else f"[[{target}]]"), None
        what = f"glossary term {target!r}, which glossary.yml lacks, shown as text"
        return shown, (what, f"add it to glossary.yml, then write [[{target}]]")
    if name == "math":
        return f"${body.strip()}$", None
    if name == "abbr":
        return shown, None
    if name in LINK_ROLES:
        return _to(shown if labelled else "", target, context, name == "doc")
    return "{" + typed + "}`" + body + "`", None  # left as written: cells.py lists it


def _link(text: str, url: str, context: Context) -> tuple[str, tuple[str, str] | None]:
    if url.startswith(("http://", "https://", "mailto:", "lesson:", "api:")) or not url:
        return f"[{text}]({url})", None
    label = url.removeprefix("project:").removeprefix("#")
    if url.startswith("#") and label not in context.labels:
        return f"[{text}]({url})", None  # a heading's anchor: the build checks it
    if "." in label.rsplit("/", 1)[-1] and not label.lower().endswith(PAGE_SUFFIXES):
        return f"[{text}]({url})", None  # a file: the build checks it is the course's
    return _to(text, label, context, "/" in label or "." in label)


def _to(text: str, target: str, context: Context, page: bool) -> tuple[str, tuple[str, str] | None]:
    """A link to a label of this page, or to a page (or a page's label) of the course; as
    its text alone, noted, when it leads to neither."""
    if not page and target in context.labels:
        anchor, title = context.labels[target]
        return f"[{text or title}](#{anchor})" if anchor else (text or title), None
    path = target.partition("#")[0]
    stem = path.rstrip("/").rsplit("/", 1)[-1]
    for suffix in PAGE_SUFFIXES:
        stem = stem.removesuffix(suffix)
    key = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")
    slug = context.lesson(key) if key else None
    if slug is not None:
        return f"[{text}](lesson:{slug})", None
    shown = text or target
    what = f"link to {target!r}, neither a label of this page nor a lesson, shown as text"
    return shown, (what, "when that page is a lesson, write [text](lesson:SLUG#anchor)")


# -- labels ------------------------------------------------------------------------------------


def labels(sources: Iterable[str], heading_id: Callable[[str], str]) -> dict[str, tuple[str, str]]:
    """Each `(label)=` of the page's Markdown (`sources`, in order) -> (the anchor of the
    h2 or h3 heading right after it, its title); ("", title) on the page's title, another
    heading or no heading. `heading_id`: the anchor of a heading's text, as the page will
    make it (made unique in the page's order)."""
    found: dict[str, tuple[str, str]] = {}
    waiting: list[str] = []
    titled = False
    for source in sources:
        fence = ""
        for line in uncommented(source).split("\n"):
            if fence:
                fence = "" if _closes(line, fence) else fence
            elif opened := myst.FENCE.match(line):
                fence = opened[1] if "{" not in line else ""
            elif target := TARGET.match(line):
                waiting.append(target[1])
                continue
            elif heading := myst.HEADING.match(line):
                level, text = len(heading[1]), heading[2]
                anchor = (
                    heading_id(_inline(text, 0, Context(), []))
                    if titled and level in (2, 3)
                    else ""
                )
                titled = True
                found |= {label: (anchor, myst.plain(text)) for label in waiting}
            elif not line.strip():
                continue
            found |= {label: ("", "") for label in waiting if label not in found}
            waiting = []
    return found | {label: ("", "") for label in waiting if label not in found}
