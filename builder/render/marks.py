"""The recorded things a lesson's prose places: `{{ example }}`, `{{ output }}`,
`{{ panel N }}`, `{{ panels }}` and `{{ reveal }}` (inline `{{ value ... }}`: values.py),
resolved against the lesson's recording while builder/render/prose.py renders its Markdown.
Everything recorded is escaped; a reference to something that does not exist is a
RenderError naming the lesson and line.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from markupsafe import Markup

from ..core.errors import RenderError
from ..course.model import Lesson
from ..course.recording import CellRun, Recording
from .bounded import MAX_SEARCHED, compile_pattern
from .figures import (
    Sizer,
    chart_size,
    figure_html,
    panel_shown,
    provenance,
    scrollable,
)
from .highlight import Highlighter
from .links import Links
from .markup import macro
from .relocate import Move
from .terminal import clean_output, terminal_lines


@dataclass(frozen=True)
class Placed:
    """A recorded thing a page shows, as data: what `diff` and the What-changed page
    compare between two recordings of the same prose (the k-th of one is the k-th of the
    other), so that nothing reads it back out of the HTML."""

    kind: str  # "value", "output", "panel", or "broken": a reference that did not resolve
    section: str  # the heading it stands under, as a reader sees it ("" before the first)
    anchor: str  # that heading's id, or the panel's own ("panel-2")
    source: str  # what it reads: "recorded output", "panel 2", "recorded output, line 3"...
    shown: str  # its text as the reader sees it (a panel: its table's rows)
    line: int = 0  # the line of the recorded output a value reads (0: none)
    panel: int = 0  # the panel it is, or a value reads (0: none)


@dataclass(frozen=True)
class Marked:
    """A cell's code as a page shows it, its markers taken out."""

    code: str
    marks: tuple[tuple[int, int], ...] = ()  # (line index in `code`, note number)
    problems: tuple[tuple[int, str], ...] = ()  # (line index, what is wrong)
    unreadable: str = ""  # why tokenize could not read the code ("" when it could)


@dataclass
class PageNotes:
    """What a page's cells and notes lists have shown so far (code_notes.py)."""

    marked: dict[str, Marked] = field(default_factory=dict)  # by cell, read once a page
    noted: dict[str, set[int]] = field(default_factory=dict)  # cell -> numbers with a note
    badges: set[str] = field(default_factory=set)  # badge ids given (the first of each)
    last: tuple[str, int, dict[int, int]] | None = None  # cell, directive line, N -> file line
    listing: tuple[str, dict[int, int]] | None = None  # the notes list being rendered


