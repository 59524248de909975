import jax
import jax.numpy as jnp
from builder import panels

# %% trace
def layer(w, x):
    print("layer sees x as:", x)  # <1>
    h = jnp.tanh(x @ w)
    return jnp.sum(h ** 2)


w = jnp.ones((4, 3))
x = jnp.ones((2, 4))
closed = jax.make_jaxpr(layer)(w, x)  # <2>
print(closed.pretty_print(source_info=True))  # <3>
# %% fields
jaxpr = closed.jaxpr
print("inputs :", [str(v.aval) for v in jaxpr.invars])
print("outputs:", [str(v.aval) for v in jaxpr.outvars])
print("primitives in order:", [e.primitive.name for e in jaxpr.eqns])

# %% count-calls
def count(jaxpr):
    """Equations at this level, plus those in any jaxpr held in a parameter."""
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", p)  # a ClosedJaxpr wraps a Jaxpr
            if hasattr(inner, "eqns"):
                n += count(inner)
    return n


v = jnp.ones((8,))
calls = {
    "jnp.tanh": jnp.tanh,
    "jax.nn.relu": jax.nn.relu,
    "jax.nn.gelu": jax.nn.gelu,
    "jax.nn.softmax": jax.nn.softmax,
    "jnp.var": jnp.var,
}
top, nested = [], []
for name, fn in calls.items():
    j = jax.make_jaxpr(fn)(v).jaxpr
    top.append(len(j.eqns))
    nested.append(count(j))
    print(f"{name:15s} top-level {top[-1]:2d}  with nested {nested[-1]:2d}  "
          f"{[e.primitive.name for e in j.eqns]}")
# %% chart
panels.bar(
    "One library call, how many equations",
    labels=list(calls),
    ylabel="jaxpr equations",
    series={"top level": top, "including nested jaxprs": nested},
)
