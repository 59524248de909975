"""Load `content/` into a validated, frozen Course: arcs, lessons and glossary.

Every problem found is collected and reported together, each naming its file and field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from .errors import BuildError, ContentError, raise_all
from .rules import (
    DEFAULT_TIMEOUT,
    EXAMPLE_FILE,
    LESSON_FILE,
    LESSON_ID_PATTERN,
    SLUG_PATTERN,
    env_names,
    load_yaml,
    plain_data_names,
    read_text,
    split_front_matter,
)
from .validation import FORBID, Check, Limits, problems, validate

# Validated by pydantic (builder.validation), but not pydantic models: see there why.
Slug = Annotated[str, Limits(pattern=SLUG_PATTERN, max_length=64)]
LessonId = Annotated[str, Limits(pattern=LESSON_ID_PATTERN, max_length=64)]
Line = Annotated[str, Limits(min_length=1, max_length=300)]


@dataclass(frozen=True)
class FrontMatter:
    """What a lesson's YAML front matter may hold."""

    __pydantic_config__ = FORBID

    id: LessonId
    slug: Slug
    title: Line
    arc: Slug
    order: Annotated[int, Limits(ge=0, le=999)]
    summary: Line
    timeout: Annotated[float, Limits(gt=0, le=3600)] = DEFAULT_TIMEOUT
    data: Annotated[tuple[str, ...], Check(plain_data_names)] = ()
    env: Annotated[dict[str, str], Check(env_names)] = field(default_factory=dict)


@dataclass(frozen=True)
class Lesson:
    """A validated lesson: its front matter, its prose and its example's source."""

    meta: FrontMatter
    folder: Path
    body: str
    body_line: int
    source: bytes
    front: str = ""  # the front matter block as written (see Loaded.earlier)

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
    def lesson_path(self) -> Path:
        return self.folder / LESSON_FILE

    @property
    def example_path(self) -> Path:
        return self.folder / EXAMPLE_FILE

    @property
    def url(self) -> str:
        """The page's path inside the site, relative to the site root."""
        return f"l/{self.slug}/"


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
    definition: Annotated[str, Limits(min_length=1, max_length=400)]
    taught_in: LessonId


@dataclass(frozen=True)
class CourseMeta:
    __pydantic_config__ = FORBID

    title: Line
    summary: Annotated[str, Limits(min_length=1, max_length=1000)]
    arcs: Annotated[tuple[Arc, ...], Limits(min_length=1)]


def json_schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schemas of what authors write, by file name in schema/ (read by quickcheck.py)."""
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
        """The glossary term with this id, or whose term reads `key` (any case)."""
        return self._terms_by_key.get(key.strip().casefold())

    @cached_property
    def _lessons_by_key(self) -> dict[str, Lesson]:
        """Lookups by id or slug: pages ask for lessons by the thousand (cards, links)."""
        by_key: dict[str, Lesson] = {}
        for lesson in reversed(self.lessons):  # the first lesson wins, as a scan would find
            by_key[lesson.slug] = by_key[lesson.id] = lesson
        return by_key

    @cached_property
    def _terms_by_key(self) -> dict[str, GlossaryTerm]:
        by_key: dict[str, GlossaryTerm] = {}
        for term in reversed(self.glossary):
            by_key[term.term.casefold()] = by_key[term.id] = term
        return by_key

    def arc_lessons(self, arc: Arc) -> list[Lesson]:
        return [lesson for lesson in self.lessons if lesson.meta.arc == arc.id]

    def by_arc(self) -> dict[str, list[Lesson]]:
        """Every arc's lessons in reading order, by arc id, in one pass over the course."""
        arcs: dict[str, list[Lesson]] = {arc.id: [] for arc in self.meta.arcs}
        for lesson in self.lessons:
            arcs[lesson.meta.arc].append(lesson)
        return arcs


@dataclass(frozen=True)
class Loaded:
    """Parts of a course already read and validated, from builder.state (same bytes on disk)."""

    meta: CourseMeta
    glossary: tuple[GlossaryTerm, ...]
    lessons: dict[str, Lesson]  # by folder name
    # Lessons of the last build whose files changed, by folder name: one whose front matter
    # reads as before keeps its validated front matter (pydantic would build its validators
    # for that one lesson: 60 ms of a prose edit).
    earlier: dict[str, Lesson] = field(default_factory=dict)