@dataclass
class PageEnv:
    """What the Markdown rules need to resolve a lesson's marks; filled as it renders."""

    lesson: Lesson
    links: Links  # what its links and glossary cards lead to
    recording: Recording | None
    root: str
    highlight: Highlighter
    size: Sizer = chart_size
    pending: bool = False  # its recording is about to be made: what only that decides is not
    # checked (a recorded mark shows "not recorded yet", a link to a panel any panel it may have)
    errors: list[RenderError] = field(default_factory=list)
    placed_panels: list[int] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    toc: list[tuple[int, str, str]] = field(default_factory=list)
    line: int = 0
    whole_example_shown: bool = False
    revealing: bool = False  # inside a {{ reveal }}: the page closes it at its end
    reveals: bool = False  # the page has a {{ reveal }}: outside it, nothing gives it away
    searched: int = 0  # characters of recorded output its references searched (bounded.py)
    outputs: int = 0  # recorded-output blocks placed so far: each region gets its own name
    values: int = 0  # inline values placed so far: each note gets its own id
    placed: list[Placed] = field(default_factory=list)  # in the page's order
    section: tuple[str, str] = ("", "")  # the last heading so far: its text and id
    placed_cells: list[str] = field(default_factory=list)  # by name, in the page's order
    cell_caption_shown: bool = False  # the page's one caption for its cells (cells.py)
    notes: PageNotes = field(default_factory=PageNotes)  # its code notes (code_notes.py)
    read: list[str] = field(default_factory=list)  # its text a reader reads (reading.py)
    # its text a search finds, by section: the text before its first anchored heading, then
    # one such heading's id, its text and the text under it (builder/render/search.py)
    found: list[tuple[str, list[str], list[str]]] = field(default_factory=lambda: [("", [], [])])
    in_heading: bool = False  # inside an anchored heading: its text is the section's heading
    moved: Move | None = None  # rendered into another page (the printable course): where
    _shown: list[str] | None = None

    def id(self, name: str) -> str:
        """`name` as an id of the page the prose is rendered into (relocate.Move)."""
        return self.moved.id(name) if self.moved and name else name

    def href(self, address: str, authored: bool = False) -> str:
        """`address` as the page the prose is rendered into writes it (`authored`: as the
        lesson's author wrote it, relative to its own page; else made with `root`)."""
        return self.moved.address(address, authored) if self.moved else address

    def region(self, name: str) -> str:
        """A region's name, told from other lessons' regions when the prose is moved."""
        return f"{name}, {self.moved.label}" if self.moved and self.moved.label else name

    def shown_lines(self) -> list[str]:
        """The recording's stdout as the page shows it (`terminal_lines`), made once a page."""
        if self._shown is None:
            self._shown = terminal_lines(self.recording.stdout if self.recording else "")
        return self._shown

    def keep(self, text: str, spaced: bool = True) -> None:
        """Text a reader reads (the reading time counts it) and a search finds."""
        self.read.append(text)
        self.findable(text, spaced)

    def findable(self, text: str, spaced: bool = True) -> None:
        """Text a search finds (code, recorded output), unless a reveal folds it: searched,
        it would tell the answer. `spaced`: a block of its own, no word runs into it (else
        a piece of a line: "`jit`s" is one word)."""
        if not self.revealing:
            _, heading, said = self.found[-1]
            (heading if self.in_heading else said).extend((" ", text, " ") if spaced else (text,))

    def section_starts(self, anchor: str) -> None:
        """An anchored heading: a search result may link to it."""
        self.found.append((anchor, [], []))
        self.in_heading = True

    def error(self, message: str) -> None:
        """A problem of the lesson's at the current line, collected (the page goes on)."""
        at = self.lesson.body_line + self.line
        self.errors.append(RenderError(message, path=self.lesson.lesson_path, line=at))

    def ordered_errors(self) -> list[RenderError]:
        """The errors in the order of the lesson's lines, then those of its other files (the
        example's) as found. Each rule finds its own in its own pass (foreign syntax and
        links while parsing, math and recorded marks while rendering), so the order found
        is the order of the checks, not the page's."""
        lesson = str(self.lesson.lesson_path)
        return sorted(self.errors, key=lambda e: (e.path == lesson and e.line) or math.inf)

    def fail(self, message: str) -> Markup:
        """The problem collected, and the place of the mark that failed, saying why."""
        self.error(message)
        return self.broken(message)

    def broken(self, message: str) -> Markup:
        """The place of a mark that failed (placed: `diff` compares these in order)."""
        self.place("broken", "a reference this recording cannot resolve", "")
        self.findable(message)
        return Markup('<mark class="broken">%s</mark>') % message

    def place(
        self, kind: str, source: str, shown: str, anchor: str = "", line: int = 0, panel: int = 0
    ) -> None:
        section, heading = self.section
        self.placed.append(Placed(kind, section, anchor or heading, source, shown, line, panel))


# -- block directives --------------------------------------------------------------------

Args = dict[str, list[str]]


def parse_args(text: str, page: PageEnv) -> Args | None:
    try:
        words = shlex.split(text)
    except ValueError as error:
        page.error(f"{{{{ {text} }}}}: {error}")
        return None
    args: Args = {}
    for word in words:
        key, eq, value = word.partition("=")
        if eq:
            args[key] = [value]
        else:
            args.setdefault("", []).append(word)
    return args


def line_range(spec: str, total: int, page: PageEnv, what: str) -> slice | None:
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", spec)
    if not match:
        page.error(f"{what} lines={spec!r}: expected N or N-M")
        return None
    first, last = int(match[1]), int(match[2] or match[1])
    if not 1 <= first <= last <= total:
        page.error(f"{what} lines={spec}: it has {total} lines")
        return None
    return slice(first - 1, last)


EXAMPLE_FILE = "example.py"  # the example, written beside each lesson page for download
NOTEBOOK_FILE = "example.ipynb"  # the reader's notebook, beside it (builder/render/notebook.py)


def _example(page: PageEnv, args: Args) -> str:
    """The example's code, numbered as the file is (so `<id>-example:16:36` in the output is
    line 16 here), with a download link. A `lines=` slice is numbered from its first line,
    and the first slice on a page is followed by the whole file, collapsed."""
    source = page.lesson.source.decode("utf-8-sig")
    lines = source.splitlines(keepends=True)
    if "lines" in args and page.lesson.cells:
        return page.fail(
            f"{EXAMPLE_FILE} has cells: place one with {{{{ cell NAME }}}} rather than lines="
            f"{args['lines'][0]}, whose lines shift when a line is added above them"
        )
    if "lines" not in args:
        page.whole_example_shown = True
        return _example_figure(page, lines, 1, len(lines), "example")
    part = line_range(args["lines"][0], len(lines), page, "example")
    if part is None:
        return ""
    hidden = page.reveals and not page.revealing  # a lab's exercise: the file is its answer
    figure = _example_figure(page, lines[part], part.start + 1, len(lines), "example", hidden)
    if page.whole_example_shown or hidden:
        return figure
    page.whole_example_shown = True
    whole = _example_figure(page, lines, 1, len(lines), "example-file")
    return macro("example_whole", figure, EXAMPLE_FILE, len(lines), whole)


