"""`--sandbox`: examples inside bubblewrap, for real (skipped where bwrap cannot run).

In the sandbox an example cannot write to the checkout, reach the network, or see the
builder's processes; a normal example records the same bytes as without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder.run.environment import BUILDER_ROOT
from builder.run.execute import Limits, run_example, run_sandboxed
from builder.run.sandbox import NEEDED, sandbox_problem, sandboxed
from tests.helpers import cli, make_lesson, write_course

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
                       and b"builder/run/supervise.py" in open(f"/proc/{p}/cmdline", "rb").read()))
"""


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
def test_in_the_sandbox_the_checkout_is_read_only_and_the_network_gone(
    tmp_path: Path, listener: int, sandbox: bool
) -> None:
    """Without the sandbox all three work (that is what the test would catch); inside it
    the write fails, the connection is refused and the builder's processes are not there."""
    # The builder's package in the sandbox (a write there would show in git status); a file
    # of the test's own without it: /tmp is an empty tmpfs inside the sandbox.
    target = BUILDER_ROOT / "builder" / "sandbox-probe.txt" if sandbox else tmp_path / "t"
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


def _unix_server(address: str | bytes) -> socket.socket:
    """A Unix socket of the host listening at `address`, answering each caller "host"."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(address)
    server.listen()
    server.settimeout(10)

    def answer() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                connection.sendall(b"host")
                connection.close()

    threading.Thread(target=answer, daemon=True).start()
    return server


@pytest.fixture(params=["/var/tmp", "/run", "beside the checkout", "in the checkout"])
def unix_socket(request: pytest.FixtureRequest) -> Iterator[str]:
    """A listening Unix socket in a folder of the host where sockets live (a Docker or
    agent socket under /run, /var/run, /tmp, a home folder, the checkout's .git)."""
    parents = {"beside the checkout": BUILDER_ROOT.parent, "in the checkout": BUILDER_ROOT}
    parent = parents.get(request.param, Path(request.param))
    if not os.access(parent, os.W_OK):
        pytest.skip(f"{parent} is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="sock-", dir=parent))
    server = _unix_server(str(folder / "agent.sock"))
    try:
        yield str(folder / "agent.sock")
    finally:
        server.close()
        shutil.rmtree(folder)


CONNECT = """\
import os, socket
with socket.socket(socket.AF_UNIX) as client:
    try:
        client.connect(os.environ["SOCKET"].encode().replace(b"@", b"\\0", 1))
        print("connected:", client.recv(4).decode())
    except OSError as error:
        print("refused:", error.strerror)
"""


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
def test_no_unix_socket_of_the_host_is_reachable_from_the_sandbox(
    tmp_path: Path, unix_socket: str, sandbox: bool
) -> None:
    """Issue 25: a read-only bind does not stop connect(), so with `--ro-bind / /` an
    example reached every socket of the host outside /tmp (a Docker or containerd socket
    is an escape). The folders where sockets live are not in the sandbox at all."""
    lesson = make_lesson(tmp_path, CONNECT, env={"SOCKET": unix_socket})
    execution = (run_sandboxed if sandbox else run_example)(lesson, Limits(timeout=60))
    assert execution.ok, execution
    if sandbox:
        assert execution.stdout == "refused: No such file or directory\n"
    else:
        assert execution.stdout == "connected: host\n"


def test_an_abstract_unix_socket_of_the_host_is_not_reachable(tmp_path: Path) -> None:
    """Abstract names (no file) belong to the network namespace: --unshare-net cuts them."""
    name = f"@course-test-{os.getpid()}"
    server = _unix_server(b"\0" + name[1:].encode())
    try:
        lesson = make_lesson(tmp_path, CONNECT, env={"SOCKET": name})
        plain = run_example(lesson, Limits(timeout=60))
        sandboxed_run = run_sandboxed(lesson, Limits(timeout=60))
    finally:
        server.close()
    assert plain.stdout == "connected: host\n"
    assert sandboxed_run.stdout == "refused: Connection refused\n"


def test_a_lessons_path_does_not_choose_the_sandbox(tmp_path: Path) -> None:
    """`bwrap` was looked up on the lesson's `env: {PATH: ...}`, by the supervisor: a PATH
    without it failed the run as a killed supervisor, and a PATH with a `bwrap` of the
    lesson's own would have run the example outside any sandbox."""
    lesson = make_lesson(tmp_path, "print('ran')\n", env={"PATH": str(tmp_path)})
    execution = run_sandboxed(lesson, Limits(timeout=60))
    assert execution.ok, execution
    assert execution.stdout == "ran\n"
