"""Several steps per launch, on the GPU test host, in one call of at most 240 s (issue 32):

    COMMIT=<hash> python3 tools/gpu-host-multistep.py --apply-best   (from the repository root; files to $OUT)

1. the parity tests of CuPy's `multistep` and JAX's `pallas` on the GPU (tests/test_multistep.py,
   and those cases of tests/test_backends.py), summary in $OUT/multistep-pytest.txt;
2. a sweep of the fused kernel's shape (tile, halo, depth, threads: temporal_blocking.Blocking)
   and of the Pallas kernel's block, on the benchmark's grid: each variant checked against the
   float64 reference (bench.check_simulation), compiled and captured apart, then timed with CUDA
   events (CuPy) or block_until_ready (JAX), the median of the repeats; with the compiler's report
   of each CuPy variant (registers, local memory, shared memory per block); the best printed, all
   kept in $OUT/multistep-sweep.json (gs_course.measurement.records's record, with provenance);
3. with --apply-best, the sweep's best written into this tree as the defaults
   (temporal_blocking.BLOCKING, jax_pallas.BLOCK: meant for the GPU host's copy of the tree; the same
   change as a diff in $OUT/multistep-defaults.diff, for the repository);
4. `gs-course bench --only cupy/strip cupy/multistep jax/stacked jax/pallas --no-output --out $OUT`,
   each library in its own process as always: bench.json, bench.png, $OUT/multistep-bench.txt;
5. where Nsight Compute (`ncu`) is on the host, its speed-of-light and occupancy sections for one
   launch of the best fused kernel, in $OUT/multistep-ncu.txt.

Every stage has its share of the 240 s; a stage that runs out is cut and says so.
"""

import dataclasses
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("OUT", "gpu-results"))
START = time.monotonic()
LIMIT_S = 240


def left_s() -> float:
    return LIMIT_S - (time.monotonic() - START)


def environment() -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def stage(name: str, command: list[str], log: Path, timeout_s: float) -> int:
    """Run `command`, its output to the screen and to `log`; cut after `timeout_s`."""
    print(f"\n## {name} ({timeout_s:.0f} s at most)\n$ {' '.join(command)}", flush=True)
    try:
        done = subprocess.run(command, cwd=ROOT, env=environment(), capture_output=True, text=True,
                              timeout=max(timeout_s, 1))
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as err:
        output = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        output += f"\n(cut after {timeout_s:.0f} s)"
        code = 124
    log.write_text(f"$ {' '.join(command)}\n{output}\nexit code {code}\n")
    print(output[-6000:], flush=True)
    return code


# --- the sweep (runs in a child process of its own: `python3 tools/gpu-host-multistep.py sweep`) ----

def cupy_candidates():
    """Tiles whose region is 64, 128 or 256 cells wide and 32 to 128 rows high, halos 2 to 16."""
    from gs_course.backends.temporal_blocking import Blocking

    for halo in (8, 4, 6, 12, 2, 16):  # the likeliest first, should time run out
        for width in (64, 128, 256):
            for height in (32, 64, 96, 128):
                tile = (width - 2 * halo, height - 2 * halo)
                if min(tile) < 8:
                    continue
                try:
                    yield Blocking(*tile, halo, threads=(min(width, 128), 4))
                except ValueError:  # more shared memory than a block may have
                    continue


def time_cupy(blocking, steps: int = 320, repeats: int = 5) -> dict:
    import cupy

    from gs_course.measurement import bench
    from gs_course.backends import cupy_backend as cb
    from gs_course.workload import FULL
    from gs_course.parameters import Parameters

    error = bench.check_simulation(cb.CupyMultistep(bench.CHECK_PARAMS, *bench.CHECK_GRID, blocking))
    compile_start = time.perf_counter()
    sim = cb.CupyMultistep(Parameters(), FULL.rows, FULL.cols, blocking)
    sim.advance(steps)  # compiles, captures the graph of `steps` steps
    sim.synchronize()
    compile_s = time.perf_counter() - compile_start
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        sim.advance(steps)  # the graph's stream is a blocking one: ordered with these events
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3 / steps)
    kernel = cb.fused_kernel(cb._kernel_shape(blocking))
    attributes = kernel.attributes
    try:
        blocks_per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, blocking.threads[0] * blocking.threads[1], blocking.shared_bytes)
    except Exception:  # noqa: BLE001 (an occupancy query CuPy does not offer here: not reported)
        blocks_per_sm = None
    return {"blocking": dataclasses.asdict(blocking), "us_per_step": float(np.median(times)),
            "min_us": min(times), "max_us": max(times), "compile_s": compile_s, "check_error": error,
            "registers": attributes["num_regs"], "local_bytes": attributes["local_size_bytes"],
            "shared_bytes": blocking.shared_bytes, "blocks_per_sm": blocks_per_sm,
            "recomputed": blocking.recomputed()}


