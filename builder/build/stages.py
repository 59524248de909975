"""The build's stages, in the order builder/build/pipeline.py runs them: imported together once a
build is not a no-op (the no-op itself needs only builder.build.manifest and builder.core.store).

`publish` is the last stage of every build, `build()`'s and the preview's alike: the one
writer of site/ and of the manifest.
"""

from __future__ import annotations

from ..core.observe import Observed, Paths, restat, site_files
from ..core.store import Store
from ..course.load import load_course
from ..course.rules import read_inputs
from ..course.status import course_status
from .index import Index
from .make import Kept
from .manifest import Manifest
from .site import Site
from .write import MARKER, Written, write

__all__ = ("Index", "Kept", "course_status", "load_course", "publish", "read_inputs")


def publish(
    store: Store,
    paths: Paths,
    site: Site,
    files: dict[str, bytes],
    now: Observed,
    versions: dict[str, str],
    index: Index | None = None,
) -> Written:
    """write, then remember: `files` (those of `site` that site/ does not hold already)
    written and what `site` no longer has removed; then the manifest of this build (`now`:
    what it observed before reading) committed with its `index` (what it read), and the
    store pruned to what it references."""
    names, before = site.names(), site_files(paths.out, now.site)
    written = write(files, names, paths.out, before)
    touched = {*files, *(before.keys() - names.keys()), MARKER}  # all that write() may change
    after = Manifest(now, versions, restat(now.site, paths.out, touched), names, site.traces())
    store.commit(after.rows(), site.references(store.used), index.stored() if index else None)
    return written
