"""course.yml's `moves:`: a reader's page of an environment move, built from the diff of two
fixed revisions of the recordings (issue 42, item 4), committed as content/moves/<slug>.json
by `python -m builder moves` so that any copy builds it (issue 59: a shallow clone, a folder
without .git), and course.yml values or files that cannot make one.

The history, in a temporary git repository: the recorded fixture course, then a commit that
records it again "on jax 0.10.2": every recording's jax moves, basics-01 prints an equation
more and its chart's value moves, speed-01 only moves its timings, the rest print the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.pipeline.build import build
from builder.review.moves import write_moves
from tests.helpers import git, make_paths, snapshot
from tests.review.test_diff import recording, rewrite, with_timings

TITLE = "What moved from jax 0.9.2 to 0.10.2"
PAGE = Path("moves") / "jax-0-10-2" / "index.html"


def move_history(paths: Paths) -> tuple[str, str]:
    """`paths` (the recorded fixture course) in a git repository of two commits, the second
    the move; the two commits' hashes."""
    root = paths.content.parent
    (root / ".gitignore").write_text("/site/\n/.cache/\n")
    with_timings(paths, 333.65, 12.69, "2026-10-20T09:00:00+00:00")
    _on_jax(paths, "0.9.2")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "recorded on jax 0.9.2")
    with_timings(paths, 291.14, 13.02, "2026-11-30T09:00:00+00:00")
    basics = recording(paths, "basics-01")
    panel = basics.panels[0]
    stdout = basics.stdout.replace("  in (d,) }", "    e:f32[3] = neg d\n  in (e,) }")
    rewrite(
        paths,
        "basics-01",
        stdout=stdout.replace("equations: 3", "equations: 4"),
        data=replace(
            basics.data, panels=[replace(panel, series=[replace(panel.series[0], y=[4])])]
        ),
    )
    _on_jax(paths, "0.10.2")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "recorded on jax 0.10.2")
    return _rev(root, "HEAD~1"), _rev(root, "HEAD")


def _on_jax(paths: Paths, version: str) -> None:
    """Every recording says it was made on jax `version`."""
    for path in sorted(paths.recordings.glob("*.json")):
        lesson = recording(paths, path.stem)
        rewrite(paths, path.stem, environment=replace(lesson.environment, jax=version))


def _rev(root: Path, rev: str) -> str:
    done = subprocess.run(["git", "rev-parse", rev], cwd=root, capture_output=True, text=True)
    return done.stdout.strip()


def add_move(paths: Paths, before: str, after: str, title: str = TITLE) -> None:
    with (paths.content / "course.yml").open("a") as handle:
        handle.write(
            f"moves:\n  - title: {title}\n    slug: jax-0-10-2\n"
            f"    before: {before}\n    after: {after}\n"
        )


@pytest.fixture
def moved(recorded: Paths) -> Paths:
    """The fixture course after the move, its course.yml naming it and its file written."""
    before, after = move_history(recorded)
    add_move(recorded, before[:10], after)
    assert main(["moves", *_folders(recorded)]) == 0
    return recorded


def _folders(paths: Paths) -> list[str]:
    return ["--content", str(paths.content), "--recordings", str(paths.recordings)]


def _main(path: Path) -> str:
    page = path.read_text()
    return page[page.index("<main") : page.index("</main>")]


