"""A course-site builder with recorded executions.

Importing this package must stay cheap: examples import `builder.panels` inside
their own process, and `python -m builder check` must not pull in jax or matplotlib.
"""
