"""What a lesson page reads of the rest of the course: the lessons its `lesson:` links and
glossary cards lead to (by id and slug), the glossary, and course.yml's `api_links`. One
value for every lesson page, so that a page's key (builder.core.artifact) holds exactly this
of the other lessons: a prose edit elsewhere leaves it alone; a slug, a title or a
definition changed anywhere does not. The ids of the lessons a page's anchored links lead
to are that page's own (builder/render/anchors.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from mdit_py_plugins.anchors.index import slugify

from ..course.model import Course, GlossaryTerm, Lesson, by_id_or_slug, terms_by_key
from ..course.rules import same_name


@dataclass(frozen=True)
class Target:
    """A lesson as a link or a glossary card leads to it."""

    id: str
    slug: str
    title: str  # a glossary card says "taught in <title>"

    @property
    def url(self) -> str:
        return f"l/{self.slug}/"  # as Lesson.url


def target(lesson: Lesson) -> Target:
    return Target(lesson.id, lesson.slug, lesson.title)


@dataclass(frozen=True)
class Links:
    lessons: tuple[Target, ...]  # in course order
    glossary: tuple[GlossaryTerm, ...]
    api_links: tuple[tuple[str, str], ...] = ()  # course.yml's: a name's first part -> pattern

    @classmethod
    def of(cls, course: Course) -> Links:
        api = tuple(sorted(course.meta.api_links.items()))
        return cls(tuple(map(target, course.lessons)), course.glossary, api)

    def lesson(self, key: str) -> Target | None:
        """The lesson with this id or slug (as Course.lesson)."""
        return self._lessons.get(key)

    def term(self, key: str) -> GlossaryTerm | None:
        """The glossary term with this id, or whose term reads `key` (as Course.term)."""
        return self._terms.get(same_name(key.strip()))

    def taught_in(self, lesson_id: str) -> tuple[tuple[str, str], ...]:
        """The glossary terms the lesson teaches, as (id, term), in glossary order."""
        return self._teaches.get(lesson_id, ())

    @cached_property
    def api(self) -> dict[str, str]:
        """The address pattern of each name's first part (`jax`), with `{name}` in it."""
        return dict(self.api_links)

    @cached_property
    def _lessons(self) -> dict[str, Target]:
        return by_id_or_slug(self.lessons)

    @cached_property
    def _terms(self) -> dict[str, GlossaryTerm]:
        return terms_by_key(self.glossary)

    @cached_property
    def _teaches(self) -> dict[str, tuple[tuple[str, str], ...]]:
        found: dict[str, list[tuple[str, str]]] = {}
        for term in self.glossary:
            found.setdefault(term.taught_in, []).append((term.id, term.term))
        return {lesson: tuple(terms) for lesson, terms in found.items()}


# The ids the page gives its own figures and sections, and the targets of its skip link
# (#main) and its "Back to top" (#top): a heading never takes one.
_PAGE_IDS = re.compile(r"panel-\d+|cell-.*|tabs-\d+.*|run-it-yourself|top|main")


def heading_id(title: str) -> str:
    """A heading's id, as markdown-it's anchors make it, but never one of _PAGE_IDS (a
    heading "Cell trace" would take the id of {{ cell trace }}'s figure)."""
    made = slugify(title)
    return f"section-{made}" if _PAGE_IDS.fullmatch(made) else made
