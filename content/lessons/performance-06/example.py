# %% setup hide
import collections
import glob
import gzip
import json
import os
import re
import time

import jax
import jax.numpy as jnp

from builder import panels
# %% capture
x = jnp.ones((512, 512))


@jax.jit
def step(a):
    return jnp.tanh(a @ a).sum()


def annotated(a):
    # A TraceAnnotation inside a jitted function runs while tracing, not per call.
    with jax.profiler.TraceAnnotation("inside the traced function"):
        return jnp.tanh(a @ a).sum()


annotated_step = jax.jit(annotated)
step(x).block_until_ready()  # compile before the capture starts

with jax.profiler.trace("trace_out"):
    t0 = time.perf_counter()
    with jax.profiler.TraceAnnotation("dispatch ten steps"):
        for _ in range(10):
            out = step(x)
    with jax.profiler.TraceAnnotation("block_until_ready"):
        out.block_until_ready()
    wall_ms = (time.perf_counter() - t0) * 1000
    for _ in range(10):
        annotated_step(x).block_until_ready()
# %% files
# One capture directory per trace() call; the file names carry the host name.
files = sorted(glob.glob("trace_out/plugins/profile/*/*"))
kinds = sorted(".".join(os.path.basename(f).split(".")[-3 if f.endswith(".gz") else -2:])
               for f in files)
print("files written:", kinds)
# %% threads
path = [f for f in files if f.endswith(".trace.json.gz")][0]
events = json.load(gzip.open(path))["traceEvents"]
threads = sorted({e["args"]["name"].split("/")[0] for e in events
                  if e.get("name") == "thread_name"})
print("threads:", threads)

spans = [e for e in events if e.get("ph") == "X"]
print("complete events:", "many" if len(spans) > 100 else len(spans))
# %% annotations
# Our own annotations: how many times each appears, how long it lasted.
ann_ms = {}
for name in ["dispatch ten steps", "block_until_ready", "inside the traced function"]:
    hits = [e for e in spans if e["name"] == name]
    ann_ms[name] = sum(e["dur"] for e in hits) / 1000
    print(f"annotation {name!r}: x{len(hits)}, {panels.timing(ann_ms[name], '.2f')} ms")
# %% hlo-ops
# Events the executable emitted carry the HLO module and op in their args.
op_ms = collections.defaultdict(float)
op_n = collections.Counter()
for e in spans:
    args = e.get("args", {})
    if args.get("hlo_module") == "jit_step":
        op_ms[args["hlo_op"]] += e["dur"] / 1000
        op_n[args["hlo_op"]] += 1
for op in sorted(op_ms):
    print(f"jit_step op {op}: x{op_n[op]}, {panels.timing(op_ms[op], '.2f')} ms summed")
modules = sorted({e["args"]["hlo_module"] for e in spans if "hlo_module" in e.get("args", {})})
print("modules seen in the trace:", modules)
hlo_text = step.lower(x).compile().as_text()
print("trace ops named in the optimized HLO text:",
      sum(op in hlo_text for op in op_ms), "of", len(op_ms))
# What each op is in that text: its instruction, and the operations in the computation it calls.
for op in sorted(op_ms):
    line = re.search(rf"\n  (?:ROOT )?%{re.escape(op)} = \S+ (\w+)\(.*", hlo_text)
    if fusion := re.search(r"kind=(\w+), calls=%([\w.]+)", line[0]):
        body = re.search(rf"\n%{re.escape(fusion[2])} .*?\n\}}", hlo_text, re.S)[0]
        inside = [o for o in re.findall(r"= \S+ (\w+)\(", body) if o not in ("parameter", "constant")]
        print(f"{op}: a fusion of kind {fusion[1]}, computing {', '.join(inside)}")
    else:
        print(f"{op}: a {line[1]} instruction of its own")
print(f"perf_counter around dispatch + block: {panels.timing(wall_ms, '.2f')} ms")
# %% plot hide
panels.bar(
    "Durations read from the profiler trace (one recorded run, CPU)",
    labels=["dispatch ten steps", "block_until_ready"] + sorted(op_ms),
    ylabel="milliseconds (ms)",
    series={"summed event duration": [ann_ms["dispatch ten steps"], ann_ms["block_until_ready"]]
            + [op_ms[op] for op in sorted(op_ms)]},
    timing=True,
)
