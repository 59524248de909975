"""coursebuilder (or python -m builder): a course site whose every number comes from a run

Commands: site | record | check | render | serve | diff | moves | rehearse | validate | schema |
new | import.

Errors the user can fix are printed as one message, without a traceback, and exit 1.
Heavy modules (jinja2, markdown-it, matplotlib, jax) are imported only by the commands
that need them: `check` reads hashes and nothing else.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from .core.console import console
from .core.errors import BuildError, os_error_message
from .core.escape import one_line, terminal_streams
from .options import FOLDERS, OPTIONS

if TYPE_CHECKING:
    from .core.observe import Paths
    from .run.execute import Runner

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM
# Set in a shell profile or a CI job, outside any checkout: a pull request that edits
# course.yml cannot turn it off (as it can `sandbox: true`).
SANDBOX_VARIABLE = "COURSEBUILDER_SANDBOX"
STOPPED = "running examples were stopped, with every process they started"
logger = logging.getLogger("builder")  # this module is __main__ when run: named, not __name__


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `kill`): handled as Ctrl-C is, everywhere it is."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Run one command. Everything it prints goes through builder/core/escape.py's terminal
    streams: what a course holds can neither act on the terminal nor forge a CI annotation,
    and an ASCII locale shows what it cannot encode as escapes. What the builder logs is
    shown on stderr by one handler: builder/core/console.py."""
    with terminal_streams(), console(sys.stderr):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    explained = logging.INFO if getattr(args, "explain", False) else logging.WARNING
    logging.getLogger("builder.explain").setLevel(explained)  # builder.pipeline.index
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.run(args))
    except BuildError as error:
        logger.error("error: %s", error)
        return 1
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:
        logger.error("%s", os_error_message(error))
        return 1
    except KeyboardInterrupt as stop:
        return _stopped(
            stop,
            "",
            f"{STOPPED}; finished recordings were kept and unfinished ones left as they were",
        )
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stopped(stop: KeyboardInterrupt, what: str, said: str) -> int:
    """Say that `what` (the command) was interrupted or terminated, and `said`; the exit code."""
    terminated = isinstance(stop, Terminated)
    how = "terminated (SIGTERM)" if terminated else "interrupted"
    logger.error("\n%s%s: %s", what, how, said)
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    """A subcommand per row of COMMANDS: its function's docstring says what it does, and
    it takes the options the row names (OPTIONS), each with its default; and `new`."""
    from .core.release import VersionAction
    from .scaffold.new import add_new_command

    prog = "coursebuilder" if Path(sys.argv[0]).name == "coursebuilder" else "python -m builder"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--version", action=VersionAction, help="print the version and exit")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    add_new_command(commands)
    for name, run, options in COMMANDS:
        text = " ".join((run.__doc__ or "").split())
        command = commands.add_parser(name, help=text, description=text)
        for option in options:
            flags, settings = OPTIONS[option]
            command.add_argument(*flags, **settings)
        command.set_defaults(run=run)
    return parser


def _paths(args: argparse.Namespace) -> Paths:
    from .core.observe import Paths

    return Paths(args.content, args.recordings, args.out, args.cache)


def _site(args: argparse.Namespace) -> int:
    """re-record what is not fresh, then render site/"""
    return _build(args, not args.no_execute, args.force, _runner(args), args.dask)


def _render(args: argparse.Namespace) -> int:
    """render site/ from recordings only"""
    return _build(args, False, args.force, None, None)


def _build(
    args: argparse.Namespace, execute: bool, force: bool, runner: Runner | None, dask: str | None
) -> int:
    import time

    from .pipeline.build import build

    started = time.perf_counter()
    paths, jobs, since = _paths(args), args.jobs, args.since
    done = build(
        paths, execute=execute, jobs=jobs, force=force, since=since, runner=runner, dask=dask
    )
    logger.info(
        f"Built {args.out}/: {done.total} files ({done.written} written, {done.removed} "
        f"removed); executed {len(done.executed)} example(s) in "
        f"{time.perf_counter() - started:.2f} s"
        + ("; nothing changed since the last build." if done.noop else ".")
    )
    return 0


def _runner(args: argparse.Namespace) -> Runner | None:
    """The sandboxed runner with --sandbox or COURSEBUILDER_SANDBOX=1 (refused at once where
    bwrap cannot work); else None, the plain one, unless course.yml says `sandbox: true`
    (builder.run.execute.course_runner)."""
    variable = _sandbox_variable()
    if not (args.sandbox or variable):
        return None
    from .run.execute import run_sandboxed
    from .run.sandbox import require_sandbox

    require_sandbox("--sandbox" if args.sandbox else f"{SANDBOX_VARIABLE}=1")
    return run_sandboxed


