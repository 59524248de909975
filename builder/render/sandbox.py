"""The Jinja environment a page is rendered in: a sandbox, since a course's templates come
from a pull request, where `{{ cycler.__init__.__globals__.os.popen("id") }}` would run a
shell command.

It is Jinja's ImmutableSandboxedEnvironment (no attribute starting with `_`, no function
internals, no method that changes a list, dict or set: a template only reads what it is
given), narrowed further by `is_safe_attribute`:

- an object of the builder's (the page's context: `site`, `page`, `arc`, ...) shows its
  dataclass fields, never its methods, nor a field marked hidden (the theme's folder);
- a str or Markup shows the methods of READ_STR (none that makes text longer); a list,
  tuple or dict, those of READ_ITEMS;
- no module, class, function, file path or other callable is handed on at all;
- nothing but text, numbers and lists or dicts of them is made text, by any route (`{{ }}`,
  `~`, `%`, str.format, a filter, a key, an include's name): an object's repr shows every
  field, the hidden ones too (`size`'s `printed`).

And it is bounded (`Budget`): every value a template makes (an operator's, a filter's, a
method's, a `~`) is at most MAX_VALUE characters in all (a list counts what printing it
would), a number at most MAX_INT_BITS, a page at most MAX_PAGE characters, and rendering
a page at most deadline.SECONDS, a build's pages at most deadline.BUILD_SECONDS in each
process (builder/render/deadline.py). `lipsum` is left out. A
template that breaks a rule stops with a SecurityError (a TemplateError), which
builder/render/template_errors.py names in one line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, ItemsView, Iterator, KeysView, ValuesView
from functools import cache, update_wrapper
from pathlib import PurePath
from string import Formatter
from types import BuiltinMethodType, MethodType, ModuleType
from typing import Any

from jinja2 import BaseLoader, Environment, StrictUndefined, Undefined, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import (
    SecurityError,
)
from jinja2.filters import make_attrgetter
from jinja2.runtime import LoopContext, markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Cycler, Joiner, Namespace
from markupsafe import EscapeFormatter, Markup

from ..core.errors import BuildError
from .deadline import Overtime, deadline
from .template_errors import template_error

MAX_VALUE = 16 * 2**20  # characters a value a template makes may take, printed
MAX_PAGE = 64 * 2**20  # characters of one page; many times the largest real page
MAX_INT_BITS = 2**16  # a number's size: 10**10**10 would take the CPU for ever

READ_STR = frozenset(  # none makes text longer than it is
    [
        "capitalize",
        "casefold",
        "count",
        "endswith",
        "find",
        "index",
        "isalnum",
        "isalpha",
        "isascii",
        "isdecimal",
        "isdigit",
        "isidentifier",
        "islower",
        "isnumeric",
        "isprintable",
        "isspace",
        "istitle",
        "isupper",
        "lower",
        "lstrip",
        "partition",
        "removeprefix",
        "removesuffix",
        "rfind",
        "rindex",
        "rpartition",
        "rsplit",
        "rstrip",
        "split",
        "splitlines",
        "startswith",
        "strip",
        "swapcase",
        "title",
        "upper",
        "format",
        "format_map",
        "striptags",
        "unescape",
    ]
)
READ_ITEMS = frozenset(["count", "index", "get", "items", "keys", "values", "copy"])
HIDDEN = "template"  # a dataclass field's metadata key: {"template": False} hides it


def size(value: Any, limit: int = MAX_VALUE, printed: bool = False) -> int:
    """About how many characters `value` takes printed (str() of it), counted until past
    `limit`: a list of one string a hundred thousand times counts it a hundred thousand
    times, as printing it would. `printed`: it is made text, so an undefined value inside
    it is an error, and so is any object but text, a number, None and lists, tuples, sets
    and dicts of them (an object prints its repr: every field, a hidden one too)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1
        elif isinstance(item, list | tuple | set | frozenset):
            total += 2 * len(item) + 2
            stack.extend(item)
        elif isinstance(item, dict):
            total += 4 * len(item) + 2
            stack.extend(item.keys())
            stack.extend(item.values())
        elif printed and isinstance(item, Undefined):  # printed as "" in a list, silently
            item._fail_with_undefined_error()
        elif isinstance(item, Namespace):
            stack.append(item._Namespace__attrs)
        elif isinstance(item, KeysView | ValuesView | ItemsView):
            total += 2 * len(item) + 2
            stack.extend(item)
        elif printed and not (item is None or isinstance(item, float)):
            raise SecurityError(_OBJECT.format(type(item).__name__))
        else:
            total += 64
    return total


