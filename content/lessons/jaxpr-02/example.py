import time

import jax
import jax.numpy as jnp
from jax import lax
from builder import panels

# %% loop-step
def step(h):
    return jnp.tanh(h * 0.9 + 0.1)


# %% loop-python
def python_loop(h, n):
    for _ in range(n):
        h = step(h)
    return h


# %% loop-fori
def fori(h, n):
    return lax.fori_loop(0, n, lambda i, h: step(h), h)


# %% loop-scan
def scan(h, n):
    h, _ = lax.scan(lambda h, _: (step(h), None), h, length=n)
    return h

# %% count-equations
x = jnp.ones((4,))
forms = {"python for": python_loop, "lax.fori_loop": fori, "lax.scan": scan}
trips = [1, 4, 16, 64]
counts = {name: [] for name in forms}
for n in trips:
    for name, fn in forms.items():
        jaxpr = jax.make_jaxpr(fn, static_argnums=1)(x, n).jaxpr
        counts[name].append(len(jaxpr.eqns))
for name in forms:
    print(f"{name:14s} equations at n={trips}: {counts[name]}")
# %% chart-equations
panels.bar(
    "Top-level equations against trip count",
    labels=[f"n={n}" for n in trips],
    ylabel="jaxpr equations (top level)",
    series=counts,
)
# %% fori-jaxprs
print(jax.make_jaxpr(fori, static_argnums=1)(x, 4))
print("--- trip count traced instead of static")
print(jax.make_jaxpr(fori)(x, 4))
# %% branch
# A Python `if` on a traced value.
def branchy(x):
    if x.sum() > 0:
        return x
    return -x

try:
    jax.jit(branchy)(x)
except jax.errors.ConcretizationTypeError as e:
    print(type(e).__name__, "is a ConcretizationTypeError:")
    print("  " + str(e).splitlines()[0])
    print("  " + str(e).splitlines()[1])
# %% cond
print(jax.make_jaxpr(lambda x: lax.cond(x.sum() > 0, lambda x: x, lambda x: -x, x))(x))
# %% compile-both
# Compile cost of the unrolled loop versus the rolled one, n = 256.
compile_ms = []
for name in ["python for", "lax.scan"]:
    f = jax.jit(forms[name], static_argnums=1)
    t = time.perf_counter()
    f.lower(x, 256).compile()
    compile_ms.append((time.perf_counter() - t) * 1e3)
    print(f"{name:14s} n=256 lower+compile {panels.timing(compile_ms[-1], '.1f')} ms")
# %% chart-compile
panels.bar(
    "Lower and compile at n=256 (wall clock, one run)",
    labels=["python for", "lax.scan"],
    ylabel="ms",
    series={"lower + compile": compile_ms},
    timing=True,
)
