"""Course + recordings in, the site's files out as artifacts (builder.core.artifact):
pure functions, the same inputs giving the same bytes.

lessons (a lesson's page and charts), links (what a page reads of the other lessons),
prose and marks (Markdown and the recorded things it places), terminal (output as a
terminal shows it), figures, charts and chartlabels (panels as figures and SVG), highlight,
pages (every other page and the static files) and search (the search bundles, made of
what rendering each page kept: offline).
"""
