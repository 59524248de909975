"""The course as frozen types: a Course of arcs, lessons and glossary terms, each field
with the rule that validates it (loaded from `content/` by builder/course/load.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar, get_args

from annotated_types import Interval, Len, MaxLen, MinLen

from ..cells import Cell
from .addresses import ApiPrefix, ApiUrl, ColabUrl, IssuesUrl, Revision, SiteUrl, SourceUrl
from .colours import Colours
from .rules import (
    DEFAULT_TIMEOUT,
    EXAMPLE_FILE,
    LESSON_FILE,
    LESSON_ID_PATTERN,
    SLUG_PATTERN,
    env_names,
    paired_backticks,
    plain_data_names,
    same_name,
)
from .validation import FORBID, Check, Pattern

# Validated by pydantic (builder.course.validation), but not pydantic models: see there why.
Slug = Annotated[str, Pattern(SLUG_PATTERN), MaxLen(64)]
LessonId = Annotated[str, Pattern(LESSON_ID_PATTERN), MaxLen(64)]
Line = Annotated[str, Len(1, 300)]
# What a lesson's `requires:` may name: the jax backend its recording must come from.
Accelerator = Literal["gpu", "tpu"]
ACCELERATORS = frozenset(get_args(Accelerator))


@dataclass(frozen=True)
class FrontMatter:
    """What a lesson's YAML front matter may hold."""

    __pydantic_config__ = FORBID

    id: LessonId
    slug: Slug
    title: Line
    arc: Slug
    order: Annotated[int, Interval(ge=0, le=999)]
    summary: Line
    timeout: Annotated[float, Interval(gt=0, le=3600)] = DEFAULT_TIMEOUT
    data: Annotated[tuple[str, ...], Check(plain_data_names)] = ()
    env: Annotated[dict[str, str], Check(env_names)] = field(default_factory=dict)
    # Old slugs, kept alive after a rename: each gets a page at l/<alias>/ that redirects here.
    aliases: tuple[Slug, ...] = ()
    # `gpu`, `tpu`: recorded only where jax has that backend (this machine, or a Dask worker
    # started with `--resources GPU=1` or `TPU=1`).
    requires: Accelerator | None = None


@dataclass(frozen=True)
class Lesson:
    """A validated lesson: its front matter, its prose and its example's source."""

    meta: FrontMatter
    folder: Path
    body: str
    body_line: int
    source: bytes
    front: str = ""  # the front matter block as written
    cells: tuple[Cell, ...] = ()  # the example's cells (builder/cells.py); () for one example
    data: tuple[tuple[str, str], ...] = ()  # each data file's name and sha256, as loaded

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def slug(self) -> str:
        return self.meta.slug

    @property
    def title(self) -> str:
        return self.meta.title

    @property
    def accelerator(self) -> str | None:
        """The jax backend its recording must be made on ('gpu', 'tpu'), or None: any."""
        return self.meta.requires

    @property
    def lesson_path(self) -> Path:
        return self.folder / LESSON_FILE

    @property
    def example_path(self) -> Path:
        return self.folder / EXAMPLE_FILE

    @property
    def url(self) -> str:
        """The page's path inside the site, relative to the site root."""
        return f"l/{self.slug}/"

    @property
    def alias_urls(self) -> tuple[str, ...]:
        """The old addresses that redirect to this page (`aliases:`)."""
        return tuple(f"l/{alias}/" for alias in self.meta.aliases)


@dataclass(frozen=True)
class Arc:
    __pydantic_config__ = FORBID

    id: Slug
    title: Line
    summary: Line


@dataclass(frozen=True)
class GlossaryTerm:
    __pydantic_config__ = FORBID

    id: Slug
    term: Line
    # Plain text; `name` sets a name in code font (builder/render/markup.py code_spans).
    definition: Annotated[str, Len(1, 400), Check(paired_backticks)]
    taught_in: LessonId


@dataclass(frozen=True)
class HomeNote:
    """A short note the home page shows under the course summary: what the course does
    not claim, say. Plain text, one entry per paragraph."""

    __pydantic_config__ = FORBID

    title: Line
    paragraphs: Annotated[tuple[Annotated[str, Len(1, 1000)], ...], MinLen(1), MaxLen(6)]


@dataclass(frozen=True)
class Move:
    """An environment move the site keeps a page of (`moves/<slug>/`): what the lessons
    print at `after` against what they printed at `before`, two git revisions of the
    recordings (fixed ones: a commit hash or a tag, so the page is the same every build)."""

    __pydantic_config__ = FORBID

    title: Line
    slug: Slug
    before: Revision
    after: Revision

    @property
    def url(self) -> str:
        """The page's path inside the site, relative to the site root."""
        return f"moves/{self.slug}/"


def _distinct_slugs(moves: tuple[Move, ...]) -> tuple[Move, ...]:
    slugs = [move.slug for move in moves]
    twice = sorted({slug for slug in slugs if slugs.count(slug) > 1})
    if twice:
        raise ValueError(f"two moves have the slug {twice[0]!r}: each page needs its own")
    return moves


