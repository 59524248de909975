"""Math in a lesson's prose: `$...$` inline and `$$...$$` on its own, drawn as MathML.

mdit-py-plugins' dollarmath finds the TeX: a `$` hugs its formula (no space inside it, no
digit after the closing one), so "$5 and $6" stays prose; the TeX is read before Markdown's
escapes, so `\\\\` reaches the converter whole. latex2mathml (pure Python, imported only by a
page with math) turns it into MathML that the browser lays out itself: no script, nothing
fetched, the reader's own font size, the text's colour in either theme, and a formula that a
screen reader reads as math, with its TeX source as `alttext`. A display formula stands in its
own box that scrolls sideways (keyboard-reachable, named, its hidden edge shaded by site.js),
so a wide one never widens or clips the page. docs/authoring.md ("Math") says why not SVG.

latex2mathml prints what it does not know as if it were a letter (`\\foo` becomes the text
`\\foo`, `\\begin{foo}` a row) and takes `\\href`, `\\style` and `\\class` into attributes; its
own string output un-escapes `<` after serialising. So the TeX is checked first (no unknown
command or environment, balanced braces, bounded size and depth, no link, style, colour or
macro) and the MathML is written anew from its tree, every element and attribute from a
fixed list and every text escaped. Whatever it cannot render is a RenderError naming the
lesson file and the line of the formula.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markupsafe import Markup, escape
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.dollarmath.index import math_inline_dollar

from .marks import PageEnv

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

MAX_TEX = 8 * 1024  # characters in one formula: a page-wide matrix is a tenth of it
MAX_DEPTH = 40  # braces within braces (and environments): far past any formula a reader reads

# What latex2mathml does and a page must not: each command, and what to write instead.
_LINK = "no link inside a formula: put the link in the prose around it"
_MACRO = "no macros: write the formula out (each formula is drawn alone)"
_STYLE = "no CSS inside a formula: the site's stylesheet styles math"
_COLOUR = "no colours, which do not read in both themes: use \\boxed, \\underbrace or \\mathbf"
REFUSED = MappingProxyType(
    {
        **dict.fromkeys(("\\href", "\\url"), _LINK),
        **dict.fromkeys(
            ("\\def", "\\gdef", "\\edef", "\\let", "\\newcommand", "\\renewcommand"), _MACRO
        ),
        **dict.fromkeys(("\\providecommand", "\\newenvironment"), _MACRO),
        "\\DeclareMathOperator": "no macros: write \\operatorname{name} where it is used",
        **dict.fromkeys(("\\style", "\\class", "\\cssId"), _STYLE),
        **dict.fromkeys(("\\color", "\\textcolor", "\\colorbox", "\\fcolorbox"), _COLOUR),
    }
)
# What the converter does not know, written as what it does: environments, then commands.
ALIASES = MappingProxyType({"aligned": "align*"})
_ARG = re.compile(r"\\arg(?![A-Za-z])")  # \arg\max

# The MathML it writes: presentation elements, and the attributes that change only layout.
_ELEMENTS = """math mrow mi mo mn ms mtext mspace msub msup msubsup munder mover munderover mfrac
msqrt mroot mstyle mtable mtr mtd mpadded mphantom menclose"""
_ATTRIBUTES = """mathvariant displaystyle scriptlevel stretchy fence form largeop movablelimits
accent accentunder separator symmetric lspace rspace minsize maxsize width height depth voffset
linethickness columnalign columnspacing columnlines rowalign rowspacing rowlines frame notation"""
ELEMENTS, ATTRIBUTES = frozenset(_ELEMENTS.split()), frozenset(_ATTRIBUTES.split())
ARITY = MappingProxyType(
    {"mfrac": 2, "mroot": 2, "msub": 2, "msup": 2, "msubsup": 3, "munder": 2, "mover": 2}
    | {"munderover": 3}
)
_BREAK = "\\\\ breaks a line only between the rows of an environment such as align* or array"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_COMMAND_TEXT = re.compile(r"\\[A-Za-z]+")
_ENVIRONMENT = re.compile(r"(\\(?:begin|end)\s*)\{(\w+)\}")


class MathError(Exception):
    """TeX the page cannot show; `at`: where in the TeX (a character offset), if known."""

    def __init__(self, message: str, at: int = 0) -> None:
        super().__init__(message)
        self.at = at


def math_plugin(md: MarkdownIt) -> None:
    """Parse `$...$` and `$$...$$` (prose.parser) and render them as MathML."""
    md.use(
        dollarmath_plugin,
        allow_labels=False,  # `$$...$$ (eq1)`: anchors and numbering are not built
        allow_space=False,  # `$ x $` is not math: the rule that keeps "$5 and $6" prose
        allow_digits=False,  # nor `$5$6`: a closing `$` before a digit is a price
        allow_blank_lines=False,  # a blank line ends a `$$` block, as in TeX
        double_inline=True,  # `$$...$$` inside a paragraph (a notebook's habit): display
    )
    md.inline.ruler.at("math_inline", _counting_lines(math_inline_dollar(False, False, True)))
    md.add_render_rule("math_inline", _render_inline)
    md.add_render_rule("math_inline_double", _render_display)
    md.add_render_rule("math_block", _render_display)


InlineRule = Callable[[StateInline, bool], bool]


def _counting_lines(rule: InlineRule) -> InlineRule:
    """`rule`, noting on the token how many lines into its paragraph the formula starts
    (counted on from the last formula's place, so a paragraph is read once)."""

    def counted(state: StateInline, silent: bool) -> bool:
        start, pushed = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent and len(state.tokens) > pushed:
            since, lines = state.__dict__.get("math_lines", (0, 0))
            if start < since:
                since, lines = 0, 0
            lines += state.src.count("\n", since, start)
            state.__dict__["math_lines"] = (start, lines)
            state.tokens[-1].meta["math_line"] = lines
        return True

    return counted


# -- rendering ----------------------------------------------------------------------------


def _render_inline(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    line = token.meta.get("line", 0) + token.meta.get("math_line", 0)
    math, _ = _formula(env, token.content, line, display=False)
    return str(math)


def _render_display(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
    """A display formula in its own sideways-scrolling box: a `<div>` on its own, a `<span>`
    shown as a block inside a paragraph (`text $$x$$ text`)."""
    token = tokens[idx]
    inline = token.map is None
    line = token.map[0] if token.map else token.meta.get("line", 0) + token.meta.get("math_line", 0)
    math, drawn = _formula(env, token.content, line, display=True)
    if not drawn:
        return str(math)
    env["formulas"] = number = env.get("formulas", 0) + 1
    tag = Markup("span" if inline else "div")
    name = env["page"].region(f"Formula {number}")  # told from other lessons' when moved
    box = Markup('<%s class="math-scroll" tabindex="0" role="region" aria-label="%s">')
    return str(box % (tag, name) + math + Markup("</%s>") % tag) + ("" if inline else "\n")


def _formula(env: Any, tex: str, line: int, display: bool) -> tuple[Markup, bool]:
    """The formula's MathML and True; or, when it cannot be drawn, the error collected
    (naming the line in the lesson where the problem is) with its place on the page."""
    page: PageEnv = env["page"]
    try:
        math, text = to_mathml(tex, display)
        page.findable(text, spaced=display)
        return math, True
    except MathError as error:
        page.line = line + tex.count("\n", 0, error.at)
        shown = " ".join(tex.split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        dollars = "$$" if display else "$"
        return page.fail(f"math {dollars}{shown}{dollars}: {error}"), False


# -- TeX -> MathML --------------------------------------------------------------------------


def to_mathml(tex: str, display: bool) -> tuple[Markup, str]:
    """`tex` as a `<math>` element (display: a block formula), and its text as a search
    finds it; raises MathError saying what in it cannot be shown, and where."""
    source = tex.strip()
    if not source:
        raise MathError("the formula is empty")
    if len(source) > MAX_TEX:
        raise MathError(f"{len(source) // 1024} KiB of TeX is over the {MAX_TEX // 1024} KiB limit")
    if control := _CONTROL.search(tex):
        raise MathError(f"a control character ({control[0]!r}) in the TeX", control.start())
    source = _ENVIRONMENT.sub(lambda m: m[1] + "{" + ALIASES.get(m[2], m[2]) + "}", source)
    source = _ARG.sub(r"\\operatorname{arg}", source)
    _check(tex, source)
    element = _convert(source, display)
    try:
        inner = Markup("").join(_written(child, tex) for child in element)
    except RecursionError:
        raise MathError("the formula is nested too deeply") from None
    block = Markup(' display="block"') if display else Markup("")
    alttext = " ".join(tex.split())  # as the author wrote it
    text = "".join(html.unescape(piece) for piece in element.itertext())
    return Markup('<math%s alttext="%s">%s</math>') % (block, alttext, inner), text


def _check(tex: str, source: str) -> None:
    """What latex2mathml would show wrongly without a word: unknown commands are caught in
    its output (`_written`); here, refused commands, unknown environments, an array's
    column letters and unbalanced braces."""
    from latex2mathml import commands
    from latex2mathml.tokenizer import tokenize

    depth = 0
    tokens = tokenize(source)
    for token in tokens:
        if token in REFUSED:
            raise MathError(f"{token}: {REFUSED[token]}", _where(tex, token))
        if token.startswith("\\begin{"):
            _check_environment(tex, token, tokens, commands.MATRICES)
        opens = token == "{" or token.startswith("\\begin{")
        depth += opens - (token == "}" or token.startswith("\\end{"))
        if depth < 0:
            raise MathError(f"a closing {token} has no opening one", _where(tex, token))
        if depth > MAX_DEPTH:
            raise MathError(f"the formula nests over {MAX_DEPTH} deep")
    if depth:
        raise MathError("a { or \\begin is never closed: count the braces")


def _check_environment(tex: str, token: str, tokens: Iterator[str], known: tuple[str, ...]) -> None:
    name = token[len("\\begin{") : -1]
    if "\\" + name not in known:
        names = sorted({k[1:] for k in known if k[1:].isalpha() and not k.startswith("\\eq")})
        raise MathError(
            f"\\begin{{{name}}} is not an environment the converter knows "
            f"(it knows {', '.join(names)}, aligned)",
            _where(tex, f"{{{name}}}"),
        )
    if name != "array":
        return
    spec = next(tokens, "")
    letters = []
    while spec == "{" and (letter := next(tokens, "}")) != "}":
        letters.append(letter)
    if spec != "{" or not letters or any(c not in "lcr|" for c in letters):
        raise MathError(
            "\\begin{array} needs its columns next, as {lcr}: one l, c or r a column",
            _where(tex, token),
        )


def _where(tex: str, needle: str) -> int:
    return max(tex.find(needle), 0)


_ERRORS = MappingProxyType(
    {
        "NumeratorNotFoundError": "a fraction has no numerator",
        "DenominatorNotFoundError": "a fraction has no denominator",
        "ExtraLeftOrMissingRightError": "a \\left has no \\right (or a \\right no \\left)",
        "MissingSuperScriptOrSubscriptError": "a ^ or _ has nothing after it",
        "DoubleSubscriptsError": "a double subscript: write x_{ab}, or {x_a}_b",
        "DoubleSuperscriptsError": "a double superscript: write x^{ab}, or {x^a}^b",
        "NoAvailableTokensError": "it ends too soon: a command misses an argument",
        "StopIteration": "it ends too soon: a command misses an argument",
        "MissingEndError": "a \\begin has no \\end",
        "InvalidAlignmentError": "a column letter other than l, c or r",
        "InvalidWidthError": "a width that is not a number",
        "InvalidStyleForGenfracError": "\\genfrac's style is not 0, 1, 2 or 3",
        "LimitsMustFollowMathOperatorError": "\\limits follows something that is no operator",
    }
)


def _convert(source: str, display: bool) -> Element:
    from latex2mathml.converter import convert_to_element

    try:
        return convert_to_element(source, display="block" if display else "inline")
    except RecursionError:
        raise MathError("the formula is nested too deeply") from None
    except Exception as error:  # the converter's own, or its bug on odd input: the TeX's fault
        name = type(error).__name__
        raise MathError(_ERRORS.get(name, f"the converter cannot read it ({name})")) from None


def _written(element: Element, tex: str) -> Markup:
    """`element` as MathML, written anew: an element or attribute off the lists, a command
    printed as text (one the converter does not know), or a script without its base is a
    MathError; text (character references in the converter's tree) is escaped."""
    tag = element.tag
    if tag not in ELEMENTS:
        raise MathError(f"the converter made a <{tag}>, which a page does not show")
    for name in element.attrib:
        if name == "linebreak":
            raise MathError(_BREAK, _where(tex, "\\\\"))
        if name not in ATTRIBUTES:
            raise MathError(f"the converter set {name}=, which a page does not take")
    text = html.unescape(element.text or "")
    verbatim = element.get("mathvariant") == "monospace"  # \verb|...| is shown as written
    if (unknown := _COMMAND_TEXT.search(text)) and not verbatim:
        raise MathError(
            f"{unknown[0]} is not a command the converter knows", _where(tex, unknown[0])
        )
    children = list(element)
    if tag in ARITY and len(children) != ARITY[tag]:
        raise MathError("a fraction, root, script or limit misses a part", 0)
    attributes = Markup("").join(
        Markup(' %s="%s"') % (name, value) for name, value in sorted(element.attrib.items())
    )
    inner = Markup("").join(_written(child, tex) for child in children)
    tail = escape(html.unescape(element.tail or ""))
    return Markup("<%s%s>%s%s</%s>") % (tag, attributes, escape(text), inner, tag) + tail
