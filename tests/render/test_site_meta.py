"""course.yml's `site_url`: checked in words, and what it makes (sitemap.xml, canonical
addresses) made and unmade by the one writer of site/ (issue 29)."""

from __future__ import annotations

import re

import pytest

from builder.core.observe import Paths
from builder.pipeline.build import build
from tests.helpers import load_errors

SITE = "https://example.github.io/course/"


def _set_site_url(paths: Paths, url: str) -> None:
    with (paths.content / "course.yml").open("a") as handle:
        handle.write(f"site_url: {url}\n")


@pytest.mark.parametrize(
    "url",
    ["example.github.io/course", "ftp://example.org/", "https://x.org/?a=1", "https://x.org/#a"],
)
def test_a_site_url_that_is_no_web_address_names_course_yml(course_copy: Paths, url: str) -> None:
    _set_site_url(course_copy, url)
    errors = load_errors(course_copy)
    assert str(course_copy.content / "course.yml") in errors
    assert "course field 'site_url'" in errors
    assert "such as https://<org>.github.io/<repo>/" in errors
    assert "pattern" not in errors  # words, not the regular expression


def test_a_source_url_error_says_what_to_write(course_copy: Paths) -> None:
    with (course_copy.content / "course.yml").open("a") as handle:
        handle.write("source_url: https://github.com/o/r/edit/main/content/\n")
    errors = load_errors(course_copy)
    assert "course field 'source_url'" in errors and "without a trailing slash" in errors


def test_the_sitemap_comes_and_goes_with_the_site_url(recorded: Paths) -> None:
    build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "sitemap.xml").exists()
    _set_site_url(recorded, SITE)
    build(recorded, execute=False, jobs=1)
    sitemap = (recorded.out / "sitemap.xml").read_text()
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert locs[0] == SITE and f"{SITE}l/first/" in locs and f"{SITE}glossary/" in locs
    assert all(loc.startswith(SITE) and "index.html" not in loc for loc in locs)
    page = (recorded.out / "l" / "first" / "index.html").read_text()
    assert f'<link rel="canonical" href="{SITE}l/first/">' in page
    # the site_url taken out again: the next build removes the sitemap and every absolute link
    text = (recorded.content / "course.yml").read_text()
    (recorded.content / "course.yml").write_text(text.replace(f"site_url: {SITE}\n", ""))
    result = build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "sitemap.xml").exists() and result.removed >= 1
    page = (recorded.out / "l" / "first" / "index.html").read_text()
    assert "canonical" not in page and "og:url" not in page and SITE not in page
