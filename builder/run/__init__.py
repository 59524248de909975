"""Running examples: lessons that are not fresh in, recordings written to `recordings/` out.

batch (which lessons, how many at once, keep what succeeded), result (an execution as a
recording), execute (one example, one subprocess: the door), environment (the example's and
the supervisor's), probe (the machine, measured outside the example), supervise and pipes
(the child's processes and pipes), harness (what runs inside the example's process),
sandbox (bubblewrap), guard and leaks (what an example must not change or keep),
distributed and workers (a Dask cluster) and shard (a K-th for a CI matrix).
"""
