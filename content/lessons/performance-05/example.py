import collections
import contextlib
import glob
import io
import os
import re
import shutil
import tempfile

# Section 3 reads the compiler's own files: XLA writes the module just before and just
# after the pass named below, and its buffer assignment, into a throwaway folder.
# XLA reads XLA_FLAGS once, when the backend starts, so this comes before any array.
DUMP = tempfile.mkdtemp()
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_pass_re=cse_barrier_expander"

import jax
import jax.numpy as jnp
from jax.ad_checkpoint import print_saved_residuals

from builder import panels

W = jax.random.normal(jax.random.key(0), (512, 512)) * 0.05
x = jnp.ones((256, 512))
dots = jax.checkpoint_policies.dots_saveable


def make_stack(act, wrap_layer=lambda f: f):
    layer = wrap_layer(lambda W, h: act(h @ W))

    def stack(W, x):
        h = x
        for _ in range(4):
            h = layer(W, h)
        return jnp.sum(h ** 2)

    return stack


def variants(act):
    return {
        "no remat": make_stack(act),
        "whole checkpoint": jax.checkpoint(make_stack(act)),
        "layer checkpoint": make_stack(act, jax.checkpoint),
        "layer dots_saveable": make_stack(act, lambda f: jax.checkpoint(f, policy=dots)),
    }


# 1. What reverse mode keeps: the jaxpr-level list, no execution.
counts = {}
for name, fn in variants(jnp.tanh).items():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_saved_residuals(fn, W, x)
    lines = buf.getvalue().splitlines()
    counts[name] = len(lines)
    print(f"--- tanh, {name}: {len(lines)} residuals")
    print("\n".join(lines))

# 2. What the compiler reserves: compile jit(grad(...)), nothing runs.
arena = {}
arena_bytes = {}
for act_name, act in [("tanh", jnp.tanh), ("gelu", jax.nn.gelu)]:
    arena[act_name] = []
    for name, fn in variants(act).items():
        compiled = jax.jit(jax.grad(fn)).lower(W, x).compile()
        temp = compiled.memory_analysis().temp_size_in_bytes
        cost = compiled.cost_analysis()
        arena[act_name].append(temp / 2**20)
        print(f"{act_name} {name:20s} temp={temp / 2**20:5.2f} MiB "
              f"flops={cost['flops']:,.0f} transcendentals={cost['transcendentals']:,.0f}")
        if act_name == "tanh":
            arena_bytes[name] = temp
extra = arena_bytes["layer checkpoint"] - arena_bytes["no remat"]
print(f"tanh arena, layer checkpoint minus no remat: {extra:,} bytes; "
      f"one f32[256,512] is {256 * 512 * 4:,} bytes")


# 3. Where the recomputation went: count ops at each stage of the same program.
def jaxpr_ops(jaxpr, counts):
    for eqn in jaxpr.eqns:
        counts[eqn.primitive.name] += 1
        for param in eqn.params.values():  # checkpointed regions hold a jaxpr of their own
            inner = getattr(param, "jaxpr", param)
            if hasattr(inner, "eqns"):
                jaxpr_ops(inner, counts)
    return counts


def hlo_ops(text, dot, tanh, barrier):
    return [len(re.findall(pattern, text)) for pattern in (dot, tanh, barrier)]


def buffers(text):  # value name -> (allocation, offset), from the buffer-assignment file
    where, allocation = {}, None
    for line in text.splitlines():
        if m := re.match(r"allocation (\d+):", line):
            allocation = m.group(1)
        elif m := re.match(r" value: <\d+ (\S+) @0> \(size=\d+,offset=(\d+)\)", line):
            where[m.group(1)] = (allocation, m.group(2))
    return where


def dumped(pattern):
    return open(glob.glob(os.path.join(DUMP, pattern))[0]).read()


HLO = (r"\bdot\(", r"\btanh\(", r"\bopt-barrier\(")
stages = {}
for name in ["no remat", "layer checkpoint"]:
    fn = variants(jnp.tanh)[name]
    shutil.rmtree(DUMP)
    os.makedirs(DUMP)
    jc = jaxpr_ops(jax.make_jaxpr(jax.grad(fn))(W, x).jaxpr, collections.Counter())
    lowered = jax.jit(jax.grad(fn)).lower(W, x)
    hlo = lowered.compile().as_text()
    rows = {
        "jaxpr": [jc["dot_general"], jc["tanh"], jc["remat2"]],
        "StableHLO": hlo_ops(lowered.as_text(), r"stablehlo\.dot_general",
                             r"stablehlo\.tanh", r"stablehlo\.optimization_barrier"),
        "before cse_barrier_expander": hlo_ops(dumped("*.before_cse_barrier_expander.txt"), *HLO),
        "after cse_barrier_expander": hlo_ops(dumped("*.after_cse_barrier_expander.*.txt"), *HLO),
        "compiled": hlo_ops(hlo, *HLO),
    }
    stages[name] = rows
    print(f"--- tanh, {name}: ops at each stage of jit(grad) "
          "(barrier: optimization barriers; in the jaxpr, remat2 regions)")
    for stage, (d, t, b) in rows.items():
        print(f"{stage:28s} dot={d:<3d} tanh={t:<2d} barrier={b}")
    # A forward tanh fusion reads one matmul output; is it written over that buffer?
    where = buffers(dumped("*.cpu_after_optimizations-buffer-assignment.txt"))
    pairs = re.findall(r"%(wrapped_tanh[.\d]*) = \S+ fusion\(%(\S+)\)", hlo)
    in_place = sum(where[t] == where[d] for t, d in pairs)
    print(f"forward tanh written over its matmul output: {in_place} of {len(pairs)}")
shutil.rmtree(DUMP)

panels.bar(
    "Residuals listed by print_saved_residuals (tanh stack)",
    labels=list(counts),
    ylabel="saved arrays (entries, not bytes)",
    series={"residuals": list(counts.values())},
)
panels.bar(
    "Temporary arena of the compiled gradient (memory_analysis, CPU)",
    labels=list(counts),
    ylabel="temp_size_in_bytes (MiB)",
    series={"tanh stack": arena["tanh"], "gelu stack": arena["gelu"]},
)
panels.bar(
    "Matmuls (dot) in the tanh gradient, stage by stage",
    labels=list(stages["no remat"]),
    ylabel="dot operations in the program text",
    series={name: [row[0] for row in rows.values()] for name, rows in stages.items()},
)
