"""Tuning runs for the fastest formulations, on the GPU test host: which tiling of the CuPy kernel
and which JAX step formulation are fastest on the benchmark's workload (1080 x 1920, 32,000 steps).

    COMMIT=<hash> python3 tools/gpu-host-tune.py > $OUT/tune.txt

Each variant is checked against the float64 reference before it is timed (bench.CHECK_GRID,
64 steps, odd sizes); the first image (compilation) is timed apart; timings synchronize.
The numbers chose the defaults of gs_course (cupy_backend.STRIPS, jax_backend.FASTEST). The runs
at 4011683 and 0a7aa26 also timed a kernel that ran several steps per launch in shared memory
(temporal blocking, 11.7 us a step at best, against 8.5 for the strips): removed since.
"""

import datetime
import os
import subprocess
import sys
import time

import numpy as np

from gs_course import backends
from gs_course.bench import CHECK_GRID, CHECK_PARAMS, FULL
from gs_course.model import reference_run
from gs_course.parameters import Parameters

REFERENCE = reference_run(*CHECK_GRID, 64, CHECK_PARAMS)


def error_of(make) -> float:
    sim = make(CHECK_PARAMS, *CHECK_GRID)
    sim.advance(64)
    return float(max(np.abs(a - b).max() for a, b in zip(sim.fetch(), REFERENCE)))


def report(name: str, make) -> None:
    """Check, then time the full workload: one image to compile, then 1000 images."""
    error = error_of(make)
    sim = make(Parameters(), FULL.rows, FULL.cols)
    start = time.perf_counter()
    sim.advance(FULL.steps_per_image)
    sim.synchronize()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(FULL.images):
        sim.advance(FULL.steps_per_image)
    sim.synchronize()
    seconds = time.perf_counter() - start
    print(f"{name:<44} {seconds:7.3f} s  {seconds / FULL.steps * 1e6:6.2f} us/step  "
          f"first image {compile_s:6.2f} s  error {error:.1e}", flush=True)


def tune_cupy() -> None:
    from gs_course.backends import cupy_backend as cb

    print("## CuPy: one thread a cell")
    for name in ("raw", "graph"):
        report(f"cupy/{name}", cb.FORMULATIONS[name])
    print("## CuPy: the strip kernel (threads along columns x rows, cells each thread walks down)")
    for cols, rows, strip_rows in [(32, 8, 4), (32, 8, 8), (32, 4, 8), (32, 16, 4), (32, 8, 16), (32, 4, 16),
                                   (32, 2, 16), (64, 4, 8), (64, 8, 4), (128, 2, 8), (128, 4, 4), (32, 16, 2)]:
        strips = cb.Strips(cols, rows, strip_rows)
        report(f"cupy/strip {cols} x {rows}, {strip_rows} rows each",
               lambda p, r, c, s=strips: cb.CupyStrip(p, r, c, strips=s))


def tune_jax() -> None:
    import jax
    import jax.numpy as jnp

    from gs_course.backends import jax_backend as jb
    from gs_course.model import window_count_factors, window_counts

    print("## JAX: formulations, and the kernels XLA makes of one step")
    for name, cls in jb.FORMULATIONS.items():
        report(f"jax/{name}", cls)
    u, v = (jnp.zeros((FULL.rows, FULL.cols), jnp.float32) for _ in range(2))
    counts, p = jnp.asarray(window_counts(FULL.rows, FULL.cols)), Parameters()
    factors = tuple(jnp.asarray(f) for f in window_count_factors(FULL.rows, FULL.cols))
    one_step = {"slices, counts array": (lambda u, v: jb.step(u, v, counts, p), (u, v)),
                "slices, counts from factors": (lambda u, v: jb.step(u, v, jnp.multiply(*factors), p), (u, v)),
                "stacked": (lambda uv: jb.stacked_step(uv, jnp.multiply(*factors), p), (jnp.stack((u, v)),))}
    for name, (function, arguments) in one_step.items():
        hlo = jax.jit(function).lower(*arguments).compile().as_text()
        entry = hlo[hlo.index("ENTRY"):]
        kernels = [line.strip()[:160] for line in entry.splitlines() if " fusion(" in line or "custom-call(" in line]
        print(f"jax/{name}: {len(kernels)} kernel(s) a step:", *kernels, sep="\n  ")


def tune_jax_with_command_buffers() -> None:
    """The JAX section again, with XLA told to replay every run of fused kernels as a CUDA graph."""
    flags = "--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"
    print(f"## JAX with XLA_FLAGS='{flags}'", flush=True)
    done = subprocess.run([sys.executable, __file__, "jax"], env={**os.environ, "XLA_FLAGS": flags},
                          capture_output=True, text=True, timeout=300)
    print(done.stdout.split("## JAX", 1)[-1], done.stderr[-1500:], flush=True)


def profile(kernels: str, code: str) -> None:
    """Nsight Compute's speed-of-light and memory sections for the kernels `code` launches."""
    command = ["ncu", "--clock-control", "none", "--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis",
               "-k", f"regex:{kernels}", "-c", "4", sys.executable, "-c", code]
    print("## ncu:", " ".join(command[:-1]), repr(code), flush=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=240)
        print(done.stdout[-12000:], done.stderr[-2000:], flush=True)
    except (OSError, subprocess.TimeoutExpired) as err:
        print(f"ncu did not run: {err}")


def profile_cupy_kernels() -> None:
    profile("gray_scott", "from gs_course.backends import cupy_backend as cb; from gs_course.parameters import Parameters;"
            "[cb.FORMULATIONS[n](Parameters(), 1080, 1920).advance(2) for n in ('raw', 'strip')];"
            "import cupy; cupy.cuda.Device().synchronize()")


def profile_jax_kernels() -> None:
    profile("fusion", "from gs_course.backends import jax_backend as jb; from gs_course.parameters import Parameters;"
            "s = jb.JaxUnrolled(Parameters(), 1080, 1920); s.advance(32); s.synchronize()")


if __name__ == "__main__":
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    print(f"# tuning on {gpu}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
          f"commit {os.environ.get('COMMIT', 'unknown')}")
    print(f"workload {FULL.rows} x {FULL.cols}, {FULL.images} images x {FULL.steps_per_image} steps", flush=True)
    sections = {"cupy": tune_cupy, "jax": tune_jax, "jax-graphs": tune_jax_with_command_buffers,
                "ncu-cupy": profile_cupy_kernels, "ncu-jax": profile_jax_kernels}
    for section in sys.argv[1:] or sections:
        sections[section]()
    print(backends.probe("cupy").describe(), "|", backends.probe("jax").describe())
