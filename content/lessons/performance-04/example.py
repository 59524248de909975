# %% imports hide
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from builder import panels
# %% model
LR = 0.1


def loss(params, x):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"]) ** 2)


def sgd_step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree.map(lambda p, g: p - LR * g, params, grads)


k1, k2 = jax.random.split(jax.random.key(0))
x = jnp.ones((64, 512))


def fresh_params():
    return {"w1": jax.random.normal(k1, (512, 512)) * 0.02,
            "w2": jax.random.normal(k2, (512, 512)) * 0.02}

# %% compare
MEMORY_FIELDS = ["argument_size_in_bytes", "output_size_in_bytes",
                 "alias_size_in_bytes", "temp_size_in_bytes", "peak_memory_in_bytes"]
stats = {}
for name, donate in [("no donation", ()), ("donate_argnums=0", (0,))]:
    lowered = jax.jit(sgd_step, donate_argnums=donate).lower(fresh_params(), x)
    marks = re.findall(r"tf\.aliasing_output = \d+", lowered.as_text())
    compiled = lowered.compile()
    header = compiled.as_text().splitlines()[0]
    alias = re.search(r"input_output_alias=\{.*?\) \}", header)
    mem = compiled.memory_analysis()
    stats[name] = {field: getattr(mem, field) for field in MEMORY_FIELDS}
    print(f"--- {name}")
    print("StableHLO argument marks:", marks)
    print("compiled module header:", alias.group(0) if alias else "no input_output_alias")
    for field, value in stats[name].items():
        print(f"  {field:24s} {value:>10,d}")
    check = mem.argument_size_in_bytes + mem.output_size_in_bytes - mem.alias_size_in_bytes
    print("  peak == argument + output - alias:", check == mem.peak_memory_in_bytes)
    copies = re.findall(r"^\s*%\S+ = (\S+ copy\(%\S+\))", compiled.as_text(), re.M)
    print("  copy instructions in the optimized HLO:", copies)
    stats[name]["with temp"] = check + mem.temp_size_in_bytes
    print(f"  argument + output - alias + temp {stats[name]['with temp']:>10,d}")
# %% donate
# What donation does to the caller's array.
step = jax.jit(sgd_step, donate_argnums=0)
params = fresh_params()
w1_before = params["w1"]
address = w1_before.unsafe_buffer_pointer()
new_params = step(params, x)
print("old w1 deleted after the call:", w1_before.is_deleted())
print("new w1 lives in the old w1's buffer:", new_params["w1"].unsafe_buffer_pointer() == address)
try:
    np.asarray(w1_before)
except RuntimeError as err:
    print("reading the old w1:", type(err).__name__ + ":", err)
# %% reuse-old-dict
try:
    step(params, x)  # params still holds the donated arrays
except ValueError as err:
    print("calling again with the old dict:", str(err).splitlines()[0])
# %% rebind-loop
# The usual loop: rebind the name, so nothing refers to a donated array.
params = new_params
for _ in range(3):
    params = step(params, x)
print("loss after three more steps:", f"{float(loss(params, x)):.6f}")
# %% cannot-donate
# Donation the compiler cannot use: no output has the donated argument's shape.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    total = jax.jit(lambda p: p["w1"].sum() + p["w2"].sum(), donate_argnums=0)
    total(fresh_params()).block_until_ready()
for w in caught:
    print("warning:", str(w.message).splitlines()[0])
# %% totals hide
names = list(stats)
print("reserved bytes saved by donation, peak_memory_in_bytes:",
      f"{stats[names[0]]['peak_memory_in_bytes'] - stats[names[1]]['peak_memory_in_bytes']:,d}")
print("reserved bytes saved by donation, counting temp:",
      f"{stats[names[0]]['with temp'] - stats[names[1]]['with temp']:,d}")
panels.bar(
    "memory_analysis of one SGD step on the CPU executable",
    labels=["argument", "output", "alias", "temp", "peak"],
    ylabel="bytes (compiler estimate)",
    series={n: [stats[n][f] for f in MEMORY_FIELDS] for n in names},
)
panels.bar(
    "Bytes the executable holds at once, two ways of adding it up",
    labels=names,
    ylabel="bytes (compiler estimate)",
    series={
        "peak_memory_in_bytes": [stats[n]["peak_memory_in_bytes"] for n in names],
        "argument + output - alias + temp": [stats[n]["with temp"] for n in names],
    },
)
