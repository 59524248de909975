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


# Equal as Python compares them, yet keyed apart: a key found again must tell them apart too.
LOOK_ALIKE = [
    (0.0, -0.0),
    ((0.0,), (-0.0,)),
    ([1], [1.0]),
    ((1, "a"), (True, "a")),
    (Point(1), Point(1.0)),
    (Point((1,)), Point((True,))),
    ({"a": 1}, {"a": 1.0}),
    (float("nan"), float("nan")),
]


@pytest.mark.parametrize(
    ("one", "other"), DIFFERENT + LOOK_ALIKE, ids=[repr(p) for p in DIFFERENT + LOOK_ALIKE]
)
def test_a_key_asked_for_again_is_the_key_of_what_it_is_given_now(one: Any, other: Any) -> None:
    """Between builds (the preview), a key asked for in the same place is found again only
    when its arguments have the same canonical form."""
    digests = Digests("code")
    for value in (one, other, one):
        digests.turn()
        assert digests.key(made, (value, "same"), ("page", "a")) == key(value, "same")


@pytest.mark.parametrize(
    ("one", "other"), DIFFERENT + LOOK_ALIKE, ids=[repr(p) for p in DIFFERENT + LOOK_ALIKE]
)
def test_what_again_each_finds_is_made_of_what_each_place_holds_now(one: Any, other: Any) -> None:
    """Digests.again_each (the preview's lessons, all at once): a place whose arguments are
    the last build's objects, or equal to them as `same` tells, keeps what was made there,
    the very object; any other place is made again, look-alikes told apart as keys tell
    them. Without a last build (a one-shot build) every place is made."""
    asked: list[str] = []

    def shown(value: Any, label: str) -> tuple[str, str]:
        asked.append(label)
        return label, f"{type(value).__name__} {value!r}"

    Digests("code").again_each(shown, ["x", one], ["a", "b"], slot="lessons")
    assert asked == ["a", "b"]
    digests = Digests("code")
    first: tuple[tuple[str, str], ...] = ()
    for value in (one, other, one):
        digests.turn()
        asked.clear()
        places = [Point("equal, made again"), value, "the same"]
        found = digests.again_each(shown, places, ["a", "b", "c"], slot="lessons")
        assert found[1] == ("b", f"{type(value).__name__} {value!r}")
        if first:
            assert asked == ["b"] and found[0] is first[0] and found[2] is first[2]
        first = first or found


@pytest.mark.parametrize(
    ("one", "other"), DIFFERENT + LOOK_ALIKE, ids=[repr(p) for p in DIFFERENT + LOOK_ALIKE]
)
def test_what_is_recalled_without_a_key_was_made_of_the_same_arguments(
    one: Any, other: Any
) -> None:
    """Digests.same_as (a one-shot build's unchanged lessons, from the index): what was
    remembered with its arguments is found again, with its key, for arguments `same` as
    those, and never for look-alikes that keys tell apart, nor at another place."""
    digests = Digests("code")
    digests.remember("a", key(one, "same"), "made of one", (one, "same"))
    assert digests.same_as("a", (one, "same")) == (key(one, "same"), "made of one")
    assert digests.same_as("a", (other, "same")) is None
    assert digests.same_as("a", (one,)) is None
    assert digests.same_as("b", (one, "same")) is None


def test_arguments_equal_to_the_last_builds_are_keyed_without_digesting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    digests = Digests("code")
    digests.turn()
    shared = Point("x" * 1000, (1, 2.5))

    def arguments() -> tuple[Any, ...]:  # new objects each build, equal to the last ones
        return (Point("x" * 1000, (1, 2.5)), shared, ["a", Point(b"b")], {"c": Markup("<")})

    first = [digests.key(made, arguments(), ("page", label)) for label in "ab"]
    digested: list[Any] = []
    monkeypatch.setattr(digests, "canonical", digested.append)
    digests.turn()
    assert [digests.key(made, arguments(), ("page", label)) for label in "ab"] == first
    assert digested == []
    monkeypatch.undo()
    assert first[0] == key(*arguments())


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
    columns = lessons.lesson_columns(course, statuses, {}, renderer)
    common = lessons.Common.of(course, renderer)
    rows = zip(*columns, strict=True)
    made = lessons.in_order(lessons.of_lesson(*lessons.lesson_inputs(common, *r)) for r in rows)
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
