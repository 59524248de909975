"""Issue 29 on the real course (content/ and recordings/) in headless Chromium, light and
dark, laptop and phone: what readers of mkdocs-material, Jupyter Book and the JAX docs take
for granted. A sitemap, canonical links and OpenGraph metadata (with course.yml's site_url),
"Edit this page" (with its source_url), keys for the previous and next lesson, a theme
control that can return to following the system, the What-changed page linked from the
home page, and titles where readers once saw ids.

The real course's course.yml names neither address (the repository names no public
address), so the pages with them are the real course copied with both set.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from builder.course.model import Course

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
PHONE = {"width": 375, "height": 740}
LAPTOP = {"width": 1280, "height": 800}
SCREENS = [("light", LAPTOP), ("dark", LAPTOP), ("light", PHONE), ("dark", PHONE)]
SCREEN_IDS = ["light-1280", "dark-1280", "light-375", "dark-375"]
SITE_URL = "https://example.github.io/jax-course/"
SOURCE_URL = "https://github.com/example/jax-course/edit/main/content"


def _render(content: Path, out: Path, *extra: str) -> Path:
    command = [sys.executable, "-m", "builder", "render", "--content", str(content)]
    command += ["--recordings", "recordings", "--out", str(out), "--cache", str(out.parent / "c")]
    subprocess.run([*command, *extra], cwd=REPO, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def addressed_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real course with course.yml's site_url and source_url set."""
    root = tmp_path_factory.mktemp("addressed")
    shutil.copytree(REPO / "content", root / "content")
    with (root / "content" / "course.yml").open("a") as handle:
        handle.write(f"site_url: {SITE_URL}\nsource_url: {SOURCE_URL}\n")
    return _render(root / "content", root / "site")


@pytest.fixture(scope="module")
def since_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real course with its What-changed page since d6f19e9, the last commit recorded on
    jax 0.9.2: a fixed revision, so the page keeps lessons that print something different
    and lessons that only moved their timings whatever is re-recorded later."""
    since = "d6f19e9"
    return _render(REPO / "content", tmp_path_factory.mktemp("since") / "site", "--since", since)


class _Head(HTMLParser):
    """A page's <link rel=canonical> and <meta property|name=...> values."""

    def __init__(self) -> None:
        super().__init__()
        self.meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "link" and values.get("rel") == "canonical":
            self.meta["canonical"] = values["href"]
        if tag == "meta" and ("property" in values or "name" in values):
            self.meta[values.get("property") or values["name"]] = values.get("content", "")


def _head(path: Path) -> dict[str, str]:
    parser = _Head()
    parser.feed(path.read_text("utf-8"))
    return parser.meta


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.relative_to(site).parts[0] != "search-index")


# -- 1. sitemap, canonical links, OpenGraph ---------------------------------------------------


def test_with_a_site_url_every_page_is_in_the_sitemap_with_its_canonical_address(
    addressed_site: Path, course: Course
) -> None:
    sitemap = (addressed_site / "sitemap.xml").read_text()
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    canonical = {}
    for path in _pages(addressed_site):
        meta = _head(path)
        name = path.relative_to(addressed_site).as_posix()
        if name == "404.html":  # any address: none of its own, and not to be indexed
            assert "canonical" not in meta and "og:url" not in meta
            assert meta["robots"] == "noindex"
            continue
        if meta.get("robots") == "noindex":  # an old address (aliases:): the lesson's own
            assert meta["canonical"].startswith(SITE_URL) and meta["canonical"] in locs
            continue
        assert meta["canonical"] == meta["og:url"], name
        canonical[name] = meta["canonical"]
        assert meta["og:site_name"] == course.meta.title
        assert meta["og:title"] and meta["og:description"] and meta["twitter:card"]
    assert sorted(canonical.values()) == sorted(locs)
    assert len(locs) == len(set(locs))
    assert all(u.startswith(SITE_URL) and not u.endswith("index.html") for u in locs)
    for lesson in course.lessons:  # each lesson: an article, its summary as the description
        meta = _head(addressed_site / lesson.url / "index.html")
        assert meta["canonical"] == f"{SITE_URL}{lesson.url}"
        assert (meta["og:type"], meta["og:title"]) == ("article", lesson.title)
        assert meta["og:description"] == meta["twitter:description"] == lesson.meta.summary
    home = _head(addressed_site / "index.html")
    assert (home["og:type"], home["og:title"], home["og:url"]) == (
        "website",
        course.meta.title,
        SITE_URL,
    )


