# %% setup hide
import collections
import glob
import os
import re
import shutil
import tempfile

# XLA writes the module after every pass that changed it, and the compiled program's buffer
# assignment (its allocations, its values, and the values' live ranges, three files), into a
# throwaway folder. It reads XLA_FLAGS when the backend starts, so this
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
HLO = {"dot": r"\bdot\(", "tanh": r"\btanh\(", "barrier": r"\bopt-barrier\(",
       "ynn_fusion": r"kind=kCustom"}  # XLA:CPU's library fusion around a matmul
STABLEHLO = {"dot": r"stablehlo\.dot_general", "tanh": r"stablehlo\.tanh",
             "barrier": r"stablehlo\.optimization_barrier"}


def count(text, patterns):
    return {op: len(re.findall(pattern, text)) for op, pattern in patterns.items()}


def uncalled(text):  # bodies of the computations in the module text that nothing calls any more
    called = set(re.findall(r"(?:calls|to_apply)=%([\w.-]+)", text))
    bodies = dict(re.findall(r"\n%(\S+) .*?\{\n(.*?)\n\}", text, re.S))
    return [body for n, body in bodies.items() if n not in called]


def jaxpr_count(jaxpr, counts):  # a checkpointed region is a remat2 equation with its own jaxpr
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] += 1
        if eqn.primitive.name == "remat2":
            jaxpr_count(eqn.params["jaxpr"], counts)
    return counts

# %% helpers hide
def show(stage, c):
    print(f"{stage:38s} dot={c['dot']:<3d} tanh={c['tanh']:<2d} barrier={c['barrier']} "
          f"ynn_fusion={c.get('ynn_fusion', 0)}")


def entry(hlo):  # the ENTRY computation in schedule order: name -> (opcode, operands, callee)
    body = hlo[hlo.index("\nENTRY"):]
    found = re.findall(r"\n  (?:ROOT )?%(\S+) = \S+ ([\w-]+)\(([^)]*)\)(?:.*calls=%(\S+?),)?", body)
    return {name: (op, re.findall(r"%([\w.-]+)", args), callee)
            for name, op, args, callee in found}


def buffers(text):  # value name -> (allocation, offset, size, temporary?), from the allocations file
    where, allocation, temp = {}, None, False
    for line in text.splitlines():
        if m := re.match(r"allocation (\d+): size \d+, (.*)", line):
            allocation, temp = m.group(1), m.group(2).startswith("preallocated-temp")
        elif m := re.match(r" value: <\d+ (\S+) @0> \(size=(\d+),offset=(\d+)\)", line):
            where[m.group(1)] = (allocation, m.group(3), int(m.group(2)), temp)
    return where


