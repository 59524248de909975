"""Artifacts' keys: the digest of an artifact's function, its arguments and the code, made
here for the build (builder.pipeline.reuse) and never by the stages that render them."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, is_, is_not, or_
from pathlib import PurePath
from typing import Any, TypeVar

from ..core.artifact import Made

T = TypeVar("T")


@dataclass(frozen=True)
class Keyed:
    """An artifact (builder.core.artifact) with its key: the digest of its function's name,
    its arguments and the code (`Digests.key`), so a key cannot forget an input; or, for a
    lesson's artifacts taken by the keys an earlier build remembered (builder.pipeline.reuse),
    those keys and how to make them again."""

    key: str
    make: Callable[[], Made]
    kind: str = ""  # what it is ("page", "chart"): workers inherit one of each made
    label: str = ""  # whose it is (a lesson id), for the progress line; not in the key


class Digests:
    """Artifacts' keys: sha256 of the code digest (`salt`), a function's name and the
    canonical form of its arguments, each frozen dataclass in them digested once per object
    (a course's navigation is an argument of a thousand pages). `turn()` forgets the objects
    of the build before last: the preview keeps this between builds, and from its second
    build on, a key asked for in the same place as in the last build (`slot`: the same
    function, kind and label, the same how-many-th time) with the same arguments (`same`:
    the same objects, or equal values of the same types) is the last build's key, found
    without digesting anything: most of a preview's refresh re-keys lessons it did not read
    again, whose navigation entries and charts are new objects equal to the last ones. The
    same table holds what `kept` and `again_each` made: a value made from the same arguments
    as in the last build (a lesson's artifacts, keys and all) is the last build's, not made
    again, for every lesson at once."""

    def __init__(self, salt: str = "") -> None:
        self.salt = salt
        self.last: dict[int, tuple[object, bytes]] = {}  # id -> (the object, kept alive; digest)
        self.now: dict[int, tuple[object, bytes]] = {}
        # Only between builds (turn): where each key (or value) was asked for ->
        # (its arguments, what was made of them)
        self.keys: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] | None = None
        self.keys_last: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
        self.asked: dict[tuple[Any, ...], int] = {}  # slot -> keys asked for there this build
        self.alike: dict[tuple[int, int], bool] = {}  # (new, last) objects compared this build
        # slot -> (a key, what was made from the arguments of that key, those arguments):
        # what this build and those before it remembered, kept by the build's index
        # (builder.pipeline.index)
        self.remembered: dict[Any, tuple[str, Any, tuple[Any, ...]]] = {}

    def turn(self) -> None:
        self.last, self.now = self.now, {}
        self.keys_last, self.keys = self.keys or {}, {}
        self.asked, self.alike = {}, {}

    def known(self, values: Iterable[object]) -> tuple[tuple[object, bytes], ...]:
        """The digests of `values` (made again if this build found its keys without them):
        what the build's index keeps with them."""
        return tuple((value, self.digest(value)) for value in values)

    def seed(self, known: Iterable[tuple[object, bytes]]) -> None:
        """Digests made by an earlier build of the same code, of the very objects it kept
        (builder.pipeline.index): not made again while those objects are in use."""
        self.last.update((id(value), (value, made)) for value, made in known)

    def remember(self, slot: Any, key: str, made: Any, args: tuple[Any, ...] = ()) -> None:
        """That `made` (plain values: the index pickles them) was made from arguments `args`
        of `key` (`key(fn, args)`: the code's digest is in it), in the form `same_as`
        compares (frozen values, which the index pickles too)."""
        self.remembered[slot] = (key, made, args)

    def recall(self, slot: Any, key: str) -> Any:
        """What was made at `slot` from arguments of `key`, by this build or one before it
        of the same code; None if not that."""
        found = self.remembered.get(slot)
        return found[1] if found is not None and found[0] == key else None

    def same_as(self, slot: Any, args: tuple[Any, ...]) -> tuple[str, Any] | None:
        """The key and what was made at `slot` when it was made from arguments that are
        `same` as `args` (the very objects the index kept, or equal values of the same
        types): found without digesting `args`; None if not that."""
        found = self.remembered.get(slot)
        if found is None or not found[2] or not self.same(args, found[2]):
            return None
        return found[0], found[1]

    def key(self, fn: Callable[..., Any], args: tuple[Any, ...], slot: Any = None) -> str:
        if self.keys is None or slot is None:
            return self._key(fn, args)
        count = self.asked.get((fn, slot), 0)
        self.asked[(fn, slot)] = count + 1
        return self._found((fn, slot, count), args, lambda: self._key(fn, args))

    def again_each(self, fn: Callable[..., T], *columns: Sequence[Any], slot: Any) -> tuple[T, ...]:
        """`tuple(map(fn, *columns))`, where every column holds the very object it held at the
        same place in the last build's call at `slot` (or one that is `same`), what `fn` gave
        there then: `fn` reads nothing but its arguments. Those places are told all at once,
        in C, so a refresh after one lesson's edit calls `fn` (and `same`) for that lesson
        alone, and costs the others no Python call each. A column of new objects equal to
        the last (strings made again) is told by `same` at each place: pass such a column
        through `kept` first."""
        columns = tuple(map(tuple, columns))  # kept alive, and not changed, until turn()
        if self.keys is None:
            return tuple(map(fn, *columns))
        where = (fn, slot, len(columns))
        last = self.keys_last.get(where)
        if last is None or len(last[1]) != len(columns[0]):
            made = tuple(map(fn, *columns))
        else:
            made = self._each_again(fn, columns, *last)
        self.keys[where] = (columns, made)
        return made

    def _each_again(
        self, fn: Callable[..., T], columns: tuple[Any, ...], before: tuple[Any, ...], made: Any
    ) -> tuple[T, ...]:
        """`made`, the last build's, made again where `columns` hold other objects than
        `before` (and are not `same`)."""
        moved = list(map(is_not, columns[0], before[0]))
        for now, then in zip(columns[1:], before[1:], strict=True):
            moved = list(map(or_, moved, map(is_not, now, then)))
        again = list(made)
        for at in compress(range(len(again)), moved):
            args = tuple(column[at] for column in columns)
            if not self.same(args, tuple(column[at] for column in before)):
                again[at] = fn(*args)
        return tuple(again)

    def kept(self, value: T, slot: Any) -> T:
        """`value`, or the value the last build had at `slot` when the two are the same
        (`same`): an object made again each build (a course's navigation, its links) stays
        the one whose digest is made and whose comparisons are remembered. Only between
        builds, as `key`'s slots."""
        if self.keys is None:
            return value
        return self._found((_itself, slot), (value,), lambda: value)

    def _found(self, where: tuple[Any, ...], args: tuple[Any, ...], make: Callable[[], T]) -> T:
        last = self.keys_last.get(where)
        made: T = last[1] if last is not None and self.same(args, last[0]) else make()
        if self.keys is not None:
            self.keys[where] = (args, made)
        return made

    def _key(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
        canonical = (self.salt, _function(fn), self.canonical(args))
        return hashlib.sha256(repr(canonical).encode()).hexdigest()

    def same(self, new: Any, last: Any) -> bool:
        """`new` has the canonical form `last` has, told without making either: the same
        object, or values of the same type whose parts are the same (a float by its repr,
        which tells 0.0 from -0.0). Two dataclasses are compared once a build (the course's
        navigation is in a thousand keys); `last` is kept alive by `keys_last`, `new` by
        `keys`, so their ids name them until `turn()`."""
        if new is last:
            return True
        kind = type(new)
        if kind is not type(last):
            return False
        if kind is str or kind is int or kind is bytes:
            return bool(new == last)
        if kind is tuple or kind is list:
            if len(new) != len(last):
                return False
            if all(map(is_, new, last)):  # the same objects: told in C
                return True
            kinds = tuple(map(type, new))
            if kinds != tuple(map(type, last)):
                return False
            if _EXACT.issuperset(kinds):  # plain values: compared at once, in C
                return bool(new == last)
            for one, other, each in zip(new, last, kinds, strict=True):
                if one is other:
                    continue
                if not (one == other if each in _EXACT else self.same(one, other)):
                    return False
            return True
        if kind is float:
            return bool(new == last) and repr(new) == repr(last)
        if kind is dict:
            return len(new) == len(last) and self.same(tuple(new.items()), tuple(last.items()))
        if kind in _DATACLASSES or _is_dataclass(kind):
            pair = (id(new), id(last))
            found = self.alike.get(pair)
            if found is None:
                fields = _dataclass(kind)[1]
                found = self.alike[pair] = self.same(fields(new), fields(last))
            return found
        if isinstance(new, str | PurePath):  # Markup, a Path: as `_other` keys them
            return str(new) == str(last)
        if hasattr(new, "__digest__"):
            return self.same(new.__digest__(), last.__digest__())
        return False  # an enum's members, a function: only themselves

    def digest(self, value: Any) -> bytes:
        """The digest of a frozen dataclass's canonical form (its class and its fields')."""
        at = id(value)
        found = self.now.get(at) or self.last.get(at)
        if found is None or found[0] is not value:
            name, fields = _dataclass(type(value))
            found = (value, hashlib.sha256(name + self.canonical(fields(value))).digest())
        self.now[at] = found
        return found[1]

    def canonical(self, value: Any) -> bytes:
        """`value` as bytes that no other value gives. Short plain values (str, int, float,
        bool, None) by their repr, which tells 1 from 1.0 and True and quotes strings; a
        tuple or list by the repr of its items, those that are not short and plain as their
        own canonical bytes (whose repr, b'...', no plain value's starts with); long texts
        and bytes by their sha256 (repr would escape them). The first byte says what kind
        of value follows. Mostly one repr() in C, not a call a value."""
        kind = type(value)
        if kind is tuple or kind is list:
            if not _plain(value):
                value = kind(x if _short(x) else self.canonical(x) for x in value)
            return b"r" + repr(value).encode("utf-8", "surrogatepass")
        if kind in _DATACLASSES or _is_dataclass(kind):
            return b"d" + self.digest(value)
        if kind is str:
            return b"s" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()
        if kind in _PLAIN:
            return b"p" + repr(value).encode()
        if kind is bytes:
            return b"b" + hashlib.sha256(value).digest()
        if kind is dict:  # in order: order can show on a page
            return b"{" + self.canonical(tuple(value.items()))
        return self._other(value)

    def _other(self, value: Any) -> bytes:
        """Values of other types: those whose type is part of what they mean, or functions."""
        if isinstance(value, types.FunctionType):
            return _function(value)
        if isinstance(value, enum.Enum):
            what = self.canonical(value.value)
        elif isinstance(value, str | PurePath):  # Markup is not a str to Jinja; a Path not
            what = self.canonical(str(value))
        elif hasattr(value, "__digest__"):  # stands for what it reads by a digest of it
            what = self.canonical(value.__digest__())
        else:
            name = type(value).__qualname__
            raise TypeError(f"a {name} cannot be part of an artifact's key: pass frozen values")
        return b"o" + f"{type(value).__module__}.{type(value).__qualname__};".encode() + what


def _itself(value: T) -> T:
    return value


def _function(fn: Callable[..., Any]) -> bytes:
    """A module-level function by its name: its code is in the code digest, and it has no
    state (a lambda, a closure or a partial would hide inputs)."""
    name = getattr(fn, "__qualname__", "")
    if not isinstance(fn, types.FunctionType) or "<" in name or fn.__closure__:
        raise TypeError(f"{fn!r} is not a module-level function: it cannot be keyed")
    return f"c{fn.__module__}.{name};".encode()  # as no other kind of value begins


# Types whose repr is their canonical form (repr tells 1 from 1.0 and True, and quotes
# strings, escaping what needs it).
_PLAIN = frozenset({str, int, float, bool, type(None)})
_EXACT = frozenset({str, int, bool, bytes, type(None)})  # equal values of one type: one form
SHORT = 200  # characters of a string its repr shows; a longer one is digested


def _plain(items: tuple[Any, ...] | list[Any]) -> bool:
    """Every item a short plain value."""
    kinds = set(map(type, items))
    if not kinds <= _PLAIN:
        return False
    return str not in kinds or max(len(x) for x in items if type(x) is str) <= SHORT


def _short(item: Any) -> bool:
    kind = type(item)
    return kind in _PLAIN and (kind is not str or len(item) <= SHORT)


_DATACLASSES: dict[type, tuple[bytes, Callable[[Any], tuple[Any, ...]]]] = {}
_OTHERS: set[type] = set()  # types met that are not dataclasses


def _is_dataclass(kind: type) -> bool:
    if kind in _OTHERS:
        return False
    if dataclasses.is_dataclass(kind):
        return _dataclass(kind) is not None
    _OTHERS.add(kind)
    return False


def _dataclass(kind: type) -> tuple[bytes, Callable[[Any], tuple[Any, ...]]]:
    """A frozen dataclass's name, and what gets its fields' values as a tuple (a mutable
    one cannot be keyed)."""
    found = _DATACLASSES.get(kind)
    if found is None:
        if not kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
            raise TypeError(f"{kind.__qualname__} is not frozen: it cannot be keyed")
        name = f"{kind.__module__}.{kind.__qualname__};".encode()
        names = [f.name for f in dataclasses.fields(kind)]
        get = getattr(kind, "key_fields", None) or (  # a class may say what stands for it
            attrgetter(*names) if len(names) > 1 else lambda v: tuple(getattr(v, n) for n in names)
        )
        found = _DATACLASSES[kind] = (name, get)
    return found
