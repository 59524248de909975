"""Artifacts' keys: the digest of an artifact's function, its arguments and the code, made
here for the build (builder.pipeline.reuse) and never by the stages that render them."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter, is_
from pathlib import PurePath
from typing import Any

from ..core.artifact import Made


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


# A column of dataclasses (`Digests._column`): its items, its form, each item's digest by id.
Column = tuple[tuple[Any, ...], bytes, tuple[tuple[int, tuple[object, bytes]], ...]]


class Digests:
    """Artifacts' keys: sha256 of the code digest (`salt`), a function's name and the
    canonical form of its arguments, each frozen dataclass in them digested once per object
    (a course's navigation is an argument of a thousand pages). `turn()` forgets the objects
    of the build before last: the preview keeps this between builds."""

    def __init__(self, salt: str = "") -> None:
        self.salt = salt
        self.last: dict[int, tuple[object, bytes]] = {}  # id -> (the object, kept alive; digest)
        self.now: dict[int, tuple[object, bytes]] = {}
        self.columns: dict[tuple[Any, ...], Column] = {}  # by type and ids: `_column`
        self.columns_last: dict[tuple[Any, ...], Column] = {}

    def turn(self) -> None:
        self.last, self.now = self.now, {}
        self.columns_last, self.columns = self.columns, {}

    def known(self, values: Iterable[object]) -> tuple[tuple[object, bytes], ...]:
        """The digests of `values` (made again if this build found its keys without them):
        what the build's index keeps with them."""
        return tuple((value, self.digest(value)) for value in values)

    def seed(self, known: Iterable[tuple[object, bytes]]) -> None:
        """Digests made by an earlier build of the same code, of the very objects it kept
        (builder.pipeline.index): not made again while those objects are in use."""
        self.last.update((id(value), (value, made)) for value, made in known)

    def key(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
        canonical = (self.salt, _function(fn), self.canonical(args))
        return hashlib.sha256(repr(canonical).encode()).hexdigest()

    def digest(self, value: Any) -> bytes:
        """The digest of a frozen dataclass's canonical form (its class and its fields')."""
        at = id(value)
        found = self.now.get(at) or self.last.get(at)
        if found is None or found[0] is not value:
            name, fields = _dataclass(type(value))
            found = (value, hashlib.sha256(name + self.canonical(fields(value))).digest())
        self.now[at] = found
        return found[1]

    def _column(self, value: tuple[Any, ...] | list[Any]) -> bytes:
        """A tuple or list of dataclasses of one kind: the sha256 of its items' digests (a
        column of a thousand statuses is not repr'd into every key that holds it); found
        at once (in C) when its items are the very objects of a column made by this build
        or the last (the recordings page's statuses, most of them kept)."""
        at = (type(value), *map(id, value))
        found = self.columns.get(at) or self.columns_last.get(at)
        if found is None or not all(map(is_, found[0], value)):
            digests = tuple(map(self.digest, value))
            form = type(value)(map(b"d".__add__, digests))
            seen = tuple(zip(map(id, value), zip(value, digests, strict=True), strict=True))
            found = (tuple(value), b"c" + hashlib.sha256(repr(form).encode()).digest(), seen)
        self.now.update(found[2])
        self.columns[at] = found
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
            kinds = set(map(type, value))
            if len(kinds) == 1 and _is_dataclass(next(iter(kinds))):
                return self._column(value)
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