def live_bytes(live_range, where, arena_only):  # bytes live at each position of the schedule
    # A value is live from the position that makes it through the last position that reads it.
    # A result written over an operand it reads has that operand's allocation and offset: the
    # two share their bytes, so each (allocation, offset, size) counts once.
    ranges = re.findall(r"\n    (\S+)\{\}:(\d+)-(\d+)", live_range)
    end = int(re.search(r"HloLiveRange \(max (\d+)\)", live_range).group(1))
    return [sum(size for _, _, size in {where[v][:3] for v, first, last in ranges
                                        if (where[v][3] or not arena_only)
                                        and int(first) <= p <= int(last)})
            for p in range(end + 1)]

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
    print(f"{'':38s} remat2 regions={jc['remat2']}")
    show("StableHLO", rows["StableHLO"])
    # Between StableHLO and the compiled program: every pass that changed a count.
    files = sorted(glob.glob(os.path.join(DUMP, "*.jit_stack.*")))
    before = count(open([f for f in files if f.endswith(".before_optimizations.txt")][0]).read(), HLO)
    show("HLO before optimizations", before)
    order = {}
    for path in files:
        m = re.search(r"\.(\d{4})\.([\w-]+)\.after_([\w-]+?)(?:\.before_|\.txt)", path)
        if not m or m.group(3) == "pipeline-start":
            continue
        order.setdefault(m.group(3), m.group(1))
        text = open(path).read()
        after = count(text, HLO)
        if after != before:
            show(f"after {m.group(3)} ({m.group(1)})", after)
            if dead := uncalled(text):
                print(f"{'':38s} {len(dead)} computations nothing calls, "
                      f"dot inside them={len(re.findall(HLO['dot'], ''.join(dead)))}")
            rows[f"after {m.group(3)}"] = after
            before = after
    rows["compiled"] = count(hlo, HLO)
    show("compiled", rows["compiled"])
    print("passes that changed the module, by dump snapshot: "
          + ", ".join(f"{p} {order[p]}" for p in ("cse_barrier_expander", "layout-assignment",
                                                   "dot-library-rewriter", "fusion", "cse", "dce")
                      if p in order))
    stages[name] = rows

    # What the compiled program's ENTRY computation does, instruction by instruction.
    instrs = entry(hlo)
    programs[name] = [op for op, _, _ in instrs.values()]
    callees = dict(re.findall(r"\n%(\S+) .*?\{\n(.*?)\n\}", hlo, re.S))
    matmul = [n for n, (op, _, callee) in instrs.items()
              if op == "fusion" and re.search(HLO["dot"], callees[callee])]
    print(f"--- {name}: compiled ENTRY, {len(instrs)} instructions")
    print(f"  matmuls: {len(matmul)} ynn_fusion with one dot inside, "
          f"{programs[name].count('dot')} dot on its own")
    for fusion, (op, operands, callee) in instrs.items():
        if op == "fusion" and fusion not in matmul:
            tanh = len(re.findall(HLO["tanh"], callees[callee]))
            print(f"  {fusion:22s} reads {', '.join(operands):34s} tanh inside={tanh}")
    # Where buffer assignment put each value (the allocations file), and how long each value
    # lives (the live-range file): two of the three files XLA:CPU writes for it.
    dumped = {kind: open(glob.glob(os.path.join(DUMP, f"*jit_stack*{kind}.txt"))[0]).read()
              for kind in ("buffer-assignment", "live-range")}
    where = buffers(dumped["buffer-assignment"])
    peak[name] = {"arena": max(live_bytes(dumped["live-range"], where, arena_only=True)),
                  "all": live_bytes(dumped["live-range"], where, arena_only=False),
                  "xla": re.search(r"Live ranges at (\d+) \(peak\).*?peak usage: ([\d ]+) bytes",
                                   dumped["live-range"], re.S).groups()}
    print(f"{name:16s} buffer assignment: {len(where)} values")
    position = {n: i for i, n in enumerate(instrs)}
    for tanh_fusion in [n for n in instrs if n.startswith("wrapped_tanh")]:
        pre = instrs[tanh_fusion][1][0]  # the matmul output this tanh reads: the pre-activation
        last = [u for u, (_, args, _) in instrs.items() if pre in args][-1]
        print(f"{name:16s} pre-activation {pre}: made at {position[pre]}, "
              f"last read at {position[last]} by {last}; "
              f"{tanh_fusion} written over it: {where[pre][:2] == where[tanh_fusion][:2]}")
shutil.rmtree(DUMP)
# %% compare hide
print(f"same instructions in the same order: {programs['no remat'] == programs['layer checkpoint']}")
extra = temp["layer checkpoint"] - temp["no remat"]
print(f"temp arena: no remat {temp['no remat']:,} bytes, layer checkpoint "
      f"{temp['layer checkpoint']:,} bytes, difference {extra:,}; "
      f"one f32[256,512] is {256 * 512 * 4:,} bytes")
arena = {name: p["arena"] for name, p in peak.items()}
print(f"most arena bytes live at one position: no remat {arena['no remat']:,} bytes, "
      f"layer checkpoint {arena['layer checkpoint']:,} bytes, "
      f"difference {arena['layer checkpoint'] - arena['no remat']:,}")
for name, p in peak.items():  # parameters and output included, against the file's own "peak"
    most, at = max(p["all"]), int(p["xla"][0])
    print(f"{name}: most bytes live at one position {most:,} "
          f"(at {sum(b == most for b in p['all'])} positions); the file's 'peak' "
          f"{int(p['xla'][1].replace(' ', '')):,} at position {at}, where the count above is "
          f"{p['all'][at]:,}")
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
