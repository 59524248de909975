"""Load `content/` into a validated, frozen Course: arcs, lessons and glossary.

Every problem found is collected and reported together, each naming its file and field.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

from annotated_types import Interval, Len, MaxLen, MinLen

from ..core.errors import BuildError, ContentError, raise_all
from ..core.store import Memo
from .rules import (
    DEFAULT_TIMEOUT,
    EXAMPLE_FILE,
    LESSON_FILE,
    LESSON_ID_PATTERN,
    MAX_LESSON_BYTES,
    SLUG_PATTERN,
    env_names,
    front_matter_fields,
    input_folder,
    load_yaml,
    open_input,
    plain_data_names,
    read_text,
    same_name,
    split_front_matter,
)
from .validation import FORBID, Check, Pattern, problems, validate

# Validated by pydantic (builder.course.validation), but not pydantic models: see there why.
Slug = Annotated[str, Pattern(SLUG_PATTERN), MaxLen(64)]
LessonId = Annotated[str, Pattern(LESSON_ID_PATTERN), MaxLen(64)]
Line = Annotated[str, Len(1, 300)]
SourceUrl = Annotated[str, Pattern(r"^https://[^\s\"'<>]+[^/\s\"'<>]$"), MaxLen(300)]


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
    # `gpu`: recorded only on a GPU (a Dask worker started with `--resources GPU=1`).
    requires: Literal["gpu"] | None = None


@dataclass(frozen=True)
class Lesson:
    """A validated lesson: its front matter, its prose and its example's source."""

    meta: FrontMatter
    folder: Path
    body: str
    body_line: int
    source: bytes
    front: str = ""  # the front matter block as written

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
    def needs_gpu(self) -> bool:
        return self.meta.requires == "gpu"

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
    definition: Annotated[str, Len(1, 400)]
    taught_in: LessonId


@dataclass(frozen=True)
class HomeNote:
    """A short note the home page shows under the course summary: what the course does
    not claim, say. Plain text, one entry per paragraph."""

    __pydantic_config__ = FORBID

    title: Line
    paragraphs: Annotated[tuple[Annotated[str, Len(1, 1000)], ...], MinLen(1), MaxLen(6)]


