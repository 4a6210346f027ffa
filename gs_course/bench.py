"""The course benchmark ("32 x 1000"): every library and formulation, side by side, in one run.

The workload is the school's model on 1080 x 1920 float32, 1000 images with 32 steps between two
(32,000 steps). Each formulation is first checked against the float64 reference (a fast wrong
answer is a failure, not a result), then timed:

- compute: the steps, V brought to the host once at the end; the first image is timed apart
  (it includes compilation); formulations too slow for the time budget run fewer images and the
  total is extrapolated, and labelled so;
- with output: the 1000 V images written to an HDF5 file (no compression), in line (compute,
  copy, write, in turn) and overlapped (a second thread writes while the GPU computes), against
  the time to write the same images alone.

The same run measures the GPU's device-to-device copy bandwidth, which sets the floor: a step
that reads U and V and writes them moves 33.2 MB, so one step per kernel cannot beat
33.2 MB / bandwidth.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__, backends
from .model import PARITY_ATOL, reference_run
from .output import BackgroundWriter, FrameWriter
from .parameters import Parameters

SCHEMA = 1


@dataclasses.dataclass(frozen=True)
class Workload:
    rows: int
    cols: int
    images: int
    steps_per_image: int

    @property
    def steps(self) -> int:
        return self.images * self.steps_per_image

    @property
    def frame_bytes(self) -> int:
        return self.rows * self.cols * 4


FULL = Workload(1080, 1920, 1000, 32)
#: For CPU-only machines and small GPUs: a sixteenth of the grid, a tenth of the images.
QUICK = Workload(270, 480, 100, 32)

#: Seconds for the full workload in the original course's table (GPU/Benchmarks.md, an 80 GB
#: A100), keyed by the formulation here that matches its column.
A100 = {
    "numpy/slices": (377, "best CPU, day 5"),
    "jax/conv": (47, "JAX generic"),
    "jax/slices": (18, "JAX 3x3"),
    "cupy/slices": (18, "CuPy"),
    "cupynumeric/convolve": (128, "cuPyNumeric"),
    "cupy/graph, output overlapped": (12, "CuPy + HDF5 written in parallel"),
}
#: A step reads U and V and writes them: four float32 arrays of the grid.
ARRAYS_MOVED_PER_STEP = 4

CHECK_GRID = (61, 83)
CHECK_PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.9)


def cases() -> list[tuple[str, str]]:
    """(backend, formulation) for every formulation of every backend that runs here."""
    found = []
    for name in backends.BACKENDS:
        if backends.probe(name).ok:
            found += [(name, formulation) for formulation in backends.load(name).FORMULATIONS]
    return found


def check(backend: str, formulation: str, steps: int = 64) -> float:
    """Largest difference from the float64 reference after `steps` steps on an odd grid."""
    sim = backends.create(backend, CHECK_PARAMS, *CHECK_GRID, formulation=formulation)
    sim.advance(steps)
    u, v = sim.fetch()
    ref_u, ref_v = reference_run(*CHECK_GRID, steps, CHECK_PARAMS)
    return float(max(np.abs(u - ref_u).max(), np.abs(v - ref_v).max()))


def _warm_up(sim, workload: Workload) -> float:
    """Run the first image (compilation, first allocations) and return its time."""
    start = time.perf_counter()
    sim.advance(workload.steps_per_image)
    sim.fetch_v()
    return time.perf_counter() - start


def time_compute(backend: str, formulation: str, workload: Workload, budget_s: float) -> dict:
    """Seconds for the workload's steps, V fetched once at the end, compilation apart."""
    sim = backends.create(backend, Parameters(), workload.rows, workload.cols, formulation)
    compile_s = _warm_up(sim, workload)
    one_image_s = _warm_up(sim, workload)
    images = int(min(workload.images, max(1, budget_s // max(one_image_s, 1e-9))))
    start = time.perf_counter()
    for _ in range(images):
        sim.advance(workload.steps_per_image)
    sim.fetch_v()
    elapsed = time.perf_counter() - start
    seconds = elapsed * workload.images / images
    return {"compile_s": compile_s, "seconds": seconds, "images_timed": images,
            "extrapolated": images < workload.images,
            "us_per_step": seconds / workload.steps * 1e6}


def time_write_alone(workload: Workload, folder: Path) -> float:
    """Seconds to write the workload's images to HDF5 from host memory: the output's own floor."""
    frame = np.random.default_rng(0).random((workload.rows, workload.cols), dtype=np.float32)
    path = folder / "write-alone.h5"
    start = time.perf_counter()
    with FrameWriter(path, workload.images, workload.rows, workload.cols, Parameters(),
                     workload.steps_per_image, deflate=0) as writer:
        for _ in range(workload.images):
            writer.write(frame)
    seconds = time.perf_counter() - start
    path.unlink()
    return seconds


def time_output(backend: str, formulation: str, workload: Workload, folder: Path, overlapped: bool) -> dict:
    """Seconds for the workload with every image written, from the first step to the file closed."""
    from .runner import simulate

    sim = backends.create(backend, Parameters(), workload.rows, workload.cols, formulation)
    compile_s = _warm_up(sim, workload)
    path = folder / f"{backend}-{formulation}.h5"
    start = time.perf_counter()
    writer = FrameWriter(path, workload.images, workload.rows, workload.cols, Parameters(),
                         workload.steps_per_image, deflate=0)
    with BackgroundWriter(writer) if overlapped else writer as sink:
        simulate(sim, workload.images, workload.steps_per_image, sink)
    seconds = time.perf_counter() - start
    path.unlink()
    return {"compile_s": compile_s, "seconds": seconds, "images_timed": workload.images, "extrapolated": False}


def device_copy_gbps() -> float | None:
    """The GPU's own copy bandwidth (bytes read + written), measured now; None without CuPy."""
    if not backends.probe("cupy").ok:
        return None
    import cupy

    from .transfer import _Bench

    nbytes = 1 << 30
    bench = _Bench(cupy, nbytes)
    return 2 * nbytes / bench.device_copy_seconds(nbytes) / 1e9


def machine() -> dict:
    gpu = next((backends.probe(n).device for n in backends.GPU_PREFERENCE if backends.probe(n).on_gpu), None)
    return {
        "gpu": gpu,
        "cpu": platform.processor() or platform.machine(),
        "host": platform.node(),
        "python": platform.python_version(),
        "gs_course": __version__,
        "libraries": {name: backends.probe(name).version for name in backends.BACKENDS if backends.probe(name).ok},
    }


def run(workload: Workload = FULL, budget_s: float = 20.0, only: list[str] | None = None,
        output_dir: str | Path | None = ".", log=print) -> dict:
    """Check and time every case (or those whose 'backend/formulation' name contains a word of
    `only`), compute mode first, then the fastest formulation of each GPU library with output."""
    bandwidth = device_copy_gbps()
    floor_s = (workload.steps * ARRAYS_MOVED_PER_STEP * workload.frame_bytes / (bandwidth * 1e9)
               if bandwidth else None)
    results = {
        "schema": SCHEMA,
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "workload": dataclasses.asdict(workload),
        "device_copy_gbps": bandwidth,
        "floor_s": floor_s,
        "cases": [],
    }
    selected = [c for c in cases() if not only or any(word in f"{c[0]}/{c[1]}" for word in only)]
    for backend, formulation in selected:
        entry = {"name": f"{backend}/{formulation}", "backend": backend, "formulation": formulation,
                 "mode": "compute", "on_gpu": backends.probe(backend).on_gpu}
        results["cases"].append(entry)
        try:
            entry["check_error"] = error = check(backend, formulation)
            if not error <= PARITY_ATOL:
                entry["status"] = f"wrong: {error:.2e} from the reference (tolerance {PARITY_ATOL:.0e})"
            else:
                entry.update(time_compute(backend, formulation, workload, budget_s), status="ok")
        except Exception as err:  # one failing library must not hide the others' results
            entry["status"] = f"failed: {type(err).__name__}: {err}"
        log(_line(entry, results))
    if output_dir is not None:
        _run_output(results, workload, Path(output_dir), log)
    return results


def _run_output(results: dict, workload: Workload, output_dir: Path, log) -> None:
    fastest = [(name, backends.load(name).FASTEST) for name in backends.GPU_PREFERENCE
               if backends.probe(name).on_gpu]
    if not fastest:  # no GPU: show the mechanism with the fastest CPU formulation
        fastest = [("jax", backends.load("jax").FASTEST)] if backends.probe("jax").ok else []
    ran = {c["name"] for c in results["cases"] if c.get("status") == "ok"}
    fastest = [case for case in fastest if f"{case[0]}/{case[1]}" in ran]
    if not fastest:
        return
    needed = 2 * workload.images * workload.frame_bytes
    if shutil.disk_usage(output_dir).free < needed:
        results["output"] = {"status": f"skipped: {output_dir} has less than {needed / 1e9:.1f} GB free"}
        log(results["output"]["status"])
        return
    with tempfile.TemporaryDirectory(prefix="gs-course-bench-", dir=output_dir) as folder:
        folder = Path(folder)
        results["output"] = {"folder": str(output_dir.resolve()), "write_alone_s": time_write_alone(workload, folder)}
        log(f"writing the {workload.images} images alone: {results['output']['write_alone_s']:.2f} s")
        for backend, formulation in fastest:
            for overlapped in (False, True):
                mode = "output overlapped" if overlapped else "output in line"
                entry = {"name": f"{backend}/{formulation}, {mode}", "backend": backend,
                         "formulation": formulation, "mode": mode, "on_gpu": backends.probe(backend).on_gpu}
                try:
                    entry.update(time_output(backend, formulation, workload, folder, overlapped), status="ok")
                except Exception as err:
                    entry["status"] = f"failed: {type(err).__name__}: {err}"
                results["cases"].append(entry)
                log(_line(entry, results))


def _line(entry: dict, results: dict) -> str:
    if entry["status"] != "ok":
        return f"{entry['name']:<38} {entry['status']}"
    seconds = entry["seconds"]
    text = f"{entry['name']:<38} {seconds:>9.2f} s{'*' if entry['extrapolated'] else ' '}"
    text += f" compile {entry['compile_s']:>6.2f} s"
    if entry["mode"] == "compute":
        text += f" {entry['us_per_step']:>10.1f} us/step"
        if results["floor_s"] and entry["on_gpu"]:
            text += f" {seconds / results['floor_s']:>7.1f} x floor"
    elif "output" in results:
        text += f" {seconds / results['output']['write_alone_s']:>7.2f} x writing alone"
    a100 = A100.get(entry["name"])
    if a100:
        text += f"   A100: {a100[0]} s ({a100[1]})"
    return text


def table(results: dict) -> str:
    w = results["workload"]
    lines = [
        f"The course benchmark: {w['rows']} x {w['cols']} float32, {w['images']} images x "
        f"{w['steps_per_image']} steps = {w['images'] * w['steps_per_image']:,} steps",
        f"on {results['machine']['gpu'] or 'no GPU'} ({results['machine']['host']}), {results['recorded']}",
    ]
    if results["floor_s"]:
        lines.append(f"memory-bandwidth floor: {results['floor_s']:.3f} s (device copy "
                     f"{results['device_copy_gbps']:.0f} GB/s, one step per kernel)")
    lines += [_line(entry, results) for entry in results["cases"]]
    if any(entry.get("extrapolated") for entry in results["cases"]):
        lines.append("* extrapolated from the images timed (images_timed in the JSON)")
    if "output" in results:
        out = results["output"]
        lines.append(out.get("status") or f"output: HDF5 without compression in {out['folder']}; "
                     f"writing the images alone takes {out['write_alone_s']:.2f} s")
    return "\n".join(lines)


def save(results: dict, path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(results, indent=1) + "\n")
    return path


def load(path: str | Path) -> dict:
    results = json.loads(Path(path).read_text())
    if results.get("schema") != SCHEMA:
        raise ValueError(f"{path} is not a gs-course benchmark result (schema {SCHEMA})")
    return results


def figure(results: dict):
    """Bars of seconds (log scale) per case, the A100's figures and the floor marked."""
    from matplotlib.figure import Figure

    timed = [e for e in results["cases"] if e.get("status") == "ok"]
    fig = Figure(figsize=(10, 0.38 * len(timed) + 1.8), layout="constrained")
    ax = fig.subplots()
    names = [e["name"] + (" *" if e["extrapolated"] else "") for e in timed]
    colors = [{"numpy": "tab:gray", "jax": "tab:blue", "cupynumeric": "tab:green", "cupy": "tab:orange"}[e["backend"]]
              for e in timed]
    ax.barh(names, [e["seconds"] for e in timed], color=colors)
    for y, entry in enumerate(timed):
        ax.text(entry["seconds"], y, f" {entry['seconds']:.3g} s", va="center", fontsize=8)
        if entry["name"] in A100:
            ax.plot(A100[entry["name"]][0], y, "k|", markersize=14)
    ax.plot([], [], "k|", markersize=14, label="original course, A100")
    if results["floor_s"]:
        ax.axvline(results["floor_s"], color="red", ls=":", label=f"memory-bandwidth floor {results['floor_s']:.2f} s")
    if "output" in results and "write_alone_s" in results["output"]:
        ax.axvline(results["output"]["write_alone_s"], color="purple", ls="--", lw=1, label="writing the images alone")
    ax.set_xscale("log")
    ax.invert_yaxis()
    w = results["workload"]
    ax.set(xlabel=f"seconds for {w['images']} x {w['steps_per_image']} steps of {w['rows']} x {w['cols']} "
                  "(* extrapolated)",
           title=f"The course benchmark on {results['machine']['gpu'] or 'a CPU'}, {results['recorded']}")
    ax.legend(fontsize=8, loc="lower right")
    return fig
