"""What makes course files rather than a site: `new` (a course from the starter in
starter/) and `import` (a lesson from a Jupyter or MyST notebook: importer, cells, rewrite,
myst). It writes only through core.fsutil.Staging, and knows nothing of the build."""
