"""The web addresses course.yml may give: where the site is published (`site_url`) and
where its content can be edited (`source_url`). Each is checked with a message that says
what an address must look like, not the pattern that tests it."""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import MaxLen

from .validation import Check, Pattern

_SITE = r"^https?://[^\s\"'<>?#/]+(?:/[^\s\"'<>?#]*)?$"
_SOURCE = r"^https://[^\s\"'<>]+[^/\s\"'<>]$"


def _site(value: Any) -> Any:
    if isinstance(value, str) and not _matches(_SITE, value):
        raise ValueError(
            f"{value!r} is not the address the site is published at: write it whole, "
            "such as https://<org>.github.io/<repo>/ (http or https, no ?query or #part)"
        )
    return value


def _source(value: Any) -> Any:
    if isinstance(value, str) and not _matches(_SOURCE, value):
        raise ValueError(
            f"{value!r} is not where content/ is edited online: write an https address "
            "without a trailing slash, such as https://github.com/<org>/<repo>/edit/main/content"
        )
    return value


def _matches(pattern: str, value: str) -> bool:
    import re

    return re.fullmatch(pattern, value) is not None


# The published site's root, such as https://org.github.io/course/ (a trailing slash or not).
SiteUrl = Annotated[str, Pattern(_SITE), MaxLen(300), Check(_site, before=True)]
# content/ in an online editor, such as https://github.com/o/r/edit/main/content.
SourceUrl = Annotated[str, Pattern(_SOURCE), MaxLen(300), Check(_source, before=True)]


def page_url(site_url: str, name: str) -> str:
    """The absolute address of the site file `name` ("l/residuals/index.html") under
    `site_url`: a folder's index.html by the folder, as hosts serve it."""
    path = name.removesuffix("index.html") if name.rpartition("/")[2] == "index.html" else name
    return f"{site_url.rstrip('/')}/{path}"
