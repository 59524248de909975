# %% imports hide
import os
import shutil
import statistics
import time

import jax
import jax.numpy as jnp

from builder import panels
# %% model
traces = 0


def mlp(params, x):
    global traces
    traces += 1  # runs only while JAX traces, never when a compiled call runs
    for w in params:
        x = jnp.tanh(x @ w)
    return jnp.sum(x ** 2)


keys = jax.random.split(jax.random.key(0), 8)
params = [jax.random.normal(k, (256, 256)) * 0.05 for k in keys]
x = jnp.ones((128, 256))
grad_step = jax.jit(jax.grad(mlp))


def ms(t0):
    return (time.perf_counter() - t0) * 1e3

# %% first-and-steady
# The first call, end to end.
t0 = time.perf_counter()
jax.block_until_ready(grad_step(params, x))
first = ms(t0)

# The steady state: same shapes, same dtypes, so the compiled program is reused.
samples = []
for _ in range(20):
    t0 = time.perf_counter()
    jax.block_until_ready(grad_step(params, x))
    samples.append(ms(t0))
steady = statistics.median(samples)
print(f"first call:             {panels.timing(first, '9.2f')} ms")
print(f"steady state:           {panels.timing(steady, '9.2f')} ms (median of 20 calls)")
print(f"first call / steady state: {panels.timing(first / steady, '.0f')}x")
print(f"traces after 21 calls: {traces}")
# %% new-shape
# A new batch size is a new abstract signature: trace and compile again.
x2 = jnp.ones((64, 256))
t0 = time.perf_counter()
jax.block_until_ready(grad_step(params, x2))
new_shape = ms(t0)
print(f"first call at batch 64: {panels.timing(new_shape, '9.2f')} ms, traces now: {traces}")
# %% stages
# The same first call taken apart with the ahead-of-time stages.
f = jax.jit(jax.grad(mlp))
x3 = jnp.ones((32, 256))
t0 = time.perf_counter()
traced = f.trace(params, x3)
t_trace = ms(t0)
t0 = time.perf_counter()
lowered = traced.lower()
t_lower = ms(t0)
t0 = time.perf_counter()
compiled = lowered.compile()
t_compile = ms(t0)
t0 = time.perf_counter()
jax.block_until_ready(compiled(params, x3))
t_run = ms(t0)
print(f"jaxpr equations: {len(traced.jaxpr.eqns)}")
print(f"stage trace:   {panels.timing(t_trace, '9.2f')} ms")
print(f"stage lower:   {panels.timing(t_lower, '9.2f')} ms")
print(f"stage compile: {panels.timing(t_compile, '9.2f')} ms")
print(f"stage run:     {panels.timing(t_run, '9.2f')} ms")
# %% disk-cache
# An on-disk compilation cache: the executable survives jax.clear_caches().
x4 = jnp.ones((16, 256))  # made first, so its own small program is not cached
shutil.rmtree("jax_cache", ignore_errors=True)
jax.config.update("jax_compilation_cache_dir", "jax_cache")
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
hits = []


def count_hit(event, **kwargs):  # JAX records each executable read from the disk cache
    if event == "/jax/compilation_cache/cache_hits":
        hits.append(event)


jax.monitoring.register_event_listener(count_hit)
before = traces
t0 = time.perf_counter()
jax.block_until_ready(grad_step(params, x4))
cold = ms(t0)
cold_hits = len(hits)
jax.clear_caches()  # forget every in-memory trace and executable
t0 = time.perf_counter()
jax.block_until_ready(grad_step(params, x4))
warm = ms(t0)
print(f"batch 16, empty disk cache:      {panels.timing(cold, '9.2f')} ms")
print(f"batch 16, after jax.clear_caches: {panels.timing(warm, '9.2f')} ms (executable read from disk)")
print(f"traces during these two calls: {traces - before}")
print(f"disk cache hits: {cold_hits} in the first call, {len(hits) - cold_hits} in the second")
print("disk cache entries:", sorted(name.split("-")[0] for name in os.listdir("jax_cache")))
# %% panels hide
panels.bar(
    "Gradient of an 8-layer MLP under jit: first call against the steady state",
    labels=["first call (batch 128)", "steady state (batch 128)", "first call (batch 64)"],
    ylabel="ms (wall clock)",
    series={"one call": [first, steady, new_shape]},
    timing=True,
)
panels.bar(
    "The first call taken apart (batch 32)",
    labels=["trace", "lower", "compile", "run"],
    ylabel="ms (wall clock, one run)",
    series={"stage": [t_trace, t_lower, t_compile, t_run]},
    timing=True,
)
panels.bar(
    "The persistent compilation cache (batch 16)",
    labels=["empty disk cache", "in-memory caches cleared, disk cache kept"],
    ylabel="ms (wall clock, one run)",
    series={"first call": [cold, warm]},
    timing=True,
)
