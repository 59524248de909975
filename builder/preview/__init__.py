"""`python -m builder serve`: the build kept in memory, rebuilt as files change, served on
localhost and told to each open page.

session (the build's stages, kept between edits), serve (HTTP, file events, SSE), hub
(what open pages are told) and rerecord (re-recording stale lessons in the background).
"""