def test_a_move_has_a_readers_page_linked_from_the_home_page(moved: Paths) -> None:
    build(moved, execute=False, jobs=1)
    page = _main(moved.out / PAGE)
    assert f"<h1>{TITLE}</h1>" in page
    assert (
        '<p class="lede">The lessons were recorded again with jax 0.9.2 → 0.10.2. '
        "1 lesson prints something different, 1 only moved its timings and 1 prints the same.</p>"
    ) in page
    # the lesson that changed: what it prints, its chart's values, the numbers on its page
    first = page[page.index('id="basics-01"') : page.index("</section>")]
    assert '<h2><a href="../../l/first/index.html">A first jaxpr</a></h2>' in first
    assert "<p>Recorded again on " in first and "<p>3 new lines, 2 lines gone.</p>" in first
    assert '<span class="diff-add">+equations: 4</span>' in first
    assert '<span class="diff-del">-equations: 3</span>' in first
    assert '<a href="../../l/first/index.html#panel-1">Chart 1: Equations per function' in first
    assert "<td>3</td><td>4</td><td>+33.3%</td>" in first
    assert "value: recorded output, line 7: 3 → 4" in first
    lesson = (moved.out / "l" / "first" / "index.html").read_text()
    for anchor in re.findall(r'href="\.\./\.\./l/first/index\.html#([^"]+)"', page):
        assert f'id="{anchor}"' in lesson, anchor
    # then one line of lessons whose timings alone moved, and one of those that print the same
    assert re.findall(r'<p class="timing-only">(.*?)</p>', page) == [
        '<strong>Only their timings moved:</strong> <a href="../../l/settings/index.html">'
        "Settings and data</a>."
    ]
    same = re.findall(r'<p class="same">(.*?)</p>', page)
    assert same == [
        '<strong>Print the same:</strong> <a href="../../l/no-panels/index.html">'
        "A lesson without panels</a>."
    ]
    assert page.count('class="changed-lesson"') == 1  # a jax move alone changes no lesson
    # the environment is said once, and the revisions only in the small line naming them
    assert page.count("0.10.2") == 1 + TITLE.count("0.10.2")
    short = [_rev(moved.content, rev)[:7] for rev in ("HEAD~1", "HEAD")]
    compared = f"Recordings compared: {short[0]} and {short[1]}."
    assert f'<p class="muted compared">{compared}</p>' in page
    home = _main(moved.out / "index.html")
    assert f'<a href="moves/jax-0-10-2/index.html">{TITLE}</a>' in home


def test_the_page_is_the_same_bytes_every_build_and_follows_the_key(moved: Paths) -> None:
    build(moved, execute=False, jobs=1)
    first = (moved.out / PAGE).read_bytes()
    shutil.rmtree(moved.out)
    build(moved, execute=False, jobs=1)  # from the store: the same bytes
    assert (moved.out / PAGE).read_bytes() == first
    yml = moved.content / "course.yml"
    yml.write_text(yml.read_text().replace(TITLE, "The move to jax 0.10.2"))
    build(moved, execute=False, jobs=1)
    assert "<h1>The move to jax 0.10.2</h1>" in (moved.out / PAGE).read_text()
    assert ">The move to jax 0.10.2</a>" in (moved.out / "index.html").read_text()
    yml.write_text(yml.read_text().split("moves:")[0])
    build(moved, execute=False, jobs=1)
    assert not (moved.out / "moves").exists()
    assert "moves/" not in (moved.out / "index.html").read_text()


def test_the_since_page_and_a_move_page_are_one_template(moved: Paths) -> None:
    """`--since` and a move share the page: the since page says the move in the same words."""
    build(moved, execute=False, jobs=1, since="HEAD~1")
    since = _main(moved.out / "changes" / "index.html")
    assert "They were recorded again with jax 0.9.2 → 0.10.2." in since
    assert '<a href="../l/first/index.html#panel-1">Chart 1' in since
    home = _main(moved.out / "index.html")
    assert '<a href="changes/index.html">What changed</a>' in home
    assert f">{TITLE}</a>" in home


@pytest.mark.parametrize("rev", ["0123abc", "nosuchtag", "HEAD~40"])
def test_a_revision_git_cannot_find_names_course_yml_the_key_and_the_revision(
    recorded: Paths, rev: str
) -> None:
    before, _ = move_history(recorded)
    add_move(recorded, before, rev)
    with pytest.raises(BuildError) as raised:
        write_moves(recorded.content, recorded.recordings)
    message = str(raised.value)
    yml = recorded.content / "course.yml"
    line = len(yml.read_text().splitlines())
    assert message.startswith(f"{yml}: line {line}: moves[0].after: git finds no commit {rev!r}")
    assert "-> name a commit of this repository that holds the recordings" in message
    assert not (recorded.content / "moves").exists()


