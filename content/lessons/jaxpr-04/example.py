# %% setup hide
import logging

import jax
import jax.numpy as jnp
from builder import panels
# %% instruments
# Keep JAX's own explanation of each tracing-cache miss.
reasons = []


class Keep(logging.Handler):
    def emit(self, record):
        lines = record.getMessage().splitlines()
        reasons.append([l.strip() for l in lines if l.strip().startswith(("*", "never"))])


logging.getLogger("jax").addHandler(Keep())
jax.config.update("jax_explain_cache_misses", True)

traces = 0


def scale(x, n):
    global traces
    traces += 1  # a Python side effect: it runs only while tracing
    return jnp.tanh(x) * n

# %% calls
fast = jax.jit(scale, static_argnums=1)
x = jnp.ones((4,))
calls = [
    ("first call", x, 2),
    ("same arguments", x, 2),
    ("new values", x + 5.0, 2),
    ("shape f32[8]", jnp.ones((8,)), 2),
    ("dtype i32", jnp.ones((4,), jnp.int32), 2),
    ("static n=3", x, 3),
    ("first again", x, 2),
]
per_call = []
for label, a, n in calls:
    before, seen = traces, len(reasons)
    fast(a, n).block_until_ready()
    per_call.append(traces - before)
    why = reasons[-1] if len(reasons) > seen else ["cache hit"]
    print(f"{label:15s} traced {per_call[-1]}: {why[0]}")
    for line in why[1:]:
        print(f"{'':17s}{line}")
print("traces after", len(calls), "calls:", traces)
# %% chart-calls
panels.bar(
    "Which calls trace scale again",
    labels=[c[0] for c in calls],
    ylabel="traces (count)",
    series={"jit(scale, static_argnums=1)": per_call},
)
# %% static-or-traced
# Ten distinct values of n, passed as static versus traced.
def count_traces(f, values):
    global traces
    traces = 0
    for n in values:
        f(x, n).block_until_ready()
    return traces

ns = range(10, 20)
as_static = count_traces(jax.jit(lambda x, n: scale(x, n), static_argnums=1), ns)
as_traced = count_traces(jax.jit(lambda x, n: scale(x, n)), ns)
print(f"ten values of n: static {as_static} traces, traced {as_traced} traces")
# %% placement
# Where the jit wrapper is created. Two identical functions, so that
# the first experiment cannot warm the second one's cache.
def double_a(x):
    global traces
    traces += 1
    return x * 2


def double_b(x):
    global traces
    traces += 1
    return x * 2


hoisted = jax.jit(double_a)
placements = {
    "hoisted jit(f)": lambda: hoisted(x),
    "jit(f) per call": lambda: jax.jit(double_b)(x),
    "jit(lambda) per call": lambda: jax.jit(lambda v: double_b(v))(x),
}
placement_traces = []
for label, call in placements.items():
    traces = 0
    for _ in range(5):
        call().block_until_ready()
    placement_traces.append(traces)
    print(f"{label:22s} five calls, {traces} traces")
# %% chart-traces
panels.bar(
    "Traces over repeated calls",
    labels=["n static, 10 values", "n traced, 10 values"] + list(placements),
    ylabel="traces (count)",
    series={"traces": [as_static, as_traced] + placement_traces},
)
