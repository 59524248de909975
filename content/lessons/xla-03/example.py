# %% setup hide
import jax
import jax.numpy as jnp

from builder import panels

f32 = jnp.float32

# %% estimates
def matmul(a, b):
    return a @ b


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


def estimates(fn, *shapes):
    """Compile from shapes alone: no array is allocated, nothing runs."""
    specs = [jax.ShapeDtypeStruct(s, f32) for s in shapes]
    compiled = jax.jit(fn).lower(*specs).compile()
    return compiled.cost_analysis(), compiled.memory_analysis()

# %% raw-reports
# 1. The whole report for one small program.
cost, mem = estimates(matmul, (256, 256), (256, 256))
print("cost_analysis() for a 256x256 matmul:")
for key in sorted(cost):
    print(f"  {key!r}: {cost[key]:,.0f}")
print("memory_analysis() for the same:")
for field in ["argument_size_in_bytes", "output_size_in_bytes",
              "temp_size_in_bytes", "alias_size_in_bytes", "generated_code_size_in_bytes"]:
    print(f"  {field}: {getattr(mem, field):,d}")
# %% square
# 2. Square matmuls: the estimate against the textbook count 2*n**3.
print()
sizes = [128, 256, 512, 1024]
est_flops, hand_flops = [], []
for n in sizes:
    cost, mem = estimates(matmul, (n, n), (n, n))
    est_flops.append(cost["flops"])
    hand_flops.append(2 * n**3)
    print(f"n={n:5d}  flops {cost['flops']:>14,.0f}  2n³ {2 * n**3:>14,d}  "
          f"bytes accessed {cost['bytes accessed']:>12,.0f}  12n² {12 * n * n:>12,d}")
# %% mlp
# 3. A two-layer MLP: where do the flops and the bytes go?
B, D, H, O = 256, 512, 1024, 128
cost, mem = estimates(mlp, (B, D), (D, H), (H, O))
mlp_mem = mem
print()
print(f"mlp B={B} D={D} H={H} O={O}")
print(f"  flops {cost['flops']:,.0f}   hand count 2BDH + 2BHO = {2 * B * D * H + 2 * B * H * O:,d}")
print(f"  transcendentals {cost['transcendentals']:,.0f}   hand count B*H = {B * H:,d}")
print(f"  argument bytes {mem.argument_size_in_bytes:,d}   4*(BD + DH + HO) = {4 * (B * D + D * H + H * O):,d}")
print(f"  output bytes {mem.output_size_in_bytes:,d}   4*B*O = {4 * B * O:,d}")
print(f"  temp bytes {mem.temp_size_in_bytes:,d}   4*B*H = {4 * B * H:,d}")
# %% chain
# 4. What counts as a flop: an elementwise chain ending in a sum.
def chain(x):
    return jnp.sum(jnp.exp(jnp.sin(x) * 2.0 + 1.0) / (1.0 + x * x))


N = 512 * 512
cost, mem = estimates(chain, (512, 512))
print()
print(f"chain on {N:,d} elements: flops {cost['flops']:,.0f} ({cost['flops'] / N:.2f} per element), "
      f"transcendentals {cost['transcendentals']:,.0f} ({cost['transcendentals'] / N:.2f} per element)")
# %% big-shapes
# 5. Shapes that are never allocated: 16384x16384 f32 is 1 GiB per operand.
n = 16384
cost, mem = estimates(matmul, (n, n), (n, n))
print()
print(f"n={n}: flops {cost['flops']:.4g}, arguments {mem.argument_size_in_bytes / 2**30:.1f} GiB, "
      f"output {mem.output_size_in_bytes / 2**30:.1f} GiB (compiled from ShapeDtypeStruct, nothing allocated)")
# %% plot hide
panels.line(
    "Matmul flops: compiler estimate against the hand count 2n³",
    x=sizes,
    xlabel="n (square n×n matrices)",
    ylabel="GFLOP (floating-point operations, not per second)",
    series={"cost_analysis flops": [f / 1e9 for f in est_flops],
            "hand count 2n³": [f / 1e9 for f in hand_flops]},
)
panels.bar(
    f"MLP memory_analysis, B={B} D={D} H={H} O={O}",
    labels=["arguments", "output", "temporaries"],
    ylabel="KiB",
    series={"memory_analysis": [mlp_mem.argument_size_in_bytes / 1024,
                                mlp_mem.output_size_in_bytes / 1024,
                                mlp_mem.temp_size_in_bytes / 1024]},
)
