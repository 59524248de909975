"""The site row's traces (builder.pipeline.index `Published.traces`: what making each artifact of
the site left), kept by part as the index's entries are: PARTS rows by artifact key, each
pickled on its own, so a build pickles and writes again only the parts whose traces are not
the very objects it read (a prose edit: the few of its page, its bundle, the pages that
list it). The site row itself holds the rest of `Published`, without its traces.

Standard library only, as the index is.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.store import Store

if TYPE_CHECKING:
    from ..core.artifact import Trace

PARTS = 64


@dataclass(frozen=True)
class Traced:
    """The traces' parts as the store holds them (or as this build will write them): each
    part's traces, its pickled bytes, and which parts differ from the store's rows."""

    parts: tuple[dict[str, Trace], ...] = ()
    rows: tuple[bytes, ...] = field(default=(), repr=False)
    fresh: frozenset[int] = frozenset(range(PARTS))  # all but those read, or kept since

    @classmethod
    def load(cls, store: Store, site: str) -> Traced | None:
        """The parts of the site row `site`; None when one is missing or damaged."""
        rows = tuple(filter(None, (store.row(f"{site}/{k}") for k in range(PARTS))))
        try:
            parts = tuple(pickle.loads(row) for row in rows)
        except Exception:  # damaged: nothing in the store can fail a build
            return None
        if len(parts) != PARTS or not all(isinstance(part, dict) for part in parts):
            return None
        return cls(parts, rows, frozenset())

    def traces(self) -> dict[str, Trace]:
        return {key: trace for part in self.parts for key, trace in part.items()}

    def again(self, traces: Mapping[str, Trace]) -> Traced:
        """`traces` by part: a part whose traces are the very objects of this one's kept as
        it is (pickled again only if it was not written yet), any other pickled."""
        parts: list[dict[str, Trace]] = [{} for _ in range(PARTS)]
        for key, trace in traces.items():
            parts[zlib.crc32(key.encode()) % PARTS][key] = trace
        kept = {k for k, part in enumerate(parts) if self.parts and _same(self.parts[k], part)}
        rows = tuple(
            self.rows[k] if k in kept else pickle.dumps(part, protocol=5)
            for k, part in enumerate(parts)
        )
        return Traced(tuple(parts), rows, frozenset(range(PARTS)) - (kept - self.fresh))

    def written(self, site: str) -> dict[str, bytes]:
        """The rows that may differ from the store's."""
        return {f"{site}/{k}": self.rows[k] for k in sorted(self.fresh)}


def _same(old: dict[str, Trace], new: dict[str, Trace]) -> bool:
    return old.keys() == new.keys() and all(trace is old[key] for key, trace in new.items())
