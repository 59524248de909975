"""A Pagefind run that does not end is stopped, with an error that says what to do."""

from __future__ import annotations

import sys
import time

import pytest

from builder.core.errors import BuildError
from builder.render import search


def test_a_pagefind_run_past_its_time_is_killed_and_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search, "RUN_S", 0.5)
    hung = [sys.executable, "-c", "import time; time.sleep(60)"]  # a Pagefind that never ends
    started = time.monotonic()
    with pytest.raises(BuildError) as raised:
        search._run(hung)
    assert time.monotonic() - started < 10  # killed, not waited for
    message = str(raised.value)
    assert "Pagefind ran for 0.5 s" in message and "search index was not built" in message
    assert "run the command again" in message
