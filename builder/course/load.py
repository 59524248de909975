"""Load `content/` into a validated, frozen Course (the types: builder/course/model.py).

Every problem found is collected and reported together, each naming its file and field;
the checks across files (ids, slugs, arcs, links to the glossary) come after each file
is valid on its own.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..cells import Cell, CellError
from ..cells import parse as parse_cells
from ..core.errors import BuildError, ContentError, raise_all
from .files import (
    COURSE_FILES,
    Reads,
    front_matter_fields,
    input_folder,
    load_yaml,
    read_text,
    reading,
    split_front_matter,
)
from .fingerprint import file_sha256
from .model import (
    Course,
    CourseMeta,
    FrontMatter,
    GlossaryTerm,
    Lesson,
)
from .rules import EXAMPLE_FILE, LESSON_FILE, MAX_LESSON_BYTES, control_problem, same_name
from .validation import Cache, problems, uncached, validate

Shared = tuple[CourseMeta, tuple[GlossaryTerm, ...]]  # course.yml and glossary.yml, loaded


def load_course(
    root: Path,
    cache: Cache = uncached,
    kept: Mapping[str, Lesson] | None = None,
    reads: Reads | None = None,
    shared: Shared | None = None,
) -> Course:
    """Read and validate everything under `root`; raise every problem at once.

    `cache` keeps what validation makes of each text (course.yml, glossary.yml, each
    lesson's front matter block), so text validated before is not validated again.
    `kept`: lessons loaded before, by folder name, whose folders have not changed since
    (the preview knows from the file events); they are not read again, nor are
    course.yml and glossary.yml when `shared` holds them as loaded before.
    """
    kept = kept or {}
    errors: list[BuildError] = []
    glossary_errors: list[BuildError] = []  # said after the lessons'
    input_folder(root)
    if shared is None:
        with reading(reads, COURSE_FILES):
            meta = _collect(errors, _load_meta, root / "course.yml", cache, reads)
            glossary_path = root / "glossary.yml"
            glossary = _collect(glossary_errors, _load_glossary, glossary_path, cache, reads)
    else:
        meta, glossary = shared
    folders = _lesson_folders(root / "lessons", errors)
    taken = {name: kept[name] for name in folders if name in kept}

    def read(name: str) -> Any:
        with reading(reads, name):
            return _collect(errors, _load_lesson, root / "lessons" / name, cache, reads)

    lessons = [x for name in folders if (x := taken.get(name) or read(name))]
    errors += glossary_errors
    glossary = glossary or ()
    if meta is not None:
        errors += _cross_check(meta, lessons, root)
    # A lesson that failed to load is already reported; do not report its terms again.
    errors += _check_glossary(glossary, set(folders), root / "glossary.yml")
    raise_all(errors)
    assert meta is not None
    order = {arc.id: index for index, arc in enumerate(meta.arcs)}
    lessons.sort(key=lambda x: (order[x.meta.arc], x.meta.order, x.id))
    return Course(root=root, meta=meta, lessons=tuple(lessons), glossary=tuple(glossary))


def _collect(errors: list[BuildError], load: Any, *args: Any) -> Any:
    try:
        return load(*args)
    except BuildError as error:
        errors.append(error)
        return None


def _lesson_folders(lessons_dir: Path, errors: list[BuildError]) -> list[str]:
    """The lesson folders' names, in order; a link among them (or lessons/ itself a link)
    is an error: no file of the course is read through a link."""
    if not lessons_dir.is_symlink() and not lessons_dir.is_dir():
        errors.append(ContentError("no lessons folder", path=lessons_dir))
        return []
    entries = [e for e in _collect(errors, _listed, lessons_dir) or () if e.name[0] != "."]
    return sorted(
        e.name
        for e in entries  # a link: input_folder says so; the file type from the listing
        if (not e.is_symlink() or _collect(errors, input_folder, Path(e.path))) and e.is_dir()
    )


def _listed(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(input_folder(folder)) as entries:
        return list(entries)


def _validate(kind: type[Any], raw: Any, path: Path, what: str) -> Any:
    from pydantic import ValidationError

    if found := [f"{what} field '{at}': {problem}" for at, problem in _controls(raw)]:
        raise ContentError("; ".join(found), path=path)
    try:
        return validate(kind, raw)
    except ValidationError as error:
        found = [f"{what} field '{where or what}': {msg}" for where, msg in problems(error)]
        raise ContentError("; ".join(found), path=path) from None


def _controls(raw: Any) -> list[tuple[str, str]]:
    """(field, problem) for every string in `raw` (parsed YAML, its fields as pydantic
    names them: `arcs.0.title`) that holds a control character, in field order."""
    found, stack = [], [("", raw)]
    while stack:
        at, value = stack.pop()
        if isinstance(value, str) and (problem := control_problem(value)):
            found.append((at, problem))
        elif isinstance(value, dict | list):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((f"{at}.{key}" if at else str(key), item) for key, item in items)
    return sorted(found)


def _load_meta(path: Path, cache: Cache, reads: Reads | None) -> CourseMeta:
    text = read_text(path, reads=reads)

    def validated() -> CourseMeta:
        meta: CourseMeta = _validate(CourseMeta, load_yaml(text, path), path, "course")
        return meta

    return cache("course.yml", (text,), validated)


def _load_glossary(path: Path, cache: Cache, reads: Reads | None) -> tuple[GlossaryTerm, ...]:
    text = read_text(path, reads=reads, missing="")  # none: noted, so one written is read
    if not text:
        return ()

    def validated() -> tuple[GlossaryTerm, ...]:
        raw = load_yaml(text, path) or []
        if not isinstance(raw, list):
            raise ContentError("must be a YAML list of terms", path=path)
        return tuple(
            _validate(GlossaryTerm, item, path, f"term {i + 1}") for i, item in enumerate(raw)
        )

    return cache("glossary.yml", (text,), validated)


def _load_lesson(folder: Path, cache: Cache, reads: Reads | None) -> Lesson:
    path = folder / LESSON_FILE
    text = read_text(path, MAX_LESSON_BYTES, "split it into several lessons", reads)
    front, body, body_line = split_front_matter(text, path)

    def validated() -> FrontMatter:
        fields = front_matter_fields(front, path)
        meta: FrontMatter = _validate(FrontMatter, fields, path, "front matter")
        return meta

    meta = cache("front matter", (front,), validated)
    if meta.id != folder.name:
        raise ContentError(
            f"front matter id {meta.id!r} does not match its folder name {folder.name!r}",
            path=path,
            hint="rename the folder or the id so they agree",
        )
    source_path = folder / EXAMPLE_FILE
    source = read_text(source_path, reads=reads)
    if not source.strip():  # must exist, be UTF-8 and hold code
        raise ContentError(
            "is empty: every lesson needs a runnable example",
            path=source_path,
            hint="write the example (it may just print), or remove the lesson folder",
        )
    data = tuple((name, _data_digest(folder / name, name, path, reads)) for name in meta.data)
    cells = cache("cells", (source,), lambda: _cells(source, source_path))
    return Lesson(
        meta=meta,
        folder=folder,
        body=body,
        body_line=body_line,
        source=source.encode("utf-8"),
        front=front,
        cells=cells,
        data=data,
    )


def _cells(source: str, path: Path) -> tuple[Cell, ...]:
    try:
        return parse_cells(source)
    except CellError as error:
        raise ContentError(
            str(error), path=path, hint="see docs/authoring.md, Cells", line=error.line
        ) from None


def _data_digest(data: Path, name: str, lesson_file: Path, reads: Reads | None) -> str:
    """The sha256 of a data file, a regular file inside the lesson folder (`open_input`):
    never a link, which would stage (and record, and publish) whatever it points to on the
    machine. The lesson's page is keyed by it: a build that takes the lesson from its
    index opens no data file."""
    try:
        return file_sha256(data, reads)
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
