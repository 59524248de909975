"""The ground every stage stands on: standard library only, no knowledge of lessons.

Takes nothing from the stages above; gives them the error family (errors), text made safe
for terminals, CI and Markdown (escape), what the builder tells the user (console: the
CLI's logging handler and its progress line), atomic writes that never leave their folder
(fsutil), the one cache (store), what a build observes before it reads (observe: file
metadata, paths, installed versions), the machine a run is on (machine) and the artifact
types every page and chart is made as, keyed by their arguments (artifact).
"""