def time_pallas(block, steps: int = 320, repeats: int = 5) -> dict:
    from gs_course.measurement import bench
    from gs_course.backends import jax_backend as jb
    from gs_course.workload import FULL
    from gs_course.parameters import Parameters

    error = bench.check_simulation(jb.JaxPallas(bench.CHECK_PARAMS, *bench.CHECK_GRID, block=block))
    compile_start = time.perf_counter()
    sim = jb.JaxPallas(Parameters(), FULL.rows, FULL.cols, block=block)
    sim.advance(FULL.steps_per_image)  # compiles the loop of one image
    sim.synchronize()
    compile_s = time.perf_counter() - compile_start
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps // FULL.steps_per_image):
            sim.advance(FULL.steps_per_image)
        sim.synchronize()
        times.append((time.perf_counter() - t) * 1e6 / steps)
    return {"block": list(block), "us_per_step": float(np.median(times)), "min_us": min(times),
            "max_us": max(times), "compile_s": compile_s, "check_error": error}


def _timed_all(label: str, candidates, timer, budget_s: float, describe) -> list[dict]:
    rows, until = [], time.monotonic() + budget_s
    for candidate in candidates:
        if time.monotonic() > until:
            print(f"{label}: time's up, the remaining candidates not measured", flush=True)
            break
        try:
            row = timer(candidate)
        except Exception as err:  # one variant that fails must not hide the others
            row = {"candidate": describe(candidate), "failed": f"{type(err).__name__}: {str(err)[:300]}"}
        rows.append(row)
        print(f"{label} {describe(candidate):<60} " + (row.get("failed") or
              f"{row['us_per_step']:6.2f} us/step ({row['min_us']:.2f}-{row['max_us']:.2f})  error "
              f"{row['check_error']:.1e}" + (f"  {row['registers']} registers, {row['local_bytes']} B local, "
                                              f"{row['shared_bytes']} B shared, {row['blocks_per_sm']} blocks an SM, "
                                              f"{row['recomputed']:.2f} cells computed a cell advanced"
                                              if "registers" in row else "")),
              flush=True)
    return rows


def _best(rows: list[dict]) -> dict | None:
    from gs_course.model import PARITY_ATOL

    good = [r for r in rows if "failed" not in r and r["check_error"] <= PARITY_ATOL]
    return min(good, key=lambda r: r["us_per_step"]) if good else None


