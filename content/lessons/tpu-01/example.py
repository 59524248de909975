# %% setup hide
import re

import jax
import jax.numpy as jnp
import numpy as np

from builder import panels

if jax.default_backend() != "tpu":
    raise SystemExit(
        "This lesson needs a TPU: jax's default backend here is "
        f"{jax.default_backend()!r} ({jax.devices()[0].device_kind}). Run it on a TPU machine."
    )


def strip(hlo):
    """Drop what is not structure: source metadata, backend configs, header and position tables."""
    hlo = re.sub(r", metadata=\{[^}]*\}", "", hlo)
    hlo = re.sub(r", backend_config=\S+", "", hlo)
    return hlo[hlo.index("\n%"):].strip()


def header(hlo):
    """The entry computation's layout, from the module's first line (its braces nest)."""
    start = hlo.index("entry_computation_layout={") + len("entry_computation_layout={")
    depth = 1
    for end in range(start, len(hlo)):
        depth += {"{": 1, "}": -1}.get(hlo[end], 0)
        if depth == 0:
            return hlo[start:end]
    raise ValueError("entry_computation_layout is not closed")


# %% devices
tpu = jax.devices()[0]            # the default backend's first device
cpu = jax.devices("cpu")[0]       # the host's CPU, present beside every accelerator
print("TPU device:", tpu.platform, "/", tpu.device_kind)
print("CPU device:", cpu.platform, "/", cpu.device_kind)

# %% compile
def predict(x, w):
    return jnp.tanh(x @ w).sum()


compiled, results, texts = {}, {}, {}
for name, device in [("TPU", tpu), ("CPU", cpu)]:
    x = jax.device_put(jnp.ones((256, 512)), device)       # the inputs decide
    w = jax.device_put(jnp.full((512, 128), 0.01), device)  # where jit compiles for
    compiled[name] = jax.jit(predict).lower(x, w).compile()
    results[name] = float(compiled[name](x, w))
    texts[name] = compiled[name].as_text()
    device_set = compiled[name].input_shardings[0][0].device_set
    print(f"{name}: compiled for {device_set}, result {results[name]:.4f}")

# %% tpu-hlo
print("== TPU: optimized HLO, metadata and backend_config stripped")
print(strip(texts["TPU"]))

# %% cpu-hlo
print("== CPU: optimized HLO, stripped the same way")
print(strip(texts["CPU"]))

# %% counts
def count(hlo):
    body = strip(hlo)
    entry = body[body.index("ENTRY"):]
    entry = entry[: entry.index("\n}")]
    instructions = re.findall(r"^\s+(?:ROOT )?%\S+ = (.*)$", body, re.M)
    return {
        "ENTRY instructions (no parameters)": len(
            re.findall(r"^\s+(?:ROOT )?%\S+ = (?!\S+ parameter\()", entry, re.M)),
        "computations": len(re.findall(r"^(?:ENTRY )?%\S+ \(", body, re.M)),
        "instructions, all computations": len(instructions),
        "fusion instructions": sum(" fusion(" in line for line in instructions),
        "tiled shapes (:T(...))": body.count(":T("),
        "shapes in memory space 1 (S(1))": body.count("S(1)"),
    }


counts = {name: count(text) for name, text in texts.items()}
print(f"{'':36s} {'CPU':>5s} {'TPU':>5s}")
for key in counts["CPU"]:
    print(f"{key:36s} {counts['CPU'][key]:5d} {counts['TPU'][key]:5d}")
assert counts["TPU"]["fusion instructions"] > counts["CPU"]["fusion instructions"]
assert counts["CPU"]["tiled shapes (:T(...))"] == 0 < counts["TPU"]["tiled shapes (:T(...))"]

# %% fusion-kinds
for name, text in texts.items():
    root = re.search(r"ROOT %\S+ = .*", strip(text)[strip(text).index("ENTRY"):]).group(0)
    kind = re.search(r"kind=(\w+)", root).group(1)
    called = re.search(r"calls=(%[\w.]+)", root).group(1)
    print(f"{name} ENTRY's ROOT: a fusion of kind {kind}, calling {called}")
tpu_fused = strip(texts["TPU"])
ops = re.findall(r"= \S+ (convolution|dot|tanh|reduce)\(", tpu_fused)
print("TPU: operations in the fused computations:", ", ".join(ops))
assert "kind=kOutput" in re.search(r"ROOT .*", tpu_fused[tpu_fused.index("ENTRY"):]).group(0)
assert "convolution" in ops and "dot" not in ops

# %% layouts
for name, text in texts.items():
    print(f"{name} entry_computation_layout: {header(text)}")
for name in texts:
    memory = compiled[name].memory_analysis()
    print(f"{name} memory_analysis: arguments {memory.argument_size_in_bytes} bytes, "
          f"output {memory.output_size_in_bytes} bytes (one f32 scalar is 4 bytes)")
assert compiled["TPU"].memory_analysis().output_size_in_bytes == 128 * 4
assert compiled["CPU"].memory_analysis().output_size_in_bytes == 4

# %% prefetch
assert "copy-start" in tpu_fused and "copy-start" not in strip(texts["CPU"])
for line in tpu_fused.splitlines():
    if "copy-start" in line or "copy-done" in line:
        print(line.strip())

# %% estimates
for name in texts:
    cost = compiled[name].cost_analysis()
    print(f"{name} cost_analysis: flops {cost['flops']:.0f}, transcendentals "
          f"{cost['transcendentals']:.0f}, bytes accessed {cost['bytes accessed']:.0f}")
by_hand = 2 * 256 * 512 * 128 + 256 * 128
print(f"flops by hand, 2 * 256 * 512 * 128 + 256 * 128 (the sum): {by_hand}")

# %% results
print(f"TPU result {results['TPU']:.4f}   CPU result {results['CPU']:.4f}   "
      f"difference {results['TPU'] - results['CPU']:+.4f}")
x = jax.device_put(jnp.ones((256, 512)), tpu)
w = jax.device_put(jnp.full((512, 128), 0.01), tpu)
exact = jax.jit(lambda x, w: jnp.tanh(jnp.matmul(x, w, precision="highest")).sum())(x, w)
print(f"TPU with precision='highest': {float(exact):.4f}")
print(f"by hand in float64, 32768 * tanh(512 * 0.01): {32768 * np.tanh(512 * 0.01):.4f}")
x_cpu, w_cpu = jax.device_put(x, cpu), jax.device_put(w, cpu)
print(f"one product element: TPU {float((x @ w)[0, 0]):.6f}, "
      f"TPU highest {float(jnp.matmul(x, w, precision='highest')[0, 0]):.6f}, "
      f"CPU {float((x_cpu @ w_cpu)[0, 0]):.6f}")
print(f"0.01 rounded to bfloat16: {float(jnp.bfloat16(0.01)):.9f}")
for name, device in [("TPU", tpu), ("CPU", cpu)]:
    t = float(jnp.tanh(jax.device_put(jnp.float32(5.12), device)))
    print(f"tanh(5.12) on the {name}: {t:.7f}, times 32768: {32768 * t:.4f}")
print(f"tanh(5.12) in float64: {np.tanh(5.12):.7f}")

# %% plot hide
keys = ["ENTRY instructions (no parameters)", "computations",
        "instructions, all computations", "fusion instructions"]
panels.bar(
    "The same function's optimized HLO on each backend",
    labels=[k.split(" (")[0] for k in keys],
    ylabel="count in the optimized HLO text",
    series={"CPU": [counts["CPU"][k] for k in keys], "TPU": [counts["TPU"][k] for k in keys]},
)
