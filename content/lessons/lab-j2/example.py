# %% setup hide
import math
import re

import jax
import jax.numpy as jnp

from builder import panels

f32 = jnp.float32


def compile_from_shapes(fn, *shapes):
    return jax.jit(fn).lower(*[jax.ShapeDtypeStruct(s, f32) for s in shapes]).compile()

# %% mlp
# ---- Part 1: a two-layer MLP with biases and a relu -------------------------------
def mlp(x, w1, b1, w2, b2):
    return jnp.maximum(x @ w1 + b1, 0.0) @ w2 + b2


D, H, O = 512, 1024, 128

# %% predict
def predict_mlp(B):
    """The solution: one flop per multiply or add, two per multiply-add, 4 bytes per f32."""
    return {
        "flops": 2 * B * D * H + B * H + B * H + 2 * B * H * O + B * O,  # <1>
        "transcendentals": 0,  # <2>
        "argument bytes": 4 * (B * D + D * H + H + H * O + O),  # <3>
        "output bytes": 4 * B * O,  # <4>
        "temp bytes": 4 * B * H,  # <5>
    }

# %% check-mlp
def report_mlp(B):
    c = compile_from_shapes(mlp, (B, D), (D, H), (H,), (H, O), (O,))
    cost, mem = c.cost_analysis(), c.memory_analysis()
    return {
        "flops": int(cost["flops"]),
        "transcendentals": int(cost.get("transcendentals", 0)),   # key absent when zero
        "argument bytes": mem.argument_size_in_bytes,
        "output bytes": mem.output_size_in_bytes,
        "temp bytes": mem.temp_size_in_bytes,
    }


results = {}
for B in (256, 1024):
    predicted, reported = predict_mlp(B), report_mlp(B)
    results[B] = (predicted, reported)
    for key in predicted:
        print(f"B={B:4d} {key:>16}: predicted {predicted[key]:>13,d}  compiler {reported[key]:>13,d}")
        assert predicted[key] == reported[key], (B, key)
    print(f"check passed: all five MLP estimates at B={B} match the hand count")
ratio = results[1024][1]["flops"] / results[256][1]["flops"]
print(f"flops ratio B=1024 / B=256: {ratio:.3f}")
assert ratio == 4.0
print("check passed: flops scale linearly with the batch")
# %% attention
# ---- Part 2: one attention head ------------------------------------------------------
T, d = 256, 64


def attention(q, k, v):
    s = (q @ k.T) * 0.125
    e = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    return (e / jnp.sum(e, axis=-1, keepdims=True)) @ v

# %% by-rule
# Rule: a reduction over n values costs n - 1 flops per output; exp is a transcendental.
by_rule = 2 * T * T * d + T * T + T * (T - 1) + T * T + T * (T - 1) + T * T + 2 * T * T * d  # <1>
lowered = jax.jit(attention).lower(*[jax.ShapeDtypeStruct((T, d), f32)] * 3)
compiled = lowered.compile()
reported = int(compiled.cost_analysis()["flops"])  # <2>
print()
print(f"attention flops: by the rule {by_rule:,d}, compiler {reported:,d}, "
      f"difference {reported - by_rule:,d}")

# %% count-ops
def count(op, text):  # instructions of this op, and the elements they compute together
    shapes = re.findall(rf"= f32\[([\d,]*)\]\S* {op}\(", text)
    return len(shapes), sum(math.prod(int(n) for n in s.split(",") if n) for s in shapes)


before = lowered.as_text(dialect="hlo")
after = compiled.as_text()
for op in ["multiply", "subtract", "exponential", "divide", "reduce"]:
    (n0, e0), (n1, e1) = count(op, before), count(op, after)
    print(f"  {op:>11}: {n0} before optimization ({e0:>6,d} elements), {n1} after ({e1:>6,d} elements)")
# Which fusions hold the multiplies and the divide after optimization, and what each reads.
bodies = dict(re.findall(r"^%(\S+) \(.*?\n(.*?)\n}", after, re.M | re.S))
holders = re.findall(r"%(\S+) = \S+ fusion\(([^)]*)\).*calls=%(\S+?)[,\s]", after)
for op in ["multiply", "divide"]:
    for name, args, comp in holders:
        for shape in re.findall(rf"= (f32\[[\d,]*\])\S* {op}\(", bodies[comp]):
            print(f"  {op} {shape} inside {name}, reading {args.replace('%', '')}")
extra = sum(count(op, after)[1] - count(op, before)[1] for op in ["multiply", "divide"])
print(f"multiply and divide elements, after minus before: {extra:,d}")
assert extra == reported - by_rule == T
print("check passed: the extra T flops are the divide, rewritten as T reciprocals and T*T multiplies")
# %% charts hide
panels.bar(
    "Hand count against cost_analysis",
    labels=["MLP B=256", "MLP B=1024", "attention T=256"],
    ylabel="MFLOP (floating-point operations, not per second)",
    series={
        "hand count": [results[256][0]["flops"] / 1e6, results[1024][0]["flops"] / 1e6, by_rule / 1e6],
        "cost_analysis": [results[256][1]["flops"] / 1e6, results[1024][1]["flops"] / 1e6, reported / 1e6],
    },
)
panels.bar(
    "MLP B=256: hand count against memory_analysis",
    labels=["argument bytes", "output bytes", "temp bytes"],
    ylabel="KiB",
    series={
        "hand count": [results[256][0][k] / 1024 for k in ["argument bytes", "output bytes", "temp bytes"]],
        "memory_analysis": [results[256][1][k] / 1024 for k in ["argument bytes", "output bytes", "temp bytes"]],
    },
)
