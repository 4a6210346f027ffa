"""Tuning runs for the fastest formulations, on the GPU test host: which shape of the CuPy strip
kernel and which JAX step formulation are fastest on the benchmark's workload (workload.FULL).

    COMMIT=<hash> python3 tools/gpu-host-tune.py > $OUT/tune.txt   (results/h200/tune.txt)

Each variant is checked against the float64 reference, then timed, by the benchmark's own
functions (bench.check_simulation, bench.time_simulation, on timer.timed): the first image
(compilation) apart, the clock stopped once V is on the host, median and range of the repeats.
The numbers chose the defaults of gs_course (cupy_backend.STRIPS, jax_backend.FASTEST); git's
history of results/h200/tune.txt keeps the earlier runs, among them a kernel that ran several
steps per launch in shared memory (temporal blocking), slower than the strips and removed since.
"""

import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from gs_course import backends
from gs_course.measurement import bench
from gs_course.workload import FULL
from gs_course.parameters import Parameters
from gs_course.measurement import records
from gs_course.measurement import timer
from gs_course import workload


def report(name: str, make) -> None:
    """Check, then time the full workload as `gs-course bench` does: one image to compile apart,
    then the 1000 images. `make(params, rows, cols)` builds the variant's simulation."""
    error = bench.check_simulation(make(bench.CHECK_PARAMS, *bench.CHECK_GRID))
    timing = bench.time_simulation(make(Parameters(), FULL.rows, FULL.cols), FULL, budget_s=float("inf"))
    print(f"{name:<44} {timer.format_range(timing['seconds'], timing['min_s'], timing['max_s']):>24}  "
          f"{timing['us_per_step']:6.2f} us/step  "
          f"first image {timing['compile_s']:6.2f} s  error {error:.1e}", flush=True)


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


def per_call_ms(function, calls: int = 50) -> str:
    """Median and range of `calls` calls, in ms (each call returns once its copy is on the host)."""
    samples = timer.timed(function, repeats=calls, warmup=1)
    return f"{samples.median * 1e3:7.3f} ({samples.min * 1e3:.3f}-{samples.max * 1e3:.3f})"


def tune_fetch() -> None:
    """Ways to bring V (one image) to the host, and whether Python runs while h5py writes."""
    import cupy
    import cupyx
    import jax
    import jax.numpy as jnp

    from gs_course.output import FrameWriter

    print(f"## V ({FULL.rows} x {FULL.cols} float32) to the host, ms a call", flush=True)
    shape = (FULL.rows, FULL.cols)
    v = cupy.random.random(shape, dtype=cupy.float32)
    pinned = cupyx.empty_pinned(shape, np.float32)
    for name, function in (("cupy .get()", lambda: v.get()),
                           ("cupy .get(out=pinned buffer)", lambda: v.get(out=pinned)),
                           ("cupy .get(out=cupyx.empty_pinned())", lambda: v.get(out=cupyx.empty_pinned(shape, np.float32)))):
        print(f"{name:<52} {per_call_ms(function)}", flush=True)
    uv = jnp.stack((jnp.zeros(shape), jnp.ones(shape))).astype(jnp.float32)
    fresh = jax.jit(lambda a: a + 1)  # np.asarray caches its answer on an array: a new one each call

    def copied_early():
        x = fresh(uv)[1]
        x.copy_to_host_async()
        return np.asarray(x)

    variants = [("jax (new array, no copy: the baseline)", lambda: fresh(uv)[1].block_until_ready()),
                ("jax np.asarray(uv[1])", lambda: np.asarray(fresh(uv)[1])),
                ("jax jax.device_get(uv[1])", lambda: jax.device_get(fresh(uv)[1])),
                ("jax copy_to_host_async, then np.asarray", copied_early),
                ("jax np.asarray(uv)[1] (both fields)", lambda: np.asarray(fresh(uv))[1]),
                ("jax via DLPack to CuPy, .get(out=pinned)", lambda: cupy.from_dlpack(fresh(uv)[1]).get(out=pinned))]
    try:
        host = uv.sharding.with_memory_kind("pinned_host")
        variants.append(("jax device_put to pinned_host, np.asarray", lambda: np.asarray(jax.device_put(fresh(uv)[1], host))))
    except Exception as err:
        print("pinned_host memory kind:", err)
    for name, function in variants:
        try:
            print(f"{name:<52} {per_call_ms(function)}", flush=True)
        except Exception as err:
            print(f"{name:<52} failed: {type(err).__name__}: {str(err)[:200]}", flush=True)

    def spins(seconds: float = 0.5) -> int:
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            count += 1
        return count

    frame = np.random.default_rng(0).random(shape, dtype=np.float32)
    alone = spins()
    with tempfile.TemporaryDirectory(dir=".") as folder:
        with FrameWriter(f"{folder}/x.h5", 400, *shape, Parameters(), 32, deflate=0) as writer:
            def write():
                for _ in range(400):
                    writer.write(frame)
            thread = threading.Thread(target=write)
            start = time.perf_counter()
            thread.start()
            during = spins()
            thread.join()
            seconds = time.perf_counter() - start
    print(f"a Python loop while h5py writes (400 images in {seconds:.2f} s): {during / alone:.2f} of its speed alone", flush=True)


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
    print(records.header(records.provenance(), "Tuning the fastest formulations"))
    print(f"workload {FULL.rows} x {FULL.cols}, {FULL.images} images x {FULL.steps_per_image} steps", flush=True)
    sections = {"cupy": tune_cupy, "jax": tune_jax, "fetch": tune_fetch, "jax-graphs": tune_jax_with_command_buffers,
                "ncu-cupy": profile_cupy_kernels, "ncu-jax": profile_jax_kernels}
    for section in sys.argv[1:] or sections:
        sections[section]()
    print(backends.probe("cupy").describe(), "|", backends.probe("jax").describe())
