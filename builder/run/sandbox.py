"""`--sandbox`: each example inside bubblewrap (bwrap), where it is installed.

The example sees the host read-only (`--ro-bind / /`), an empty /tmp, its scratch folder
writable, a fresh /dev and /proc (its own pid namespace: it cannot see the builder's
processes, their environment or working folder), and no network (`--unshare-net`: only a
loopback interface of its own). bwrap dies with the supervisor that started it
(`--die-with-parent`), and when it ends, the kernel ends everything left in its pid
namespace.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ..core.errors import BuildError
from ..core.observe import BUILDER

BWRAP = "bwrap"
NEEDED = (BUILDER.parent, Path(sys.prefix), Path(sys.base_prefix))  # the builder, the Python


def sandboxed(scratch: Path, needed: Iterable[Path] = NEEDED) -> list[str]:
    """The bwrap command line that runs a command in the sandbox for `scratch`. What the
    example's process needs (`needed`: the builder, the Python and its packages) and lives
    under /tmp (a CI clone, a venv there) is bound again, read-only, over the empty /tmp."""
    hidden = sorted({str(path) for path in needed if Path(path).is_relative_to("/tmp")})
    return [
        BWRAP,
        *("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"),
        *("--die-with-parent", "--new-session"),
        *("--ro-bind", "/", "/", "--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc"),
        *(arg for path in hidden for arg in ("--ro-bind", path, path)),
        *("--bind", str(scratch), str(scratch), "--chdir", str(scratch)),
        "--",
    ]


def sandbox_problem() -> str:
    """Why `--sandbox` cannot work on this machine, or ""."""
    if shutil.which(BWRAP) is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        tried = subprocess.run(
            [BWRAP, "--ro-bind", "/", "/", "--unshare-net", "--", "true"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap cannot run: {error}"
    if tried.returncode:
        return f"bwrap cannot make a sandbox here: {tried.stderr.decode(errors='replace').strip()}"
    return ""


def require_sandbox() -> None:
    """Refuse `--sandbox` with the reason and the fix, before anything runs."""
    problem = sandbox_problem()
    if problem:
        raise BuildError(
            f"--sandbox: {problem}",
            hint="install it (Debian/Ubuntu: apt-get install bubblewrap), allow unprivileged "
            "user namespaces, or run untrusted lessons in a container",
        )
