"""The build: the stages below run in order, and the site folder brought in line.

build (one `Build`, which `build()`, `check()` and the preview drive: observe, load,
status, record, render, write, remember), index (what the last good build read and wrote,
and the change-set every build looks up in it), reuse and keys (what is taken from an
earlier build, and the artifacts' keys), stages (what a build that is not a no-op
imports), site (every artifact of the site), make (taking each from the site, the store or
making it), write and site_record (the site folder, and the record of what was written
there), traced and compiled (the index's traces, the templates' bytecode); and the
commands that make a course rather than build one: new (from starter/), importer, cells
and myst (`import`).
"""
