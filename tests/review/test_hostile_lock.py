"""Issue 56 items 1 and 2: a lock file is code. A wheel holding only a `.pth` runs in every
interpreter of the side environment: never with a variable of the builder's, and never
outside the sandbox when the rehearsal is sandboxed. A lock that reads another file (`-r
/proc/self/environ`), is a link, a FIFO or a device is one line naming the lock, before
anything is installed, and nothing of the target file is printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from builder.core.errors import BuildError
from builder.review.lock import read_lock
from builder.review.rehearse import rehearse
from builder.run.execute import run_example, run_sandboxed
from builder.run.sandbox import sandbox_problem
from tests.helpers import make_paths, write_course

REPO = Path(__file__).resolve().parents[2]  # this checkout's builder, whatever the cwd
SECRET = ("H56_SECRET", "h56secretvalue12345")
PTH = "import os; exec({code!r})\n"  # a .pth runs the lines that start with `import`
WRITES = """\
try:
    import json, os
    with open({target!r}, "a") as out:
        out.write(json.dumps(dict(os.environ)) + "\\n")
except OSError:
    pass
"""


def wheel(folder: Path, target: Path) -> Path:
    """A wheel of no code but a `.pth` that appends the environment it runs with to `target`
    (no install-time code: pip only unpacks it)."""
    path = folder / "evil-1.0-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "evil.pth": PTH.format(code=WRITES.format(target=str(target))),
        "evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
        "evil-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, "evil-1.0.dist-info/RECORD"])
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in {**files, "evil-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
    return path


@pytest.fixture
def attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A one-lesson course whose lock names the `.pth` wheel (inside the checkout), with a
    secret in the builder's environment; the course's root and the file the `.pth` writes."""
    root = tmp_path / "checkout"
    write_course(root, {"hostile-01": "print('hello')\n"})
    target = tmp_path / "pth-ran.jsonl"
    wheel(root / "wheels", target)
    (root / "pr.lock").write_text("./wheels/evil-1.0-py3-none-any.whl\n")
    monkeypatch.chdir(root)
    monkeypatch.setenv(*SECRET)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # the wheel needs nothing: no network
    return root, target


def test_a_pth_in_the_lock_never_sees_the_builders_environment(
    attack: tuple[Path, Path],
) -> None:
    """Unsandboxed, the `.pth` runs where the examples run (they run as you), but with the
    example's clean environment: it ran (examples, the probe, the render), and no run of it
    was handed the secret. It ran with every builder variable in `_fall_back`'s probe and
    `_render` before."""
    root, target = attack
    paths = make_paths(root)
    done = rehearse(root / "pr.lock", paths.content, paths.recordings, paths.cache)
    assert not done.site_problem, done.site_problem
    assert target.exists()  # the attack worked as far as it may
    runs = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(runs) >= 2  # the example and the render, at least
    for env in runs:
        assert SECRET[0] not in env and SECRET[1] not in json.dumps(env)
        assert not any(name.startswith("PIP_") for name in env)


@pytest.mark.skipif(bool(sandbox_problem()), reason="--sandbox cannot run here")
def test_a_pth_in_the_lock_runs_only_in_the_sandbox(attack: tuple[Path, Path]) -> None:
    """With --sandbox, every interpreter of the side environment starts in the sandbox (the
    file outside it is never written), and the rehearsal's site is still rendered there."""
    root, target = attack
    paths = make_paths(root)
    done = rehearse(
        root / "pr.lock", paths.content, paths.recordings, paths.cache, runner=run_sandboxed
    )
    assert not done.site_problem, done.site_problem
    assert (Path(done.site) / "index.html").is_file()
    assert not target.exists()


def test_pips_message_is_masked(attack: tuple[Path, Path]) -> None:
    """pip's last line is shown as an example's stderr is: the builder's secrets as $NAME."""
    root, _ = attack
    (root / "wheels" / f"{SECRET[1]}-1.0-py3-none-any.whl").write_bytes(b"not a zip")
    (root / "pr.lock").write_text(f"wheels/{SECRET[1]}-1.0-py3-none-any.whl\n")
    paths = make_paths(root)
    with pytest.raises(BuildError, match="cannot be installed") as caught:
        rehearse(root / "pr.lock", paths.content, paths.recordings, paths.cache)
    assert f"${SECRET[0]}" in str(caught.value)
    assert SECRET[1] not in str(caught.value)


def rehearse_cli(root: Path, lock: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "builder", "rehearse", lock, "--cache", str(root / ".c")]
    command += ["--content", str(root / "content"), "--recordings", str(root / "recordings")]
    env = {**os.environ, SECRET[0]: SECRET[1], "PYTHONPATH": str(REPO)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=root, env=env, stdin=None
    )


LINES = {
    "-r /proc/self/environ": "reads another file",
    "-r /etc/passwd": "reads another file",
    "--requirement=/etc/passwd": "reads another file",
    "-c /etc/passwd": "reads another file",
    "--index-url https://example.invalid/simple": "chooses where packages come from",
    "--extra-index-url https://example.invalid/simple": "chooses where packages come from",
    "-i https://example.invalid/simple": "chooses where packages come from",
    "--find-links /tmp": "chooses where packages come from",
    "-f /tmp": "chooses where packages come from",
    "-e .": "installs a folder's code",
    "/etc/passwd": "names a file outside the checkout",
    "../../etc/passwd": "names a file outside the checkout",
    "x @ file:///etc/passwd": "names a file outside the checkout",
    "git+ssh://git@example.invalid/a/b": "other than https://",
    "https://example.invalid/${H56_SECRET}.whl": "fill in an environment variable",
    "iniconfig==2.0 --config-settings=x=y": "passes settings to a package's build",
    "iniconfig==2.0\t--hash=sha256:ab\t--global-option=x": "passes settings to a package's build",
}


