"""Releases: the version is one, and the CHANGELOG's newest entry names the rendererHash its
recordings carry, so a change to the recording harness (which makes every course's
recordings stale) cannot ship without the release saying so."""

from __future__ import annotations

import re
import tomllib

from builder.core.release import source_version
from builder.course.fingerprint import RUN_PROTOCOL, renderer_hash
from tests.helpers import ROOT


def _newest_release() -> tuple[str, str]:
    text = (ROOT / "CHANGELOG.md").read_text()
    # "## Unreleased" collects what the next release will say; the newest release follows it
    found = re.search(r"^## (?!Unreleased\n)(\S+)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, "CHANGELOG.md has no release (## X.Y.Z)"
    return found.group(1), found.group(2)


def test_the_newest_changelog_entry_is_this_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert _newest_release()[0] == version == source_version()


def test_the_newest_changelog_entry_names_the_harness_its_recordings_carry() -> None:
    version, notes = _newest_release()
    assert f"run protocol {RUN_PROTOCOL};" in notes
    assert f"`{renderer_hash()}`" in " ".join(notes.split()), (
        f"the recording harness changed (rendererHash {renderer_hash()}): every recording "
        f"of every course goes stale. Say so in CHANGELOG.md under the next version (not "
        f"{version}), with the new hash, and re-record: make record FORCE=1"
    )
