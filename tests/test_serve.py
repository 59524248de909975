"""The preview server: reload script only in served pages, 404 page, change detection."""

from __future__ import annotations

import functools
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

from builder.serve import RELOAD_SCRIPT, Preview, _Handler, inject_reload, snapshot


def test_reload_script_goes_before_body_end() -> None:
    assert (
        inject_reload(b"<p>x</p></body></html>") == b"<p>x</p>" + RELOAD_SCRIPT + b"</body></html>"
    )


def test_served_pages_carry_the_script_and_files_on_disk_do_not(tmp_path: Path) -> None:
    (tmp_path / "l").mkdir()
    (tmp_path / "l" / "index.html").write_bytes(b"<body>lesson</body>")
    (tmp_path / "404.html").write_bytes(b"<body>missing</body>")
    (tmp_path / "a.svg").write_bytes(b"<svg/>")
    preview = Preview()
    preview.generation = 7
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, preview, directory=str(tmp_path))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert RELOAD_SCRIPT in urllib.request.urlopen(f"{base}/l/").read()
        assert urllib.request.urlopen(f"{base}/a.svg").read() == b"<svg/>"
        assert urllib.request.urlopen(f"{base}/__reload").read() == b"7"
        try:
            urllib.request.urlopen(f"{base}/nope/")
            raise AssertionError("expected 404")
        except urllib.error.HTTPError as error:
            assert error.code == 404 and b"missing" in error.read()
    finally:
        server.shutdown()
        server.server_close()
    assert RELOAD_SCRIPT not in (tmp_path / "l" / "index.html").read_bytes()


def test_snapshot_sees_an_edit(tmp_path: Path) -> None:
    (tmp_path / "lesson.md").write_text("a")
    before = snapshot((tmp_path, tmp_path / "absent"))
    (tmp_path / "lesson.md").write_text("ab")
    assert snapshot((tmp_path,)) != before
