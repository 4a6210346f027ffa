"""Where a two-GPU JAX step goes (issue 18): each multi-device formulation of gs_course on one and
two devices, with the time loop unrolled 1, 8 and 32 steps, timed, and its compiled program kept.

On two H200s a band of 8192 x 8192 took as long as the whole grid on one (results/h200-x2/
jax-scale.txt): the cost is per step and per device. What the compiled program holds answers part
of it: how many kernels (fusions) and copies a step makes, whether the halo's concatenation is
fused into the step, how many collective permutes there are and whether they are asynchronous
(-start/-done pairs); the unroll factors show whether the loop itself (its condition read back on
the host each iteration) costs.

    [ROWS=8192 COLS=8192 STEPS=32] python3 tools/gpu-host-jax-profile.py     (all GPUs visible)

Writes $OUT/jax-profile.txt (one line a case: ms a step and the op counts) and
$OUT/hlo/<formulation>-<devices>dev-unroll<U>.txt (the optimized HLO). On a CPU:
JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=2 ROWS=64 COLS=64 tries it.
"""

import os
import re
import sys
from collections import Counter
from pathlib import Path

import jax

from gs_course import measure
from gs_course.backends import jax_backend, jax_sharded
from gs_course.parameters import Parameters

ROWS, COLS, STEPS = (int(os.environ.get(k, d)) for k, d in (("ROWS", 8192), ("COLS", 8192), ("STEPS", 32)))
UNROLLS = (1, 8, 32)
#: The HLO instructions counted, as they appear after `= type ` in the optimized module's text.
OPS = ("fusion", "copy", "copy-start", "collective-permute", "collective-permute-start", "concatenate",
       "dynamic-update-slice", "all-gather", "all-reduce", "while", "custom-call")
INSTRUCTION = re.compile(r"=\s+\S+\s+([a-z-]+)\(")


def compiled_text(sim, unroll: int) -> str:
    """The optimized HLO of the simulation's advance by STEPS steps with this unroll."""
    if isinstance(sim, jax_sharded.JaxShardedAuto):
        lowered = jax_backend.advance_stacked.lower(sim._uv, sim._count_factors, sim.params, STEPS, unroll)
    else:
        lowered = sim.advance_bands.lower(sim._uv, sim._count_factors, sim.params, STEPS, unroll, sim.mesh,
                                          sim.exchange)
    return lowered.compile().as_text()


def main() -> int:
    out = Path(os.environ.get("OUT", "gpu-results"))
    (out / "hlo").mkdir(parents=True, exist_ok=True)
    devices = jax.devices()
    made = measure.provenance(command="tools/gpu-host-jax-profile.py")
    lines = [f"# JAX's multi-device formulations, {ROWS} x {COLS}, {STEPS} steps a call, on "
             f"{len(devices)} x {devices[0].device_kind}; commit {made['commit']}, {made['date']}, jax {jax.__version__}",
             "formulation devices unroll: ms a step (median, range of 10) | op counts in the compiled program"]
    print(*lines, sep="\n", flush=True)
    params = Parameters(dt=0.9)
    for formulation in ("sharded", "sharded-overlap", "sharded-auto"):
        for count in sorted({1, len(devices)}):
            for unroll in UNROLLS:
                sim = jax_backend.FORMULATIONS[formulation](params, ROWS, COLS, devices=devices[:count])
                sim._unroll = lambda steps, unroll=unroll: min(unroll, steps)  # this case's unroll
                samples = measure.timed(lambda sim=sim: sim.advance(STEPS), repeats=10, warmup=2,
                                        synchronize=sim.synchronize)
                text = compiled_text(sim, min(unroll, STEPS))
                (out / "hlo" / f"{formulation}-{count}dev-unroll{unroll}.txt").write_text(text)
                ops = Counter(INSTRUCTION.findall(text))
                counted = ", ".join(f"{op} {ops[op]}" for op in OPS if ops[op])
                per_step = samples.scaled(1 / STEPS)
                line = f"{formulation:16} {count} {unroll:3}: {per_step} a step | {counted}"
                print(line, flush=True)
                lines.append(line)
    (out / "jax-profile.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
