"""python -m builder site | record | check | render | serve | diff | rehearse | validate | schema

Errors the user can fix are printed as one message, without a traceback, and exit 1.
Heavy modules (jinja2, markdown-it, matplotlib, jax) are imported only by the commands
that need them: `check` reads hashes and nothing else.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from .core.errors import BuildError
from .core.escape import one_line, terminal_streams

if TYPE_CHECKING:
    from .core.observe import Paths
    from .run.execute import Runner
    from .run.shard import Shard

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM
DIFF_FORMATS = ("text", "markdown", "json")
# Every number the command line takes is bounded here, at parse time: a wrong one is a usage
# line naming the option and the range, never an OverflowError or a MemoryError later on.
MAX_JOBS = max(256, os.cpu_count() or 1)  # more processes at once than this is a mistake
PORTS = (0, 65535)  # 0: any free port (the preview prints the one it got)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `kill`): handled as Ctrl-C is, everywhere it is."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    """Run one command. Everything it prints goes through builder/core/escape.py's terminal
    streams: what a course holds can neither act on the terminal nor forge a CI annotation,
    and an ASCII locale shows what it cannot encode as escapes."""
    with terminal_streams():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        code: int = args.run(args)
        return code
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:
        print(_os_error(error), file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        print(
            f"\n{'terminated (SIGTERM)' if terminated else 'interrupted'}: running examples "
            "were stopped, with every process they started; finished recordings were kept "
            "and unfinished ones left as they were",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)


def _os_error(error: OSError) -> str:
    """An OSError no command turned into a BuildError, in one line and a next step: the
    disk is blamed only when a file is named."""
    if error.filename:  # a file the builder could not read or write
        return (
            f"error: {one_line(str(error.filename))}: {error.strerror or error}\n"
            "  -> check that the path exists, that you may read and write it, and that the "
            "disk is not full"
        )
    return (
        f"error: {error.strerror or error} ({type(error).__name__}, no file involved)\n"
        "  -> run the command again; if it fails the same way, report it with the command"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m builder", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    site = _command(commands, "site", _site, "re-record what is not fresh, then render site/")
    site.add_argument(
        "--no-execute",
        action="store_true",
        help="render from recordings only; pages that are not fresh say so",
    )
    _jobs(site)
    _dask(site)
    site.add_argument(
        "--force",
        action="store_true",
        help="re-record every lesson (with --no-execute: read every input again, trusting no "
        "file metadata)",
    )
    _since(site)
    record = _command(commands, "record", _record, "re-execute what is not fresh")
    _jobs(record)
    _dask(record)
    record.add_argument(
        "--shard",
        metavar="K/N",
        type=_shard,
        help="record only the K-th of N parts of what is due, balanced by the last run times "
        "(a CI matrix of N jobs; merge their recordings/ folders by copying the files)",
    )
    record.add_argument("--force", action="store_true", help="re-record every lesson")
    record.add_argument("lessons", nargs="*", help="only these lesson ids or slugs")
    check = _command(
        commands,
        "check",
        _check,
        "exit 1 with a table when any recording is not fresh; executes nothing",
    )
    check.add_argument(
        "--format",
        choices=("table", "json", "github"),  # builder.course.verdict.FORMATS
        default="table",
        help="table (default), json (every lesson's state), or github (one ::error annotation "
        "per lesson that is not fresh, for GitHub Actions)",
    )
    check.add_argument(
        "--json", dest="format", action="store_const", const="json", help="same as --format json"
    )
    _diff_command(commands)
    _rehearse_command(commands)
    render = _command(commands, "render", _site, "render site/ from recordings only")
    _jobs(render, sandbox=False)
    _since(render)
    render.add_argument(
        "--force",
        action="store_true",
        help="read every input again, trusting no file metadata (the last build's index)",
    )
    # What `site` asks that `render` never does: the same function runs both.
    render.set_defaults(no_execute=True, dask=None, sandbox=False)
    serve = _command(
        commands, "serve", _serve, "serve site/ locally; rebuild and reload the browser on change"
    )
    serve.add_argument(
        "--port",
        type=_number(*PORTS),
        default=8000,
        help="port on 127.0.0.1 (default 8000; 0: any free port)",
    )
    serve.add_argument(
        "--no-execute", action="store_true", help="only re-render; never run examples"
    )
    _jobs(serve, sandbox=False)
    validate = commands.add_parser("validate", help="validate recording files against the schema")
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE")
    validate.set_defaults(run=_validate)
    schema = commands.add_parser("schema", help="print the recording JSON Schema")
    schema.add_argument("--out", type=Path, help="write it to this file instead")
    schema.add_argument(
        "--dir",
        type=Path,
        help="write every schema (recording, front matter, course.yml, glossary.yml) into DIR",
    )
    schema.set_defaults(run=_schema)
    return parser


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, run: object, text: str
) -> argparse.ArgumentParser:
    command = commands.add_parser(name, help=text, description=text)
    _folders(command, "content", "recordings", "out", "cache")
    command.set_defaults(run=run)
    return command


def _diff_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "what a re-record changed between two revisions: output, panels, environment, pages"
    diff = commands.add_parser("diff", help=text, description=text)
    diff.add_argument("base", nargs="?", default="HEAD", help="a git revision (default HEAD)")
    diff.add_argument("head", nargs="?", help="a git revision (default: the work tree)")
    diff.add_argument("--format", choices=DIFF_FORMATS, default="text")
    _folders(diff, "content", "recordings")
    diff.add_argument(
        "--no-pages", action="store_true", help="do not render pages to find changed numbers"
    )
    diff.set_defaults(run=_diff)


def _rehearse_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = (
        "record and render the course in a side environment made from another lock file, "
        "and say what it would change; recordings/, site/ and the lock are only read"
    )
    rehearse = commands.add_parser("rehearse", help=text, description=text)
    rehearse.add_argument("lock", type=Path, metavar="LOCKFILE", help="the requirements to try")
    _folders(rehearse, "content", "recordings", "cache")
    rehearse.set_defaults(run=_rehearse)
    rehearse.add_argument(
        "--out",
        type=Path,
        help="the rehearsal's folder (recordings/ and site/ inside; default "
        ".cache/rehearse/<lock digest>/)",
    )
    rehearse.add_argument("--format", choices=DIFF_FORMATS, default="text")
    rehearse.add_argument("--report", type=Path, help="also write the report to this file")
    _jobs(rehearse, sandbox=False)


def _folders(command: argparse.ArgumentParser, *names: str) -> None:
    """--content, --recordings, --out, --cache: where a command reads and writes."""
    defaults = {"content": "content", "recordings": "recordings", "out": "site", "cache": ".cache"}
    for name in names:
        command.add_argument(f"--{name}", type=Path, default=Path(defaults[name]), metavar="DIR")


def _since(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--since",
        metavar="REV",
        help="also make changes/index.html: what the recordings changed since this git revision",
    )


def _jobs(command: argparse.ArgumentParser, sandbox: bool = True) -> None:
    if sandbox:
        command.add_argument(
            "--sandbox",
            action="store_true",
            help="run each example in a bubblewrap sandbox: only the system, the Python and the "
            "builder's package, read-only, its scratch folder writable, no network (needs bwrap)",
        )
    command.add_argument(
        "-j",
        "--jobs",
        type=_number(1, MAX_JOBS),
        default=os.cpu_count() or 1,
        help="examples to run, or processes rendering, at once (default: the number of cores; "
        f"at most {MAX_JOBS})",
    )


def _dask(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the examples on the dask.distributed cluster whose scheduler is at ADDRESS "
        "(tcp://HOST:PORT); recordings are written here",
    )


def _number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else one usage line naming
    the option (argparse does) and the range."""

    def parse(text: str) -> int:
        if not re.fullmatch(r"\s*[-+]?[0-9]{1,20}\s*", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low} to {high}")
        return int(text)

    parse.__name__ = "number"  # argparse names the type in some messages
    return parse


