"""Compiled templates kept in the store: Jinja's bytecode cache, for builder.pipeline.reuse's
`Reuse.templates` (imported only by a build that renders, with Jinja)."""

from __future__ import annotations

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

from ..core.store import Store, digest


class Compiled(BytecodeCache):
    """Compiled templates in the store, by the code's digest (`salt`, which covers Jinja's
    version and the environment's settings), the template's name and file and its source's
    checksum. Jinja checks what it loads (its magic, the checksum) and compiles again
    when either differs."""

    def __init__(self, store: Store, salt: str) -> None:
        self.store, self.salt = store, salt

    def _key(self, bucket: Bucket) -> str:
        return digest(self.salt, "template", bucket.key, bucket.checksum)

    def load_bytecode(self, bucket: Bucket) -> None:
        data = self.store.get(self._key(bucket))
        if data is not None:
            try:
                bucket.bytecode_from_string(data)
            except Exception:  # damaged (the store is sealed, but not against every change)
                bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.store.put(self._key(bucket), bucket.bytecode_to_string())
