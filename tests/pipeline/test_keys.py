"""An artifact's key is the digest of exactly what its function receives (builder.pipeline.keys): every
artifact of a site is a module-level function and its arguments, and no argument can be
left out of the key, nor two different arguments read the same."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from builder.core.artifact import Artifact, Made
from builder.core.observe import Paths
from builder.course.load import load_course
from builder.course.status import course_status
from builder.pipeline.keys import Digests
from builder.pipeline.reuse import Reuse
from builder.render import lessons, pages
from builder.render.nav import site_nav
from builder.render.renderer import Renderer


@dataclass(frozen=True)
class Point:
    x: Any
    y: Any = 0


@dataclass
class Loose:
    x: int


def made(*args: Any) -> Made:
    return Made({"a": repr(args).encode()})


def key(*args: Any) -> str:
    return Digests("code").key(made, args)


DIFFERENT = [
    ("a", Markup("a")),  # Jinja escapes one and not the other
    ("a", Path("a")),
    (1, 1.0),
    (1, True),
    (0, None),
    ("None", None),
    (("a", "b"), ("ab",)),
    (("a", "b"), ["a", "b"]),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # order can show on a page
    (b"a", "a"),
    (Point(1), Point(2)),
    (Point(1, 2), Point(2, 1)),
    (Point("a"), ("a", 0)),
    (Point(Point(1)), Point(Point(2))),
    ((Point(1), Point(2)), [Point(1), Point(2)]),  # a column of dataclasses (Digests._column)
    ((Point(1), Point(2)), (Point(1), Point(3))),
    ((Point(1), Point(2)), (Point(2), Point(1))),
    ((Point(1),), (Point(1), Point(1))),
]


@pytest.mark.parametrize(("one", "other"), DIFFERENT, ids=[repr(p) for p in DIFFERENT])
def test_different_arguments_give_different_keys(one: Any, other: Any) -> None:
    assert key(one) != key(other)
    assert key(one, 1) != key(other, 1)


def test_equal_arguments_give_the_same_key_whatever_object_holds_them() -> None:
    digests = Digests("code")
    shared = Point("x" * 1000, (1, 2.5))
    assert digests.key(made, (shared, shared)) == key(Point("x" * 1000, (1, 2.5)), shared)
    assert digests.key(made, (shared,)) == digests.key(made, (shared,))  # digested once, kept


def test_a_column_found_again_is_keyed_as_it_is_now() -> None:
    """A tuple of dataclasses keyed in the last build (the preview's) is found by its
    objects only while every one of them is the same: one item changed, the key changes."""
    digests = Digests("code")
    column = tuple(Point(n) for n in range(5))
    keys = []
    for items in (column, column, (*column[:2], Point(9), *column[3:]), column):
        digests.turn()
        keys.append(digests.key(made, (items,)))
        assert keys[-1] == key(tuple(Point(x.x) for x in items))
    assert keys[0] == keys[1] == keys[3] != keys[2]


def test_a_column_is_keyed_alike_before_and_after_its_kind_is_first_met() -> None:
    """A build's first key holding a dataclass of a kind (a fresh process's) is the key
    every later build makes of the same values."""

    @dataclass(frozen=True)
    class Fresh:
        x: int

    first = key((Fresh(1), Fresh(2)))
    assert key((Fresh(1), Fresh(2))) == first


def test_the_code_and_the_function_are_in_every_key() -> None:
    assert Digests("code").key(made, (1,)) != Digests("other code").key(made, (1,))
    assert Digests("code").key(made, (1,)) != Digests("code").key(key, (1,))


@pytest.mark.parametrize(
    "argument",
    [{1, 2}, frozenset({"a"}), object(), Loose(1), Point(Loose(1)), lambda: 1, partial(made, 1)],
    ids=["set", "frozenset", "object", "loose dataclass", "inside", "lambda", "partial"],
)
def test_what_a_key_cannot_hold_is_refused(argument: Any) -> None:
    with pytest.raises(TypeError, match="cannot be"):
        key(argument)


def test_a_function_with_hidden_inputs_is_refused() -> None:
    hidden = "read from outside"

    def closure() -> Made:
        return Made({"a": hidden.encode()})

    with pytest.raises(TypeError, match="not a module-level function"):
        Reuse().key(Artifact(closure, ()))
    with pytest.raises(TypeError, match="not a module-level function"):
        Reuse().key(Artifact(lambda: Made({}), ()))


def test_every_artifact_of_the_site_is_its_function_and_its_arguments(recorded: Paths) -> None:
    """Each key is made from the function an artifact calls and the arguments it passes,
    and changing any one of those arguments changes it: nothing a page is made from is
    left out of its key."""
    course = load_course(recorded.content)
    statuses = course_status(course, recorded.recordings)
    renderer = Renderer()
    common = lessons.Common.of(course, renderer)
    units = lessons.units(course, statuses, {}, common, site_nav(course))
    made = lessons.in_order(lessons.make(common, unit) for unit in units)
    used = pages.terms_used([a.make() for a in made])
    nav = site_nav(course)
    artifacts = [*made, *pages.page_artifacts(course, nav, statuses, used, {}, renderer)]
    assert {a.kind for a in artifacts} == {"page", "chart", ""}  # a notebook is in its page
    for artifact in artifacts:
        fn, args = artifact.fn, artifact.args
        key = Reuse(None, "code").key(artifact).key
        assert Digests("code").key(fn, args) == key
        for n, argument in enumerate(args):
            if isinstance(argument, Renderer):  # a pure function of the code
                continue
            other = (*args[:n], _other(argument), *args[n + 1 :])
            assert Digests("code").key(fn, other) != key, (fn, n)


def _other(value: Any) -> Any:
    """A value unlike `value`, as little unlike it as is easy: a dataclass with its first
    field changed, a string or bytes one longer..."""
    if isinstance(value, str | bytes):
        return value + (b"x" if isinstance(value, bytes) else "x")  # type: ignore[operator]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        first = dataclasses.fields(value)[0].name
        return dataclasses.replace(value, **{first: _other(getattr(value, first))})  # type: ignore[type-var]
    if isinstance(value, tuple | list):
        return type(value)([*value, None])
    if isinstance(value, dict):
        return {**value, "other": None}
    if isinstance(value, int | float):
        return value + 1
    if value is None:
        return ""
    raise AssertionError(f"no other value for {value!r}")