@pytest.mark.parametrize("line", LINES)
def test_a_lock_line_that_reads_or_fetches_elsewhere_is_refused(tmp_path: Path, line: str) -> None:
    write_course(tmp_path, {"hostile-01": "print('hello')\n"})
    (tmp_path / "pr.lock").write_text(f"iniconfig==2.0.0\n# a comment\n{line}\n")
    done = rehearse_cli(tmp_path, "pr.lock")
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"error: pr.lock: line 3: `{line[:20]}")
    assert LINES[line] in first
    assert "root:" not in done.stderr and SECRET[1] not in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".c" / "rehearse").exists()  # before anything is made


def test_a_lock_that_is_a_link_fifo_or_device_is_refused(tmp_path: Path) -> None:
    write_course(tmp_path, {"hostile-01": "print('hello')\n"})
    (tmp_path / "passwd.lock").symlink_to("/etc/passwd")
    os.mkfifo(tmp_path / "fifo.lock")
    said = {
        "passwd.lock": "is a symbolic link (to /etc/passwd)",
        "fifo.lock": "is a FIFO (named pipe), not a regular file",
        "/dev/zero": "is a character device, not a regular file",
        "/dev/stdin": "is a symbolic link",
        "missing.lock": "cannot be read: it is missing",
    }
    for lock, problem in said.items():
        done = rehearse_cli(tmp_path, lock)
        assert done.returncode == 1, lock
        assert done.stderr.startswith(f"error: {lock}: {problem}"), done.stderr
        assert "root:" not in done.stderr and "Traceback" not in done.stderr


def test_a_lock_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    lock = tmp_path / "big.lock"
    lock.write_bytes(b"#" * (2 * 1024 * 1024))
    with pytest.raises(BuildError, match="over the 1 MiB limit"):
        read_lock(lock, tmp_path)


def test_what_pip_reads_is_what_was_checked(tmp_path: Path) -> None:
    """pip installs the checked text (local paths made absolute, comments and continuations
    as pip reads them), never the lock file a second time."""
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a-1-py3-none-any.whl").write_bytes(b"PK")
    lock = tmp_path / "next.lock"
    lock.write_text(
        "jax==0.10.2 \\\n    --hash=sha256:ab  # pinned\n--pre\n\n"
        f"{tmp_path}/w/a-1-py3-none-any.whl ; python_version >= '3'\n"
    )
    checked = read_lock(lock, tmp_path)
    assert checked.text == (
        "jax==0.10.2 --hash=sha256:ab\n--pre\n"
        f"{tmp_path}/w/a-1-py3-none-any.whl ; python_version >= '3'\n"
    )


def test_a_long_line_of_blanks_is_read_in_linear_time(tmp_path: Path) -> None:
    """pip's comment rule as a regex (`(^|\\s+)#`) is quadratic on a line of blanks."""
    import time

    lock = tmp_path / "blank.lock"
    lock.write_text(" " * 1_000_000 + "x\n")
    started = time.perf_counter()
    assert read_lock(lock, tmp_path).text == "x\n"
    assert time.perf_counter() - started < 5


def test_the_plain_runner_is_not_taken_for_the_sandbox() -> None:
    from builder.run.execute import InSandbox, sandboxes

    assert not sandboxes(run_example)
    assert sandboxes(run_sandboxed) and sandboxes(InSandbox(run_example))


def test_no_write_follows_a_link_in_the_rehearsals_folders(
    attack: tuple[Path, Path], tmp_path: Path
) -> None:
    """Issue 56 item 5: `rehearse --out` into a folder it marked followed a `cache` link
    there and wrote two files elsewhere. A link at its `cache` or `site`, or at the cache's
    `rehearse` folder, is removed (never its target) and a real folder made there."""
    from builder.review.rehearse import MARKER

    root, _ = attack
    paths = make_paths(root)
    elsewhere = {name: tmp_path / f"elsewhere-{name}" for name in ("cache", "site", "rehearse")}
    for place in elsewhere.values():
        place.mkdir()
        (place / "theirs.txt").write_text("theirs")
    out = tmp_path / "rehearsal"
    out.mkdir()
    (out / MARKER).write_text("# made by a rehearsal of python -m builder\n")
    (out / "cache").symlink_to(elsewhere["cache"])
    (out / "site").symlink_to(elsewhere["site"])
    paths.cache.mkdir()
    (paths.cache / "rehearse").symlink_to(elsewhere["rehearse"])
    done = rehearse(root / "pr.lock", paths.content, paths.recordings, paths.cache, out=out)
    assert not done.site_problem, done.site_problem
    for place in elsewhere.values():
        assert [p.name for p in place.iterdir()] == ["theirs.txt"]
    for made in (out / "cache", out / "site", paths.cache / "rehearse"):
        assert made.is_dir() and not made.is_symlink()
    assert (out / "site" / "index.html").is_file()


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "/etc/passwd"])
def test_the_checkouts_lock_is_read_through_the_input_door(tmp_path: Path, kind: str) -> None:
    """`check` reads requirements.lock's pins where jax is not installed (CI's light install):
    a committed link to /dev/zero was a MemoryError, a FIFO a hang."""
    from builder.core.errors import ContentError
    from builder.course.rules import lock_pins

    lock = tmp_path / "requirements.lock"
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.symlink_to(kind)
    with pytest.raises(ContentError, match=r"requirements\.lock: is ") as caught:
        lock_pins(lock)
    assert "root:" not in str(caught.value)
    assert lock_pins(tmp_path / "missing.lock") == {}
