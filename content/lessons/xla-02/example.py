# %% setup hide
import re
import statistics
import time

import jax
import jax.numpy as jnp

from builder import panels

# %% programs
def chain(x):
    return jnp.sum(jnp.exp(jnp.sin(x) * 2.0 + 1.0) / (1.0 + x * x))


def softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def sandwich(x, w):
    return jnp.tanh((x * 2.0 + 1.0) @ w) * 3.0

# %% helpers hide
def entry_ops(hlo_text):
    """ENTRY's instructions, parameters left out; a fusion reads as its name and kind."""
    text = re.sub(r", (metadata|backend_config)=.*$", "", hlo_text, flags=re.M)
    entry = text[text.index("ENTRY"):]
    entry = entry[: entry.index("\n}")]
    ops = re.findall(r"^\s+(?:ROOT )?%?(\S+) = \S+ ([\w-]+)\((?:.*kind=(k\w+))?", entry, re.M)
    return [f"{name} {kind}" if op == "fusion" else op
            for name, op, kind in ops if op != "parameter"]

# %% count
x = jnp.ones((1024, 1024))
w = jnp.ones((1024, 1024))
programs = {"chain": (chain, (x,)), "softmax": (softmax, (x,)), "sandwich": (sandwich, (x, w))}

before, after = {}, {}
for name, (fn, args) in programs.items():
    lowered = jax.jit(fn).lower(*args)
    ops_before = entry_ops(lowered.as_text(dialect="hlo"))   # HLO before any pass
    ops_after = entry_ops(lowered.compile().as_text())       # HLO the CPU runs
    before[name], after[name] = len(ops_before), len(ops_after)
    print(f"{name}: {len(ops_before)} instructions before optimization, "
          f"{len(ops_after)} after: {', '.join(ops_after)}")
# %% chain-hlo
print()
print("== chain, optimized HLO (metadata and backend_config stripped)")
text = jax.jit(chain).lower(x).compile().as_text()
text = re.sub(r", (metadata|backend_config)=.*$", "", text, flags=re.M)
print(text[text.index("%fused_computation "):].strip())
# %% fusion-off
# The same module compiled four times: as it is, and with XLA's fusion pass, the pass that
# builds the library's ynn_fusion, or both switched off.
lowered = jax.jit(chain).lower(x)
off = {"default": "", "fusion pass off": "fusion", "library rewriter off": "dot-library-rewriter",
       "both passes off": "fusion,dot-library-rewriter"}
variants = {
    name: lowered.compile(compiler_options={"xla_disable_hlo_passes": passes} if passes else None)
    for name, passes in off.items()
}
print()
print("fusion pass off compiles to the default's HLO:",
      variants["fusion pass off"].as_text() == variants["default"].as_text())
times = {name: [] for name in variants}
for c in variants.values():
    c(x).block_until_ready()                    # one untimed call each
names = list(variants)
for i in range(20):                             # rounds: every variant called once a round,
    for name in names[i % 4:] + names[: i % 4]:  # and a different one first in turn
        t0 = time.perf_counter()
        variants[name](x).block_until_ready()
        times[name].append(1000 * (time.perf_counter() - t0))
stats = {}
for name, c in variants.items():
    stats[name] = (
        len(entry_ops(c.as_text())),
        c.cost_analysis()["bytes accessed"] / 2**20,
        c.memory_analysis().temp_size_in_bytes / 2**20,
        statistics.median(times[name]),
    )
    n, mib, temp, ms = stats[name]
    print(f"{name:>20}: {n:2d} ENTRY instructions, cost_analysis bytes accessed {mib:6.1f} MiB, "
          f"memory_analysis temp {temp:5.1f} MiB, wall clock median of 20 rounds {panels.timing(ms, '6.2f')} ms")
for name in ["default", "library rewriter off", "both passes off"]:
    print(f"{name}, ENTRY:", ", ".join(entry_ops(variants[name].as_text())))
# %% plot hide
panels.bar(
    "ENTRY instructions before and after XLA's passes",
    labels=list(programs),
    ylabel="HLO instructions (parameters excluded)",
    series={"before optimization": [before[k] for k in programs],
            "after optimization": [after[k] for k in programs]},
)
panels.bar(
    "chain on 1024x1024: compiler's bytes-accessed estimate",
    labels=list(stats),
    ylabel="MiB (cost_analysis estimate)",
    series={"bytes accessed": [round(s[1], 2) for s in stats.values()]},
)
panels.bar(
    "chain on 1024x1024: wall clock, one recorded run",
    labels=list(stats),
    ylabel="ms (median of 20 alternating rounds)",
    series={"wall clock": [round(s[3], 3) for s in stats.values()]},
    timing=True,
)