def _example_figure(
    page: PageEnv, lines: list[str], first: int, total: int, kind: str, hidden: bool = False
) -> str:
    """The lines, numbered, captioned with where they are in the file and a link that
    downloads it (none when `hidden`: the file holds a lab's answer)."""
    last = first + len(lines) - 1
    where = "" if (first, last) == (1, total) else f", lines {first}–{last} of {total}"
    numbers = "\n".join(str(n) for n in range(first, last + 1))
    code = scrollable(python_code(page, "".join(lines)), page.region(f"{EXAMPLE_FILE}{where}"))
    download = "" if hidden else page.href(EXAMPLE_FILE, authored=True)
    if kind == "example":  # not the whole file under a slice: folded, it is not searched
        page.findable("".join(lines))
    return macro("example_figure", kind, EXAMPLE_FILE, where, numbers, code, download)


def python_code(page: PageEnv, code: str) -> str:
    """Highlighted code with every line kept: Pygments drops leading and trailing blank
    lines (its `stripnl`), which would shift the line numbers beside them."""
    core = code.strip("\n")
    if not core:
        return page.highlight(code, "")
    block = page.highlight(core + "\n", "python")
    lead = "\n" * (len(code) - len(code.lstrip("\n")))
    trail = "\n" * (len(code) - len(code.rstrip("\n")) - 1)
    head, end = block.split("<code>", 1)
    body = Markup(end.removesuffix("</code></pre>"))
    return Markup("%s<code>%s%s%s</code></pre>") % (Markup(head), lead, body, trail)


def _output(page: PageEnv, args: Args) -> str:
    recording = page.recording
    if recording is None:
        return macro("not_recorded", "Output")
    whole = page.shown_lines()
    if "cell" in args:
        run = cell_run(recording, args["cell"][0])
        if run is None:
            return page.fail(f"output cell={args['cell'][0]!r}: no cell of that name ran")
        whole = terminal_lines(recording.stdout[run.start : run.end])
    elif "lines" in args and recording.cells is not None:
        return page.fail(
            f"output lines={args['lines'][0]}: {EXAMPLE_FILE} has cells, and these lines move "
            "when an earlier cell prints more; write cell=NAME lines=... (numbered in the cell)"
        )
    lines: list[str] | None = whole
    if "lines" in args:
        part = line_range(args["lines"][0], len(whole), page, "output")
        lines = whole[part] if part else None
    if lines is not None and ("from" in args or "to" in args):
        lines = _marked_block(lines, args, page)
    if lines is None:  # one failed slice is one error, not a cascade of them
        lines = []
    elif "match" in args:
        pattern = search_pattern(args["match"][0], page, lines)
        lines = [line for line in lines if pattern and pattern.search(line)]
        if pattern and not lines:
            page.error(f"output match={args['match'][0]!r} matches no line of the recorded output")
    page.outputs += 1  # regions of one page need names of their own (axe: landmark-unique)
    name = page.region("Recorded output" + (f" ({page.outputs})" if page.outputs > 1 else ""))
    shown = clean_output("".join(lines))
    page.place("output", "recorded output", shown)
    page.findable(shown)
    if page.lesson.cells:  # the page's one caption is its first cell's: named, not captioned
        return macro("output_figure", "", shown, f"{name} · {provenance(recording)}")
    return macro("output_figure", provenance(recording), shown, name)


def cell_run(recording: Recording, name: str) -> CellRun | None:
    """What the cell `name` recorded, if it ran."""
    return next((run for run in recording.cells or () if run.name == name), None)


def _marked_block(lines: list[str], args: Args, page: PageEnv) -> list[str] | None:
    """The lines from the first one matching `from=` through the first later one matching
    `to=`, both included: a slice that follows the markers the example prints when a
    re-record adds or removes lines around them. Without `from=` the block starts at the
    first line; without `to=` it runs to the last."""
    start = 0
    if "from" in args:
        pattern = search_pattern(args["from"][0], page, lines)
        if pattern is None:
            return None
        found = next((n for n, line in enumerate(lines) if pattern.search(line)), None)
        if found is None:
            page.error(f"output from={args['from'][0]!r} matches no line of the recorded output")
            return None
        start = found
    if "to" not in args:
        return lines[start:]
    pattern = search_pattern(args["to"][0], page, lines)
    if pattern is None:
        return None
    after = start + 1 if "from" in args else 0
    end = next((n for n in range(after, len(lines)) if pattern.search(lines[n])), None)
    if end is None:
        where = f" after the line from= matched ({lines[start].strip()!r})" if after else ""
        page.error(f"output to={args['to'][0]!r} matches no line of the recorded output{where}")
        return None
    return lines[start : end + 1]


