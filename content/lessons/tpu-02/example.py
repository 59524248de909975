# %% setup hide
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from builder import panels

if jax.default_backend() != "tpu":
    raise SystemExit(
        "This lesson needs a TPU: jax's default backend here is "
        f"{jax.default_backend()!r} ({jax.devices()[0].device_kind}). Run it on a TPU machine."
    )

# %% peak
# TPU v5e, per chip, from Google Cloud's TPU v5e page: datasheet numbers, not measured.
PEAK = {"bf16": 197e12, "int8": 393e12}
print(f"device: {jax.devices()[0].device_kind}")
print(f"datasheet peak: bf16 {PEAK['bf16'] / 1e12:.0f} TFLOP/s, "
      f"int8 {PEAK['int8'] / 1e12:.0f} TOP/s")

# %% bench
CONFIGS = {  # label: (input dtype, precision, accumulate in)
    "bf16": (jnp.bfloat16, None, None),
    "f32 default": (jnp.float32, "default", None),
    "f32 high": (jnp.float32, "high", None),
    "f32 highest": (jnp.float32, "highest", None),
    "int8 to int32": (jnp.int8, None, jnp.int32),
}


def operands(n):
    """One pair of random n x n matrices, made once and cast to each dtype."""
    a = jax.random.normal(jax.random.key(0), (n, n))
    b = jax.random.normal(jax.random.key(1), (n, n))
    return {dtype: (a.astype(dtype), b.astype(dtype)) if dtype != jnp.int8 else
            ((a * 30).astype(dtype), (b * 30).astype(dtype))
            for dtype in (jnp.bfloat16, jnp.float32, jnp.int8)}


def product(precision, accumulate):
    return jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision,
                                           preferred_element_type=accumulate))


PRODUCTS = {label: product(precision, accumulate)
            for label, (_, precision, accumulate) in CONFIGS.items()}


def median_ms(label, a, b, repeats=10):
    f = PRODUCTS[label]
    f(a, b).block_until_ready()                  # compile and warm up, untimed
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(a, b).block_until_ready()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


# %% measure
SIZES = [1024, 2048, 4096, 8192]
ms = {label: [] for label in CONFIGS}
for n in SIZES:
    matrices = operands(n)
    for label, (dtype, _, _) in CONFIGS.items():
        ms[label].append(median_ms(label, *matrices[dtype]))
    del matrices
rate = {label: [2 * n**3 / (t / 1000) / 1e12 for n, t in zip(SIZES, ms[label])]
        for label in CONFIGS}
print(f"{'n':>5s} {'config':14s} {'median ms':>10s} {'TFLOP/s':>8s} {'of peak':>8s}")
for label in CONFIGS:
    peak = PEAK["int8"] if label.startswith("int8") else PEAK["bf16"]
    for n, t, r in zip(SIZES, ms[label], rate[label]):
        print(f"{n:5d} {label:14s} {panels.timing(t, '10.3f')} {panels.timing(r, '8.1f')} "
              f"{panels.timing(r * 1e12 / peak, '8.0%')}")

# %% small
tiny_ms = median_ms("bf16", *operands(128)[jnp.bfloat16])
print(f"a 128 x 128 bf16 product ({2 * 128**3 / 1e6:.1f} MFLOP): "
      f"{panels.timing(tiny_ms, '.3f')} ms")
for n, t in zip(SIZES[:2], ms["bf16"][:2]):
    print(f"{n} bf16 ({2 * n**3 / 1e9:.1f} GFLOP): {panels.timing(t, '.3f')} ms measured, "
          f"{2 * n**3 / PEAK['bf16'] * 1000:.3f} ms at the datasheet peak")
print(f"2048 against 1024, bf16: flops x{(2048 / 1024) ** 3:.0f}, "
      f"time x{panels.timing(ms['bf16'][1] / ms['bf16'][0], '.1f')}")
print(f"8192 against 4096, bf16: flops x{(8192 / 4096) ** 3:.0f}, "
      f"time x{panels.timing(ms['bf16'][3] / ms['bf16'][2], '.1f')}")

# %% passes
big = {label: ms[label][-1] for label in CONFIGS}
for label in ["f32 default", "f32 high", "f32 highest", "int8 to int32"]:
    ratio = big[label] / big["bf16"]
    print(f"8192 {label:14s} time / bf16 time: {panels.timing(ratio, '.2f')}")
assert big["f32 highest"] > 2 * big["f32 default"]
assert big["f32 high"] > 1.5 * big["f32 default"]

# %% accuracy
n = 1024
a64 = np.asarray(jax.random.normal(jax.random.key(0), (n, n)), np.float64)
b64 = np.asarray(jax.random.normal(jax.random.key(1), (n, n)), np.float64)
exact = a64 @ b64                                     # float64 on the host: the reference
for precision in ["default", "high", "highest"]:
    got = jnp.matmul(jnp.float32(a64), jnp.float32(b64), precision=precision)
    error = np.abs(np.asarray(got, np.float64) - exact).max() / np.abs(exact).max()
    print(f"f32 {precision:8s} largest error / largest entry: {error:.1e}")
print(f"bfloat16 keeps {jnp.finfo(jnp.bfloat16).nmant} mantissa bits, float32 "
      f"{jnp.finfo(jnp.float32).nmant}: a relative step of "
      f"{float(jnp.finfo(jnp.bfloat16).eps):.1e} against {float(jnp.finfo(jnp.float32).eps):.1e}")

# %% plot hide
panels.line(
    "Matrix-multiply throughput on one TPU v5e chip (median of 10 calls)",
    x=SIZES,
    xlabel="n (an n x n by n x n product)",
    ylabel="TFLOP/s (TOP/s for int8)",
    series={**{label: [round(r, 2) for r in rate[label]] for label in CONFIGS},
            "bf16 peak (datasheet)": [PEAK["bf16"] / 1e12] * len(SIZES),
            "int8 peak (datasheet)": [PEAK["int8"] / 1e12] * len(SIZES)},
    timing=True,
)
panels.bar(
    "Time of one 8192 x 8192 product, against bf16's",
    labels=list(CONFIGS),
    ylabel="time / bf16 time",
    series={"8192": [round(big[label] / big["bf16"], 3) for label in CONFIGS]},
    timing=True,
)
