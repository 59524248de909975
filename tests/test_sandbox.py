"""`--sandbox`: examples inside bubblewrap, for real (skipped where bwrap cannot run).

In the sandbox an example cannot write to the checkout, reach the network, or see the
builder's processes; a normal example records the same bytes as without it.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.run.execute import BUILDER_ROOT, Limits, run_example, run_sandboxed
from builder.run.sandbox import NEEDED, sandbox_problem, sandboxed
from tests.test_hostile_builds import cli, write_course
from tests.test_hostile_examples import make_lesson

PROBLEM = sandbox_problem()
pytestmark = pytest.mark.skipif(bool(PROBLEM), reason=f"--sandbox cannot run here: {PROBLEM}")


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on this machine's loopback, accepting for the test's duration."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(10)

    def accept() -> None:
        try:
            connection, _ = server.accept()
            connection.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()


REACH = """\
import os, socket
try:
    open(os.environ["TARGET"], "a").write("tampered")
    print("wrote the checkout")
except OSError as error:
    print("write refused:", error.strerror)
try:
    socket.create_connection(("127.0.0.1", int(os.environ["PORT"])), timeout=5).close()
    print("connected")
except OSError as error:
    print("network refused:", error.strerror)
print("builders:", sum(1 for p in os.listdir("/proc") if p.isdigit()
                       and b"builder.run.supervise" in open(f"/proc/{p}/cmdline", "rb").read()))
"""


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
def test_in_the_sandbox_the_checkout_is_read_only_and_the_network_gone(
    tmp_path: Path, listener: int, sandbox: bool
) -> None:
    """Without the sandbox all three work (that is what the test would catch); inside it
    the write fails, the connection is refused and the builder's processes are not there."""
    # The checkout itself in the sandbox (a write there would show in git status); a file
    # of the test's own without it: /tmp is an empty tmpfs inside the sandbox.
    target = BUILDER_ROOT / "recordings" / "sandbox-probe.txt" if sandbox else tmp_path / "t"
    lesson = make_lesson(tmp_path, REACH, env={"TARGET": str(target), "PORT": str(listener)})
    runner = run_sandboxed if sandbox else run_example
    try:
        execution = runner(lesson, Limits(timeout=60))
        created = target.exists()
    finally:
        target.unlink(missing_ok=True)
    assert execution.ok, execution
    [write, network, supervisors] = execution.stdout.splitlines()
    if sandbox:
        assert write == "write refused: Read-only file system"
        assert not created
        assert network.startswith("network refused:")
        assert supervisors == "builders: 0"
    else:
        assert write == "wrote the checkout"
        assert network == "connected"
        assert supervisors != "builders: 0"


@pytest.mark.slow
def test_a_normal_example_records_the_same_bytes_in_the_sandbox(tmp_path: Path) -> None:
    """The same course recorded with and without --sandbox: the recordings are equal
    except for generatedAt."""
    source = (
        "import jax.numpy as jnp\nfrom builder import panels\n"
        "x = jnp.arange(4.0)\nprint('sum', float(x.sum()))\n"
        "panels.bar('t', labels=['a', 'b'], ylabel='u', series={'s': [1, 2]})\n"
    )
    recorded = []
    for flag in ([], ["--sandbox"]):
        root = tmp_path / ("sandbox" if flag else "plain")
        write_course(root, {"calm-01": source})
        done = subprocess.run(
            cli(root, "record", *flag), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        raw = json.loads((root / "recordings" / "calm-01.json").read_text())
        del raw["generatedAt"]
        recorded.append(raw)
    assert recorded[0] == recorded[1]
    assert recorded[1]["stdout"] == "sum 6.0\n"


def test_what_the_example_needs_under_tmp_is_not_hidden_by_the_empty_tmp(tmp_path: Path) -> None:
    """A CI clone (or its venv) under /tmp: the sandbox's empty /tmp must not hide the
    builder or the interpreter's packages from the example (it did: "bwrap: execvp
    /tmp/clone/.venv/bin/python: No such file or directory")."""
    assert tmp_path.is_relative_to("/tmp"), "pytest's tmp_path is under /tmp here"
    tools, scratch, other = tmp_path / "checkout", tmp_path / "scratch", tmp_path / "other"
    for folder in (tools, scratch, other):
        folder.mkdir()
    (tools / "tool.py").write_text("print('the checkout is here')\n")
    (other / "secret.txt").write_text("not needed, not shown\n")
    command = sandboxed(scratch, needed=[tools, *NEEDED])  # NEEDED: a CI clone under /tmp
    done = subprocess.run(
        [*command, sys.executable, "-S", str(tools / "tool.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the checkout is here\n"
    hidden = subprocess.run(
        [*command, sys.executable, "-S", "-c", f"open({str(other / 'secret.txt')!r})"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert hidden.returncode != 0 and "No such file" in hidden.stderr
