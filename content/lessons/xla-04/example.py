# %% compile
import os

os.environ["XLA_FLAGS"] = "--xla_dump_to=dump"   # read once, at the first array or compile

import re  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from builder import panels  # noqa: E402


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


S = jax.ShapeDtypeStruct
f32 = jnp.float32
lowered = jax.jit(mlp).lower(S((256, 512), f32), S((512, 1024), f32), S((1024, 128), f32))
compiled = lowered.compile()
print("compiled from shapes; nothing ran")
# %% files
# What landed in dump/.
print("== files in dump/")
for name in sorted(os.listdir("dump")):
    if os.path.isdir(os.path.join("dump", name)):
        inner = ", ".join(sorted(os.listdir(os.path.join("dump", name))))
        print(name + "/  ->  " + inner)
    else:
        print(name)

# %% memory-report
def read(suffix):
    [name] = [n for n in os.listdir("dump") if n.endswith(suffix)]
    with open(os.path.join("dump", name)) as f:
        return f.read()


print("== memory usage report")
report = read("cpu_after_optimizations-memory-usage-report.txt")
print(report.strip())
# %% buffer-assignment
print("== buffer assignment, allocation lines")
assignment = read("cpu_after_optimizations-buffer-assignment.txt")
for line in assignment.strip().splitlines()[1:]:
    print(line.split(", metadata")[0])
# %% used-values
# Every value the values file records, with the metadata of the instruction that defined it.
values = read("cpu_after_optimizations-buffer-assignment-values.txt")
used = values[values.index("Used values:"):]
defined = re.findall(r"^<\d+ (\S+) @0>\n.*?^ from instruction: %\S+ = \S+ ([\w-]+)\(.*?metadata=\{([^}]*)\}",
                     used, re.M | re.S)
framed = [name for name, _, meta in defined if "stack_frame_id=" in meta]
op_name_only = [f"{name} ({op})" for name, op, meta in defined if re.fullmatch(r'op_name="[^"]*"', meta)]
print(f"used values: {len(defined)}; with a stack_frame_id: {len(framed)}; "
      f"with only an op_name: {len(op_name_only)}: {', '.join(op_name_only)}")
# %% totals
allocs = re.findall(r"^allocation (\d+): size (\d+), (.*?)(?:, shape \|.*)?:$", assignment, re.M)
report_total = int(re.search(r"Total bytes: (\d+)", report).group(1))
mem = compiled.memory_analysis()
stats_total = mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes
print()
print(f"memory usage report total: {report_total:,d} bytes")
print(f"memory_analysis argument + output + temp: {stats_total:,d} bytes")
# %% passes
# A second compile of the same module, dumping a snapshot of the HLO as each pipeline
# starts, after each pass that reports a change, and at steps some passes log themselves.
lowered.compile(compiler_options={"xla_dump_to": "dump_passes", "xla_dump_hlo_pass_re": ".*"})
passes = sorted(n for n in os.listdir("dump_passes") if re.search(r"\.\d{4}\.", n))
starts = [n for n in passes if ".after_pipeline-start." in n]
after_pass = [n for n in passes if ".before_" in n and n not in starts]
print()
inside = len(passes) - len(starts) - len(after_pass)
print(f"== dump_passes/: {len(passes)} HLO snapshots: {len(starts)} as a pipeline starts, "
      f"{len(after_pass)} after a pass, {inside} from inside a pass")
previous, differ = None, 0
for name in passes:
    with open(os.path.join("dump_passes", name)) as f:
        text = f.read()
    mark = ""
    if previous is not None and text != previous:
        mark, differ = "   <- differs from the snapshot before", differ + 1
    print(re.sub(r"^module_\d+\.jit_mlp\.", "", name) + mark)
    previous = text
print(f"snapshots that differ from the one before: {differ} of {len(passes)}")
# %% plot hide
panels.bar(
    "Allocations in the buffer assignment",
    labels=[f"allocation {i} ({kind.split(' shape')[0]})" for i, _, kind in allocs],
    ylabel="KiB",
    series={"size": [int(size) / 1024 for _, size, _ in allocs]},
)
panels.bar(
    "Two readings of the same compiled module",
    labels=["memory usage report total", "memory_analysis arg + out + temp"],
    ylabel="bytes",
    series={"bytes": [report_total, stats_total]},
)
