"""Where a two-GPU JAX step goes (issue 18): each multi-device formulation of gs_course, and the
one-device step they are built on, timed on one and two devices with its compiled program kept.

On two H200s a band of 8192 x 8192 took as long as the whole grid on one (results/h200-x2/
jax-scale.txt): the cost is per step and per device. What the compiled program holds answers part
of it: how many kernels (fusions) and copies a step makes, whether the halo's concatenation is
fused into the step, how many collective permutes there are and whether they are asynchronous
(-start/-done pairs). Two unroll factors (or ghost-row depths, for `sharded-deep`) show whether
the loop itself costs; `broadcast step` is the stacked step written without `jnp.stack` (no
concatenation of the two fields: per-field constants broadcast over the stacked axis), to see
whether the stacking costs a pass over memory.

    [SIZES="8192 16384" STEPS=32] python3 tools/gpu-host-jax-profile.py     (all GPUs visible)

Writes $OUT/jax-profile.txt (one line a case: ms a step, the op counts, the kernels by what they
compute; `python3 tools/gpu-host-jax-profile.py --kernels HLO...` prints kernels and op counts for kept
files) and
$OUT/hlo/<rows>-<case>.txt (the optimized HLO). On a CPU:
JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=2 SIZES=64 tries it.
"""

import os
import re
import sys
from collections import Counter
from pathlib import Path

import jax
import jax.numpy as jnp

from gs_course.backends import jax_backend, jax_sharded
from gs_course.backends.base import WINDOW_OFFSETS
from gs_course.parameters import Parameters
from gs_course.measurement import records
from gs_course.measurement import timer

SIZES = [int(n) for n in os.environ.get("SIZES", "8192 16384").split()]
STEPS = int(os.environ.get("STEPS", 32))
#: The HLO instructions counted, as they appear after `= type ` in the optimized module's text.
OPS = ("fusion", "copy", "copy-start", "collective-permute", "collective-permute-start", "concatenate",
       "dynamic-update-slice", "all-gather", "all-reduce", "while", "custom-call")
INSTRUCTION = re.compile(r"=\s+[^=]*?\s([a-z][a-z-]*)\(")  # the type may be a tuple, nested: ((f32[..]), ..)
#: A kernel launched by the compiled program: a fusion, named after the computation it calls.
KERNEL = re.compile(r"\bfusion\(.*?calls=%([A-Za-z_]+?)(?:[._]\d+)*[,\s]")


def op_counts(text: str) -> str:
    """How many of each of OPS the program holds, inside fused computations too."""
    ops = Counter(INSTRUCTION.findall(text))
    return ", ".join(f"{op} {ops[op]}" for op in OPS if ops[op])


def kernels(text: str) -> str:
    """The kernels (fusions) of a compiled program by what they compute, most frequent first:
    "31 fused_concatenate, 32 wrapped_concatenate_computation" (a step and a concatenation)."""
    return ", ".join(f"{n} {name}" for name, n in Counter(KERNEL.findall(text)).most_common())
ORIGINAL_STEP = jax_backend.stacked_step


def broadcast_stacked_step(uv, counts, p: Parameters, above=None, below=None):
    """`jax_backend.stacked_step` (no halo rows) with one expression for both fields."""
    assert above is None and below is None
    _, rows, cols = uv.shape
    padded = jnp.pad(uv, ((0, 0), (1, 1), (1, 1)))
    window_sum = sum(padded[:, i : i + rows, j : j + cols] for i, j in WINDOW_OFFSETS)
    per_field = lambda a, b: jnp.array([a, b], uv.dtype).reshape(2, 1, 1)  # noqa: E731
    uvv = uv[0] * uv[1] * uv[1]
    change = (per_field(p.du, p.dv) * (window_sum - counts * uv) + per_field(-1, 1) * uvv
              + per_field(p.feed, 0) * (1 - uv) - per_field(0, p.feed + p.kill) * uv)
    return uv + p.dt * change


def use_step(step) -> None:
    """Every formulation built on the stacked step uses `step` from now on (compiled anew)."""
    jax_backend.stacked_step = jax_sharded.stacked_step = step
    jax.clear_caches()