# printing an object shows its fields by repr, hidden ones too (the theme's folder)
_OBJECT = "it prints a {} object, not text or numbers: print one of its fields, {{{{ x.title }}}}"


def bounded(value: Any, what: str = "a value", printed: bool = False) -> Any:
    """`value`, or a SecurityError when it is over the limits."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise SecurityError(f"{what} makes a number over {MAX_INT_BITS:,} bits")
    if not isinstance(value, int | float | Undefined) and size(value, printed=printed) > MAX_VALUE:
        raise SecurityError(f"{what} makes over {MAX_VALUE:,} characters")
    return value


def _checked_args(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Every argument within the limits, and any number given besides the value at most
    MAX_VALUE (a width, a count): `center(10**9)` is refused before it is made."""
    for arg in (*args, *kwargs.values()):
        bounded(arg, f"an argument of {name}")
    for arg in (*args[1:], *kwargs.values()):
        if isinstance(arg, int) and abs(arg) > MAX_VALUE:
            raise SecurityError(f"{name} is given {arg:,}, over the {MAX_VALUE:,} limit")


def _estimate(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """What the filters that multiply their input would make, before they make it."""
    value = str(args[0]) if args and isinstance(args[0], str) else ""
    lines = value.count("\n") + 1
    rest = [*args[1:], *kwargs.values()]
    longest = max((size(x) for x in rest), default=0)
    if name in ("indent", "wordwrap"):  # a string per line
        return len(value) + longest * (lines + len(value) // 8)
    if name == "replace":  # the new text at every match ("" matches between characters)
        return len(value) + longest * (len(value) + 1)
    if name == "join":
        return size(args[0] if args else "") * (longest + 1)
    if name == "tojson":  # an indent at every item of every level
        return size(args[0] if args else "") * (longest + 2)
    return 0


def _filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """The filter `function`, its arguments and what it makes checked. A context or
    eval-context filter (Jinja's pass_* decorators) gets it first: it is not checked."""
    passes = getattr(function, "jinja_pass_arg", None)

    def checked(*args: Any, **kwargs: Any) -> Any:
        if name == "join" and args[1:] and not isinstance(args[1], str | list | tuple):
            args = (args[0], list(args[1]), *args[2:])  # a map's generator, looked at first
        given = args[1:] if passes else args
        _checked_args(name, given, kwargs)
        _printable(name, given, kwargs, args[0] if passes else None)
        if _estimate(name, given, kwargs) > MAX_VALUE:
            raise SecurityError(f"the filter {name} would make over {MAX_VALUE:,} characters")
        if name == "sum" and not isinstance(kwargs.get("start", 0), int | float):
            raise SecurityError("the filter sum adds numbers only")
        return bounded(function(*args, **kwargs), f"the filter {name}")

    return update_wrapper(checked, function)


# The filters that take objects without printing them; any other prints its value, and every
# filter but `default` may print its other arguments (in a message: "No filter named ...").
OBJECTS_IN = frozenset(
    [
        "abs",
        "attr",
        "batch",
        "count",
        "default",
        "d",
        "dictsort",
        "first",
        "float",
        "groupby",
        "int",
        "items",
        "last",
        "length",
        "list",
        "map",
        "max",
        "min",
        "random",
        "reject",
        "rejectattr",
        "reverse",
        "round",
        "select",
        "selectattr",
        "slice",
        "sort",
        "sum",
        "unique",
    ]
)


def _printable(name: str, given: tuple[Any, ...], kwargs: dict[str, Any], passed: Any) -> None:
    """A SecurityError when the filter `name` would print an object (size's `printed`): its
    value, unless it is of OBJECTS_IN, and its other arguments. `join` by an `attribute`
    prints what the attribute reads (`passed`: the eval context Jinja gives it)."""
    if name in ("default", "d"):
        return
    for arg in (*given[1:], *kwargs.values()):
        bounded(arg, f"an argument of {name}", printed=True)
    value = given[0] if given else ""
    attribute = kwargs.get("attribute", given[2] if len(given) > 2 else None)
    if name == "join" and attribute is not None:
        value = [make_attrgetter(passed.environment, attribute)(x) for x in value]
    if name not in OBJECTS_IN:
        bounded(value, f"the filter {name}", printed=True)


_PRINTF = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _printf(text: str, values: Any) -> str:
    """`text % values` (the `%` operator, the `format` filter) with widths bounded."""
    widths = 0
    for width, precision in _PRINTF.findall(text):
        if "*" in (width, precision):
            raise SecurityError("a '*' width or precision is not allowed in a % format")
        widths += int(width or 0) + int(precision or 0)
    if len(text) + widths + size(values, printed=True) > MAX_VALUE:
        raise SecurityError(f"a % format would make over {MAX_VALUE:,} characters")
    made: str = text % values
    return made


def _format_filter(value: Any, *args: Any, **kwargs: Any) -> str:
    if args and kwargs:
        raise SecurityError("the filter format takes positional or keyword arguments, not both")
    return _printf(str(value), kwargs or args)


class _Bounded(Formatter):
    """str.format's fields, each width and the whole bounded."""

    made = 0

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        size(value, printed=True)  # `{0!r}`: the repr, before format_field sees text
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        digits = [int(x) for x in re.findall(r"\d+", format_spec)]
        if sum(digits) + size(value, printed=True) + self.made > MAX_VALUE:
            raise SecurityError(f"a str.format would make over {MAX_VALUE:,} characters")
        made = super().format_field(value, format_spec)
        self.made += len(made)
        return made


class _Formatter(_Bounded, SandboxedFormatter):
    pass


class _EscapeFormatter(_Bounded, SandboxedFormatter, EscapeFormatter):
    pass


class _Code(CodeGenerator):
    """Jinja's code, but a `~` joins through `environment.bounded_concat`, which bounds it: a chain
    of `{% set b = a ~ a %}` doubled a string with no call in between."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        escape = frame.eval_ctx.autoescape  # as Jinja decides it: `{% autoescape %}` blocks
        escaping = "context.eval_ctx.autoescape" if frame.eval_ctx.volatile else repr(escape)
        self.write(f"environment.bounded_concat({escaping}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class CourseSandbox(ImmutableSandboxedEnvironment):
    """See the module's docstring. Immutable rather than merely sandboxed: no template has
    any reason to change a list or dict it is given, and one that could would change it
    for the pages rendered after it."""

    code_generator_class = _Code
    intercepted_binops = frozenset({"*", "**", "%", "+", "//", "/", "-"})

    def __init__(self, loader: BaseLoader) -> None:
        super().__init__(
            loader=loader,
            autoescape=True,
            undefined=StrictUndefined,
            keep_trailing_newline=True,
            finalize=_printed,
        )
        del self.globals["lipsum"]  # a loop as long as the template asks
        self.filters = {name: _filter(name, f) for name, f in self.filters.items()}
        self.filters["format"] = _filter("format", _format_filter)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):  # most, first
            return attr in _fields(type(obj)) and not _kept(value)
        if not super().is_safe_attribute(obj, attr, value) or _kept(value):
            return False
        if isinstance(obj, str):
            return attr in READ_STR
        if isinstance(obj, list | tuple | dict):
            return attr in READ_ITEMS
        if isinstance(obj, LoopContext | Cycler | Joiner):
            return True  # loop.cycle(), cycler.next(): Jinja's own helpers
        return not callable(value) and type(obj).__module__.split(".")[0] != "builder"

    def getattr(self, obj: Any, attribute: str) -> Any:
        value = super().getattr(obj, attribute)
        return self.unsafe_undefined(obj, attribute) if _kept(value) else value

    def getitem(self, obj: Any, argument: Any) -> Any:
        if not isinstance(argument, slice):  # a missing key is named in the message
            size(argument, printed=True)
        value = super().getitem(obj, argument)
        return self.unsafe_undefined(obj, str(argument)) if _kept(value) else value

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(__obj, "__name__", "a call")
        _checked_args(name, args, kwargs)
        if isinstance(getattr(__obj, "__self__", None), str | list | tuple | dict):
            size((args, kwargs), printed=True)  # [].index(x): "x is not in list"
        return bounded(super().call(__context, __obj, *args, **kwargs), name)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        bounded(left, f"the left of {operator}")
        bounded(right, f"the right of {operator}")
        power = operator == "**" and isinstance(left, int) and isinstance(right, int)
        if power and left.bit_length() * abs(right) > MAX_INT_BITS:
            raise SecurityError(f"** makes a number over {MAX_INT_BITS:,} bits")
        if operator == "*" and isinstance(left, int) != isinstance(right, int):
            count, items = (left, right) if isinstance(left, int) else (right, left)
            if count > 0 and size(items) * count > MAX_VALUE:
                raise SecurityError(f"* would make over {MAX_VALUE:,} characters")
        if operator == "%" and isinstance(left, str):
            return bounded(_printf(left, right), "%")
        return bounded(super().call_binop(context, operator, left, right), operator)

    def _load_template(self, name: Any, globals: Any) -> Any:
        """`{% include x %}` with an object: its name is printed, in the message."""
        if not isinstance(name, str):
            raise SecurityError(_OBJECT.format(type(name).__name__))
        return super()._load_template(name, globals)

    def bounded_concat(self, escape: bool, parts: tuple[Any, ...]) -> str:
        if sum(size(x, printed=True) for x in parts) > MAX_VALUE:
            raise SecurityError(f"~ would make over {MAX_VALUE:,} characters")
        joined: str = markup_join(parts) if escape else str_join(parts)
        return joined

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """str.format and format_map as Jinja's sandbox makes them, widths bounded."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text: str = value.__self__
        mapped = value.__name__ == "format_map"
        escape = isinstance(text, Markup)

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            formatter = _EscapeFormatter(self, escape=Markup.escape) if escape else _Formatter(self)
            if mapped:
                (kwargs,), args = args, ()
            return type(text)(formatter.vformat(text, args, kwargs))

        return update_wrapper(bounded_format, value)


_HELPERS = (str, list, tuple, dict, LoopContext, Cycler, Joiner)


@cache
def _fields(kind: type) -> frozenset[str]:
    """The fields a template may read of a dataclass of the builder's: not those marked
    hidden (`field(metadata={"template": False})`), nor any method or property."""
    return frozenset(f.name for f in dataclasses.fields(kind) if f.metadata.get(HIDDEN, True))


def _printed(value: Any) -> Any:
    """What `{{ value }}` prints, bounded (text, the common case, by its length alone)."""
    if type(value) is str or type(value) is Markup:
        if len(value) > MAX_VALUE:
            raise SecurityError(f"an expression makes over {MAX_VALUE:,} characters")
        return value
    return bounded(value, "an expression", printed=True)


def _kept(value: Any) -> bool:
    """What no template is handed, whoever holds it: modules, classes, file paths, and
    functions other than bound methods of str, list, tuple and dict (the names above)."""
    if isinstance(value, ModuleType | type | PurePath):
        return True
    if isinstance(value, MethodType | BuiltinMethodType):
        return not isinstance(value.__self__, _HELPERS)
    return False


def generate(parts: Iterator[str]) -> list[str]:
    """A page's parts from its template's, stopped at MAX_PAGE characters."""
    made: list[str] = []
    total = 0
    for part in parts:
        total += len(part)
        if total > MAX_PAGE:
            raise SecurityError(f"it makes a page over {MAX_PAGE:,} characters")
        made.append(part)
    return made


def render(
    environment: Environment, name: str, folders: tuple[str, ...], **context: Any
) -> list[str]:
    """The parts of the page the template `name` makes of `context` (joined: the page),
    within SECONDS and MAX_PAGE; any mistake of a template (`folders`: where templates
    are) is a ContentError naming its file and line, the problem and what to do."""
    used = name
    try:
        with deadline(budgeted=isinstance(environment, CourseSandbox)):
            template = environment.get_template(name)
            used = template.filename or name
            return generate(template.generate(**context))
    except BuildError:
        raise
    except (Exception, Overtime) as error:
        raise template_error(error, used, folders) from None