def test_a_move_without_its_file_names_course_yml_the_file_and_the_command(
    recorded: Paths,
) -> None:
    """No history (a copy) and no file: the build says which file and how it is made."""
    add_move(recorded, "4d25b54", "0a1b2c3")
    site = snapshot(recorded.out)
    with pytest.raises(BuildError) as raised:
        build(recorded, execute=False, jobs=1)
    yml = recorded.content / "course.yml"
    line = yml.read_text().splitlines().index("    slug: jax-0-10-2") + 1
    assert str(raised.value).startswith(
        f"{yml}: line {line}: moves[0]: its page is made from jax-0-10-2.json, which is "
        "missing (content/moves/jax-0-10-2.json)"
    )
    assert "-> run `python -m builder moves` in a checkout that has both" in str(raised.value)
    assert snapshot(recorded.out) == site  # the last good site stays


def test_a_file_of_other_revisions_is_refused_naming_both(moved: Paths) -> None:
    yml = moved.content / "course.yml"
    after = yml.read_text().split("after: ")[1].strip()
    yml.write_text(yml.read_text().replace(f"after: {after}", "after: v2"))
    with pytest.raises(
        BuildError,
        match=rf"moves\[0\]: jax-0-10-2.json compares \w+\.\.{after}, "
        r"and course.yml names \w+\.\.v2",
    ):
        build(moved, execute=False, jobs=1)


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda p: p.write_text("<<<<<<< HEAD\n"), "is not valid JSON|Invalid JSON"),
        (lambda p: p.write_text('{"before": "a"}'), "after: Field required"),
        (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nests arrays and objects"),
        (lambda p: (p.unlink(), p.symlink_to("/dev/zero")), "is a symbolic link"),
        (lambda p: (p.unlink(), os.mkfifo(p)), "FIFO"),
    ],
    ids=["conflict", "field", "deep", "link", "fifo"],
)
def test_a_damaged_move_file_is_one_error_naming_it(
    moved: Paths, spoil: Callable[[Path], object], said: str
) -> None:
    spoil(moved.content / "moves" / "jax-0-10-2.json")
    with pytest.raises(BuildError, match=said) as raised:
        build(moved, execute=False, jobs=1)
    assert "jax-0-10-2.json" in str(raised.value)


def test_a_shallow_clone_and_a_copy_without_git_build_the_full_clones_site(
    moved: Paths, tmp_path: Path
) -> None:
    """What CI checkouts and static hosts get (`git clone --depth 1`), and a copied folder:
    the same site as the full history builds, byte for byte (a copy has no revision for
    the footer: nav.js says "" there)."""
    root = moved.content.parent
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the move's page")
    sites = {}
    for name in ("full", "shallow", "copy"):
        where = tmp_path / name
        if name == "copy":
            shutil.copytree(root, where, ignore=shutil.ignore_patterns(".git", "site", ".cache"))
        else:
            depth = ["--depth", "1"] if name == "shallow" else []
            git(tmp_path, "clone", "-q", *depth, f"file://{root}", name)
        paths = make_paths(where)
        build(paths, execute=False, jobs=1)
        sites[name] = snapshot(paths.out)
    assert _git_out(tmp_path / "shallow", "rev-list", "--count", "HEAD") == "1"
    assert str(PAGE) in sites["full"] and sites["shallow"] == sites["full"]
    nav = "static/nav.js"
    built = _git_out(tmp_path / "full", "rev-parse", "--short", "HEAD")
    full = sites["full"] | {nav: sites["full"][nav].replace(f'"{built}"'.encode(), b'""')}
    assert sites["copy"] == full


