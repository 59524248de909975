# %% setup hide
import jax
import jax.numpy as jnp
from jax import lax
from builder import panels

# %% recurrence
def step(h, w):
    return jnp.tanh(h @ w) + h


def unrolled(h, w, n):
    for _ in range(n):
        h = step(h, w)
    return h

# %% rolled
# --- the solution: the same recurrence as one scan equation ---
def rolled(h, w, n):
    h, _ = lax.scan(lambda h, _: (step(h, w), None), h, length=n)
    return h
# ---------------------------------------------------------------

# %% measure
def equations(fn, *args, **static):
    return len(jax.make_jaxpr(lambda *a: fn(*a, **static))(*args).jaxpr.eqns)


h = jnp.linspace(-1.0, 1.0, 8).reshape(1, 8)
w = jnp.eye(8) * 0.5
per_step = equations(step, h, w)
print("equations in one step:", per_step)

trips = [1, 2, 4, 8, 16]
loop_counts = [equations(unrolled, h, w, n=n) for n in trips]
scan_counts = [equations(rolled, h, w, n=n) for n in trips]
print("python loop:", loop_counts)
print("lax.scan   :", scan_counts)
# %% check-formula
# Check 1: the prediction for the Python loop, n * (equations in one step).
for n, got in zip(trips, loop_counts):
    assert got == n * per_step, (n, got)
print(f"check passed: python loop has n * {per_step} equations for every n tried")
# %% check-scan
# Check 2: the rewrite does not grow with n, and holds one scan.
assert len(set(scan_counts)) == 1
prims = [e.primitive.name for e in jax.make_jaxpr(lambda h, w: rolled(h, w, 16))(h, w).jaxpr.eqns]
assert prims == ["scan"], prims
print("check passed: the lax.scan version is", prims, "at every n")
# %% check-numbers
# Check 3: same numbers.
a = jax.jit(unrolled, static_argnums=2)(h, w, 16)
b = jax.jit(rolled, static_argnums=2)(h, w, 16)
err = float(jnp.max(jnp.abs(a - b)))
assert err < 1e-5, err
print(f"check passed: results agree at n=16, max abs difference {err:.1e}")
# %% chart hide
panels.bar(
    "Equations in the jaxpr, by trip count",
    labels=[f"n={n}" for n in trips],
    ylabel="jaxpr equations (top level)",
    series={"python loop": loop_counts, "lax.scan": scan_counts},
)
