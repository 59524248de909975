"""The addresses course.yml may give: where the site is published (`site_url`), where
its content can be edited (`source_url`), where a name's documentation is (`api_links`),
where the site's notebooks open in Colab (`colab_url`), where readers report what they saw
differently (`issues_url`), and the git revisions whose recordings an environment move
compares (`moves`). Each is checked with a message that says what an address must look
like, not the pattern that tests it."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlencode

from annotated_types import MaxLen

from .validation import Check, Pattern

_SITE = r"^https?://[^\s\"'<>?#/]+(?:/[^\s\"'<>?#]*)?$"
_SOURCE = r"^https://[^\s\"'<>]+[^/\s\"'<>]$"
_API = r"^https://[^\s\"'<>{}?#/]+/[^\s\"'<>{}]*\{name\}[^\s\"'<>{}]*$"
_COLAB = r"^https://colab\.research\.google\.com/github/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/blob/[A-Za-z0-9_./-]+$"
_ISSUES = r"^https://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9_.~%/+-]*)?$"


def _address(pattern: str, problem: str, never: str = "\n") -> Check:
    """A check that a string matches `pattern` and holds no `never`, else names the value
    and `problem`."""

    def check(value: Any) -> Any:
        if isinstance(value, str) and (re.fullmatch(pattern, value) is None or never in value):
            raise ValueError(f"{value!r} {problem}")
        return value

    return Check(check, before=True)


_SITE_PROBLEM = (
    "is not the address the site is published at: write it whole, such as "
    "https://<org>.github.io/<repo>/ (http or https, no ?query or #part)"
)
_SOURCE_PROBLEM = (
    "is not where content/ is edited online: write an https address without a trailing "
    "slash, such as https://github.com/<org>/<repo>/edit/main/content"
)

_COLAB_PROBLEM = (
    "is not where Colab opens the published site's notebooks: write the Colab address of "
    "the site's root in its repository, such as "
    "https://colab.research.google.com/github/<org>/<repo>/blob/gh-pages/"
)
_ISSUES_PROBLEM = (
    "is not where readers report an issue: write an https address without quotes, "
    "spaces, ?query or #part, such as https://github.com/<org>/<repo>/issues/new"
)
_API_PROBLEM = (
    "is not an address pattern for api: links: write an https address with {name} once "
    "where the dotted name goes, such as https://docs.jax.dev/en/latest/_autosummary/{name}.html"
)
_API_PREFIX = r"^[A-Za-z_][A-Za-z0-9_]*$"
# A commit hash or a tag (a branch name too, though it moves), and ~N or ^N after it; never
# an option (no leading -), a range (..), a reflog (@{) or a search (:/).
_REVISION = r"^[A-Za-z0-9][A-Za-z0-9._/-]*(?:[~^][0-9]{0,3})*$"
_REVISION_PROBLEM = (
    "is not a git revision a move can name: write a commit hash or a tag, such as 4d25b54, "
    "v0.10.2 or 4d25b54~1 (letters, digits, '.', '_', '/', '-', then ~N or ^N; no '..')"
)

# The published site's root, such as https://org.github.io/course/ (a trailing slash or not).
SiteUrl = Annotated[str, Pattern(_SITE), MaxLen(300), _address(_SITE, _SITE_PROBLEM)]
# content/ in an online editor, such as https://github.com/o/r/edit/main/content.
SourceUrl = Annotated[str, Pattern(_SOURCE), MaxLen(300), _address(_SOURCE, _SOURCE_PROBLEM)]
# The published site's root as Colab opens it from GitHub: each lesson's notebook is
# its l/<slug>/example.ipynb under it.
ColabUrl = Annotated[str, Pattern(_COLAB), MaxLen(300), _address(_COLAB, _COLAB_PROBLEM)]
# Where a reader opens an issue, such as https://github.com/o/r/issues/new.
IssuesUrl = Annotated[str, Pattern(_ISSUES), MaxLen(300), _address(_ISSUES, _ISSUES_PROBLEM)]
# Where a name's documentation is: `[](api:jax.jit)` -> the pattern with {name} = jax.jit.
ApiUrl = Annotated[str, Pattern(_API), MaxLen(300), _address(_API, _API_PROBLEM)]
# A name's first part (`jax`, `numpy`), which picks its pattern.
ApiPrefix = Annotated[
    str,
    Pattern(_API_PREFIX),
    MaxLen(64),
    _address(
        _API_PREFIX,
        "is not a name's first part, such as jax or numpy: letters, digits and _, no digit first",
    ),
]

# A git revision whose recordings/ one side of a move is (course.yml `moves:`).
Revision = Annotated[
    str, Pattern(_REVISION), MaxLen(100), _address(_REVISION, _REVISION_PROBLEM, never="..")
]


def page_url(site_url: str, name: str) -> str:
    """The absolute address of the site file `name` ("l/residuals/index.html") under
    `site_url`: a folder's index.html by the folder, as hosts serve it."""
    path = name.removesuffix("index.html") if name.rpartition("/")[2] == "index.html" else name
    return f"{site_url.rstrip('/')}/{path}"


def colab_link(colab_url: str, lesson_url: str) -> str:
    """The Colab address of a lesson's notebook (`lesson_url`: "l/<slug>/")."""
    return f"{colab_url.rstrip('/')}/{lesson_url}example.ipynb"


def report_link(issues_url: str, title: str, body: str) -> str:
    """The address that opens a new issue: on GitHub with its title and text filled in
    (its /issues/new takes both as the query), elsewhere the tracker's own address."""
    if issues_url.startswith("https://github.com/") and issues_url.endswith("/issues/new"):
        return f"{issues_url}?{urlencode({'title': title, 'body': body})}"
    return issues_url