HOSTILE = [
    ("before: --output=x", "moves.0.before", "is not a git revision a move can name"),
    ("before: a..b", "moves.0.before", "no '..'"),
    ('before: "abc\\nHEAD"', "moves.0.before", "is not a git revision"),
    ("before: HEAD@{1}", "moves.0.before", "is not a git revision"),
    ("before: ':/fix'", "moves.0.before", "is not a git revision"),
    ("before: " + "a" * 5000, "moves.0.before", "at most 100 characters"),
    ("before: [a, b]", "moves.0.before", "valid string"),
    ("slug: ../../etc", "moves.0.slug", "should match pattern"),
    ("title: ''", "moves.0.title", "at least 1 character"),
    ("output: site", "moves.0.output", "Extra inputs are not permitted"),
]


@pytest.mark.parametrize(("line", "field", "problem"), HOSTILE)
def test_hostile_move_values_are_refused_at_load_naming_course_yml(
    recorded: Paths, line: str, field: str, problem: str
) -> None:
    key = line.split(":")[0]
    fields = {"title": "T", "slug": "jax", "before": "abc1234", "after": "def5678"}
    body = "".join(f"    {k}: {v}\n" for k, v in fields.items() if k != key)
    yml = recorded.content / "course.yml"
    yml.write_text(yml.read_text() + f"moves:\n  - {line}\n{body}")
    with pytest.raises(BuildError) as raised:
        load_course(recorded.content)
    message = str(raised.value)
    assert message.startswith(f"{yml}: course field '{field}'"), message
    assert problem in message
    assert "\n" not in message.split(" -> ")[0].strip()


def test_two_moves_of_one_slug_are_refused(recorded: Paths) -> None:
    move = "  - {title: T, slug: jax, before: abc1234, after: def5678}\n"
    yml = recorded.content / "course.yml"
    yml.write_text(yml.read_text() + "moves:\n" + move * 2)
    with pytest.raises(BuildError, match="two moves have the slug 'jax'"):
        load_course(recorded.content)


def test_a_move_page_is_built_by_the_preview(moved: Paths) -> None:
    from builder.preview.session import Session

    session = Session(moved, execute=False)
    session.start()
    served = session.pages.files()
    assert str(PAGE) in served
    assert TITLE.encode() in served["index.html"]


def test_a_moved_course_renders_from_a_fresh_copy(moved: Paths, tmp_path: Path) -> None:
    """A new cache folder makes the page again from the committed file, the same bytes."""
    build(moved, execute=False, jobs=1)
    page = (moved.out / PAGE).read_bytes()
    other = make_paths(moved.content.parent)
    other = replace(other, out=tmp_path / "site2", cache=tmp_path / "cache2")
    build(other, execute=False, jobs=1)
    assert (other.out / PAGE).read_bytes() == page


def test_with_a_site_url_the_move_page_is_in_the_sitemap(moved: Paths) -> None:
    with (moved.content / "course.yml").open("a") as handle:
        handle.write("site_url: https://example.org/course/\n")
    build(moved, execute=False, jobs=1)
    sitemap = (moved.out / "sitemap.xml").read_text()
    assert "<loc>https://example.org/course/moves/jax-0-10-2/</loc>" in sitemap


def _git_out(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout.strip()


def test_a_prose_edit_keeps_the_other_pages_keys_with_a_move(
    moved: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move's page is one of the other pages: the index keeps their keys with its digest,
    so a one-shot prose edit asks for none of their artifacts, and the site is a clean
    build's."""
    from builder.pipeline import site
    from tests.helpers import assert_like_a_clean_build

    build(moved, execute=False, jobs=1)
    lesson = next((moved.content / "lessons").iterdir()) / "lesson.md"
    lesson.write_text(lesson.read_text() + "\nA new sentence.\n")
    asked: list[object] = []
    real = site.pages.page_artifacts
    monkeypatch.setattr(site.pages, "page_artifacts", lambda *a: asked.append(a) or real(*a))
    build(moved, execute=False, jobs=1)
    monkeypatch.undo()
    assert asked == []
    assert_like_a_clean_build(moved, tmp_path / "clean")
