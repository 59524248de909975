"""The build: the stages below run in order, and the site folder brought in line.

pipeline (`build()`, `check()`: observe, load, status, record, render, write, remember),
stages (what a build that is not a no-op imports), site (every artifact of the site), make
(taking each from the site, the store or making it), write (the site folder) and manifest
(what the last good build read and wrote).
"""
