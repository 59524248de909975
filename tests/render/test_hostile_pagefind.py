"""Issue 38 item 12: when Pagefind cannot write (a file past `ulimit -f`, killed by SIGXFSZ;
a full disk, an OSError it reports), the build names the file and the remedy, as it does
for its own writes; it never publishes an index Pagefind cut short.
"""

from __future__ import annotations

import errno
import re
import resource
import subprocess
from pathlib import Path

import pytest

from builder.render import search
from tests.helpers import ROOT, cli, snapshot, write_course

LIMIT = 20_000  # bytes: over each page Pagefind reads, under what it writes (its wasm, js)


def test_pagefind_past_the_file_size_limit_is_named_with_the_file_and_the_remedy(
    tmp_path: Path,
) -> None:
    write_course(tmp_path, {"calm-01": "print(1)\n", "calm-02": "print(2)\n"})
    assert subprocess.run(cli(tmp_path, "render"), capture_output=True, cwd=ROOT).returncode == 0
    site = snapshot(tmp_path / "site")
    lesson = tmp_path / "content" / "lessons" / "calm-01" / "lesson.md"
    lesson.write_text(lesson.read_text() + "\nAn edit to index again.\n")

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    args = cli(tmp_path, "render")
    done = subprocess.run(args, capture_output=True, text=True, preexec_fn=limited, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    file = r"/\S+/coursebuilder-[0-9]+-search-\w+/pagefind/\S+"
    said = rf"^error: cannot write {file}: File too large; Pagefind was stopped at the file size"
    assert re.search(said, done.stderr, re.M), done.stderr
    assert "the search index was not built" in done.stderr
    assert "-> raise the file size limit (ulimit -f), then run" in done.stderr
    assert snapshot(tmp_path / "site") == site


def test_an_os_error_pagefind_reports_is_named_with_its_remedy(tmp_path: Path) -> None:
    log = "Running Pagefind\nError: Failed to write index: No space left on device (os error 28)\n"
    error = search._failed(1, log, tmp_path / "pagefind")
    said = str(error)
    assert said.startswith(f"cannot write {tmp_path / 'pagefind'} (Pagefind): No space left")
    assert "Pagefind said: Error: Failed to write index" in said
    assert error.hint.startswith("free space on that disk")


@pytest.mark.parametrize("code", [errno.EFBIG, errno.EROFS, errno.EACCES])
def test_every_os_error_with_a_remedy_gets_it(tmp_path: Path, code: int) -> None:
    error = search._failed(1, f"x (os error {code})", tmp_path)
    assert error.hint.endswith("then run the command again")
