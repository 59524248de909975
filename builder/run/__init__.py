"""Running examples: lessons that are not fresh in, recordings written to `recordings/` out.

batch (which lessons, how many at once, keep what succeeded), execute (one example, one
subprocess: the door), supervise and pipes (the child's processes and pipes), harness (what
runs inside the example's process), sandbox (bubblewrap), guard and leaks (what an example
must not change or keep), distributed (a Dask cluster) and shard (a K-th for a CI matrix).
"""
