"""The store: what an artifact was made with is recorded per thread, pruning keeps what the
index references, and a file that is not a database is started afresh."""

from __future__ import annotations

import pickle
import threading
from pathlib import Path

from builder.core.store import INDEX, Store


def test_keys_used_in_one_thread_are_not_recorded_for_another(tmp_path: Path) -> None:
    """Search bundles are made in threads side by side: a key one stores must not be taken
    as used by another (a kept bundle would then reference it forever)."""
    store = Store(tmp_path)
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, set[str]] = {}

    def first() -> None:
        with store.recording() as used:
            store.put("mine", b"1")
            inside.set()
            done.wait(5)
            seen["first"] = set(used)

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(5)
    with store.recording() as used:
        store.put("other", b"2")
        seen["second"] = set(used)
    done.set()
    thread.join()
    assert seen == {"first": {"mine"}, "second": {"other"}}


def test_nested_recordings_each_see_their_own_keys(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with store.recording() as outer:
        store.put("a", b"1")
        with store.recording() as inner:
            store.get("b")
    assert (outer, inner) == ({"a", "b"}, {"b"})


def test_commit_prunes_to_what_is_kept(tmp_path: Path) -> None:
    store = Store(tmp_path)
    for key in "abc":
        store.put(key, key.encode())
    store.commit()
    store.commit({INDEX: pickle.dumps({"last": True})}, keep={"a", "c"})
    again = Store(tmp_path)
    assert sorted(again.keys()) == ["a", "c"]
    assert again.manifest() == {"last": True}


def test_a_file_that_is_not_a_database_is_started_afresh(tmp_path: Path) -> None:
    (tmp_path / "store.sqlite").write_bytes(b"not a database at all" * 100)
    store = Store(tmp_path)
    assert store.get("a") is None
    store.put("a", b"1")
    store.commit()
    assert Store(tmp_path).get("a") == b"1"
