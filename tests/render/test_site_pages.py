"""What the lesson pages offer besides the prose: old addresses that redirect (`aliases:`),
a "Run it yourself" block that runs without this repository, and linked headings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest

from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.recording import load
from tests.helpers import edit, load_errors, rendered

LESSONS = ("lessons", "basics-01", "lesson.md")


# -- aliases ---------------------------------------------------------------------------------


def test_an_alias_is_an_old_slug_of_the_lesson(course_copy: Paths) -> None:
    course = load_course(course_copy.content)
    lesson = course.lesson("basics-01")
    assert lesson is not None and lesson.meta.aliases == ("first-jaxpr",)
    assert lesson.alias_urls == ("l/first-jaxpr/",)


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        ("[no-panels]", "alias 'no-panels' is the slug of"),
        ("[speed-01]", "alias 'speed-01' is the id of"),
        ("[first]", "alias 'first' is the slug of"),  # its own slug
        ("[old, old]", "alias 'old' is listed twice"),
        ("[../etc]", "front matter field 'aliases.0': String should match pattern"),
        ("first-jaxpr", "front matter field 'aliases'"),
    ],
)
def test_an_alias_that_collides_or_is_no_slug_is_refused(
    course_copy: Paths, aliases: str, message: str
) -> None:
    path = course_copy.content.joinpath(*LESSONS)
    edit(path, "aliases: [first-jaxpr]", f"aliases: {aliases}")
    text = load_errors(course_copy)
    assert message in text
    assert str(path) in text


def test_two_lessons_cannot_share_an_alias(course_copy: Paths) -> None:
    other = course_copy.content / "lessons" / "basics-02" / "lesson.md"
    edit(other, "order: 2\n", "order: 2\naliases: [first-jaxpr]\n")
    text = load_errors(course_copy)
    assert "alias 'first-jaxpr' is already an alias of" in text
    assert str(other) in text


def test_an_alias_writes_a_redirect_with_relative_urls(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first-jaxpr" / "index.html").read_text("utf-8")
    target = "../first/index.html"
    assert f'<link rel="canonical" href="{target}">' in page
    assert f'<meta http-equiv="refresh" content="0; url={target}">' in page
    assert f'<a href="{target}">A first jaxpr</a>' in page
    assert f'location.replace("{target}" + location.hash)' in page
    assert 'name="robots" content="noindex"' in page
    assert "http" not in page.replace("http-equiv", "")  # nothing absolute


def test_removing_an_alias_removes_its_page(recorded: Paths) -> None:
    from builder.pipeline.build import build

    edit(recorded.content.joinpath(*LESSONS), "aliases: [first-jaxpr]", "aliases: []")
    build(recorded, execute=False, jobs=1)
    assert not (recorded.out / "l" / "first-jaxpr").exists()
    assert (recorded.out / "l" / "first" / "index.html").is_file()


# -- run it yourself -------------------------------------------------------------------------


def _run_it(page: str) -> tuple[list[str], list[str]]:
    """The files the block says to download, and its commands, as the page gives them."""
    block = page[page.index('<section class="run-it"') :]
    block = block[: block.index("</section>")]
    files = re.findall(r'<a href="([^"]+)" download="([^"]+)">', block)
    code = re.search(r"<pre[^>]*><code>(.*?)</code></pre>", block, re.DOTALL)
    assert code is not None
    import html

    return [href for href, _ in files], html.unescape(code[1]).strip().splitlines()


def _venv_without_this_repository(where: Path) -> Path:
    """A Python that has this interpreter's packages (numpy, ...) but not the course's own
    `builder`: a bare venv that adds the packages folder as a path, so that the editable
    install's .pth file (which puts this repository on sys.path) is never read."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    purelib = Path(sysconfig.get_paths()["purelib"])
    created = next(where.glob("lib/python3*/site-packages"))
    (created / "packages.pth").write_text(f"{purelib}\n")
    return where / "bin"