def compiled_text(sim, unroll: int) -> str:
    """The optimized HLO of the simulation's advance by STEPS steps."""
    if isinstance(sim, jax_sharded.JaxShardedDeep):
        lowered = jax_sharded.advance_deep.lower(sim._uv, sim._count_factors, sim.params, STEPS, sim.depth, sim.mesh)
    elif isinstance(sim, jax_sharded.JaxSharded) and not isinstance(sim, jax_sharded.JaxShardedAuto):
        lowered = sim.advance_bands.lower(sim._uv, sim._count_factors, sim.params, STEPS, unroll, sim.mesh,
                                          sim.exchange)
    elif isinstance(sim, jax_backend.JaxStacked):
        lowered = jax_backend.advance_stacked.lower(sim._uv, sim._count_factors, sim.params, STEPS, unroll)
    else:
        lowered = jax_backend.advance.lower(sim._u, sim._v, sim._count_factors, sim.params, STEPS, unroll,
                                            sim.laplacian)
    return lowered.compile().as_text()


def cases(devices):
    """(label, step, formulation, devices, unroll or depth)."""
    two = len(devices)
    yield from (("stacked", ORIGINAL_STEP, "stacked", 1, u) for u in (8, 32))
    yield "two arrays", ORIGINAL_STEP, "unrolled", 1, 8
    yield "broadcast step", broadcast_stacked_step, "stacked", 1, 32
    for formulation in ("sharded", "sharded-overlap", "sharded-auto"):
        yield from ((formulation, ORIGINAL_STEP, formulation, n, 32) for n in sorted({1, two}))
    yield "sharded", ORIGINAL_STEP, "sharded", two, 8
    for depth in (d for d in (8, 16, 32, 64) if d <= STEPS):  # deeper: the same program as STEPS
        yield from (("sharded-deep", ORIGINAL_STEP, "sharded-deep", n, depth) for n in sorted({1, two}))
    yield from (("deep, broadcast", broadcast_stacked_step, "sharded-deep", n, 8) for n in sorted({1, two}))


def main() -> int:
    out = Path(os.environ.get("OUT", "gpu-results"))
    (out / "hlo").mkdir(parents=True, exist_ok=True)
    devices = jax.devices()
    made = records.provenance(command="tools/gpu-host-jax-profile.py")
    lines = [f"# JAX's multi-device formulations, {STEPS} steps a call, on {len(devices)} x {devices[0].device_kind}; "
             f"commit {made['commit']}, {made['date']}, jax {jax.__version__}",
             "rows x cols, case, devices, unroll (depth for sharded-deep): ms a step (median, range of 10) | "
             "op counts in the compiled program"]
    print(*lines, sep="\n", flush=True)
    params = Parameters(dt=0.9)
    for rows in SIZES:
        for label, step, formulation, count, unroll in cases(devices):
            if step is not jax_backend.stacked_step:
                use_step(step)
            cls = jax_backend.FORMULATIONS[formulation]
            if formulation == "sharded-deep":
                sim = cls(params, rows, rows, devices=devices[:count], depth=unroll)
            elif formulation.startswith("sharded"):
                sim = cls(params, rows, rows, devices=devices[:count])
            else:
                sim = cls(params, rows, rows)
            sim._unroll = lambda steps, unroll=unroll: min(unroll, steps)  # this case's unroll
            try:
                samples = timer.timed(lambda sim=sim: sim.advance(STEPS), repeats=10, warmup=2,
                                        synchronize=sim.synchronize)
                text = compiled_text(sim, min(unroll, STEPS))
            except Exception as err:  # one case failing (memory, say) leaves the others to run
                line = f"{rows} x {rows} {label:16} {count} {unroll:3}: failed, {type(err).__name__}: {str(err)[:200]}"
            else:
                name = f"{rows}-{label.replace(' ', '-').replace(',', '')}-{count}dev-{unroll}.txt"
                (out / "hlo" / name).write_text(text)
                line = (f"{rows} x {rows} {label:16} {count} {unroll:3}: {samples.scaled(1 / STEPS)} a step | {op_counts(text)} "
                        f"| kernels: {kernels(text)}")
            print(line, flush=True)
            lines.append(line)
            del sim
            (out / "jax-profile.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--kernels"]:
        for path in sys.argv[2:]:
            text = Path(path).read_text()
            print(f"{Path(path).stem}: {kernels(text)} | {op_counts(text)}")
        sys.exit(0)
    sys.exit(main())