def _shard(text: str) -> Shard:
    from .run.shard import Shard

    try:
        return Shard.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _paths(args: argparse.Namespace) -> Paths:
    from .core.observe import Paths

    return Paths(args.content, args.recordings, args.out, args.cache)


def _site(args: argparse.Namespace) -> int:
    import time

    from .build.pipeline import build

    started = time.perf_counter()
    result = build(
        _paths(args),
        execute=not args.no_execute,
        jobs=args.jobs,
        force=args.force,
        since=args.since,
        runner=_runner(args),
        dask=args.dask,
    )
    seconds = time.perf_counter() - started
    print(
        f"Built {args.out}/: {result.total} files ({result.written} written, "
        f"{result.removed} removed); executed {len(result.executed)} example(s) "
        f"in {seconds:.2f} s.",
        file=sys.stderr,
    )
    return 0


def _runner(args: argparse.Namespace) -> Runner | None:
    """The sandboxed runner with --sandbox (refused at once where bwrap cannot work)."""
    if not args.sandbox:
        return None
    from .run.execute import run_sandboxed
    from .run.sandbox import require_sandbox

    require_sandbox()
    return run_sandboxed


def _serve(args: argparse.Namespace) -> int:
    import gc

    from .preview.serve import serve

    gc.enable()  # __main__ turns it off for one-shot commands; a server rebuilds for hours

    serve(_paths(args), port=args.port, execute=not args.no_execute, jobs=args.jobs)
    return 0


