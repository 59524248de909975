"""What the site is made of: an Artifact is some files of the site, the pure function that
makes them (builder.render), the arguments it makes them from, and the key: the digest of
that function's name, those arguments and the code (`Artifact.of`), so a key cannot forget
an input. `Made` is what making it gave, and `Trace` what it left besides its files."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePath
from typing import Any

from .errors import BuildError


@dataclass(frozen=True)
class Trace:
    """What making an artifact left besides its files."""

    names: tuple[str, ...] = ()  # the site files it made
    terms: tuple[str, ...] = ()  # glossary terms a lesson page uses, in order
    uses: tuple[str, ...] = ()  # store keys it was made with (highlighted code blocks)


@dataclass(frozen=True)
class Made:
    """An artifact's files by name in the site (None: the site holds them already) and
    what making it left besides."""

    files: dict[str, bytes] | None
    trace: Trace = field(default_factory=Trace)
    errors: tuple[BuildError, ...] = ()


@dataclass(frozen=True)
class Artifact:
    key: str  # the digest of `make`'s function, its arguments and the code
    make: Callable[[], Made]
    kind: str = ""  # what it is ("page", "chart"): workers inherit one of each made

    @classmethod
    def of(cls, digests: Digests, kind: str, fn: Callable[..., Made], *args: Any) -> Artifact:
        """`fn(*args)`, keyed by exactly what it receives: `fn` is a module-level function
        (its code is in the code digest) and reads nothing but `args`, which are values
        `Digests` can take (frozen dataclasses, tuples, strings, numbers...)."""
        return cls(digests.key(fn, args), partial(fn, *args), kind)


class Digests:
    """Artifacts' keys: sha256 of the code digest (`salt`), a function's name and the
    canonical form of its arguments, each frozen dataclass in them digested once per object
    (a course's navigation is an argument of a thousand pages). `turn()` forgets the objects
    of the build before last: the preview keeps this between builds."""

    def __init__(self, salt: str = "") -> None:
        self.salt = salt
        self.last: dict[int, tuple[object, bytes]] = {}  # id -> (the object, kept alive; digest)
        self.now: dict[int, tuple[object, bytes]] = {}

    def turn(self) -> None:
        self.last, self.now = self.now, {}

    def key(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
        out: list[bytes] = []
        self._encode(self.salt, out)
        out.append(_function(fn))
        self._encode(args, out)
        return hashlib.sha256(b"".join(out)).hexdigest()

    def digest(self, value: Any) -> bytes:
        """The digest of a frozen dataclass's canonical form (its class and its fields')."""
        found = self.now.get(id(value)) or self.last.get(id(value))
        if found is None or found[0] is not value:
            cls = type(value)
            if not cls.__dataclass_params__.frozen:
                raise TypeError(f"{cls.__qualname__} is not frozen: it cannot be keyed")
            out = [cls.__module__.encode(), b".", cls.__qualname__.encode(), b";"]
            for name in _field_names(cls):
                self._encode(getattr(value, name), out)
            found = (value, hashlib.sha256(b"".join(out)).digest())
        self.now[id(value)] = found
        return found[1]

    def _encode(self, value: Any, out: list[bytes]) -> None:
        """`value`'s canonical form, tagged by type so that no two values read the same."""
        kind = type(value)
        if kind is str:
            data = value.encode("utf-8", "surrogatepass")
            out += (b"s", str(len(data)).encode(), b":", data)
        elif kind is tuple or kind is list:
            out += (b"(" if kind is tuple else b"[", str(len(value)).encode(), b":")
            for item in value:
                self._encode(item, out)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            out += (b"d", self.digest(value))
        elif value is None or kind is bool:
            out.append(b"N" if value is None else b"T" if value else b"F")
        elif kind is int or kind is float:
            out += (b"i" if kind is int else b"f", repr(value).encode(), b";")
        elif kind is bytes:
            out += (b"b", str(len(value)).encode(), b":", value)
        elif kind is dict:
            out += (b"{", str(len(value)).encode(), b":")  # in order: order can show
            for item in value.items():
                self._encode(item, out)
        else:
            out.append(self._other(value))

    def _other(self, value: Any) -> bytes:
        """Values of other types: those whose type is part of what they mean, or functions."""
        if isinstance(value, types.FunctionType):
            return _function(value)
        parts: list[bytes] = []
        if isinstance(value, enum.Enum):
            self._encode(value.value, parts)
        elif isinstance(value, str | PurePath):  # Markup is not a str to Jinja; a Path not
            self._encode(str(value), parts)
        elif hasattr(value, "__digest__"):  # stands for what it reads by a digest of it
            self._encode(value.__digest__(), parts)
        else:
            what = type(value).__qualname__
            raise TypeError(f"a {what} cannot be part of an artifact's key: pass frozen values")
        name = f"{type(value).__module__}.{type(value).__qualname__}"
        return b"o" + name.encode() + b";" + b"".join(parts)


def _function(fn: Callable[..., Any]) -> bytes:
    """A module-level function by its name: its code is in the code digest, and it has no
    state (a lambda, a closure or a partial would hide inputs)."""
    name = getattr(fn, "__qualname__", "")
    if not isinstance(fn, types.FunctionType) or "<" in name or fn.__closure__:
        raise TypeError(f"{fn!r} is not a module-level function: it cannot be keyed")
    return f"c{fn.__module__}.{name};".encode()


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names
