"""Secrets and machine paths in the spellings an example can print them in (issue 38, item 7).

`leaked` was a literal substring test: each spelling below went into a recording, and
`render` put it on the site. Each is now found; honest output, the real course's recordings
among it, is not.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from builder.run.environment import BUILDER_ROOT
from builder.run.leaks import leaked
from tests.helpers import ROOT, cli, write_course

TOKEN = "ghp_Q2xvdWRT+ZWNyZXQx/MjM0NTY3ODkw"
SECRETS = {TOKEN: "COURSE_DEPLOY_TOKEN"}
CHECKOUT = Path("/srv/checkouts/course")
FOLDERS = [CHECKOUT / "content", CHECKOUT]
PATH = f"{CHECKOUT}/recordings/x.json"


def _b64(text: str, prefix: str = "") -> str:
    return base64.b64encode((prefix + text).encode()).decode()


SECRET_SPELLINGS = {
    "base64": f"token: {_b64(TOKEN)}",
    "base64 at an offset": f"blob: {_b64(TOKEN, 'x=')}",
    "base64 of a line": base64.b64encode(f"TOKEN={TOKEN}\n".encode()).decode(),
    "URL-safe base64": base64.urlsafe_b64encode(b"\xfb\xff" + TOKEN.encode()).decode(),
    "hex": TOKEN.encode().hex(),
    "upper-case hex": TOKEN.encode().hex().upper(),
    "reversed": TOKEN[::-1],
    "rot13": codecs.encode(TOKEN, "rot13"),
    "upper-cased": TOKEN.upper(),
    "URL-encoded": urllib.parse.quote(TOKEN, safe=""),
    "every character URL-encoded": "".join(f"%{b:02X}" for b in TOKEN.encode()),
    "split over two prints": f"{TOKEN[:15]}\n{TOKEN[15:]}\n",
    "spaced out": " ".join(TOKEN),
    "zero-width spaces": "\u200b".join(TOKEN),
    "JSON-escaped": "".join(f"\\u{ord(c):04x}" for c in TOKEN),
    "JSON-escaped twice": json.dumps("".join(f"\\u{ord(c):04x}" for c in TOKEN)),
}

PATH_SPELLINGS = {
    "URL-encoded": urllib.parse.quote(PATH, safe=""),
    "URL-encoded twice": urllib.parse.quote(urllib.parse.quote(PATH, safe=""), safe=""),
    "double slashes": PATH.replace("/", "//"),
    "dot segments": PATH.replace("/checkouts/", "/./checkouts/./"),
    "dot-dot segments": PATH.replace("/course/", "/elsewhere/../course/"),
    "JSON-escaped slashes": PATH.replace("/", "\\/"),
    "a zero-width space": PATH.replace("course/", "cour\u200bse/"),
    "a word joiner and a soft hyphen": PATH.replace("srv", "s\u2060r\u00adv"),
    "upper-cased": PATH.upper(),
    "HTML references": PATH.replace("/", "&#47;"),
    "base64": _b64(PATH),
    "hex": PATH.encode().hex(),
    "reversed": PATH[::-1],
    "the checkout root itself": f"ran in {CHECKOUT}",
    "recordings/ itself": f"saved to {CHECKOUT}/recordings",
}


@pytest.mark.parametrize("spelling", sorted(SECRET_SPELLINGS))
def test_a_secret_is_found_in_every_common_spelling(spelling: str) -> None:
    found = leaked({"stdout": SECRET_SPELLINGS[spelling]}, [], SECRETS)
    assert found.startswith(
        "stdout contains the value of the builder's environment variable COURSE_DEPLOY_TOKEN"
    ), found
    assert TOKEN not in found


@pytest.mark.parametrize("spelling", sorted(PATH_SPELLINGS))
def test_a_machine_path_is_found_in_every_common_spelling(spelling: str) -> None:
    found = leaked({"stdout": PATH_SPELLINGS[spelling]}, FOLDERS, {})
    assert found.startswith(f"stdout contains the absolute path '{CHECKOUT}"), found


SHORT = "/tmp/cc"  # a checkout's path under MIN_SECRET characters, where a CI run was
SHORT_SPELLINGS = {
    "base64": _b64(SHORT),
    "base64 at an offset": _b64(SHORT, "x="),
    "hex": SHORT.encode().hex(),
    "URL-safe base64 of a file in it": base64.urlsafe_b64encode(
        f"{SHORT}/recordings".encode()
    ).decode(),
}


@pytest.mark.parametrize("spelling", sorted(SHORT_SPELLINGS))
def test_a_short_machine_path_is_found_encoded_too(spelling: str) -> None:
    """A path's encodings were looked for only when it was 8 characters or more, as a
    secret's are: a checkout at /tmp/cc printed its PYTHONPATH as base64 and was recorded."""
    found = leaked({"stdout": SHORT_SPELLINGS[spelling]}, [Path(SHORT)], {})
    assert found.startswith(f"stdout contains the absolute path '{SHORT}'"), found


