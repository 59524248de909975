"""`python -m builder rehearse LOCKFILE`: what another lock file (the next JAX) would change,
said before anyone takes it (docs/recordings.md, The next JAX, rehearsed).

    lock         read through the input door and checked line by line before anything is
                 made (builder/review/lock.py: a lock is code, and pip reads more than packages)
    environment  a side virtual environment from LOCKFILE under .cache/rehearse/<digest>/,
                 reused, never half-made; packages LOCKFILE does not name come from this
                 checkout's environment
    record       every lesson, run by the side interpreter, into the rehearsal's own
                 recordings (seeded with the committed ones: a lesson that fails keeps its
                 old recording and says so)
    render       the site from those recordings, by the side interpreter, as an example
                 runs (a clean environment; in the sandbox with --sandbox)
    report       per lesson same / timing only / changed / failed, against the committed
                 recordings, with the prose references, `check passed:` lines and pages
                 that would change; text, Markdown or JSON, as `diff` has

The checkout's `recordings/`, `site/` and lock files are only read. The rehearsal's folder
is claimed with a marker (fsutil.claim) before anything is written, and only inside a
folder holding it is the old `recordings/` deleted.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..core.errors import BuildError
from ..core.fsutil import claim, write_atomic
from ..core.scratch import scratch
from ..run.environment import PASS_THROUGH, clean_environment
from ..run.execute import Execution, Limits, Runner, course_runner, run_example, sandboxes
from ..run.leaks import builder_secrets, redact
from ..run.sandbox import needed_by, sandboxed
from . import git as revision
from .changes import CourseChanges, PageMark, _camel, compare
from .lock import Lock, read_lock
from .moves import environment_moved

CHECK_LINE = re.compile(r"^.*\bcheck passed:.*$", re.MULTILINE)
MARKER = ".coursebuilder-rehearsal"  # in the rehearsal's folder: made by a rehearsal
INSTALL_TIMEOUT = 1800.0  # seconds for pip to install a lock
TAIL_LINES = 6  # of a failed example's stderr, in the report
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Failure:
    lesson_id: str
    outcome: str
    detail: str
    tail: tuple[str, ...]  # the end of its stderr (the traceback's last lines)


@dataclass(frozen=True)
class Reference:
    """A recorded thing a page shows that the rehearsal changes or cannot resolve."""

    lesson_id: str
    page: str
    section: str
    what: str
    old: str
    new: str


@dataclass(frozen=True)
class Rehearsal:
    lock: str
    digest: str
    versions: tuple[tuple[str, str, str], ...]  # (package, pinned, rehearsed) that differ
    lessons: tuple[tuple[str, str], ...]  # (lesson id, same|timing|changed|failed|...)
    failures: tuple[Failure, ...]
    references: tuple[Reference, ...]  # prose values and figures showing another value
    unresolved: tuple[Reference, ...]  # references the rehearsal recording cannot resolve
    checks_gone: tuple[tuple[str, str], ...]  # (lesson id, a `check passed:` line)
    pages: tuple[str, ...]  # pages whose recorded text would change (beyond timings)
    recordings: str
    site: str
    site_problem: str
    changes: CourseChanges

    def to_dict(self) -> dict[str, object]:
        camel: dict[str, object] = _camel(asdict(self))
        return camel


# -- the side environment ------------------------------------------------------------------

# Of the builder's environment, what pip gets besides a clean one: where your mirror, proxy
# and certificates are (`PIP_*` too). pip builds a source package the lock names with it.
FOR_PIP = (
    "HOME",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)
FALLBACK = "zz-builder-rehearse-fallback.pth"


def side_environment(lock: Lock, home: Path) -> Path:
    """The interpreter of the side environment made from `lock` under `home` (made once and
    reused: its `.installed` mark is written last, so a half-made one is made again);
    raises BuildError saying why when the lock cannot be installed. Nothing of the side
    environment runs here: pip installs it, and its interpreter runs only as examples do."""
    venv = home / "venv"
    python = venv / "bin" / "python"
    if not venv.is_symlink() and (venv / ".installed").is_file() and python.exists():
        logger.info("Side environment: %s (reused)", venv)
        return python
    _remove(venv)
    home.mkdir(parents=True, exist_ok=True)
    logger.info("Side environment: installing %s into %s ...", lock.path, venv)
    try:
        _run([sys.executable, "-m", "venv", str(venv)], lock.path, "create a virtual environment")
        write_atomic(home / "lock.txt", lock.text.encode(), root=home)  # what was checked
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        _run([*pip, "-r", str(home / "lock.txt")], lock.path, "install it")
        _fall_back(venv)
        write_atomic(venv / ".installed", f"{lock.digest}\n".encode(), root=venv)
    except BaseException:
        _remove(venv)  # half-made: never reused
        raise
    return python


def _fall_back(venv: Path) -> None:
    """What the lock does not name (the builder's own packages, for a lock of a few pins)
    comes from this checkout's environment, after the side environment's own packages. Its
    package folder is found as `venv` made it, never by starting its interpreter (a `.pth`
    the lock installed would run here)."""
    where = {"base": str(venv), "platbase": str(venv)}
    purelib = Path(sysconfig.get_path("purelib", "venv", where))
    fallback = "".join(f"{path}\n" for path in site.getsitepackages())
    write_atomic(purelib / FALLBACK, fallback.encode(), root=venv)


def pip_environment() -> dict[str, str]:
    """pip's environment: a clean one (as an example's: PATH, the locale) and FOR_PIP."""
    env = {name: os.environ[name] for name in PASS_THROUGH if name in os.environ}
    env |= {name: value for name, value in os.environ.items() if name.startswith("PIP_")}
    env |= {name: os.environ[name] for name in FOR_PIP if name in os.environ}
    return env | {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}


def _run(command: list[str], lock: Path, what: str) -> None:
    env = pip_environment()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=INSTALL_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise BuildError(
            f"cannot be installed: `{' '.join(command[:4])} ...` did not finish in "
            f"{INSTALL_TIMEOUT:g} s",
            path=lock,
            hint="recordings/, site/ and requirements.lock are untouched; check the network",
        ) from None
    if done.returncode != 0:
        raise BuildError(
            f"cannot be installed: could not {what} (exit {done.returncode}): "
            f"{_last_line(done.stderr or done.stdout, env)}",
            path=lock,
            hint="fix the lock file (pip install -r LOCK shows the whole error); "
            "recordings/, site/ and requirements.lock are untouched",
        )
    logger.info("  %s: done", what)


def _last_line(text: str, env: dict[str, str]) -> str:
    """The last line of what a process of the rehearsal said, the builder's secrets masked
    (builder/run/leaks.py, as an example's stderr is)."""
    last = [line for line in text.splitlines() if line.strip()]
    return redact(last[-1], builder_secrets(env)) if last else ""


def side_runner(python: Path, runner: Runner = run_example) -> Runner:
    """The runner that runs each example with the side environment's interpreter."""

    def run(lesson: object, limits: Limits) -> Execution:
        return runner(lesson, replace(limits, python=str(python)))  # type: ignore[arg-type]

    return run


# -- the rehearsal -------------------------------------------------------------------------


def rehearse(
    lock: Path,
    content: Path,
    recordings: Path,
    cache: Path,
    *,
    out: Path | None = None,
    jobs: int = 1,
    runner: Runner = run_example,
) -> Rehearsal:
    from ..course.load import load_course
    from ..run.batch import record

    checked = read_lock(lock, content.absolute().parent)  # refused before anything is made
    home = (cache / "rehearse" / checked.digest[:16]).absolute()  # examples run elsewhere
    folder = (out or home).absolute()
    _refuse_checkout_folders(folder, recordings, content)
    _unlink(home.parent, home)  # the cache's own folders: a link there is not followed
    claim(home, MARKER, "a rehearsal", adopt=True)  # the cache's own, made before markers
    claim(folder, MARKER, "a rehearsal")
    _unlink(folder / "site", folder / "cache")
    course = load_course(content)
    runner = course_runner(runner, course.meta.sandbox)  # refused before installing anything
    python = side_environment(checked, home)
    side_recordings, side_site = folder / "recordings", folder / "site"
    _seed(recordings, side_recordings)
    logger.info("Recording %d lesson(s) into %s ...", len(course.lessons), side_recordings)
    report = record(
        list(course.lessons),
        side_recordings,
        jobs=jobs,
        runner=side_runner(python, runner),
    )
    failures = tuple(_failure(x) for x in report.failures)
    problem = _render(python, content.absolute(), folder, sandboxes(runner))
    side = (side_recordings, side_site)
    return _report(lock, checked.digest, content, recordings, *side, failures, problem)


def _refuse_checkout_folders(folder: Path, recordings: Path, content: Path) -> None:
    """The rehearsal's folder is its own: never the course, the recordings or site/."""
    mine = folder.resolve()
    for theirs in (recordings.resolve(), content.resolve(), Path("site").resolve()):
        if mine == theirs or theirs.is_relative_to(mine) or mine.is_relative_to(theirs):
            raise BuildError(
                f"the rehearsal's folder {folder} overlaps {theirs}",
                hint="give --out a folder of its own (the default is under .cache/rehearse/)",
            )


def _remove(path: Path) -> None:
    """The folder `path` inside a folder the rehearsal claimed, gone: a link there is
    deleted, never what it points to (shutil.rmtree follows no link below it either)."""
    if path.is_symlink():
        path.unlink()
    shutil.rmtree(path, ignore_errors=True)


def _unlink(*paths: Path) -> None:
    """Each of `paths` (the rehearsal's own folders) that is a link, deleted (not what it
    points to): the rehearsal then makes a real folder there."""
    for path in paths:
        if path.is_symlink():
            path.unlink()


def _seed(recordings: Path, side: Path) -> None:
    """The committed recordings, copied: a lesson that fails in the rehearsal keeps its."""
    _remove(side)
    side.mkdir(parents=True)
    for name, data in revision.json_files(recordings, None).items():
        (side / f"{name}.json").write_bytes(data)


def _failure(execution: Execution) -> Failure:
    tail = tuple(execution.stderr.rstrip().splitlines()[-TAIL_LINES:])
    return Failure(execution.lesson_id, str(execution.outcome), execution.detail, tail)


def _render(python: Path, content: Path, folder: Path, sandbox: bool) -> str:
    """The rehearsal's site (`folder`/site), rendered by the side interpreter (so its versions
    are the recordings' and no page says it is stale) as an example runs: with a clean
    environment, and in the sandbox when the examples were (`folder` writable, its
    recordings and the side environment not); what went wrong, or ""."""
    recordings, venv = folder / "recordings", python.parent.parent
    command = [str(python), "-m", "builder", "render", "--content", str(content)]
    command += ["--recordings", str(recordings), "--out", str(folder / "site")]
    command += ["--cache", str(folder / "cache")]
    logger.info("Rendering the rehearsal's site into %s ...", folder / "site")
    with scratch("rehearse-render") as temp:
        env = clean_environment(temp)
        needed = (*needed_by(str(python)), content)
        kept = (recordings, venv)
        wrap = sandboxed(temp, needed, writable=(folder,), read_only=kept) if sandbox else []
        done = subprocess.run(
            [*wrap, *command],
            capture_output=True,
            text=True,
            errors="replace",
            env=env,
            cwd=temp,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode == 0:
        return ""
    last = _last_line(done.stderr, env).removeprefix("error: ")
    return last or f"render exited {done.returncode}"


def _report(
    lock: Path,
    digest: str,
    content: Path,
    recordings: Path,
    side_recordings: Path,
    side_site: Path,
    failures: tuple[Failure, ...],
    site_problem: str,
) -> Rehearsal:
    from .diff import with_pages

    old = revision.json_files(recordings, None)
    new = revision.json_files(side_recordings, None)
    failed = {f.lesson_id for f in failures}
    new = {k: v for k, v in new.items() if k not in failed} | {
        k: old[k] for k in failed if k in old
    }
    changes = compare(old, new, str(recordings), f"rehearsal of {lock.name}", environment=False)
    changes = with_pages(changes, content, None, old, new)
    categories = {x.lesson_id: x.category for x in changes.lessons}
    lessons = tuple(
        (i, "failed" if i in failed else categories.get(i, "same")) for i in sorted(old | new)
    )
    marks = [(x.lesson_id, m) for x in changes.lessons for m in x.pages if not m.timing]
    return Rehearsal(
        lock=str(lock),
        digest=digest,
        versions=tuple(x[:3] for x in environment_moved(old, new)),
        lessons=lessons,
        failures=failures,
        references=tuple(_reference(i, m) for i, m in marks if m.kind != "broken"),
        unresolved=tuple(_reference(i, m) for i, m in marks if m.kind == "broken"),
        checks_gone=_checks_gone(old, new),
        pages=tuple(sorted({m.page for _, m in marks})),
        recordings=str(side_recordings),
        site=str(side_site),
        site_problem=site_problem,
        changes=changes,
    )


def _reference(lesson_id: str, mark: PageMark) -> Reference:
    return Reference(lesson_id, mark.page, mark.section, mark.what, mark.old, mark.new)


def _checks_gone(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[tuple[str, str], ...]:
    gone = []
    for lesson_id in sorted(old):
        before = CHECK_LINE.findall(_stdout(old[lesson_id]))
        after = set(CHECK_LINE.findall(_stdout(new.get(lesson_id, b""))))
        gone += [(lesson_id, line.strip()) for line in before if line not in after]
    return tuple(gone)


def _stdout(data: bytes) -> str:
    try:
        stdout = json.loads(data)["stdout"]
    except (ValueError, KeyError, TypeError):
        return ""
    return stdout if isinstance(stdout, str) else ""


# -- the report ----------------------------------------------------------------------------
