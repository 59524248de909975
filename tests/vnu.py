"""The W3C Nu HTML checker (vnu.jar) for the tests: the npm registry's `vnu-jar` package at a
pinned version, fetched once with `npm pack` into .cache/vnu/<version>/ at the repository's
root (gitignored; `make clean` removes it), checked against the integrity the registry
published for it, and run with java over a built site.

`python -m tests.vnu` fetches it ahead of a run. A site is checked in two passes: its HTML
and SVG files (`--skip-non-html --also-check-svg`), then its stylesheets alone (`--css`).
One pass with `--also-check-css` would do both, but then the checker reports every HTML
error one line above the line it is on.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from urllib.parse import unquote

VERSION = "26.9.27"
# `npm view vnu-jar@26.9.27 dist.integrity`: what npm itself checks the tarball against.
INTEGRITY = "sha512-TkQd5DFfOaWC9ebtvozTsrH2Vaod3jYg+vrOeREzIXxBexLz9+rS2DNtjn7+RPUiZhgli0SghgBX6RJRNea0KA=="
ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "vnu" / VERSION
MEMBER = "package/build/dist/vnu.jar"
CHECK = ["--errors-only", "--format", "gnu", "--stdout"]
# "file:/path/site/l/x/index.html":12.3-12.9: error: message  (a line, then columns)
_FOUND = re.compile(r'^"file:(?P<path>[^"]+)":(?P<line>\d+)\.(?P<column>\d+)[-.\d]*: (?P<rest>.*)$')


class Unavailable(Exception):
    """java or npm is not installed here: the checker cannot run."""


def tools() -> tuple[str, str]:
    """java and npm, or Unavailable naming the one that is missing and how to install it."""
    return _tool("java", "default-jre-headless"), _tool("npm", "npm")


def _tool(name: str, package: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise Unavailable(f"{name} is not installed (apt-get install {package})")
    return found


def jar(cache: Path = CACHE) -> Path:
    """vnu.jar in `cache`, fetched with npm the first time (a failed or tampered download
    raises RuntimeError and leaves nothing behind)."""
    found = cache / "vnu.jar"
    if found.is_file():
        return found
    npm = _tool("npm", "npm")
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        command = [npm, "pack", f"vnu-jar@{VERSION}", "--pack-destination", scratch]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=scratch)
        tarball = Path(scratch) / f"vnu-jar-{VERSION}.tgz"
        if done.returncode or not tarball.is_file():
            raise RuntimeError(f"npm pack vnu-jar@{VERSION} failed:\n{done.stderr.strip()}")
        digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
        if f"sha512-{digest}" != INTEGRITY:
            raise RuntimeError(f"{tarball.name} is not the published vnu-jar {VERSION}")
        with tarfile.open(tarball) as archive:
            source = archive.extractfile(MEMBER)
            if source is None:
                raise RuntimeError(f"{tarball.name} holds no {MEMBER}")
            part = Path(scratch) / "vnu.jar"
            part.write_bytes(source.read())
        os.replace(part, found)
    return found


def check(site: Path) -> list[str]:
    """Every error the checker finds in `site`'s HTML, SVG and CSS files, each as
    `path:line:column: message` with the path from the site's root."""
    site = site.resolve()
    command = [_tool("java", "default-jre-headless"), "-jar", str(jar()), *CHECK]
    found = _run([*command, "--skip-non-html", "--also-check-svg", str(site)], site)
    stylesheets = sorted(str(p) for p in site.rglob("*.css"))
    if stylesheets:
        found += _run([*command, "--css", *stylesheets], site)
    return found


def _run(command: list[str], site: Path) -> list[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode not in (0, 1) or (done.returncode == 1 and not lines):
        raise RuntimeError(f"the Nu checker failed ({done.returncode}):\n{done.stderr.strip()}")
    return [_located(line, site) for line in lines]


def _located(line: str, site: Path) -> str:
    """One of the checker's lines as `path:line:column: what`, the path from the site."""
    found = _FOUND.match(line)
    if found is None:
        return line
    path = Path(unquote(found["path"]))
    name = path.relative_to(site).as_posix() if path.is_relative_to(site) else str(path)
    return f"{name}:{found['line']}:{found['column']}: {found['rest']}"


if __name__ == "__main__":
    try:
        print(jar())
    except Unavailable as missing:
        sys.exit(f"vnu: {missing}")