@pytest.mark.parametrize("order", ["stdout first", "panel first"])
def test_a_secret_split_between_stdout_and_a_panel_is_found(order: str) -> None:
    head, tail = TOKEN[:16], TOKEN[16:]
    first, second = (head, tail) if order == "stdout first" else (tail, head)
    panel = {"kind": "bar", "title": second, "labels": ["a"], "ylabel": "u"}
    found = leaked({"stdout": f"loss 0.25\n{first}\n", "panel 1": panel}, [], SECRETS)
    assert found.startswith(
        "the end of one of stdout and the panels' strings and the start of another contain "
        "the value of the builder's environment variable COURSE_DEPLOY_TOKEN"
    ), found


def test_a_secret_split_over_two_prints_is_found() -> None:
    found = leaked({"stdout": f"{TOKEN[:10]}\n{TOKEN[10:]}\n"}, [], SECRETS)
    assert found.startswith("stdout contains the value of the builder's environment variable")


def test_the_message_says_how_it_was_encoded() -> None:
    found = leaked({"stdout": _b64(TOKEN)}, [], SECRETS)
    assert "COURSE_DEPLOY_TOKEN as base64, which the example was not given" in found
    found = leaked({"stdout": PATH[::-1]}, FOLDERS, {})
    assert found == f"stdout contains the absolute path '{CHECKOUT}' reversed; " + (
        "show paths relative to the cwd"
    )


HONEST = [
    "step 1: loss 0.25\nstep 2: loss 0.125\n",
    "relative: recordings/x.json, content/lessons/a/example.py, ../data/x.csv\n",
    "https://example.org/a//b/./c/../d?q=%2F&x=1\n",
    "x" * 10_000,
    "0123456789abcdef" * 64,
    base64.b64encode(bytes(range(256))).decode(),
]


@pytest.mark.parametrize("text", HONEST, ids=range(len(HONEST)))
def test_honest_output_is_not_taken_for_a_leak(text: str) -> None:
    assert leaked({"stdout": text}, FOLDERS, SECRETS) == ""


def _recorded(path: Path) -> dict[str, object]:
    recording = json.loads(path.read_text())
    panels = (recording.get("data") or {}).get("panels", [])
    return {"stdout": recording["stdout"]} | {f"panel {n}": p for n, p in enumerate(panels, 1)}


REAL = sorted((ROOT / "recordings").glob("*.json"))


def test_the_real_courses_recordings_all_pass_quickly() -> None:
    """What the course really printed is no leak, with this checkout, its content, the
    builder, the working folder, HOME and the builder's own environment guarded."""
    assert len(REAL) >= 10
    folders = [ROOT / "content", ROOT, BUILDER_ROOT, Path.cwd(), Path("/tmp/course-x-abc")]
    secrets = {v: k for k, v in os.environ.items() if len(v) >= 8}
    started = time.perf_counter()
    found = {path.name: leaked(_recorded(path), folders, secrets) for path in REAL}
    seconds = time.perf_counter() - started
    assert {name: why for name, why in found.items() if why} == {}
    assert seconds < 2.0


def test_the_largest_output_a_run_may_print_is_checked_quickly() -> None:
    stdout = ("step 17: loss 0.25 " * 4 + "\n") * (512 * 1024 // 77)
    started = time.perf_counter()
    assert leaked({"stdout": stdout}, FOLDERS, SECRETS) == ""
    assert time.perf_counter() - started < 2.0


ENCODES = """\
import base64, os
print(base64.b64encode(os.environ["PYTHONPATH"].encode()).decode())
"""


def test_a_run_that_prints_the_checkout_as_base64_records_nothing(tmp_path: Path) -> None:
    """End to end: the example's own PYTHONPATH is the checkout; printed as base64 it was
    recorded, and published by `render`."""
    write_course(tmp_path, {"calm-01": ENCODES})
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert f"stdout contains the absolute path '{BUILDER_ROOT}' as base64" in done.stderr
    assert not (tmp_path / "recordings" / "calm-01.json").exists()


READS_THE_CHECKOUT = """\
import os
pid = os.getppid()
while True:  # up to the builder: the first ancestor whose command line is python -m builder
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        if b"builder\\0record" in handle.read():
            break
    with open(f"/proc/{pid}/stat", "rb") as handle:
        pid = int(handle.read().rsplit(b")", 1)[1].split()[1])
print("{form}".format(os.readlink(f"/proc/{pid}/cwd")))
"""


@pytest.mark.parametrize("form", ["ran in {}", "saved to {}/recordings"])
def test_the_checkout_root_and_recordings_are_guarded(tmp_path: Path, form: str) -> None:
    """They were not in the guarded list (only the course's content/ folder was): the
    builder's working folder, read from /proc, was recorded."""
    write_course(tmp_path, {"calm-01": READS_THE_CHECKOUT.replace("{form}", form)})
    done = subprocess.run(cli(tmp_path, "record"), capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert f"stdout contains the absolute path '{tmp_path}'" in done.stderr
    assert not (tmp_path / "recordings" / "calm-01.json").exists()
