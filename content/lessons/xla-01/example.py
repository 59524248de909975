# %% setup hide
import re
import time

import jax
import jax.numpy as jnp

from builder import panels

# %% stages
def predict(x, w):
    return jnp.tanh(x @ w).sum()


x = jnp.ones((256, 512))
w = jnp.full((512, 128), 0.01)
jitted = jax.jit(predict)

t0 = time.perf_counter()
traced = jitted.trace(x, w)          # stage 1: Python runs once, on tracers
t1 = time.perf_counter()
lowered = traced.lower()             # stage 2: jaxpr -> StableHLO text
t2 = time.perf_counter()
compiled = lowered.compile()         # stage 3: XLA optimizes and builds CPU code
t3 = time.perf_counter()
out = compiled(x, w).block_until_ready()   # stage 4: run the executable
t4 = time.perf_counter()
out = compiled(x, w).block_until_ready()   # and once more
t5 = time.perf_counter()
# %% jaxpr
print("== stage 1: jaxpr (traced.jaxpr)")
print(traced.jaxpr)
# %% stablehlo
print("== stage 2: StableHLO (lowered.as_text())")
stablehlo = lowered.as_text()
print(stablehlo)
# %% optimized-hlo
print("== stage 3: optimized HLO (compiled.as_text()), metadata stripped")
hlo = compiled.as_text()
hlo = re.sub(r", metadata=\{[^}]*\}", "", hlo)
hlo = re.sub(r", backend_config=\S+", "", hlo)
start = hlo.index("\n%")                    # skip the header and source-location tables
print(hlo[start:].strip())
# %% counts hide
jaxpr_eqns = len(traced.jaxpr.eqns)
shlo_ops = len(re.findall(r"^\s+(?:%\S+ = )?stablehlo\.\w+", stablehlo, re.M))
entry = hlo[hlo.index("ENTRY"):]
entry = entry[: entry.index("\n}")]
entry_instrs = len(re.findall(r"^\s+(?:ROOT )?%\S+ = (?!\S+ parameter\()", entry, re.M))
print()
print(f"jaxpr equations: {jaxpr_eqns}")
print(f"StableHLO operations (excluding return): {shlo_ops}")
print(f"optimized HLO instructions in ENTRY (excluding parameters): {entry_instrs}")
print(f"result: {float(out):.4f}")

ms = {name: 1000 * dt for name, dt in [
    ("trace", t1 - t0), ("lower", t2 - t1), ("compile", t3 - t2),
    ("first run", t4 - t3), ("second run", t5 - t4)]}
for name, v in ms.items():
    print(f"wall clock {name:>10}: {panels.timing(v, '8.2f')} ms")
# %% plot hide
panels.bar(
    "Operations in the text each stage prints",
    labels=["jaxpr", "StableHLO", "optimized HLO (ENTRY)"],
    ylabel="operations (text lines, not bytes)",
    series={"operations": [jaxpr_eqns, shlo_ops, entry_instrs]},
)
panels.bar(
    "Wall clock per stage, one recorded run",
    labels=list(ms),
    ylabel="ms",
    series={"wall clock": [round(v, 3) for v in ms.values()]},
    timing=True,
)
