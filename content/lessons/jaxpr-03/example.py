import jax
import jax.numpy as jnp
from builder import panels

# %% programs
def loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(h ** 2)


w = 0.1 * jnp.ones((4, 3))
x = jnp.ones((2, 4))
xs = jnp.ones((5, 2, 4))  # a batch of five x
t = jnp.ones((4, 3))      # a tangent for w

_, backward = jax.vjp(loss, w, x)  # the pullback, closed over residuals

programs = {
    "loss": (loss, (w, x)),
    "jvp in w": (lambda w, t: jax.jvp(lambda w: loss(w, x), (w,), (t,)), (w, t)),
    "vjp backward": (backward, (jnp.float32(1.0),)),
    "grad in w": (jax.grad(loss), (w, x)),
    "vmap over x": (jax.vmap(loss, in_axes=(None, 0)), (w, xs)),
    "vmap of grad": (jax.vmap(jax.grad(loss), in_axes=(None, 0)), (w, xs)),
    "hessian in w": (jax.hessian(loss), (w, x)),
}
jaxprs = {name: jax.make_jaxpr(fn)(*args) for name, (fn, args) in programs.items()}
counts = [len(j.jaxpr.eqns) for j in jaxprs.values()]
for name, n in zip(jaxprs, counts):
    print(f"{name:13s} {n:3d} equations")
# %% chart
panels.bar(
    "The same loss after each transformation",
    labels=list(jaxprs),
    ylabel="jaxpr equations (top level)",
    series={"make_jaxpr": counts},
)
# %% grad-jaxpr
print("--- grad in w")
print(jaxprs["grad in w"].pretty_print(source_info=True))
# %% vmap-jaxpr
print("--- vmap over x")
print(jaxprs["vmap over x"])
# %% vjp-jaxpr
print("--- vjp backward")
print(jaxprs["vjp backward"])
consts = jaxprs["vjp backward"].jaxpr.constvars
print("residuals held by the pullback:", len(consts), [str(v.aval) for v in consts])
# %% vmap-check
# A rewrite, not an approximation: the vmapped jaxpr gives the looped answer.
batched = jax.vmap(loss, in_axes=(None, 0))(w, xs)
looped = jnp.stack([loss(w, xi) for xi in xs])
print("vmap equals loop:", bool(jnp.allclose(batched, looped)))
