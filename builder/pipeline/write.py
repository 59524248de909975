"""Bring the site folder in line with the made site: write what changed, delete what is gone.

What the builder wrote in the site folder is recorded in its cache (builder.pipeline.site_record),
never in the site, which holds only what it publishes. Before anything is renamed into place
the record lists the old files and the new ones, and after, the new ones only: a build
stopped at any point leaves a record that covers whatever it left behind, so the next build
can remove it. Only files the record lists are ever deleted, only inside the site folder and
never through a symbolic link, and every name written to it passes the rules it is read with
(`_listable`). A folder that holds other files and no record is refused, unless all it holds
is this builder's temporary files (a first build killed while it wrote: those are deleted),
or its index.html is this builder's (the cache was deleted): then the site is written over
it and nothing else is deleted, with a warning saying how many files were left.

A record that cannot be written (a read-only or full cache) costs a warning, not the build:
without it the next build may leave files behind, never delete one that is not its own.
Every write and delete below the site folder goes through fsutil.open_below, which opens one
folder at a time and never follows a link (builder.core.fsutil's docstring).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import BuildError
from ..core.fsutil import TEMPORARY, Staging, cannot_write, make_folder, name_problem, open_below
from . import site_record
from .site_record import Record

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Written:
    written: int
    removed: int
    total: int


def write(
    files: dict[str, bytes],
    names: Iterable[str],
    out: Path,
    cache: Path,
    present: Iterable[str] = (),
) -> Written:
    """Write `files` (the changed ones; the others of `names` are in place already), then
    delete the files an earlier build wrote that are not among `names`, and the temporary
    files a stopped build left among `present` (the site folder's files); what was written
    there is recorded in `cache`."""
    names, present = sorted(set(names)), list(present)
    _listable(names)
    known = site_record.read(out, cache, present)
    left = [name for name in present if _temporary(name) and not name_problem(name)]
    before = sorted({*known.names, *left})
    record = _Record(out, cache, known.held)
    try:
        make_folder(out)
        record.save({*before, *names}, site_record.pages(out, files.get("index.html")))
        with Staging(out) as staging:
            staging.add(files)
            written = staging.commit()
    except OSError as error:
        raise cannot_write(error, "the previous site is unchanged") from None
    try:
        gone = sorted(set(before) - set(names))
        _remove(out, gone)
    except OSError as error:
        raise cannot_write(error, "the new site is written; some old files remain") from None
    record.save(set(names), site_record.pages(out))
    if known.adopted:
        _left_in_place(out, set(present) - set(names) - set(left))
    return Written(written, len(gone), len(names))


class _Record:
    """The record of `out` in `cache`, saved when it would say other than it does; a record
    that cannot be saved is said once, as a warning."""

    def __init__(self, out: Path, cache: Path, held: Record | None) -> None:
        self.out, self.cache, self.held = out, cache, held
        self.failed = False

    def save(self, names: set[str], pages: frozenset[str]) -> None:
        record = Record(frozenset(n for n in names if not _temporary(n)), pages)
        if record == self.held or self.failed:
            return
        try:
            site_record.save(self.out, self.cache, record)
        except OSError as error:
            self.failed = True
            logger.warning(
                "warning: cannot write %s: %s; the site is written without it, and a later "
                "build may leave behind files this one writes in %s (make clean removes them)",
                error.filename or site_record.record_path(self.cache, self.out),
                error.strerror or error,
                self.out,
            )
            return
        self.held = record


def _temporary(name: str) -> bool:
    """A temporary file of fsutil's (its names end in .tmp: the pattern only for those)."""
    return name.endswith(".tmp") and TEMPORARY.fullmatch(name) is not None


def _left_in_place(out: Path, others: set[str]) -> None:
    """Say how many files an adopted site folder holds that the new site does not have."""
    if others:
        logger.warning(
            "warning: %s holds %d file(s) the site does not have, left in place: the build "
            "cache that recorded which files this builder wrote there is gone (make clean, "
            "or deleting the folder, removes them)",
            out,
            len(others),
        )


def _listable(names: list[str]) -> None:
    """Every name the record will list passes the rules it is read with, or nothing
    is written: a name with a newline would list two files, one of them not the builder's
    (the course's own files are refused at load, builder/course/files.py site_name)."""
    if wrong := site_record.first_problem(names):
        name, problem = wrong
        raise BuildError(
            f"the site would hold a file named {name!r}, which {problem}; nothing was "
            "written or deleted",
            hint="rename the file the site publishes under that name",
        )


def _remove(out: Path, names: list[str]) -> None:
    """Delete each of `names` that is inside `out` with no link on the way, then the
    folders that leaves empty."""
    root = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        folders: set[tuple[str, ...]] = set()
        for name in names:
            *parts, leaf = name.split("/")
            folder = open_below(root, parts)
            if folder is None:
                continue  # a link (or no folder) on the way: not ours to delete
            try:
                info = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
                if not stat.S_ISDIR(info.st_mode):
                    os.unlink(leaf, dir_fd=folder)  # a link itself, never what it points to
            except FileNotFoundError:
                pass
            finally:
                os.close(folder)
            folders.update(tuple(parts[:n]) for n in range(1, len(parts) + 1))
        for inside in sorted(folders, key=len, reverse=True):
            parent = open_below(root, inside[:-1])
            if parent is None:
                continue
            try:  # a link is not a folder (ENOTDIR); a folder still in use is not empty
                with contextlib.suppress(OSError):
                    os.rmdir(inside[-1], dir_fd=parent)
            finally:
                os.close(parent)
    finally:
        os.close(root)
