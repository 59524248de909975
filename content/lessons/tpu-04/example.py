# %% setup hide
import re
import statistics
import time

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from builder import panels

if jax.default_backend() != "tpu":
    raise SystemExit(
        "This lesson needs a TPU: jax's default backend here is "
        f"{jax.default_backend()!r} ({jax.devices()[0].device_kind}). Run it on a TPU machine."
    )


def median_ms(f, *args, repeats=10):
    f(*args).block_until_ready()                 # compile and warm up, untimed
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(*args).block_until_ready()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


# %% kernel
def matmul_kernel(a_ref, b_ref, o_ref):
    @pl.when(pl.program_id(2) == 0)                  # <1>
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)
    o_ref[...] += jnp.dot(a_ref[...], b_ref[...],    # <2>
                          preferred_element_type=jnp.float32)


def matmul(a, b, block):
    n = a.shape[0]
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((n, n), jnp.float32),
        grid=(n // block, n // block, n // block),     # <3>
        in_specs=[pl.BlockSpec((block, block), lambda i, j, k: (i, k)),   # <4>
                  pl.BlockSpec((block, block), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((block, block), lambda i, j, k: (i, j)),  # <5>
    )(a, b)


pallas_matmul = jax.jit(matmul, static_argnames="block")
xla_matmul = jax.jit(lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32))

# %% check
N = 4096
a = jax.random.normal(jax.random.key(0), (N, N), jnp.bfloat16)
b = jax.random.normal(jax.random.key(1), (N, N), jnp.bfloat16)
reference = xla_matmul(a, b)
BLOCKS = [128, 256, 512]
for block in BLOCKS:
    ours = pallas_matmul(a, b, block=block)
    gap = float(jnp.abs(ours - reference).max() / jnp.abs(reference).max())
    print(f"block {block}: largest difference from jnp.dot / largest entry = {gap:.1e}")
    assert gap < 1e-4

# %% hlo
text = pallas_matmul.lower(a, b, block=512).compile().as_text()
text = re.sub(r", metadata=\{[^}]*\}", "", text)
text = re.sub(r", backend_config=(\"(?:[^\"\\\\]|\\\\.)*\"|\S+)", "", text)
entry = text[text.index("ENTRY"):]
for line in entry[: entry.index("\n}") + 2].strip().splitlines():
    print(line if len(line) <= 240 else line[:240] + " ...")
targets = re.findall(r'custom_call_target="([^"]+)"', text)
print("custom-call targets:", targets)

# %% time
flops = 2 * N**3
timings = {"jnp.dot (XLA)": median_ms(xla_matmul, a, b)}
for block in BLOCKS:
    timings[f"Pallas, {block} blocks"] = median_ms(
        lambda a, b, block=block: pallas_matmul(a, b, block=block), a, b)
print(f"{'':22s} {'grid steps':>10s} {'block bytes':>14s} {'median ms':>10s} {'TFLOP/s':>8s}")
for label, t in timings.items():
    block = int(label.split()[1]) if label.startswith("Pallas") else None
    steps = f"{(N // block) ** 3:10d}" if block else f"{'':10s}"
    moved = f"{block * block * (2 + 2 + 4):14,d}" if block else f"{'':14s}"
    print(f"{label:22s} {steps} {moved} {panels.timing(t, '10.3f')} "
          f"{panels.timing(flops / (t / 1000) / 1e12, '8.1f')}")
fastest = min(BLOCKS, key=lambda block: timings[f"Pallas, {block} blocks"])
print(f"fastest block: {fastest}; its time / jnp.dot's: "
      f"{panels.timing(timings[f'Pallas, {fastest} blocks'] / timings['jnp.dot (XLA)'], '.2f')}")
print(f"128 blocks' time / 512 blocks' time: "
      f"{panels.timing(timings['Pallas, 128 blocks'] / timings['Pallas, 512 blocks'], '.1f')}")

# %% plot hide
panels.bar(
    f"A {N} x {N} bf16 product, f32 result, median of 10 calls",
    labels=list(timings),
    ylabel="TFLOP/s",
    series={"throughput": [round(flops / (t / 1000) / 1e12, 2) for t in timings.values()]},
    timing=True,
)