def _record(args: argparse.Namespace) -> int:
    from .build.pipeline import build_lock, check
    from .run.batch import record_stale

    paths = _paths(args)
    with build_lock(args.cache):
        checked = check(paths)  # the course is read and validated once
        done = record_stale(
            checked.course,
            checked.statuses,
            paths,
            args.jobs,
            force=args.force,
            runner=_runner(args),
            only=tuple(args.lessons),
            dask=args.dask,
            shard=args.shard,
        )
    print(
        f"Recorded {len(done)} lesson(s)." if done else "Nothing to record: all fresh.",
        file=sys.stderr,
    )
    return 0


def _check(args: argparse.Namespace) -> int:
    from .build.pipeline import check
    from .course.verdict import passed, say

    statuses = check(_paths(args)).statuses
    say(statuses, args.format, args.content, sys.stdout)
    return 0 if passed(statuses) else 1


def _diff(args: argparse.Namespace) -> int:
    from .review.diff import diff
    from .review.report import render

    changes = diff(args.content, args.recordings, args.base, args.head, pages=not args.no_pages)
    sys.stdout.write(render(changes, args.format))
    return 0


def _rehearse(args: argparse.Namespace) -> int:
    from .core.fsutil import write_atomic
    from .review.rehearsal_report import render
    from .review.rehearse import rehearse

    untouched = "recordings/, site/ and requirements.lock were not touched"
    try:
        rehearsal = rehearse(
            args.lock, args.content, args.recordings, args.cache, out=args.out, jobs=args.jobs
        )
    except KeyboardInterrupt as stop:
        what = "terminated (SIGTERM)" if isinstance(stop, Terminated) else "interrupted"
        print(
            f"\nrehearsal {what}: running examples were stopped with every process they "
            f"started; {untouched}; the rehearsal's own folder is left half-done",
            file=sys.stderr,
        )
        return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    report = render(rehearsal, args.format)
    if args.report:
        write_atomic(args.report, report.encode())
    sys.stdout.write(report)
    print(f"Rehearsal done; {untouched}.", file=sys.stderr)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from .course.schemas import validate_files

    return 0 if validate_files(args.files, sys.stdout) else 1


def _schema(args: argparse.Namespace) -> int:
    from .course.schemas import write_schemas

    write_schemas(args.dir, args.out, sys.stdout)
    return 0


if __name__ == "__main__":
    import gc

    # A build allocates hundreds of thousands of objects that all live until it ends: the
    # cyclic collector would walk them again and again for nothing (~10% of a build), and
    # freeing them one by one at exit costs a tenth of a second at 1,000 lessons. Nothing
    # here makes reference cycles that need collecting, and every file and pool is closed by
    # the time main() returns, so the process ends as soon as its output is flushed.
    gc.disable()
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