@dataclass(frozen=True)
class Audience:
    """What a first-time reader asks before starting, which the home page answers: who
    the course is for, what it assumes, and what a reader can do after it. Plain text."""

    __pydantic_config__ = FORBID

    who: Annotated[str, Len(1, 600)]
    assumes: Annotated[str, Len(1, 600)]
    outcomes: Annotated[tuple[Annotated[str, Len(1, 300)], ...], MinLen(1), MaxLen(10)]


@dataclass(frozen=True)
class CourseMeta:
    __pydantic_config__ = FORBID

    title: Line
    summary: Annotated[str, Len(1, 1000)]
    arcs: Annotated[tuple[Arc, ...], MinLen(1)]
    note: HomeNote | None = None
    audience: Audience | None = None
    # Where content/ can be edited online (such as https://github.com/o/r/edit/main/content):
    # each lesson page links to its lesson.md there.
    source_url: SourceUrl | None = None
    # The accent colour in light and dark mode (builder/course/colours.py).
    colours: Colours | None = None
    # Where the site is published (such as https://org.github.io/course/): sitemap.xml,
    # canonical links and og:url need it, as absolute addresses; without it, none is made.
    site_url: SiteUrl | None = None
    # `true`: every command that runs this course's examples (site, record, serve,
    # rehearse) runs them in the bubblewrap sandbox, as `--sandbox` does, and refuses to
    # run them where bwrap cannot work; there is no switch to run them outside it.
    sandbox: bool = False
    # `true`: the site has the whole course as one page to print (print/index.html), linked
    # from the home page. Off by default: the page holds every lesson, so it grows with the
    # course, and a build makes it again after any lesson edit (builder/render/printed.py).
    print_page: bool = False
    # Where names' documentation is, by a name's first part: `[](api:jax.jit)` links to
    # jax's pattern with {name} replaced by jax.jit (builder/render/anchors.py).
    api_links: dict[ApiPrefix, ApiUrl] = field(default_factory=dict)
    # Environment moves (a jax upgrade, re-recorded), each a page of what it changed in what
    # the lessons print, linked from the home page (builder/review/moves.py).
    moves: Annotated[tuple[Move, ...], MaxLen(20), Check(_distinct_slugs)] = ()
    # Where Colab opens the published site's notebooks (the site's root in its repository,
    # such as https://colab.research.google.com/github/o/r/blob/gh-pages/): each lesson
    # page has "Open in Colab" for its example.ipynb there.
    colab_url: ColabUrl | None = None
    # Where readers open an issue (such as https://github.com/o/r/issues/new): each lesson
    # page has "Report a difference" there, for output that differs on their machine.
    issues_url: IssuesUrl | None = None


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of what authors write, by file name in builder/course/schema/."""
    from .validation import json_schema

    schemas = {
        "front-matter.schema.json": json_schema(FrontMatter),
        "course.schema.json": json_schema(CourseMeta),
        "glossary.schema.json": json_schema(list[GlossaryTerm]),
    }
    for name, schema in schemas.items():
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = name
    return schemas


@dataclass(frozen=True)
class Course:
    """The whole course, lessons in reading order (arc order, then `order`)."""

    root: Path
    meta: CourseMeta
    lessons: tuple[Lesson, ...]
    glossary: tuple[GlossaryTerm, ...]

    def lesson(self, key: str) -> Lesson | None:
        """The lesson with this id or slug."""
        return self._lessons_by_key.get(key)

    def term(self, key: str) -> GlossaryTerm | None:
        """The glossary term with this id, or whose term reads `key` (any case, any Unicode
        spelling)."""
        return self._terms_by_key.get(same_name(key.strip()))

    @cached_property
    def _lessons_by_key(self) -> dict[str, Lesson]:
        """Lookups by id or slug: pages ask for lessons by the thousand (cards, links)."""
        return by_id_or_slug(self.lessons)

    @cached_property
    def _terms_by_key(self) -> dict[str, GlossaryTerm]:
        return terms_by_key(self.glossary)

    def arc_lessons(self, arc: Arc) -> list[Lesson]:
        return [lesson for lesson in self.lessons if lesson.meta.arc == arc.id]

    def by_arc(self) -> dict[str, list[Lesson]]:
        """Every arc's lessons in reading order, by arc id, in one pass over the course."""
        arcs: dict[str, list[Lesson]] = {arc.id: [] for arc in self.meta.arcs}
        for lesson in self.lessons:
            arcs[lesson.meta.arc].append(lesson)
        return arcs


class _Named(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def slug(self) -> str: ...


N = TypeVar("N", bound=_Named)


def by_id_or_slug(lessons: Sequence[N]) -> dict[str, N]:
    """Lessons by id and by slug, as `lesson:` links and glossary cards look them up: the
    first lesson wins, as a scan would find."""
    by_key: dict[str, N] = {}
    for lesson in reversed(lessons):
        by_key[lesson.slug] = by_key[lesson.id] = lesson
    return by_key


def terms_by_key(glossary: Sequence[GlossaryTerm]) -> dict[str, GlossaryTerm]:
    """Glossary terms by id and by `same_name` of their term (`Course.term`)."""
    by_key: dict[str, GlossaryTerm] = {}
    for term in reversed(glossary):
        by_key[same_name(term.term)] = by_key[term.id] = term
    return by_key
