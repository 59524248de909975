"""`python -m builder serve`: the build kept in memory, rebuilt as files change, served on
localhost and told to each open page.

session (one Build kept between edits, each batch of file events its change-set), serve
(file events, SSE), http (the server), hub (what open pages are told), heap (the kept
build set aside from the collector) and rerecord (stale lessons re-recorded in the
background, by the build's record step).
"""
