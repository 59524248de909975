# %% setup hide
import contextlib
import glob
import io
import os
import time

import jax
import jax.numpy as jnp
from jax.ad_checkpoint import print_saved_residuals

from builder import panels

W = jax.random.normal(jax.random.key(0), (512, 512)) * 0.05
x = jnp.ones((256, 512))

# %% fresh
def fresh_loss():
    """A new function object each time, so no trace or compile cache helps."""
    def loss(W, x):
        h = x
        for _ in range(4):
            h = jnp.tanh(h @ W)
        return jnp.sum(h ** 2)
    return loss


def fresh():
    return jax.grad(fresh_loss())


def use_jaxpr():
    return len(jax.make_jaxpr(fresh())(W, x).jaxpr.eqns), "equations"

# %% other-instruments hide
def use_residuals():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(fresh_loss(), W, x)
    return len(buf.getvalue().splitlines()), "residuals"


def use_stablehlo():
    return len(jax.jit(fresh()).lower(W, x).as_text().splitlines()), "lines of StableHLO"


def use_estimates():
    compiled = jax.jit(fresh()).lower(W, x).compile()
    return compiled.memory_analysis().temp_size_in_bytes, "temp bytes"


def use_dump(run):
    folder = f"xla_dump_{run}"
    jax.jit(fresh()).lower(W, x).compile(compiler_options={"xla_dump_to": folder})
    return len(os.listdir(folder)), "files dumped"


def use_timer():
    step = jax.jit(fresh())
    step(W, x).block_until_ready()           # first call: trace + compile
    t0 = time.perf_counter()
    for _ in range(10):
        out = step(W, x)
    out.block_until_ready()
    return panels.timing((time.perf_counter() - t0) * 100, ".2f"), "ms per step"


def use_trace(run):
    step = jax.jit(fresh())
    step(W, x).block_until_ready()
    with jax.profiler.trace(f"trace_{run}"):
        for _ in range(10):
            out = step(W, x)
        out.block_until_ready()
    return len(glob.glob(f"trace_{run}/plugins/profile/*/*")), "capture files"


def use_memory_profile():
    step = jax.jit(fresh())
    out = step(W, x).block_until_ready()
    jax.profiler.save_device_memory_profile("memory.prof")
    return os.path.getsize("memory.prof") > 0, "profile written"


instruments = [
    ("make_jaxpr", use_jaxpr),
    ("print_saved_residuals", use_residuals),
    ("lower().as_text()", use_stablehlo),
    ("compile() estimates", use_estimates),
    ("XLA dump", use_dump),
    ("timer + block_until_ready", use_timer),
    ("profiler trace", use_trace),
    ("device memory profile", use_memory_profile),
]
# %% measure hide
def measure(run, upto=len(instruments)):
    costs = []
    for name, use in instruments[:upto]:
        t0 = time.perf_counter()
        answer, unit = use(run) if use in (use_dump, use_trace) else use()
        costs.append((time.perf_counter() - t0) * 1000)
        if run == "timed0":
            answers[name] = f"{answer} {unit}"
    return costs


answers = {}
measure("warmup", upto=5)  # pay one-time start-up costs before timing anything
rounds = [measure(f"timed{i}") for i in range(3)]  # three rounds; each bar is the cheapest
cost_ms = [min(costs) for costs in zip(*rounds)]
for (name, _), cost in zip(instruments, cost_ms):
    print(f"{name:26s} cost {panels.timing(cost, '8.1f')} ms  answer: {answers[name]}")
compiles, traces = min(cost_ms[3:5]), max(cost_ms[:3])
print(f"cheapest compile / dearest trace: {panels.timing(compiles / traces, '.1f')}x")
# %% plot hide
panels.bar(
    "What it cost to get each instrument's answer (fresh function, cheapest of three rounds, CPU)",
    labels=[name for name, _ in instruments],
    ylabel="wall clock to first answer, cheapest of 3 (ms)",
    series={"cost": cost_ms},
    timing=True,
)