@pytest.mark.parametrize(
    ("lesson_id", "slug"), [("speed-01", "settings"), ("basics-02", "no-panels")]
)
def test_a_downloaded_example_runs_without_this_repository(
    recorded: Paths, tmp_path: Path, lesson_id: str, slug: str
) -> None:
    """The files the block names, downloaded into an empty folder, and its last command run
    there by a Python that cannot import this repository, print what the recording holds."""
    page_folder = recorded.out / "l" / slug
    hrefs, commands = _run_it((page_folder / "index.html").read_text("utf-8"))
    pinned = " ".join(f"{name}=={version(name)}" for name in ("jax", "numpy", "matplotlib"))
    minor = "{}.{}".format(*sys.version_info[:2])  # the Python the fixture was recorded with
    venv = [f"python{minor} -m venv .venv", ". .venv/bin/activate"]
    assert commands[:3] == [*venv, f"pip install {pinned}"]
    folder = tmp_path / "downloads"
    folder.mkdir()
    for href in hrefs:
        source = (page_folder / href).resolve()
        (folder / source.name).write_bytes(source.read_bytes())
    downloaded = sorted(p.name for p in folder.iterdir())
    bin_dir = _venv_without_this_repository(tmp_path / "venv")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    unreachable = subprocess.run(
        ["python", "-c", "import builder"], cwd=tmp_path, env=env, capture_output=True
    )
    assert unreachable.returncode != 0, "the repository's builder is importable"
    run = subprocess.run(
        ["sh", "-c", commands[-1]], cwd=folder, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == load(recorded.recordings / f"{lesson_id}.json").stdout
    if lesson_id == "speed-01":  # a data file, a setting and the panels' stand-in
        assert downloaded == ["builder.py", "example.py", "numbers.txt"]
        assert commands[-1] == "FIXTURE_SCALE=3 python example.py"
    else:  # prints only: nothing to stand in for
        assert downloaded == ["example.py"]


@pytest.mark.parametrize("name", ["index.html", "example.ipynb"])
def test_a_data_file_cannot_take_the_name_of_a_page_file(course_copy: Paths, name: str) -> None:
    """Data files are written beside the lesson's page for download."""
    edit(course_copy.content / "lessons" / "speed-01" / "lesson.md", "[numbers.txt]", f"[{name}]")
    assert "is the name of a file of the lesson's page on the site" in load_errors(course_copy)


def test_the_stand_in_checks_panels_as_the_harness_does(recorded: Paths, tmp_path: Path) -> None:
    shim = recorded.out / "static" / "builder.py"
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from builder import panels\n"
        "panels.bar('t', labels=['a'], ylabel='y', series={'s': [float('nan')]})\n"
    )
    (tmp_path / "builder.py").write_bytes(shim.read_bytes())
    run = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import runpy, sys; sys.path.insert(0, '.');"
            "runpy.run_path('bad.py', run_name='__main__')",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert "PanelError: series 's': nan is not finite" in run.stderr


@pytest.mark.parametrize(
    ("python", "command", "said"),
    [
        ("3.13.1", "python3.13 -m venv .venv", "with Python 3.13, the one it was recorded with"),
        ("3.12", "python3.12 -m venv .venv", "with Python 3.12, the one it was recorded with"),
        ("3.11; rm -rf ~", "python3 -m venv .venv", "(Python 3)"),
        ("3.11\n. evil", "python3 -m venv .venv", "(Python 3)"),
        ("<b>3.11</b>", "python3 -m venv .venv", "(Python 3)"),
        ("3.14.0rc1", "python3 -m venv .venv", "(Python 3)"),
        pytest.param("9" * 5000, "python3 -m venv .venv", "(Python 3)", id="5000-digits"),
        ("", "python3 -m venv .venv", "(Python 3)"),
        (3, "python3 -m venv .venv", "(Python 3)"),
        (None, "python3 -m venv .venv", "(Python 3)"),
    ],
)
def test_run_it_makes_a_venv_with_the_python_the_sidecar_names_and_nothing_else(
    recorded: Paths, python: object, command: str, said: str
) -> None:
    """The venv line names the recording's Python (recordings/_inputs/, which a pull request
    can edit); a value that is no version gives plain python3, never a command of its own."""
    from builder.pipeline.build import build

    sidecar = recorded.recordings / "_inputs" / "basics-01.json"
    facts = json.loads(sidecar.read_text("utf-8"))
    if python is None:
        del facts["machine"]["python"]
    else:
        facts["machine"]["python"] = python
    sidecar.write_text(json.dumps(facts), "utf-8")
    # over the cache of the template's folder: a moved course's (tests/pipeline/test_moved_course.py)
    build(recorded, execute=False, jobs=1)
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    _, commands = _run_it(page)
    assert commands[:2] == [command, ". .venv/bin/activate"]
    assert len(commands) == 4 and commands[2].startswith("pip install jax==")
    block = page[page.index('<section class="run-it"') : page.index("</section>")]
    assert said in " ".join(block.split())
    assert "<b>" not in block and "rm -rf" not in block.split("<pre")[1].split("</pre>")[0]


