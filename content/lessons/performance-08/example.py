# %% setup hide
import collections
import glob
import os
import re
import shutil
import tempfile

# XLA writes the module after every pass that changed it, and the compiled program's buffer
# assignment, into a throwaway folder. It reads XLA_FLAGS when the backend starts, so this
# comes before the first array.
DUMP = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_pass_re=.*"

import jax
import jax.numpy as jnp

from builder import panels

W = jax.random.normal(jax.random.key(0), (512, 512)) * 0.05
x = jnp.ones((256, 512))

# %% programs
def make_stack(wrap_layer=lambda f: f):
    layer = wrap_layer(lambda W, h: jnp.tanh(h @ W))

    def stack(W, x):
        h = x
        for _ in range(4):
            h = layer(W, h)
        return jnp.sum(h ** 2)

    return stack


PROGRAMS = {"no remat": make_stack(), "layer checkpoint": make_stack(jax.checkpoint)}
HLO = {"dot": r"\bdot\(", "tanh": r"\btanh\(", "barrier": r"\bopt-barrier\("}
STABLEHLO = {"dot": r"stablehlo\.dot_general", "tanh": r"stablehlo\.tanh",
             "barrier": r"stablehlo\.optimization_barrier"}


def count(text, patterns):
    return {op: len(re.findall(pattern, text)) for op, pattern in patterns.items()}


def jaxpr_count(jaxpr, counts):  # a checkpointed region is a remat2 equation with its own jaxpr
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] += 1
        if eqn.primitive.name == "remat2":
            jaxpr_count(eqn.params["jaxpr"], counts)
    return counts

# %% helpers hide
def show(stage, c):
    print(f"{stage:34s} dot={c['dot']:<3d} tanh={c['tanh']:<2d} barrier={c['barrier']}")


def entry(hlo):  # the ENTRY computation in schedule order: name -> (opcode, operands, callee)
    body = hlo[hlo.index("\nENTRY"):]
    found = re.findall(r"\n  (?:ROOT )?%(\S+) = \S+ ([\w-]+)\(([^)]*)\)(?:.*calls=%(\S+?),)?", body)
    return {name: (op, re.findall(r"%([\w.-]+)", args), callee)
            for name, op, args, callee in found}


def buffers(text):  # value name -> (allocation, offset), from the buffer-assignment file
    where, allocation = {}, None
    for line in text.split("\nUsed values:")[0].splitlines():
        if m := re.match(r"allocation (\d+):", line):
            allocation = m.group(1)
        elif m := re.match(r" value: <\d+ (\S+) @0> \(size=\d+,offset=(\d+)\)", line):
            where[m.group(1)] = (allocation, m.group(2))
    return where