def test_without_a_site_url_no_sitemap_no_canonical_no_og_url(
    course_site: Path, course: Course
) -> None:
    assert course.meta.site_url is None  # the repository names no public address
    assert not (course_site / "sitemap.xml").exists()
    for path in _pages(course_site):
        meta = _head(path)
        if meta.get("robots") == "noindex" and path.name != "404.html":  # an old address
            assert not meta["canonical"].startswith("http")  # its canonical is relative
            continue
        assert "canonical" not in meta and "og:url" not in meta, path
        assert meta["og:title"] and meta["og:description"] and meta["og:type"], path


# -- 2. Edit this page --------------------------------------------------------------------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_edit_this_page_leads_to_the_lessons_own_file(
    new_page: Any, addressed_site: Path, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    lesson = next(x for x in course.lessons if x.id == "performance-05")
    page = new_page(scheme, viewport)
    page.goto((addressed_site / lesson.url / "index.html").as_uri())
    link = page.get_by_role("link", name="Edit this page")
    link.scroll_into_view_if_needed()
    assert link.is_visible()
    href = link.get_attribute("href")
    assert href == f"{SOURCE_URL}/lessons/performance-05/lesson.md"
    assert (REPO / "content" / href.removeprefix(SOURCE_URL + "/")).is_file()
    page.goto(f"{course_url}{lesson.url}index.html")  # the course as committed: no source_url
    assert page.get_by_role("link", name="Edit this page").count() == 0


# -- 3. keys for the previous and next lesson --------------------------------------------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_keys_go_to_the_next_and_previous_lesson_but_not_while_typing(
    new_page: Any, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    first, second, third = course.lessons[:3]
    page = new_page(scheme, viewport)
    page.goto(f"{course_url}{second.url}index.html")
    hint = page.locator(".pager-keys")
    hint.scroll_into_view_if_needed()
    assert hint.is_visible() and "n" in hint.inner_text() and "p" in hint.inner_text()
    for key, lesson in (("n", third), ("p", second), (",", first), (".", second)):
        with page.expect_navigation():
            page.keyboard.press(key)
        assert page.url == f"{course_url}{lesson.url}index.html", key
    for chord in ("Alt+n", "Control+.", "Shift+N", "Meta+p"):
        page.keyboard.press(chord)
    page.evaluate("document.body.appendChild(document.createElement('input')).focus()")
    page.keyboard.type("np.,")
    page.wait_for_timeout(300)
    assert page.url == f"{course_url}{second.url}index.html"
    assert page.locator("input").last.input_value() == "np.,"
    page.goto(f"{course_url}{first.url}index.html")
    page.keyboard.press("p")  # the first lesson has no previous one: nothing happens
    page.wait_for_timeout(200)
    assert page.url == f"{course_url}{first.url}index.html"


def test_no_key_hint_on_a_touch_phone(new_page: Any, course_url: str, course: Course) -> None:
    page = new_page("light", PHONE, has_touch=True, is_mobile=True)
    page.goto(f"{course_url}{course.lessons[1].url}index.html")
    assert not page.locator(".pager-keys").is_visible()


# -- 4. a theme control with three states ------------------------------------------------------

