# %% imports hide
import contextlib
import io
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import print_saved_residuals

from builder import panels
# %% variants
LAYERS = 4
W = jax.random.normal(jax.random.key(1), (64, 64)) * 0.2
x = jax.random.normal(jax.random.key(2), (32, 64))


def make_loss(wrap_layer):
    layer = wrap_layer(lambda W, h: jnp.tanh(h @ W))

    def loss(W, x):
        h = x
        for _ in range(LAYERS):
            h = layer(W, h)
        return jnp.sum(h ** 2)

    return loss


variants = {
    "no remat": make_loss(lambda f: f),
    "layer checkpoint": make_loss(jax.checkpoint),
    "dots_saveable": make_loss(
        lambda f: jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable)),
}

# %% hand-pass
# The solution: an independent reverse pass, written by hand in float64 NumPy.
def hand_grad(W, x, tanh_derivative=True):
    W = np.asarray(W, np.float64)
    hs = [np.asarray(x, np.float64)]
    for _ in range(LAYERS):                  # forward: keep every activation
        hs.append(np.tanh(hs[-1] @ W))
    dW = np.zeros_like(W)
    dh = 2.0 * hs[-1]                        # d sum(h**2) / dh
    for k in range(LAYERS, 0, -1):           # backward: newest layer first
        dz = dh * (1.0 - hs[k] ** 2) if tanh_derivative else dh  # tanh' = 1 - tanh**2
        dW += hs[k - 1].T @ dz               # z = h W  ->  dW = h^T dz
        dh = dz @ W.T                        #          ->  dh = dz W^T
    return dW

# %% compare
reference = hand_grad(W, x)
scale = np.max(np.abs(reference))
print(f"hand-written reverse pass: dW shape {reference.shape}, max |dW| = {scale:.4f}")

grads, residuals, worst = {}, {}, {}
for name, fn in variants.items():
    grads[name] = np.asarray(jax.jit(jax.grad(fn))(W, x), np.float64)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(fn, W, x)
    residuals[name] = len(buf.getvalue().splitlines())
    worst[name] = np.max(np.abs(grads[name] - reference)) / scale
    print(f"{name:17s} residuals={residuals[name]:2d} "
          f"max error vs hand pass = {worst[name]:.1e} of max |dW|")
# %% checks
# The checks.
assert residuals["layer checkpoint"] < residuals["no remat"]
print("check passed: layer checkpoint saves fewer residuals "
      f"({residuals['layer checkpoint']} < {residuals['no remat']})")
for name in variants:
    assert worst[name] < 1e-5, name
    print(f"check passed: {name} matches the hand-written reverse pass (within 1e-5 of max |dW|)")
for name in ["layer checkpoint", "dots_saveable"]:
    diff = np.max(np.abs(grads[name] - grads["no remat"])) / scale
    assert diff < 1e-5, name
    print(f"check passed: {name} agrees with no remat, max difference {diff:.1e} of max |dW|")
# %% matmul-count
# Why the zero: what the compiler kept of the recomputation (CPU, this version).
for name, fn in variants.items():
    lowered = jax.jit(jax.grad(fn)).lower(W, x)
    before = len(re.findall(r"stablehlo\.dot_general", lowered.as_text()))
    after = len(re.findall(r"\bdot\(", lowered.compile().as_text()))
    print(f"{name:17s} matmuls: {before} in StableHLO, {after} in the compiled program")
# %% teeth
# The check has teeth: a hand pass that forgets tanh's derivative fails it.
broken = np.max(np.abs(hand_grad(W, x, tanh_derivative=False) - reference)) / scale
assert broken > 1e-5
print(f"check passed: a hand pass without the tanh derivative misses by {broken:.1e} of max |dW|")
# %% panels hide
panels.bar(
    "What remat changed: residuals saved for the backward pass",
    labels=list(variants),
    ylabel="saved arrays (entries, not bytes)",
    series={"print_saved_residuals lines": list(residuals.values())},
)
panels.bar(
    "What remat did not change: gradient error against the hand pass",
    labels=list(variants),
    ylabel="max |dW - dW_hand| / max |dW_hand| (ratio)",
    series={"relative error": list(worst.values())},
)
