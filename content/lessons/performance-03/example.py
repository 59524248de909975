# %% imports hide
import collections
import re
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr

from builder import panels
# %% variants
BATCH = 16
keys = jax.random.split(jax.random.key(0), 4)
ws = [jax.random.normal(k, (128, 128)) * 0.1 for k in keys[:3]]
xs = jax.random.normal(keys[3], (BATCH, 128))


def predict(ws, x):  # one example: x is f32[128]
    for w in ws:
        x = jnp.tanh(w @ x)
    return jnp.sum(x)


def unrolled(ws, xs):  # a Python loop inside jit: traced once per example
    return jnp.stack([predict(ws, xs[i]) for i in range(BATCH)])


variants = {
    "Python loop over jit": jax.jit(predict),
    "jit of a Python loop": jax.jit(unrolled),
    "jit of vmap": jax.jit(jax.vmap(predict, in_axes=(None, 0))),
    "jit of lax.map": jax.jit(lambda ws, xs: jax.lax.map(lambda x: predict(ws, x), xs)),
}

# %% measure-helpers
def count_eqns(jaxpr):  # equations, including those inside scan or cond bodies
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else [value]:
                if isinstance(sub, ClosedJaxpr):
                    n += count_eqns(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    n += count_eqns(sub)
    return n


def call(name, fn):
    if name == "Python loop over jit":
        return jnp.stack([fn(ws, xs[i]) for i in range(BATCH)])
    return fn(ws, xs)

# %% measure
eqns, dots, ynn, compile_ms, run_ms, results = {}, {}, {}, {}, {}, {}
for name, fn in variants.items():
    args = (ws, xs[0]) if name == "Python loop over jit" else (ws, xs)
    eqns[name] = count_eqns(jax.make_jaxpr(fn)(*args).eqns[0].params["jaxpr"].jaxpr)
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_ms[name] = (time.perf_counter() - t0) * 1e3
    dots[name] = len(re.findall(r" dot\(", compiled.as_text()))
    # XLA:CPU's custom fusion that hands a matrix product to its YNNPACK kernels
    ynn[name] = compiled.as_text().count('"kind":"__ynn_fusion"')
    results[name] = np.asarray(call(name, fn))  # first call: fills jit's cache
    samples = []
    for _ in range(7):
        t0 = time.perf_counter()
        call(name, fn).block_until_ready()
        samples.append((time.perf_counter() - t0) * 1e3)
    run_ms[name] = statistics.median(samples)
    print(f"{name:22s} jaxpr equations {eqns[name]:4d}   HLO dots {dots[name]:3d}   "
          f"ynn_fusion {ynn[name]:2d}   "
          f"lower+compile {panels.timing(compile_ms[name], '7.1f')} ms   "
          f"run {panels.timing(run_ms[name], '7.3f')} ms")
# %% loop-parts
# Where the Python loop's time goes: slicing, calling and stacking, timed apart.
one = variants["Python loop over jit"]
t0 = time.perf_counter()
rows = jax.block_until_ready([xs[i] for i in range(BATCH)])
t_slice = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter()
outs = jax.block_until_ready([one(ws, r) for r in rows])
t_calls = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter()
jnp.stack(outs).block_until_ready()
t_stack = (time.perf_counter() - t0) * 1e3
print(f"loop, {BATCH} slices xs[i]:   {panels.timing(t_slice, '7.3f')} ms")
print(f"loop, {BATCH} jitted calls:   {panels.timing(t_calls, '7.3f')} ms "
      f"({panels.timing(t_calls / BATCH * 1e3, '.1f')} us per call)")
print(f"loop, one jnp.stack:     {panels.timing(t_stack, '7.3f')} ms")
# %% agree
reference = results["jit of vmap"]
agree = all(np.allclose(r, reference, rtol=1e-5, atol=1e-5) for r in results.values())
print("all four give the same", BATCH, "outputs:", agree)
# %% unrolled-primitives
unrolled_jaxpr = jax.make_jaxpr(unrolled)(ws, xs).jaxpr
by_primitive = collections.Counter(e.primitive.name for e in unrolled_jaxpr.eqns)
print("unrolled jaxpr by primitive:", ", ".join(f"{k} {v}" for k, v in by_primitive.most_common()))
# %% vmap-jaxpr
print(jax.make_jaxpr(variants["jit of vmap"])(ws, xs).eqns[0].params["jaxpr"])
# %% panels hide
names = list(variants)
panels.bar(
    "Size of the traced program for a batch of 16",
    labels=names,
    ylabel="jaxpr equations inside the jit",
    series={"equations": [eqns[n] for n in names]},
)
panels.bar(
    "Lowering plus compiling, once",
    labels=names,
    ylabel="ms (wall clock, one run)",
    series={"lower + compile": [compile_ms[n] for n in names]},
    timing=True,
)
panels.bar(
    "Running the batch of 16 once compiled",
    labels=names,
    ylabel="ms (wall clock, median of 7)",
    series={"steady-state run": [run_ms[n] for n in names]},
    timing=True,
)
panels.bar(
    "Inside the Python loop over jit",
    labels=[f"{BATCH} slices xs[i]", f"{BATCH} jitted calls", "one jnp.stack"],
    ylabel="ms (wall clock, one run)",
    series={"part of the loop": [t_slice, t_calls, t_stack]},
    timing=True,
)