FIRST_PAINT = """
window.__themeAtBody = null;
new MutationObserver(function (changes, observer) {
  if (document.body) {
    window.__themeAtBody = document.documentElement.getAttribute("data-theme");
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""


def _theme(page: Any) -> tuple[str, str | None, str | None]:
    found = page.evaluate(
        "[document.documentElement.dataset.theme, localStorage.getItem('theme'),"
        " window.__themeAtBody]"
    )
    return tuple(found)  # type: ignore[return-value]


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_the_theme_control_steps_through_light_dark_and_the_system(
    new_page: Any, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    other = "light" if scheme == "dark" else "dark"
    page = new_page(scheme, viewport)
    page.add_init_script(FIRST_PAINT)
    lesson = f"{course_url}{course.lessons[0].url}index.html"
    page.goto(lesson)
    control = page.locator(".theme-toggle")
    assert _theme(page) == (scheme, None, scheme)
    assert control.inner_text() == "Theme: auto"
    # a screen reader hears the state and what a press does: the button's accessible name
    name = f"Theme: auto, following the system ({scheme} now)"
    assert page.get_by_role("button", name=name).is_visible()
    assert f"press for {other}" in control.get_attribute("aria-label")
    control.click()
    assert _theme(page)[:2] == (other, other) and control.inner_text() == f"Theme: {other}"
    page.goto(f"{course_url}index.html")  # kept on the next page, from its first paint
    assert _theme(page) == (other, other, other)
    page.locator(".theme-toggle").click()
    assert _theme(page)[:2] == (scheme, scheme)
    page.locator(".theme-toggle").click()
    assert _theme(page)[:2] == (scheme, None)  # following the system again: nothing stored
    assert page.locator(".theme-toggle").inner_text() == "Theme: auto"
    page.emulate_media(color_scheme=other)  # and it follows the system as it changes
    page.wait_for_function(f"document.documentElement.dataset.theme === '{other}'")
    page.goto(lesson)
    assert _theme(page) == (other, None, other)


# -- 5 and 6. the What-changed page from home; titles, not ids, in course order ---------------


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_home_links_the_what_changed_page_which_names_lessons_by_title_in_course_order(
    new_page: Any, since_site: Path, course: Course, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    page.goto((since_site / "index.html").as_uri())
    link = page.get_by_role("link", name="What changed")
    assert link.is_visible()
    link.click()
    page.wait_for_url("**/changes/index.html")
    titles = [x.title for x in course.lessons]
    for where in (".changed-lesson h2 a", ".timing-only a"):
        named = page.locator(where).all_inner_texts()
        assert named, f"{where}: the recordings differ since that revision"
        assert all(h in titles for h in named), named
        assert [titles.index(h) for h in named] == sorted(titles.index(h) for h in named)


# The words of issue 43's What-changed page that spoke to the author: "from d01efef~1
# (4d25b54) to work tree", "19 differ ... 11 re-recorded with the same results", "folded".
AUTHOR_WORDS = re.compile(
    r"work tree|\bHEAD\b|~\d|\bdiffer\b|re-recorded|\bfolded\b|\bunchanged\b|recordings? differ"
)


def test_the_what_changed_and_move_pages_speak_to_a_reader(
    new_page: Any, since_site: Path, course_site: Path
) -> None:
    """Issue 43: the real course's What-changed page (since d6f19e9) and the page of its
    move to jax 0.10.2 name lessons and what they print, and a revision only in the one
    line that says what was compared."""
    moves = sorted(course_site.glob("moves/*/index.html"))
    assert moves, "the course names its move in course.yml"
    page = new_page()
    for path in [since_site / "changes" / "index.html", *moves]:
        page.goto(path.as_uri())
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        text = " ".join(page.locator("main").inner_text().split())
        words = page.evaluate(  # the page's own words: not what the examples printed
            """() => { const main = document.querySelector('main').cloneNode(true);
              main.querySelectorAll('pre, code, table').forEach(e => e.remove());
              return main.textContent.replace(/\\s+/g, ' '); }"""
        )
        said = [m.group(0) for m in AUTHOR_WORDS.finditer(words)]
        assert not said, f"{path}: {said}"
        compared = page.locator("main .compared").all_inner_texts()
        assert len(compared) == 1, path
        for revision in re.findall(r"\b[0-9a-f]{7,12}\b", compared[0]):
            assert text.count(revision) == 1, f"{path}: {revision} said again"


def test_home_has_no_what_changed_link_without_one(new_page: Any, course_url: str) -> None:
    page = new_page()
    page.goto(f"{course_url}index.html")
    assert page.get_by_role("link", name="What changed").count() == 0


def test_no_page_shows_a_reader_a_lesson_id(course_site: Path, course: Course) -> None:
    ids = "|".join(re.escape(x.id.upper()).replace("\\-", "[-·]") for x in course.lessons)
    shown = re.compile(rf"\b(?:{ids})\b")
    for path in _pages(course_site):
        text = re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))
        assert not shown.search(text), f"{path}: {shown.search(text)}"


@pytest.mark.parametrize(("scheme", "viewport"), SCREENS, ids=SCREEN_IDS)
def test_glossary_cards_breadcrumbs_and_cards_read_titles(
    new_page: Any, course_url: str, course: Course, scheme: str, viewport: Any
) -> None:
    page = new_page(scheme, viewport)
    lesson = next(x for x in course.lessons if x.id == "performance-05")
    page.goto(f"{course_url}{lesson.url}index.html")
    assert page.locator(".crumbs li").last.inner_text() == lesson.title
    # a term taught elsewhere: on its teacher's own page a card leads to no "taught in"
    term = page.locator(".term:has(.term-card a:text-matches('^taught in'))").first
    term.locator(".term-link").focus()
    page.keyboard.press("Enter")  # the term is the button of its card
    card_link = term.locator(".term-card a").first
    assert card_link.is_visible()
    teacher = course.lesson(card_link.get_attribute("href").split("/")[-2])
    assert teacher is not None
    assert card_link.inner_text() == f"taught in {teacher.title}"
    page.goto(f"{course_url}index.html")
    cards = page.locator(".card strong").all_inner_texts()
    assert cards == [x.title for x in course.lessons]  # course order, titles
    page.goto(f"{course_url}recordings/index.html")
    rows = page.locator(".recordings tbody th a").all_inner_texts()
    assert rows == [x.title for x in course.lessons]