def _sandbox_variable() -> bool:
    """COURSEBUILDER_SANDBOX: 1 (or true, yes, on) sandboxes, unset or empty (or 0, false,
    no, off) does not; any other value is refused rather than taken for "no": a setting
    meant to sandbox must never leave examples unsandboxed by a spelling."""
    value = os.environ.get(SANDBOX_VARIABLE, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("", "0", "false", "no", "off"):
        return False
    raise BuildError(
        f"{SANDBOX_VARIABLE}={one_line(os.environ[SANDBOX_VARIABLE])!s} is neither on nor off",
        hint=f"set {SANDBOX_VARIABLE}=1 to run every example sandboxed, or unset it",
    )


def _serve(args: argparse.Namespace) -> int:
    """serve site/ locally; rebuild and reload the browser on change"""
    import gc

    from .preview.serve import Preview, serve

    gc.enable()  # __main__ turns it off for one-shot commands; a server rebuilds for hours
    runner = _runner(args) if not args.no_execute else None
    execute, jobs = not args.no_execute, args.jobs
    serve(Preview(_paths(args), port=args.port, execute=execute, jobs=jobs, runner=runner))
    return 0


def _record(args: argparse.Namespace) -> int:
    """re-execute what is not fresh"""
    from .pipeline.build import build_lock, check
    from .run.batch import record_stale

    paths, runner, only = _paths(args), _runner(args), tuple(args.lessons)
    with build_lock(args.cache):
        checked = check(paths)  # the course is read and validated once
        course, statuses, jobs = checked.course, checked.statuses, args.jobs
        done = record_stale(
            course, statuses, paths, jobs, args.force, runner, only, args.dask, args.shard
        )
    logger.info(f"Recorded {len(done)} lesson(s)." if done else "Nothing to record: all fresh.")
    return 0


def _check(args: argparse.Namespace) -> int:
    """exit 1 with a table when any recording is not fresh; executes nothing"""
    from .course.verdict import passed, say
    from .pipeline.build import check

    statuses = check(_paths(args)).statuses
    say(statuses, args.format, args.content, sys.stdout)
    return 0 if passed(statuses) else 1


def _diff(args: argparse.Namespace) -> int:
    """what a re-record changed between two revisions: output, panels, environment, pages"""
    from .review.diff import diff
    from .review.report import render

    changes = diff(args.content, args.recordings, args.base, args.head, pages=not args.no_pages)
    sys.stdout.write(render(changes, args.format))
    return 0


def _moves(args: argparse.Namespace) -> int:
    """write content/moves/<slug>.json for each of course.yml's moves, from git (once, when a
    move is made, where git has both revisions); commit them: the site's move pages are made
    from these files, so a copy without history builds them"""
    from .review.moves import write_moves

    for path in write_moves(args.content, args.recordings):
        logger.info("Wrote %s.", path)
    return 0


def _rehearse(args: argparse.Namespace) -> int:
    """record and render the course in a side environment made from another lock file,
    and say what it would change; recordings/, site/ and the lock are only read"""
    from .core.fsutil import replaceable, write_atomic
    from .review.rehearsal_report import render
    from .review.rehearse import rehearse
    from .run.execute import run_example

    untouched = "recordings/, site/ and requirements.lock were not touched"
    if args.report:
        replaceable(args.report)  # before the work, not after it
    try:
        rehearsal = rehearse(
            *(args.lock, args.content, args.recordings, args.cache),
            out=args.out,
            jobs=args.jobs,
            runner=_runner(args) or run_example,
        )
    except KeyboardInterrupt as stop:
        half = "the rehearsal's own folder is left half-done"
        return _stopped(stop, "rehearsal ", f"{STOPPED}; {untouched}; {half}")
    report = render(rehearsal, args.format)
    if args.report:
        write_atomic(args.report, report.encode())
    sys.stdout.write(report)
    logger.info("Rehearsal done; %s.", untouched)
    return 0


def _validate(args: argparse.Namespace) -> int:
    """validate recording files against the schema"""
    from .course.schemas import validate_files

    return 0 if validate_files(args.files, sys.stdout) else 1


def _import(args: argparse.Namespace) -> int:
    """turn a Jupyter notebook (.ipynb) or a MyST Markdown notebook (.md) into a new lesson
    folder, content/lessons/ID/, with its code cells as example.py's cells; what cannot be
    carried over is listed on stderr as PAGE:LINE"""
    from .scaffold.importer import run

    return run(args)


def _schema(args: argparse.Namespace) -> int:
    """print the recording JSON Schema"""
    from .course.schemas import write_schemas

    write_schemas(args.dir, args.out, sys.stdout)
    return 0


# (name, the function that runs it, whose docstring says what it does, its options)
COMMANDS: tuple[tuple[str, Callable[[argparse.Namespace], int], tuple[str, ...]], ...] = (
    (
        "site",
        _site,
        (*FOLDERS, "no-execute", "sandbox", "jobs", "dask", "force", "since", "explain"),
    ),
    ("record", _record, (*FOLDERS, "sandbox", "jobs", "dask", "shard", "record-force", "lessons")),
    ("check", _check, (*FOLDERS, "check-format", "json")),
    ("diff", _diff, ("base", "head", "format", "content", "recordings", "no-pages")),
    ("moves", _moves, ("content", "recordings")),
    (
        "rehearse",
        _rehearse,
        (
            "lock",
            "content",
            "recordings",
            "cache",
            "rehearsal",
            "sandbox",
            "format",
            "report",
            "jobs",
        ),
    ),
    ("render", _render, (*FOLDERS, "jobs", "since", "reread", "explain")),
    ("serve", _serve, (*FOLDERS, "port", "no-execute", "sandbox", "jobs", "explain")),
    ("validate", _validate, ("files",)),
    ("schema", _schema, ("schema-out", "dir")),
    ("import", _import, ("page", "lesson-id", "slug", "arc", "order", "content")),
)


def entry() -> None:
    """The command as a process runs it, `coursebuilder` and `python -m builder` alike: the
    cyclic collector off (a build allocates hundreds of thousands of objects that all live
    until it ends, and nothing here makes cycles that need collecting; `serve` turns it back
    on, and a rendering worker collects its own), and the process ended as soon as its
    output is flushed, without freeing those objects one by one (every file and pool is
    closed by the time main() returns)."""
    import gc

    gc.disable()
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