# %% compile-both
stages, programs, temp, peak = {}, {}, {}, {}
for name, fn in PROGRAMS.items():
    shutil.rmtree(DUMP)
    os.makedirs(DUMP)
    # Stage 1, the jaxpr; stage 2, StableHLO; stage 3, the compiled HLO.
    jc = jaxpr_count(jax.make_jaxpr(jax.grad(fn))(W, x).jaxpr, collections.Counter())
    lowered = jax.jit(jax.grad(fn)).lower(W, x)
    compiled = lowered.compile()
    hlo = compiled.as_text()
    temp[name] = compiled.memory_analysis().temp_size_in_bytes
    rows = {"jaxpr": {"dot": jc["dot_general"], "tanh": jc["tanh"],
                      "barrier": jc["optimization_barrier"]},
            "StableHLO": count(lowered.as_text(), STABLEHLO)}
    print(f"=== {name}: jit(grad(stack)), stage by stage")
    show("jaxpr", rows["jaxpr"])
    print(f"{'':34s} remat2 regions={jc['remat2']}")
    show("StableHLO", rows["StableHLO"])
    # Between StableHLO and the compiled program: every pass that changed a count.
    files = sorted(glob.glob(os.path.join(DUMP, "*.jit_stack.*")))
    before = count(open([f for f in files if f.endswith(".before_optimizations.txt")][0]).read(), HLO)
    show("HLO before optimizations", before)
    order = {}
    for path in files:
        m = re.search(r"\.(\d{4})\.(\w+)\.after_([\w-]+?)(?:\.before_|\.txt)", path)
        if not m or m.group(3) == "pipeline-start":
            continue
        order.setdefault(m.group(3), m.group(1))
        after = count(open(path).read(), HLO)
        if after != before:
            show(f"after {m.group(3)} ({m.group(1)})", after)
            rows[f"after {m.group(3)}"] = after
            before = after
    rows["compiled"] = count(hlo, HLO)
    show("compiled", rows["compiled"])
    print("passes that changed the module, by dump snapshot: "
          + ", ".join(f"{p} {order[p]}" for p in ("cse_barrier_expander", "layout-assignment",
                                                   "fusion", "cse") if p in order))
    stages[name] = rows

    # What the compiled program does with each value, and where buffer assignment put it.
    instrs = entry(hlo)
    assignment = open(glob.glob(os.path.join(DUMP, "*jit_stack*buffer-assignment.txt"))[0]).read()
    where = buffers(assignment)
    # The live-range analysis at the end of the file: the most bytes live at one position of
    # the schedule (parameters and output included), before any packing into allocations.
    peak[name] = int(re.search(r"peak usage: ([\d ]+) bytes", assignment).group(1).replace(" ", ""))
    programs[name] = [op for op, _, _ in instrs.values()]
    callees = dict(re.findall(r"\n%(\S+) .*?\{\n(.*?)\n\}", hlo, re.S))
    print(f"--- {name}: compiled ENTRY, {len(instrs)} instructions; "
          f"{len(where)} values in the buffer assignment")
    for fusion, (op, operands, callee) in instrs.items():
        if op == "fusion":
            tanh = len(re.findall(HLO["tanh"], callees[callee]))
            print(f"  {fusion:22s} reads {', '.join(operands):34s} tanh inside={tanh}")
    position = {n: i for i, n in enumerate(instrs)}
    for dot, (op, _, _) in instrs.items():
        tanh_fusion = [u for u, (_, args, _) in instrs.items()
                       if dot in args and u.startswith("wrapped_tanh")]
        if op != "dot" or not tanh_fusion:
            continue
        readers = [u for u, (_, args, _) in instrs.items() if dot in args]
        last = readers[-1]
        print(f"{name:16s} pre-activation {dot}: made at {position[dot]}, "
              f"last read at {position[last]} "
              f"by {last}; {tanh_fusion[0]} written over it: {where[dot] == where[tanh_fusion[0]]}")
shutil.rmtree(DUMP)
# %% compare hide
print(f"same instructions in the same order: {programs['no remat'] == programs['layer checkpoint']}")
extra = temp["layer checkpoint"] - temp["no remat"]
print(f"temp arena: no remat {temp['no remat']:,} bytes, layer checkpoint "
      f"{temp['layer checkpoint']:,} bytes, difference {extra:,}; "
      f"one f32[256,512] is {256 * 512 * 4:,} bytes")
print(f"live-range peak: no remat {peak['no remat']:,} bytes, layer checkpoint "
      f"{peak['layer checkpoint']:,} bytes, difference {peak['layer checkpoint'] - peak['no remat']:,}")
# %% chart hide
checkpoint_rows = stages["layer checkpoint"]
labels = ["jaxpr", "StableHLO", "after cse_barrier_expander", "compiled"]
panels.bar(
    "Operations in the checkpointed gradient, stage by stage (XLA:CPU)",
    labels=labels,
    ylabel="operations in the program text (count)",
    series={series: [checkpoint_rows[stage][op] for stage in labels]
            for series, op in [("dot", "dot"), ("tanh", "tanh"), ("optimization barrier", "barrier")]},
)
