"""The ground every stage stands on: standard library only, no knowledge of lessons.

Takes nothing from the stages above; gives them the error family (errors), atomic writes
(fsutil), the one cache (store), what a build observes before it reads (observe: file
metadata, paths, installed versions) and the artifact types every page and chart is made
as (artifact).
"""
