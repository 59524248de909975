"""Trace two small functions and count the equations of each jaxpr.

Run it by hand with `.venv/bin/python content/lessons/basics-01/example.py`; `make site`
records what it prints and the chart data it emits.
"""

import jax
import jax.numpy as jnp

from builder import panels


def affine(x):
    return 2.0 * x + 1.0


def softplus(x):
    return jnp.log1p(jnp.exp(x))


counts = {}
for f in (affine, softplus):
    jaxpr = jax.make_jaxpr(f)(jnp.ones(3))
    print(f"{f.__name__}:")
    print(jaxpr)
    counts[f.__name__] = len(jaxpr.eqns)

panels.bar(
    "Equations per function",
    labels=list(counts),
    ylabel="equations",
    series={"make_jaxpr": list(counts.values())},
)
