"""Hostile command lines: every number an option takes is bounded when it is parsed, and
what the operating system refuses (a port in use, a host that is not this machine's) is one
line naming the thing and the next step, never a traceback or a hang (issue 25, items 10-11).

The Dask side of the same family (--dask addresses) is in tests/test_distributed.py.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.core.errors import BuildError, os_error_message
from builder.core.observe import Paths
from builder.options import MAX_JOBS
from builder.preview import http
from builder.preview.serve import Preview
from builder.run.shard import MAX_SHARDS, Shard, split
from tests.helpers import copy_course, make_paths


def _nowhere(tmp_path: Path) -> list[str]:
    """Folders that hold nothing: a command that got past its arguments fails on them at
    once (exit 1) instead of building anything."""
    paths = make_paths(tmp_path / "nowhere")
    return [
        *("--content", str(paths.content), "--recordings", str(paths.recordings)),
        *("--out", str(paths.out), "--cache", str(paths.cache)),
    ]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["serve", "--port", "70000"], "argument --port: '70000' is not a whole number from 0 to"),
        (["serve", "--port", "-1"], "'-1' is not a whole number from 0 to 65535"),
        (["serve", "--port", "9" * 5000], "is not a whole number from 0 to 65535"),
        (["serve", "--port", "80a"], "'80a' is not a whole number from 0 to 65535"),
        (
            ["serve", "-j", "0"],
            f"argument -j/--jobs: '0' is not a whole number from 1 to {MAX_JOBS}",
        ),
        (["record", "-j", "0"], f"'0' is not a whole number from 1 to {MAX_JOBS}"),
        (["record", "-j", "-1"], f"'-1' is not a whole number from 1 to {MAX_JOBS}"),
        (["record", "-j", "100000"], f"'100000' is not a whole number from 1 to {MAX_JOBS}"),
        (["site", "-j", "0"], f"'0' is not a whole number from 1 to {MAX_JOBS}"),
        (["record", "--shard", "1/100000000"], f"is not K/N with 1 <= K <= N <= {MAX_SHARDS}"),
        (["record", "--shard", f"1/{'9' * 5000}"], f"is not K/N with 1 <= K <= N <= {MAX_SHARDS}"),
        (["record", "--shard", "0/3"], "'0/3' is not K/N"),
        (["record", "--shard", "3/2"], "'3/2' is not K/N"),
        (["record", "--shard", "a/b"], "'a/b' is not K/N"),
    ],
    ids=lambda value: " ".join(value)[:40] if isinstance(value, list) else None,
)
def test_a_number_out_of_range_is_one_usage_line(
    argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*argv, *_nowhere(tmp_path)])
    error = capsys.readouterr().err
    assert stop.value.code == 2, error
    assert said in error.splitlines()[-1]  # the usage, then one line naming the option
    assert "Traceback" not in error and error.count("error:") == 1


def test_the_largest_numbers_allowed_still_work(tmp_path: Path) -> None:
    """Only the bounds moved: -j MAX_JOBS and --shard N/1000 are accepted, and a shard past
    the number of lessons is empty (no part is made for it)."""
    paths = copy_course(tmp_path, broken=False)
    args = ["--content", str(paths.content), "--recordings", str(paths.recordings)]
    args += ["--out", str(paths.out), "--cache", str(paths.cache)]
    assert main(["render", *args]) == 0
    assert main(["check", *args]) == 1  # nothing recorded: parsed, ran, and said so
    assert Shard.parse(f"{MAX_SHARDS}/{MAX_SHARDS}") == Shard(MAX_SHARDS, MAX_SHARDS)


def test_a_shard_is_the_same_part_whatever_number_of_parts_are_empty(tmp_path: Path) -> None:
    from builder.course.load import load_course

    lessons = list(load_course(copy_course(tmp_path).content).lessons)
    seconds = {lessons[0].id: 3.0, lessons[1].id: 0.0}  # a zero-cost lesson ties
    for count in range(1, 9):
        parts = split(lessons, seconds, count)
        assert [Shard(k, count).pick(lessons, seconds) for k in range(1, count + 1)] == parts
    assert Shard(MAX_SHARDS, MAX_SHARDS).pick(lessons, seconds) == []


def _busy_port() -> socket.socket:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    return listening


def test_serve_on_a_port_in_use_names_it_and_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = copy_course(tmp_path, broken=False)
    with _busy_port() as busy:
        port = busy.getsockname()[1]
        args = ["serve", "--port", str(port), "--no-execute", "--content", str(paths.content)]
        assert main([*args, "--out", str(paths.out), "--cache", str(paths.cache)]) == 1
    error = capsys.readouterr().err
    assert f"error: cannot serve on 127.0.0.1:{port}: the port is in use" in error
    assert "pick another port with --port N (0: any free port)" in error
    assert "disk" not in error and "Traceback" not in error
    assert not paths.out.exists()  # refused before anything was built


@pytest.mark.parametrize(
    ("number", "said"),
    [
        (errno.EACCES, "not allowed (ports below 1024 need root)"),
        (errno.EADDRINUSE, "the port is in use"),
    ],
)
def test_serve_refused_a_port_by_the_system_names_it(
    recorded: Paths, monkeypatch: pytest.MonkeyPatch, number: int, said: str
) -> None:
    """EACCES cannot be had as root (tests may run so): the server's bind is made to fail."""

    def refuse(address: tuple[str, int], handler: object) -> None:
        raise PermissionError(number, "refused") if number == errno.EACCES else OSError(number, "")

    monkeypatch.setattr(http, "Server", refuse)
    with pytest.raises(BuildError) as error:
        Preview(recorded, port=80, execute=False)
    assert str(error.value).startswith(f"cannot serve on 127.0.0.1:80: {said}")
    assert "--port N" in str(error.value)


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("no.such.host.invalid", "cannot serve on no.such.host.invalid:8000: no such host"),
        ("x" * 300, "no such host"),
        ("a\x00b", "cannot serve on 'a\\x00b':8000: "),
        ("a\nb", "cannot serve on 'a\\nb':8000: "),
        ("192.0.2.1", "cannot serve on 192.0.2.1:8000: Cannot assign requested address"),
    ],
    ids=["unknown", "too-long", "nul", "newline", "not-this-machine"],
)
def test_serve_on_a_host_that_is_not_this_machines_is_one_line(
    recorded: Paths, host: str, said: str
) -> None:
    with pytest.raises(BuildError) as error:
        Preview(recorded, host=host, port=8000, execute=False)
    message = str(error.value)
    assert said in message.splitlines()[0]
    assert len(message.splitlines()) == 2  # the line, and what to do


def test_port_0_serves_on_a_free_port_and_says_which(recorded: Paths) -> None:
    preview = Preview(recorded, port=0, execute=False)
    try:
        assert not preview.url.endswith(":0/")
    finally:
        preview.server.server_close()  # never started: close() would wait for it
        preview.session.close()


def test_an_os_error_naming_no_file_does_not_blame_the_disk() -> None:
    said = os_error_message(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))
    assert said.startswith("error: Connection reset by peer (ConnectionResetError")
    assert "disk" not in said and "file" in said  # "no file involved"
    named = os_error_message(PermissionError(errno.EACCES, "Permission denied", "site/x.html"))
    assert named.startswith("error: site/x.html: Permission denied") and "disk" in named