@dataclass(frozen=True)
class CourseMeta:
    __pydantic_config__ = FORBID

    title: Line
    summary: Annotated[str, Len(1, 1000)]
    arcs: Annotated[tuple[Arc, ...], MinLen(1)]
    note: HomeNote | None = None
    # Where content/ can be edited online (such as https://github.com/o/r/edit/main/content):
    # each lesson page links to its lesson.md there.
    source_url: SourceUrl | None = None


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of what authors write, by file name in schema/."""
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


def load_course(
    root: Path, memo: Memo | None = None, kept: Mapping[str, Lesson] | None = None
) -> Course:
    """Read and validate everything under `root`; raise every problem at once.

    `memo` keeps what validation makes of each text (course.yml, glossary.yml, each
    lesson's front matter block), so text validated before is not validated again.
    `kept`: lessons loaded before, by folder name, whose folders have not changed since
    (the preview knows from the file events); they are not read again.
    """
    memo = memo or Memo()
    kept = kept or {}
    errors: list[BuildError] = []
    input_folder(root)
    meta = _collect(errors, _load_meta, root / "course.yml", memo)
    folders = _lesson_folders(root / "lessons", errors)
    lessons = [
        x
        for folder in folders
        if (x := _kept(kept.get(folder.name), memo) or _collect(errors, _load_lesson, folder, memo))
    ]
    glossary = _collect(errors, _load_glossary, root / "glossary.yml", memo) or ()
    if meta is not None:
        errors += _cross_check(meta, lessons, root)
    # A lesson that failed to load is already reported; do not report its terms again.
    errors += _check_glossary(glossary, {f.name for f in folders}, root / "glossary.yml")
    raise_all(errors)
    assert meta is not None
    order = {arc.id: index for index, arc in enumerate(meta.arcs)}
    lessons.sort(key=lambda x: (order[x.meta.arc], x.meta.order, x.id))
    return Course(root=root, meta=meta, lessons=tuple(lessons), glossary=tuple(glossary))


def _kept(lesson: Lesson | None, memo: Memo) -> Lesson | None:
    """A lesson loaded before, its validated front matter kept in the store as a read keeps it."""
    if lesson is not None:
        memo.keep("front matter", lesson.front)
    return lesson


def _collect(errors: list[BuildError], load: Any, *args: Any) -> Any:
    try:
        return load(*args)
    except BuildError as error:
        errors.append(error)
        return None


def _lesson_folders(lessons_dir: Path, errors: list[BuildError]) -> list[Path]:
    """The lesson folders, in name order; a link among them (or lessons/ itself a link) is
    an error: no file of the course is read through a link."""
    if not lessons_dir.is_symlink() and not lessons_dir.is_dir():
        errors.append(ContentError("no lessons folder", path=lessons_dir))
        return []
    entries = [p for p in _collect(errors, _listed, lessons_dir) or () if p.name[0] != "."]
    folders = [p for p in entries if _collect(errors, input_folder, p) and p.is_dir()]
    return sorted(folders, key=lambda p: p.name)


def _listed(folder: Path) -> list[Path]:
    return list(input_folder(folder).iterdir())


def _validate(kind: type[Any], raw: Any, path: Path, what: str) -> Any:
    from pydantic import ValidationError

    try:
        return validate(kind, raw)
    except ValidationError as error:
        found = [f"{what} field '{where or what}': {msg}" for where, msg in problems(error)]
        raise ContentError("; ".join(found), path=path) from None


def _load_meta(path: Path, memo: Memo) -> CourseMeta:
    text = read_text(path)

    def validated() -> CourseMeta:
        meta: CourseMeta = _validate(CourseMeta, load_yaml(text, path), path, "course")
        return meta

    return memo("course.yml", (text,), validated)


def _load_glossary(path: Path, memo: Memo) -> tuple[GlossaryTerm, ...]:
    if not os.path.lexists(path):  # a link, even dangling, is named by read_text
        return ()
    text = read_text(path)

    def validated() -> tuple[GlossaryTerm, ...]:
        raw = load_yaml(text, path) or []
        if not isinstance(raw, list):
            raise ContentError("must be a YAML list of terms", path=path)
        return tuple(
            _validate(GlossaryTerm, item, path, f"term {i + 1}") for i, item in enumerate(raw)
        )

    return memo("glossary.yml", (text,), validated)


def _load_lesson(folder: Path, memo: Memo) -> Lesson:
    path = folder / LESSON_FILE
    text = read_text(path, MAX_LESSON_BYTES, hint="split it into several lessons")
    front, body, body_line = split_front_matter(text, path)

    def validated() -> FrontMatter:
        fields = front_matter_fields(front, path)
        meta: FrontMatter = _validate(FrontMatter, fields, path, "front matter")
        return meta

    meta = memo("front matter", (front,), validated)
    if meta.id != folder.name:
        raise ContentError(
            f"front matter id {meta.id!r} does not match its folder name {folder.name!r}",
            path=path,
            hint="rename the folder or the id so they agree",
        )
    source_path = folder / EXAMPLE_FILE
    source = read_text(source_path)
    if not source.strip():  # must exist, be UTF-8 and hold code
        raise ContentError(
            "is empty: every lesson needs a runnable example",
            path=source_path,
            hint="write the example (it may just print), or remove the lesson folder",
        )
    for name in meta.data:
        _check_data_file(folder / name, name, path)
    return Lesson(
        meta=meta,
        folder=folder,
        body=body,
        body_line=body_line,
        source=source.encode("utf-8"),
        front=front,
    )


def _check_data_file(data: Path, name: str, lesson_file: Path) -> None:
    """A data file is a regular file inside the lesson folder (`open_input`): never a link,
    which would stage (and record, and publish) whatever it points to on the machine."""
    try:
        os.close(open_input(data))
    except FileNotFoundError:
        missing = f"declares data file {name!r}, which is missing"
        raise ContentError(missing, path=lesson_file) from None
    except BuildError as error:
        raise ContentError(
            f"declares data file {name!r}, which {error.problem}",
            path=lesson_file,
            hint=error.hint,
        ) from None


def _cross_check(meta: CourseMeta, lessons: list[Lesson], root: Path) -> list[BuildError]:
    arcs = sorted({arc.id for arc in meta.arcs})
    errors: list[BuildError] = [
        ContentError(
            f"arc id {arc!r} is defined {count} times",
            path=root / "course.yml",
            hint="give each arc its own id; lessons name their arc by it",
        )
        for arc, count in Counter(arc.id for arc in meta.arcs).items()
        if count > 1
    ]
    errors += [
        ContentError(
            f"arc {lesson.meta.arc!r} is not one of the arcs in course.yml ({', '.join(arcs)})",
            path=lesson.lesson_path,
        )
        for lesson in lessons
        if lesson.meta.arc not in arcs
    ]
    by_key: dict[str, Lesson] = {lesson.id: lesson for lesson in lessons}
    for lesson in lessons:
        other = by_key.setdefault(lesson.slug, lesson)
        if other is not lesson:
            errors.append(
                ContentError(
                    f"slug {lesson.slug!r} is already the slug or id of {other.lesson_path}",
                    path=lesson.lesson_path,
                    hint="give each lesson its own slug",
                )
            )
    aliases: dict[str, Lesson] = {}
    for lesson in lessons:
        for alias in dict.fromkeys(lesson.meta.aliases):
            taken = by_key.get(alias)
            earlier = aliases.setdefault(alias, lesson)
            if taken is not None:
                what = "slug" if taken.slug == alias else "id"
                problem = f"alias {alias!r} is the {what} of {taken.lesson_path}"
            elif earlier is not lesson:
                problem = f"alias {alias!r} is already an alias of {earlier.lesson_path}"
            elif lesson.meta.aliases.count(alias) > 1:
                problem = f"alias {alias!r} is listed twice"
            else:
                continue
            errors.append(
                ContentError(
                    problem,
                    path=lesson.lesson_path,
                    hint="an alias is an old slug of this lesson that no lesson uses now",
                )
            )
    return errors


def _check_glossary(
    glossary: tuple[GlossaryTerm, ...], ids: set[str], path: Path
) -> list[BuildError]:
    errors: list[BuildError] = []
    seen: set[str] = set()
    for term in glossary:
        if term.taught_in not in ids:
            errors.append(
                ContentError(
                    f"term {term.id!r} is taught_in {term.taught_in!r}, which is not a lesson id",
                    path=path,
                    hint="set taught_in to the id of the lesson that teaches it "
                    "(the folder name under lessons/)",
                )
            )
        for key in {term.id, same_name(term.term)}:
            if key in seen:
                errors.append(
                    ContentError(
                        f"term {key!r} is defined twice", path=path, hint="keep one of them"
                    )
                )
            seen.add(key)
    return errors
