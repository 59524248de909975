import contextlib
import io

import jax
import jax.numpy as jnp
from jax.ad_checkpoint import print_saved_residuals

from builder import panels
# %% stack
W = jax.random.normal(jax.random.key(0), (512, 512)) * 0.05
x = jnp.ones((256, 512))
dots = jax.checkpoint_policies.dots_saveable


def make_stack(act, wrap_layer=lambda f: f):
    layer = wrap_layer(lambda W, h: act(h @ W))

    def stack(W, x):
        h = x
        for _ in range(4):
            h = layer(W, h)
        return jnp.sum(h ** 2)

    return stack


def variants(act):
    return {
        "no remat": make_stack(act),  # <1>
        "whole checkpoint": jax.checkpoint(make_stack(act)),  # <2>
        "layer checkpoint": make_stack(act, jax.checkpoint),  # <3>
        "layer dots_saveable": make_stack(act, lambda f: jax.checkpoint(f, policy=dots)),  # <4>
    }

# %% residuals
# 1. What reverse mode keeps: the jaxpr-level list, no execution.
counts = {}
for name, fn in variants(jnp.tanh).items():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(fn, W, x)
    lines = buf.getvalue().splitlines()
    counts[name] = len(lines)
    print(f"--- tanh, {name}: {len(lines)} residuals")
    print("\n".join(lines))
# %% precision
# The jaxpr print_saved_residuals reads: the forward half of the vjp, whose outputs after
# the loss are the values handed to the backward half. What made each of them?
policy_stack = variants(jnp.tanh)["layer dots_saveable"]
forward = jax.make_jaxpr(lambda W, x: jax.vjp(policy_stack, W, x))(W, x).jaxpr
made_by = {v: eqn for eqn in forward.eqns for v in eqn.outvars}
saved = [made_by.get(v) for v in forward.outvars[1:]]  # None: an argument, saved as it is
rounded = [eqn for eqn in saved if eqn is not None and eqn.primitive.name == "reduce_precision"]
bits = " ".join(f"{k}={v}" for k, v in sorted(rounded[0].params.items()))
print(f"dots_saveable forward half: {len(saved)} saved values, {len(rounded)} of them "
      f"outputs of reduce_precision[{bits}]")
print("what each reduce_precision rounds: outputs of",
      sorted({made_by[eqn.invars[0]].primitive.name for eqn in rounded}))
# %% arena
# 2. What the compiler reserves: compile jit(grad(...)), nothing runs.
arena = {}
arena_bytes = {}
for act_name, act in [("tanh", jnp.tanh), ("gelu", jax.nn.gelu)]:
    arena[act_name] = []
    for name, fn in variants(act).items():
        compiled = jax.jit(jax.grad(fn)).lower(W, x).compile()
        temp = compiled.memory_analysis().temp_size_in_bytes
        cost = compiled.cost_analysis()
        arena[act_name].append(temp / 2**20)
        print(f"{act_name} {name:20s} temp={temp / 2**20:5.2f} MiB "
              f"flops={cost['flops']:,.0f} transcendentals={cost['transcendentals']:,.0f}")
        if act_name == "tanh":
            arena_bytes[name] = temp
extra = arena_bytes["layer checkpoint"] - arena_bytes["no remat"]
print(f"tanh arena, layer checkpoint minus no remat: {extra:,} bytes; "
      f"one f32[256,512] is {256 * 512 * 4:,} bytes")
# %% panels hide
panels.bar(
    "Residuals listed by print_saved_residuals (tanh stack)",
    labels=list(counts),
    ylabel="saved arrays (entries, not bytes)",
    series={"residuals": list(counts.values())},
)
panels.bar(
    "Temporary arena of the compiled gradient (memory_analysis, CPU)",
    labels=list(counts),
    ylabel="temp_size_in_bytes (MiB)",
    series={"tanh stack": arena["tanh"], "gelu stack": arena["gelu"]},
)
