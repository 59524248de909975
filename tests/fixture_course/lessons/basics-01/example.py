import jax
import jax.numpy as jnp

from builder import panels


def f(x):
    return jnp.sin(x) * 2.0 + 1.0


jaxpr = jax.make_jaxpr(f)(jnp.ones(3))
print(jaxpr)
print("equations:", len(jaxpr.eqns))
panels.bar(
    "Equations per function",
    labels=["f"],
    ylabel="equations",
    series={"make_jaxpr": [len(jaxpr.eqns)]},
)
