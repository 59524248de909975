"""The build's stages, in the order builder/pipeline/build.py runs them: imported together once a
build is not a no-op (the no-op itself needs only builder.pipeline.index and builder.core.store).

`publish` is the last stage of every build, `build()`'s and the preview's alike: the one
writer of site/ and of the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core import observe
from ..core.observe import Observed, Paths, restat, site_files
from ..core.store import Store
from ..course.load import load_course
from ..course.rules import read_inputs
from ..course.status import course_status
from .index import Head, Index, Published
from .make import Kept
from .site import Site
from .write import Written, write

__all__ = ("Kept", "course_status", "load_course", "publish", "read_inputs")


def publish(
    store: Store,
    paths: Paths,
    site: Site,
    files: dict[str, bytes],
    now: Observed,
    versions: dict[str, str],
    index: Index,
    around: tuple[Any, ...] | None = None,
) -> tuple[Written, Index]:
    """write, then remember: `files` (those of `site` that site/ does not hold already)
    written and what `site` no longer has removed; then `index` (what this build read, by
    the metadata `now` observed before reading) committed with the site it left, and the
    store pruned to what the index references; `around`: how the lessons were keyed
    (builder.pipeline.reuse `Around.remembered_by`)."""
    names, before = site.names(), site_files(paths.out, now.site)
    written = write(files, names, paths.out, paths.cache, before)
    touched = {*files, *(before.keys() - names.keys())}  # all that write() may change
    site_ns = observe.clock(paths.cache, [paths.out])  # what is written from now on is racy
    after = restat(now.site, paths.out, touched)
    seen = replace(now, site={}, inputs=index.appeared(now.inputs))
    head = Head(seen, after, site_ns, len(names), versions)
    published = Published(now.taken_ns, index.salt, names, site.traces(), index.shared, around)
    traced = index.traced.again(published.traces)  # the traces' parts that changed, pickled
    index = replace(index, head=head, published=published, traced=traced)
    store.commit(index.rows(), site.references(store.used) | index.references())
    return written, index