def _panel(page: PageEnv, args: Args) -> str:
    numbers = args.get("", [])
    if len(numbers) != 1 or not numbers[0].isdigit():
        return page.fail("{{ panel N }} needs one panel number, 1-based")
    return panel_figures(page, [int(numbers[0])])


def _panels(page: PageEnv, args: Args) -> str:
    count = len(page.recording.panels) if page.recording else 0
    return panel_figures(page, list(range(1, count + 1)))


def panel_figures(page: PageEnv, numbers: list[int]) -> str:
    recording = page.recording
    if recording is None:
        return macro("not_recorded", "Chart")
    out = []
    for number in numbers:
        if not 1 <= number <= len(recording.panels):
            out.append(
                page.fail(f"panel {number}: the recording has {len(recording.panels)} panel(s)")
            )
            continue
        page.placed_panels.append(number)
        page.placed.append(panel_placed(recording, number, page.section[0]))
        page.findable(recording.panels[number - 1].title)
        out.append(figure_html(recording, number, page.root, page.size, page.moved))
    return "".join(grids(recording, numbers, out))


def grids(recording: Recording, numbers: list[int], shown: Sequence[str]) -> list[str]:
    """The figures `shown` of panels `numbers`, those of one captured matplotlib figure of
    several columns in a grid as the figure had them (one column on a phone)."""
    out: list[str] = []
    group: list[str] = []
    for index, (number, html) in enumerate(zip(numbers, shown, strict=False)):
        axes = recording.panels[number - 1].axes if 1 <= number <= len(recording.panels) else None
        group.append(html)
        following = numbers[index + 1] if index + 1 < len(numbers) else 0
        later = recording.panels[following - 1].axes if following else None
        if axes and later and later.figure == axes.figure:
            continue
        columns = min(axes.columns, 3) if axes else 1
        out.append(macro("panel_grid", columns, group) if columns > 1 else "".join(group))
        group = []
    return out


def panel_placed(recording: Recording, number: int, section: str) -> Placed:
    """Panel `number` as a page shows it, under the heading `section`."""
    shown = panel_shown(recording.panels[number - 1])
    return Placed("panel", section, f"panel-{number}", f"panel {number}", shown, panel=number)


REVEAL_SUMMARY = "Show the solution and the recorded answer"


def _reveal(page: PageEnv, args: Args) -> str:
    """`{{ reveal }}` ... `{{ reveal end }}`: what follows, up to the end mark or the end of
    the page, folded into a <details> the reader opens (a lab's solution and its recorded
    answer, under the exercise); `summary="..."` names the button."""
    words = args.get("", [])
    closing = "</details>\n" if page.revealing else ""
    if words == ["end"]:
        if not page.revealing:
            return page.fail("{{ reveal end }} without a {{ reveal }} before it")
        page.revealing = False
        return "" if page.moved else closing
    if words:
        return page.fail(f'{{{{ reveal }}}} takes summary="..." or end, not {" ".join(words)}')
    page.revealing = True
    summary = args.get("summary", [REVEAL_SUMMARY])[0]
    page.read.append(summary)  # not searched: the whole fold is not
    if page.moved:  # what it holds is put apart (prose.render_prose): no fold
        return ""
    opened = '%s<details class="reveal" data-pagefind-ignore="all"><summary>%s</summary>\n'
    return Markup(opened) % (Markup(closing), summary)  # searched, it would tell the answer


BLOCKS = MappingProxyType(
    {
        "example": _example,
        "output": _output,
        "panel": _panel,
        "panels": _panels,
        "reveal": _reveal,
    }
)


def search_pattern(text: str, page: PageEnv, searched: str | list[str]) -> Any:
    """The pattern `text`, bounded (builder/render/bounded.py), to search `searched`, which counts
    against the page's budget; None, and said why, if it cannot be."""
    before = page.searched
    page.searched += len(searched) if isinstance(searched, str) else sum(map(len, searched))
    if page.searched > MAX_SEARCHED:
        if before <= MAX_SEARCHED:  # said once: the later references are not searched
            page.error(
                f"regex {text!r}: the references on this page search over "
                f"{MAX_SEARCHED // 2**20} MiB of recorded output in all; quote less of it"
            )
        return None
    try:
        return compile_pattern(text)
    except ValueError as error:
        page.error(f"regex {text!r}: {error}")
        return None
