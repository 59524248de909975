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


def equations(f):
    """Print f's jaxpr and return how many equations it holds."""
    jaxpr = jax.make_jaxpr(f)(jnp.ones(3))
    print(f"{f.__name__}:")
    print(jaxpr)
    return len(jaxpr.eqns)


functions = (affine, softplus)
panels.bar(
    "Equations per function",
    labels=[f.__name__ for f in functions],
    ylabel="equations",
    series={"make_jaxpr": [equations(f) for f in functions]},
)
