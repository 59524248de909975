"""`--sandbox`: each example inside bubblewrap (bwrap), where it is installed.

The example sees only what it needs, read-only: the system's programs and libraries
(`/usr`, `/lib*`, `/bin`, `/sbin`), a few files of `/etc` (the loader's cache, users, the
time zone; `ETC`), `/sys`, the interpreter and its packages, and the builder's package; an
empty /tmp, its scratch folder writable, a fresh /dev and /proc (its own pid namespace: it
cannot see the builder's processes, their environment or working folder), and no network
(`--unshare-net`: only a loopback interface of its own, and its own abstract Unix socket
names). Everything else of the host is not there: home folders, /run, /var, /tmp, /mnt,
the rest of the checkout. That is the rule for Unix sockets: a read-only bind does not
stop `connect()`, so no folder where a socket can live (a Docker, containerd or agent
socket under /run, /var/run, /tmp, `$XDG_RUNTIME_DIR`, a home folder, the checkout's .git)
is mounted at all. bwrap dies with the supervisor that started it (`--die-with-parent`),
and when it ends, the kernel ends everything left in its pid namespace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..core.errors import BuildError
from ..core.observe import BUILDER
from ..core.scratch import scratch
from .environment import machine_path

BWRAP = "bwrap"
# the builder's package (not the checkout around it), the Python and its packages
NEEDED = (BUILDER, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent)
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "sys")  # no sockets there
ETC = (  # what Python, numpy, jax and matplotlib read of /etc (strace), and their kin
    "alternatives",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "ld.so.preload",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "ssl",
    "timezone",
)


def sandboxed(
    scratch: Path,
    needed: Iterable[Path] = NEEDED,
    *,
    writable: Iterable[Path] = (),
    read_only: Iterable[Path] = (),
) -> list[str]:
    """The bwrap command line that runs a command in the sandbox for `scratch`: the host's
    system folders (`SYSTEM`, a link such as /bin -> usr/bin kept a link) and `ETC` files
    that exist, and what the example's process needs (`needed`, as given and resolved),
    read-only over an otherwise empty, read-only root; `scratch` and `writable` writable,
    and then `read_only` (folders inside those) read-only again."""
    return [
        shutil.which(BWRAP) or BWRAP,  # found on the builder's PATH, not the lesson's `env:`
        *("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--die-with-parent", "--new-session"),
        *(arg for name in SYSTEM for arg in _mount(Path("/", name), Path("/", name))),
        *(arg for name in ETC for arg in _mount(Path("/etc", name), Path("/etc", name))),
        *("--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"),
        *(arg for path in _needed(needed) for arg in ("--ro-bind", path, path)),
        *("--bind", str(scratch), str(scratch), "--chdir", str(scratch)),
        *(arg for path in writable for arg in ("--bind", str(path), str(path))),
        *(arg for path in read_only for arg in ("--ro-bind", str(path), str(path))),
        *("--remount-ro", "/"),  # the empty root bwrap makes: nothing is written there
        "--",
    ]


def needed_by(python: str) -> tuple[Path, ...]:
    """What a run by `python` needs mounted: NEEDED, the folders of the builder's own
    PYTHONPATH (a machine's own jax: builder/run/environment.py), and when `python` is
    another interpreter (`rehearse`'s side environment), the environment it is in
    (`<venv>/bin/python`: `<venv>`)."""
    needed = (*NEEDED, *map(Path, machine_path()))
    if not python or Path(python) == Path(sys.executable):
        return needed
    return (*needed, Path(python).absolute().parent.parent)


def _mount(source: Path, target: Path) -> list[str]:
    """Bind `source` read-only at `target`; a link is made again as the same link."""
    if source.is_symlink():
        return ["--symlink", os.readlink(source), str(target)]
    return ["--ro-bind", str(source), str(target)] if source.exists() else []


def _needed(paths: Iterable[Path]) -> list[str]:
    """Each of `paths` as given and resolved (a venv that is a link), but those inside
    another of them, parents first."""
    found = sorted({form for path in paths for form in (Path(path), Path(path).resolve())})
    kept: list[Path] = []
    for path in found:
        if path.exists() and not any(path.is_relative_to(parent) for parent in kept):
            kept.append(path)
    return [str(path) for path in kept]


def sandbox_problem() -> str:
    """Why `--sandbox` cannot work on this machine, or ""."""
    if shutil.which(BWRAP) is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        with scratch("sandbox-test") as folder:
            tried = subprocess.run(
                [*sandboxed(folder), sys.executable, "-S", "-c", ""],
                capture_output=True,
                timeout=30,
            )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap cannot run: {error}"
    if tried.returncode:
        return f"bwrap cannot make a sandbox here: {tried.stderr.decode(errors='replace').strip()}"
    return ""


def require_sandbox(asked_by: str = "--sandbox") -> None:
    """Refuse to run examples with the reason and the fix, before anything runs, where the
    sandbox `asked_by` asks for cannot work."""
    problem = sandbox_problem()
    if problem:
        raise BuildError(
            f"{asked_by}: {problem}",
            hint="install it (Debian/Ubuntu: apt-get install bubblewrap), allow unprivileged "
            "user namespaces, or run untrusted lessons in a container",
        )
