# %% setup hide
import statistics
import time

import jax
import jax.numpy as jnp

from builder import panels

if jax.default_backend() != "tpu":
    raise SystemExit(
        "This lesson needs a TPU: jax's default backend here is "
        f"{jax.default_backend()!r} ({jax.devices()[0].device_kind}). Run it on a TPU machine."
    )
DEVICES = {"TPU": jax.devices()[0], "CPU": jax.devices("cpu")[0]}


def clock(f):
    """Call f once; return its result and the wall clock in ms."""
    t0 = time.perf_counter()
    out = f()
    return out, 1000 * (time.perf_counter() - t0)


def steady_ms(compiled, *args, repeats=5):
    """Median wall clock of later calls, each waited for."""
    return statistics.median(
        clock(lambda: jax.block_until_ready(compiled(*args)))[1] for _ in range(repeats))


# %% warmup
for device in DEVICES.values():   # the same operations at another shape, untimed, per backend
    a = jax.device_put(jnp.ones((8, 128)), device)
    jax.jit(lambda a, b: jnp.tanh(a @ b).sum())(a, a.T).block_until_ready()
print("warmed up:", ", ".join(f"{name} ({d.device_kind})" for name, d in DEVICES.items()))

# %% stages
def fresh_predict():
    """A new function object each time, so no cache from the other backend helps."""
    def predict(x, w):
        return jnp.tanh(x @ w).sum()
    return predict


STAGES = ["trace", "lower", "compile", "first call", "later call (median of 5)"]
stage_ms = {}
for name, device in DEVICES.items():
    x = jax.device_put(jnp.ones((256, 512)), device)
    w = jax.device_put(jnp.full((512, 128), 0.01), device)
    jitted = jax.jit(fresh_predict())
    traced, t_trace = clock(lambda: jitted.trace(x, w))
    lowered, t_lower = clock(lambda: traced.lower())
    compiled, t_compile = clock(lambda: lowered.compile())
    _, t_first = clock(lambda: compiled(x, w).block_until_ready())
    stage_ms[name] = [t_trace, t_lower, t_compile, t_first, steady_ms(compiled, x, w)]
print(f"{'stage':26s} {'TPU ms':>9s} {'CPU ms':>9s}")
for i, stage in enumerate(STAGES):
    print(f"{stage:26s} {panels.timing(stage_ms['TPU'][i], '9.2f')} "
          f"{panels.timing(stage_ms['CPU'][i], '9.2f')}")

# %% depth
def mlp(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return x.sum()


DEPTHS = [1, 4, 16]
compile_ms = {name: [] for name in DEVICES}
later_ms = {name: [] for name in DEVICES}
print(f"{'depth':>5s} {'backend':7s} {'lower ms':>9s} {'compile ms':>11s} "
      f"{'first ms':>9s} {'later ms':>9s}")
for depth in DEPTHS:
    for name, device in DEVICES.items():
        params = [jax.device_put(jnp.full((512, 512), 0.01), device) for _ in range(depth)]
        x = jax.device_put(jnp.ones((256, 512)), device)
        lowered, t_lower = clock(lambda: jax.jit(mlp).lower(params, x))
        compiled, t_compile = clock(lambda: lowered.compile())
        _, t_first = clock(lambda: compiled(params, x).block_until_ready())
        compile_ms[name].append(t_compile)
        later_ms[name].append(steady_ms(compiled, params, x))
        print(f"{depth:5d} {name:7s} {panels.timing(t_lower, '9.1f')} "
              f"{panels.timing(t_compile, '11.1f')} {panels.timing(t_first, '9.2f')} "
              f"{panels.timing(later_ms[name][-1], '9.3f')}")

# %% compare
growth = {name: compile_ms[name][-1] - compile_ms[name][0] for name in DEVICES}
for name, grow in growth.items():
    print(f"{name}: compile at depth 16 minus depth 1: {panels.timing(grow, '.0f')} ms")
for depth, tpu, cpu in zip(DEPTHS, compile_ms["TPU"], compile_ms["CPU"]):
    print(f"depth {depth:2d}: TPU compile / CPU compile = {panels.timing(tpu / cpu, '.0f')}")
print(f"depth 16, later call: CPU / TPU = "
      f"{panels.timing(later_ms['CPU'][-1] / later_ms['TPU'][-1], '.0f')}")
assert growth["TPU"] > 3 * growth["CPU"]
assert later_ms["TPU"][-1] < later_ms["CPU"][-1]

# %% plot hide
panels.bar(
    "tanh(x @ w).sum(), stage by stage, one recorded run",
    labels=STAGES,
    ylabel="ms",
    series={name: [round(v, 3) for v in stage_ms[name]] for name in DEVICES},
    timing=True,
)
panels.line(
    "Compile time against depth (512 x 512 layers)",
    x=DEPTHS, xlabel="layers", ylabel="compile ms",
    series={name: [round(v, 2) for v in compile_ms[name]] for name in DEVICES},
    timing=True,
)
panels.line(
    "A compiled call against depth (median of 5)",
    x=DEPTHS, xlabel="layers", ylabel="ms per call",
    series={name: [round(v, 3) for v in later_ms[name]] for name in DEVICES},
    timing=True,
)