def test_run_it_names_the_recorded_example_where_positions_cite_it(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    block = page[page.index('<section class="run-it"') :]
    assert "builder.py" in block  # basics-01 imports builder.panels
    recording = load(recorded.recordings / "basics-01.json")
    assert ("basics-01-example" in block) == ("basics-01-example:" in recording.stdout)


# -- headings -------------------------------------------------------------------------------


def test_headings_have_a_named_link_and_plain_contents(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    assert (
        '<div class="heading"><h2 id="tracing">Tracing</h2><a class="anchor" href="#tracing" '
        'aria-label="Link to this section: Tracing"'
    ) in page
    assert '<li class="toc-2"><a href="#tracing">Tracing</a></li>' in page
    assert '<li class="toc-2"><a href="#run-it-yourself">Run it yourself</a></li>' in page


def test_the_contents_read_a_heading_without_its_markdown(course_copy: Paths) -> None:
    from builder.render.prose import render_prose

    path = course_copy.content.joinpath(*LESSONS)
    edit(path, "## Tracing", "## What `jax.make_jaxpr` *traces*")
    course = load_course(course_copy.content)
    lesson = course.lesson("basics-01")
    assert lesson is not None
    rendered, _ = render_prose(lesson, course, None, "../../")
    assert rendered.toc[0][2] == "What jax.make_jaxpr traces"
    assert 'aria-label="Link to this section: What jax.make_jaxpr traces"' in rendered.html


# -- edit link and search weighting -------------------------------------------------------


def test_an_edit_link_only_when_the_course_names_its_source(course_copy: Paths) -> None:
    import shutil

    from builder.course.status import course_status

    shutil.rmtree(course_copy.content / "lessons" / "speed-02")
    course = load_course(course_copy.content)
    files = rendered(course, course_status(course, course_copy.recordings), course_copy.cache)
    assert b"Edit this page" not in files["l/first/index.html"]
    with (course_copy.content / "course.yml").open("a") as handle:
        handle.write("source_url: https://example.org/course/edit/main/content\n")
    course = load_course(course_copy.content)
    files = rendered(course, course_status(course, course_copy.recordings), course_copy.cache)
    link = '<a href="https://example.org/course/edit/main/content/lessons/basics-01/lesson.md">'
    assert f"{link}Edit this page</a>".encode() in files["l/first/index.html"]


@pytest.mark.parametrize("url", ["http://example.org/x", "https://example.org/x/", "javascript:x"])
def test_a_source_url_is_https_without_a_trailing_slash(course_copy: Paths, url: str) -> None:
    with (course_copy.content / "course.yml").open("a") as handle:
        handle.write(f"source_url: {url}\n")
    assert "course field 'source_url'" in load_errors(course_copy)


def test_search_skips_captions_and_the_data_tables(recorded: Paths) -> None:
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    assert '<figure class="example"><figcaption data-pagefind-ignore>' in page
    assert '<figure class="output"><figcaption data-pagefind-ignore>' in page
    assert "<span data-pagefind-ignore>· Recorded CPU computation" in page
    assert 'aria-label="Equations per function: the recorded numbers" data-pagefind-ignore>' in page


def test_a_tpu_lessons_run_it_installs_jax_for_a_tpu_and_says_it_needs_one(
    recorded: Paths,
) -> None:
    """A `requires: tpu` example stops on any other machine: the block must not promise that
    a CPU prints the recording, and its pip line brings jax's TPU build."""
    from builder.pipeline.build import build

    lesson_md = recorded.content / "lessons" / "basics-01" / "lesson.md"
    edit(lesson_md, "\n---\n", "\nrequires: tpu\n---\n")
    build(recorded, execute=False, jobs=1)
    page = (recorded.out / "l" / "first" / "index.html").read_text("utf-8")
    _, commands = _run_it(page)
    assert commands[2].startswith('pip install "jax[tpu]==') and " numpy==" in commands[2]
    block = " ".join(page[page.index('<section class="run-it"') :].split())
    assert "It needs a TPU, as it was recorded on one" in block
    assert "anywhere else it stops with a message saying it needs a TPU" in block
    assert "On a CPU it prints" not in block
    other = (recorded.out / "l" / "no-panels" / "index.html").read_text("utf-8")
    assert _run_it(other)[1][2].startswith("pip install jax==")
    assert "On a CPU it prints what the recording holds" in " ".join(other.split())