def load_course(root: Path, loaded: Loaded | None = None) -> Course:
    """Read and validate everything under `root`; raise every problem at once.

    With `loaded`, the parts it holds are taken as they are instead of read again; every
    course-wide check (arcs, slugs, glossary) still runs on the whole.
    """
    errors: list[BuildError] = []
    meta = loaded.meta if loaded else _collect(errors, _load_meta, root / "course.yml")
    folders = _lesson_folders(root / "lessons", errors)
    known = loaded.lessons if loaded else {}
    earlier = loaded.earlier if loaded else {}

    def load(folder: Path) -> Lesson:
        return _load_lesson(folder, earlier.get(folder.name))

    lessons = [
        x for folder in folders if (x := known.get(folder.name) or _collect(errors, load, folder))
    ]
    if loaded:
        glossary = loaded.glossary
    else:
        glossary = _collect(errors, _load_glossary, root / "glossary.yml") or ()
    if meta is not None:
        errors += _cross_check(meta, lessons, root)
    # A lesson that failed to load is already reported; do not report its terms again.
    errors += _check_glossary(glossary, {f.name for f in folders}, root / "glossary.yml")
    raise_all(errors)
    assert meta is not None
    order = {arc.id: index for index, arc in enumerate(meta.arcs)}
    lessons.sort(key=lambda x: (order[x.meta.arc], x.meta.order, x.id))
    return Course(root=root, meta=meta, lessons=tuple(lessons), glossary=tuple(glossary))


def _collect(errors: list[BuildError], load: Any, path: Path) -> Any:
    try:
        return load(path)
    except BuildError as error:
        errors.append(error)
        return None


def _lesson_folders(lessons_dir: Path, errors: list[BuildError]) -> list[Path]:
    if not lessons_dir.is_dir():
        errors.append(ContentError("no lessons folder", path=lessons_dir))
        return []
    folders = [p for p in lessons_dir.iterdir() if not p.name.startswith(".") and p.is_dir()]
    return sorted(folders, key=lambda p: p.name)


def _validate(kind: type[Any], raw: Any, path: Path, what: str) -> Any:
    from pydantic import ValidationError

    try:
        return validate(kind, raw)
    except ValidationError as error:
        found = [f"{what} field '{where or what}': {msg}" for where, msg in problems(error)]
        raise ContentError("; ".join(found), path=path) from None


def _load_meta(path: Path) -> CourseMeta:
    meta: CourseMeta = _validate(CourseMeta, load_yaml(read_text(path), path), path, "course")
    return meta


def _load_glossary(path: Path) -> tuple[GlossaryTerm, ...]:
    if not path.exists():
        return ()
    raw = load_yaml(read_text(path), path) or []
    if not isinstance(raw, list):
        raise ContentError("must be a YAML list of terms", path=path)
    terms = [_validate(GlossaryTerm, item, path, f"term {i + 1}") for i, item in enumerate(raw)]
    return tuple(terms)


def _load_lesson(folder: Path, earlier: Lesson | None = None) -> Lesson:
    """The lesson in `folder`; `earlier` is how it was last loaded, if it was."""
    path = folder / LESSON_FILE
    text = read_text(path)
    raw, body, body_line = split_front_matter(text, path)
    front = text[: len(text) - len(body)]
    meta: FrontMatter
    if earlier is not None and earlier.front == front and earlier.folder == folder:
        meta = earlier.meta  # the same text validates to the same front matter
    else:
        meta = _validate(FrontMatter, raw, path, "front matter")
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
        if not (folder / name).is_file():
            raise ContentError(f"declares data file {name!r}, which is missing", path=path)
    return Lesson(
        meta=meta,
        folder=folder,
        body=body,
        body_line=body_line,
        source=source.encode("utf-8"),
        front=front,
    )


def _cross_check(meta: CourseMeta, lessons: list[Lesson], root: Path) -> list[BuildError]:
    arcs = sorted(arc.id for arc in meta.arcs)
    errors: list[BuildError] = [
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
        for key in {term.id, term.term.casefold()}:
            if key in seen:
                errors.append(
                    ContentError(
                        f"term {key!r} is defined twice", path=path, hint="keep one of them"
                    )
                )
            seen.add(key)
    return errors
