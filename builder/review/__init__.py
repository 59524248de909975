"""What a re-record changed, for reviewers: recordings at two revisions in, a CourseChanges
and its reports out.

git (the one door to git), changes (compare two sides), diff (`python -m builder diff`),
report (text, Markdown, JSON) and page (the site's "What changed" page).
"""
