"""The CuPy tutorial's lessons on launches and memory, measured on the GPU test host: the kernel
variants of gs_course's CuPy backend (block shapes, threads across rows, a shared-memory tile,
__constant__ memory, the strip kernel) on the school's grid, and the four kinds of host memory
(gs_course.measurement.memory_kinds) for one image and for 256 MiB.

    COMMIT=<hash> PYTHONPATH=$PWD python3 tools/gpu-host-cupy-topics.py    # about a minute

Writes $OUT/cupy-topics.txt (both tables) and $OUT/memory-kinds-<bytes>.json (the raw timings,
which memory_kinds.load reads back), for results/. Each variant is checked against the float64
reference before it is timed.
"""

import os
import sys
from pathlib import Path

import numpy as np

from gs_course.measurement import memory_kinds
from gs_course.backends import cupy_backend as cb
from gs_course.lessons.checkers import PARAMS as CHECK
from gs_course.workload import FULL
from gs_course.measurement.records import header, provenance
from gs_course.model import PARITY_ATOL, initial_state, reference_run
from gs_course.parameters import Parameters
from gs_course.measurement.transfer import MIB


def check(launch, rows: int = 67, cols: int = 91, steps: int = 60) -> float:
    """The variant's largest distance from the reference after `steps` steps on an odd grid."""
    import cupy

    pairs = [tuple(cupy.asarray(a) for a in initial_state(rows, cols))]
    pairs.append(tuple(cupy.empty_like(a) for a in pairs[0]))
    for k in range(steps):
        launch(*pairs[k % 2], *pairs[1 - k % 2], cb.scalars(CHECK, rows, cols))
    want = reference_run(rows, cols, steps, CHECK)
    error = max(float(np.abs(cupy.asnumpy(g) - w).max()) for g, w in zip(pairs[steps % 2], want))
    if error >= PARITY_ATOL:
        raise SystemExit(f"wrong result ({error:.2g} from the reference): nothing timed")
    return error


def main() -> None:
    out = Path(os.environ.get("OUT", "gpu-results"))
    out.mkdir(parents=True, exist_ok=True)
    lines = [header(provenance(), "CuPy tutorial: kernel variants and host memory kinds"),
             f"## One step on {FULL.rows} x {FULL.cols}, 32 launches as a CUDA graph (CUDA events, median of 10)"]
    for name, launch in cb.VARIANTS.items():
        error = check(launch)
        us = cb.step_time_us(launch, Parameters(), FULL.rows, FULL.cols)
        lines.append(f"{name:<46} {us:7.2f} us a step   (error {error:.1e})")
        print(lines[-1], file=sys.stderr, flush=True)
    for nbytes in (FULL.rows * FULL.cols * 4, 256 * MIB):
        results = memory_kinds.measure(nbytes)
        memory_kinds.save(results, out / f"memory-kinds-{nbytes}.json")
        lines += ["", memory_kinds.table(results)]
        print(lines[-1], file=sys.stderr, flush=True)
    (out / "cupy-topics.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
