# %% imports hide
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

from builder import panels

# %% compile-step
@jax.jit
def step(a):
    return jnp.tanh(a @ a)


x = jnp.ones((1024, 1024))
step(x).block_until_ready()  # compile and run once, outside every timer


def median_ms(fn, repeats=5):
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)

# %% is-ready
# 1. Is the result there when the call returns?
y = step(x)
print("result ready when the call returned:", y.is_ready())
y.block_until_ready()
print("result ready after block_until_ready:", y.is_ready())
# %% three-timers
# 2. Three timers, stopping at three different points.
naive = median_ms(lambda: step(x))
jax.block_until_ready(step(x))  # drain the queue before the next measurement
blocked = median_ms(lambda: step(x).block_until_ready())
converted = median_ms(lambda: np.asarray(step(x)))
print(f"call only:                 {panels.timing(naive, '8.3f')} ms")
print(f"call + block_until_ready:  {panels.timing(blocked, '8.3f')} ms")
print(f"call + np.asarray:         {panels.timing(converted, '8.3f')} ms")
# %% ten-calls
# 3. Ten calls in a loop: the loop returns long before the work is done.
t0 = time.perf_counter()
outs = [step(x) for _ in range(10)]
t_loop = (time.perf_counter() - t0) * 1e3
ready_after_loop = sum(o.is_ready() for o in outs)
jax.block_until_ready(outs)
t_done = (time.perf_counter() - t0) * 1e3
print(f"ten calls: loop returned after {panels.timing(t_loop, '.3f')} ms "
      f"with {ready_after_loop} of 10 results ready")
print(f"ten calls: all results ready after {panels.timing(t_done, '.3f')} ms")
# %% panels hide
panels.bar(
    "One call of a 1024 x 1024 matmul + tanh, by where the timer stops",
    labels=["call only", "call + block_until_ready", "call + np.asarray"],
    ylabel="ms (wall clock, median of 5)",
    series={"one call": [naive, blocked, converted]},
    timing=True,
)
panels.bar(
    "Ten calls in a Python loop",
    labels=["loop returned", "all results ready"],
    ylabel="ms (wall clock, one run)",
    series={"ten calls": [t_loop, t_done]},
    timing=True,
)