def sweep(budget_s: float) -> None:
    from gs_course.backends.temporal_blocking import Blocking

    describe = lambda b: f"tile {b.tile_cols} x {b.tile_rows}, halo {b.halo}, depth {b.depth}, threads {b.threads}"  # noqa: E731
    found = {"cupy_shapes": [], "cupy_tuned": [], "cupy_best": None, "pallas_blocks": [], "pallas_best": None}

    def save():  # after each part: a sweep cut short still leaves what it measured
        records.write("multistep-sweep", found, OUT / "multistep-sweep.json",
                      command="python3 tools/gpu-host-multistep.py sweep")

    print("## CuPy multistep: tile and halo (depth = halo, 128 x 4 threads or fewer)", flush=True)
    shapes = _timed_all("cupy", list(cupy_candidates()), time_cupy, 0.45 * budget_s, describe)
    best = _best(shapes)
    tuned = []
    if best:
        b = Blocking(**best["blocking"])
        print(f"## CuPy multistep: depth and threads for tile {b.tile_cols} x {b.tile_rows}, halo {b.halo}", flush=True)
        variants = [dataclasses.replace(b, depth=d) for d in sorted({1, 2, b.halo // 2, b.halo - 1} - {0, b.halo})]
        variants += [dataclasses.replace(b, threads=t) for t in
                     [(32, 8), (64, 4), (64, 8), (128, 2), (128, 8), (256, 2), (256, 4), (32, 16)] if t != b.threads]
        tuned = _timed_all("cupy", variants, time_cupy, 0.2 * budget_s, describe)
    found.update(cupy_shapes=shapes, cupy_tuned=tuned, cupy_best=_best(shapes + tuned))
    save()
    print("## JAX pallas: block (rows, cols)", flush=True)
    blocks = [(16, 128), (8, 128), (32, 128), (16, 256), (8, 256), (32, 64), (64, 64), (64, 128), (16, 64)]
    pallas = _timed_all("pallas", blocks, time_pallas, 0.3 * budget_s, str)
    found.update(pallas_blocks=pallas, pallas_best=_best(pallas))
    save()
    print("\n## best", flush=True)
    print("cupy/multistep:", json.dumps(found["cupy_best"]), "\njax/pallas:", json.dumps(found["pallas_best"]),
          flush=True)


# --- the defaults, the benchmark, Nsight Compute ---------------------------------------------------

def _blocking_source(b: dict) -> str:
    return (f"Blocking(tile_cols={b['tile_cols']}, tile_rows={b['tile_rows']}, halo={b['halo']}, depth={b['depth']}, "
            f"threads=({b['threads'][0]}, {b['threads'][1]}))")


def apply_best(best: dict) -> None:
    """The sweep's best as the defaults of this tree, and the change as a diff in $OUT."""
    changes = []
    if best.get("cupy_best"):
        changes.append(("gs_course/backends/temporal_blocking.py", r"^BLOCKING = Blocking\(.*\)$",
                        f"BLOCKING = {_blocking_source(best['cupy_best']['blocking'])}"))
    if best.get("pallas_best"):
        rows, cols = best["pallas_best"]["block"]
        changes.append(("gs_course/backends/jax_pallas.py", r"^BLOCK = \(\d+, \d+\)$", f"BLOCK = ({rows}, {cols})"))
    diff = []
    for name, pattern, line in changes:
        path = ROOT / name
        before = path.read_text()
        after, count = re.subn(pattern, line, before, count=1, flags=re.MULTILINE)
        if count != 1:
            print(f"{name}: no line matches {pattern}: its default left as it is", flush=True)
            continue
        path.write_text(after)
        diff += difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}")
    (OUT / "multistep-defaults.diff").write_text("".join(diff))
    print("\n## the defaults set from the sweep\n" + "".join(diff), flush=True)


NCU_PROGRAM = """
from gs_course.backends import cupy_backend as cb
from gs_course.parameters import Parameters
from gs_course.measurement import records
sim = cb.CupyMultistep(Parameters(), 1080, 1920)
sim.advance(64)
sim.synchronize()
"""


def main(apply: bool) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"# issue 32 on the GPU host: commit {os.environ.get('COMMIT', 'unknown')}, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
    tests = stage("parity tests on the GPU", [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
                                              "-q", "-rs", "tests/test_multistep.py", "tests/test_backends.py",
                                              "-k", "(multistep or pallas) and not school_grid"],
                  OUT / "multistep-pytest.txt", 0.2 * LIMIT_S)
    stage("sweep", [sys.executable, __file__, "sweep", str(0.35 * LIMIT_S)], OUT / "multistep-sweep.txt",
          0.38 * LIMIT_S)
    sweep_file = OUT / "multistep-sweep.json"
    best = json.loads(sweep_file.read_text()) if sweep_file.exists() else {}
    if apply:
        apply_best(best)
    bench = stage("benchmark" + (", multistep and pallas at the sweep's best" if apply else ""),
                  [sys.executable, "-m", "gs_course.cli", "bench", "--only", "cupy/strip", "cupy/multistep",
                   "jax/stacked", "jax/pallas", "--no-output", "--out", str(OUT)],
                  OUT / "multistep-bench.txt", max(left_s() - 20, 30))
    if shutil.which("ncu") and left_s() > 10:
        stage("Nsight Compute, one launch of the fused kernel at the defaults",
              ["ncu", "--kernel-name", "gray_scott_fused", "--launch-skip", "4", "--launch-count", "1",
               "--section", "SpeedOfLight", "--section", "Occupancy", "--section", "MemoryWorkloadAnalysis",
               sys.executable, "-c", NCU_PROGRAM], OUT / "multistep-ncu.txt", left_s() - 2)
    else:
        print("\n(no ncu here, or no time left: the compiler's report in the sweep stands for it)", flush=True)
    print(f"\ndone in {time.monotonic() - START:.0f} s; tests exit {tests}, bench exit {bench}", flush=True)
    return tests or bench


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["sweep"]:
        sweep(float(sys.argv[2]))
    else:
        sys.exit(main(apply="--apply-best" in sys.argv[1:]))
