"""What a re-record changed, for reviewers: recordings at two revisions in, a CourseChanges
and its reports out.

git (the one door to git), changes (compare two sides), diff (`python -m builder diff`),
report (text, Markdown, JSON), page (the site's "What changed" page), and rehearse with
rehearsal_report (`python -m builder rehearse LOCKFILE`: the course recorded in a side
environment from another lock, compared with the committed recordings).
"""
