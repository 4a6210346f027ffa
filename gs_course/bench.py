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

Each library runs in a child process of its own, started by the one `gs-course bench` command:
measured on an H200, cuPyNumeric's formulations ran 1.3 to 1.45 times slower, and JAX's slices
1.1 times, with the other libraries loaded in the same process (`isolate=False` runs everything
in the calling process, as the tests do).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import __version__, backends
from . import results as result_files
from .devices import gpus
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
    "cupy/strip, output overlapped": (12, "CuPy + HDF5 written in parallel"),
    "torch/slices": (22, "PyTorch"),
}
#: A step reads U and V and writes them: four float32 arrays of the grid.
ARRAYS_MOVED_PER_STEP = 4

CHECK_GRID = (61, 83)
CHECK_PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.9)


def _may_select(backend: str, only: list[str] | None) -> bool:
    """Whether a word of `only` can match one of the backend's 'backend/formulation' names, told
    without loading the backend: a word with a '/' must follow the end of the backend's name. A
    notebook that benchmarks JAX thus never starts Legate, which takes its share of the GPU."""
    return not only or any("/" not in word or backend.endswith(word.split("/")[0]) for word in only)


def _selected(backend: str, only: list[str] | None) -> list[str]:
    """The backend's formulations whose 'backend/formulation' name contains a word of `only`."""
    names = backends.load(backend).FORMULATIONS
    return [f for f in names if not only or any(word in f"{backend}/{f}" for word in only)]


def check(backend: str, formulation: str, steps: int = 64) -> float:
    """Largest difference from the float64 reference after `steps` steps on an odd grid."""
    return check_simulation(backends.create(backend, CHECK_PARAMS, *CHECK_GRID, formulation=formulation), steps)


def check_simulation(sim, steps: int = 64) -> float:
    """`check` for a simulation already made on CHECK_GRID with CHECK_PARAMS (one a tuning script
    builds with its own kernel shape, say)."""
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
    return time_simulation(sim, workload, budget_s)


def time_simulation(sim, workload: Workload, budget_s: float) -> dict:
    """`time_compute` for a simulation already made on the workload's grid, just created."""
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

    from .transfer import CopyBench

    nbytes = min(1 << 30, cupy.cuda.runtime.memGetInfo()[0] // 4)  # small cards: a quarter of what is free
    bench = CopyBench(cupy, nbytes)
    return 2 * nbytes / bench.device_copy_seconds(nbytes) / 1e9


def _output_wanted(backend: str) -> bool:
    """Output modes run for the fastest formulation of each GPU library (JAX's without a GPU)."""
    found = backends.probe(backend)
    return found.on_gpu if gpus() else backend == "jax" and found.ok


def run_backend(backend: str, workload: Workload, budget_s: float, only: list[str] | None,
                output_folder: str | Path | None, log=print) -> dict:
    """One library's cases: its probe, then each formulation checked and timed, then (for the
    fastest, where wanted) the two output modes."""
    found = backends.probe(backend)
    report = {"probe": dataclasses.asdict(found), "cases": []}
    if not found.ok:
        return report
    for formulation in _selected(backend, only):
        entry = {"name": f"{backend}/{formulation}", "backend": backend, "formulation": formulation,
                 "mode": "compute", "on_gpu": found.on_gpu}
        report["cases"].append(entry)
        try:
            entry["check_error"] = error = check(backend, formulation)
            if not error <= PARITY_ATOL:
                entry["status"] = f"wrong: {error:.2e} from the reference (tolerance {PARITY_ATOL:.0e})"
            else:
                entry.update(time_compute(backend, formulation, workload, budget_s), status="ok")
        except Exception as err:  # one failing formulation must not hide the others' results
            entry["status"] = f"failed: {type(err).__name__}: {err}"
        log(_line(entry, workload))
    fastest = backends.load(backend).FASTEST
    checked = any(e["formulation"] == fastest and e["status"] == "ok" for e in report["cases"])
    if output_folder is None or not checked or not _output_wanted(backend):
        return report
    for overlapped in (False, True):
        mode = "output overlapped" if overlapped else "output in line"
        entry = {"name": f"{backend}/{fastest}, {mode}", "backend": backend, "formulation": fastest,
                 "mode": mode, "on_gpu": found.on_gpu}
        try:
            entry.update(time_output(backend, fastest, workload, Path(output_folder), overlapped), status="ok")
        except Exception as err:
            entry["status"] = f"failed: {type(err).__name__}: {err}"
        report["cases"].append(entry)
        log(_line(entry, workload))
    return report


def _run_backend_in_child(backend: str, **arguments) -> dict:
    """run_backend in a fresh Python process, so that no other library shares its GPU context."""
    with tempfile.TemporaryDirectory(prefix="gs-course-bench-") as folder:
        answer = Path(folder) / "report.json"
        request = json.dumps({"backend": backend, "answer": str(answer), **arguments})
        done = subprocess.run([sys.executable, "-m", "gs_course.bench", request])
        if done.returncode == 0 and answer.exists():
            return json.loads(answer.read_text())
    reason = f"its process exited with code {done.returncode}"
    return {"probe": {"name": backend, "ok": False, "reason": reason}, "cases": [
        {"name": f"{backend}/*", "backend": backend, "formulation": "*", "mode": "compute",
         "on_gpu": False, "status": f"failed: {reason}"}]}


def _measure_device_copy_in_child() -> float | None:
    code = "from gs_course.bench import device_copy_gbps; print(device_copy_gbps())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    last = (done.stdout.strip().splitlines() or ["None"])[-1]
    return None if done.returncode or last == "None" else float(last)


def run(workload: Workload = FULL, budget_s: float = 20.0, only: list[str] | None = None,
        output_dir: str | Path | None = ".", log=print, isolate: bool = True) -> dict:
    """Check and time every formulation of every library (or those whose 'backend/formulation'
    contains a word of `only`); with `output_dir`, the output modes too, against writing alone."""
    bandwidth = _measure_device_copy_in_child() if isolate else device_copy_gbps()
    floor_s = (workload.steps * ARRAYS_MOVED_PER_STEP * workload.frame_bytes / (bandwidth * 1e9)
               if bandwidth else None)
    gpu = next(iter(gpus()), None)
    results = {
        "schema": SCHEMA,
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {"gpu": gpu.name if gpu else None, "driver": gpu.driver if gpu else None,
                    "cpu": platform.processor() or platform.machine(), "host": platform.node(),
                    "python": platform.python_version(), "gs_course": __version__, "libraries": {}},
        "workload": dataclasses.asdict(workload),
        "device_copy_gbps": bandwidth,
        "floor_s": floor_s,
        "isolated": isolate,
        "unavailable": {},
        "cases": [],
    }
    with tempfile.TemporaryDirectory(prefix="gs-course-bench-", dir=output_dir) as folder:
        if output_dir is not None:
            needed = 2 * workload.images * workload.frame_bytes
            if shutil.disk_usage(folder).free < needed:
                results["output"] = {"status": f"skipped: {output_dir} has less than {needed / 1e9:.1f} GB free"}
                folder = None
            else:
                results["output"] = {"folder": str(Path(output_dir).resolve()),
                                     "write_alone_s": time_write_alone(workload, Path(folder))}
            log(results["output"].get("status") or
                f"writing the {workload.images} images alone: {results['output']['write_alone_s']:.2f} s")
        else:
            folder = None
        arguments = {"workload": dataclasses.asdict(workload), "budget_s": budget_s, "only": only,
                     "output_folder": folder}
        for backend in (b for b in backends.BACKENDS if _may_select(b, only)):
            if isolate:
                report = _run_backend_in_child(backend, **arguments)
            else:
                report = run_backend(backend, **{**arguments, "workload": workload}, log=log)
            if report["probe"]["ok"]:
                results["machine"]["libraries"][backend] = report["probe"]["version"]
            else:
                results["unavailable"][backend] = report["probe"]["reason"]
            results["cases"] += report["cases"]
    for entry in results["cases"]:
        entry["x_floor"] = entry["seconds"] / floor_s if floor_s and entry.get("on_gpu") and "seconds" in entry \
            and entry["mode"] == "compute" else None
    return results


def _a100(workload: dict | Workload, name: str) -> tuple[int, str] | None:
    """The A100 table's figure for a case, only where the workload is the table's own."""
    full = dataclasses.asdict(FULL)
    same = (workload if isinstance(workload, dict) else dataclasses.asdict(workload)) == full
    return A100.get(name) if same else None


def _line(entry: dict, workload: dict | Workload, write_alone_s: float | None = None) -> str:
    if entry["status"] != "ok":
        return f"{entry['name']:<38} {entry['status']}"
    seconds = entry["seconds"]
    text = f"{entry['name']:<38} {seconds:>9.2f} s{'*' if entry['extrapolated'] else ' '}"
    text += f" compile {entry['compile_s']:>6.2f} s"
    if entry["mode"] == "compute":
        text += f" {entry['us_per_step']:>10.1f} us/step"
        if entry.get("x_floor"):
            text += f" {entry['x_floor']:>7.1f} x floor"
    elif write_alone_s:
        text += f" {seconds / write_alone_s:>7.2f} x writing alone"
    a100 = _a100(workload, entry["name"])
    if a100:
        text += f"   A100: {a100[0]} s ({a100[1]})"
    return text


def table(results: dict) -> str:
    w = results["workload"]
    lines = [
        f"The course benchmark: {w['rows']} x {w['cols']} float32, {w['images']} images x "
        f"{w['steps_per_image']} steps = {w['images'] * w['steps_per_image']:,} steps",
        f"on {results['machine']['gpu'] or 'no GPU'} ({results['machine']['host']}), {results['recorded']}, "
        f"{'each library in its own process' if results['isolated'] else 'all libraries in one process'}",
    ]
    if results["floor_s"]:
        lines.append(f"memory-bandwidth floor: {results['floor_s']:.3f} s (device copy "
                     f"{results['device_copy_gbps']:.0f} GB/s, one step per kernel)")
    write_alone_s = results.get("output", {}).get("write_alone_s")
    lines += [_line(entry, w, write_alone_s) for entry in results["cases"]]
    for backend, reason in results["unavailable"].items():
        lines.append(f"{backend:<38} not run here: {reason}")
    if any(entry.get("extrapolated") for entry in results["cases"]):
        lines.append("* extrapolated from the images timed (images_timed in the JSON)")
    if "output" in results:
        out = results["output"]
        lines.append(out.get("status") or f"output: HDF5 without compression in {out['folder']}; "
                     f"writing the images alone takes {out['write_alone_s']:.2f} s")
    return "\n".join(lines)


def load(path: str | Path) -> dict:
    """A benchmark results file, read back after checking its schema."""
    return result_files.load(path, "benchmark", SCHEMA)


save = result_files.save


def figure(results: dict):
    """Bars of seconds (log scale) per case, the A100's figures and the floor marked."""
    from matplotlib.figure import Figure

    timed = [e for e in results["cases"] if e.get("status") == "ok"]
    fig = Figure(figsize=(10, 0.38 * len(timed) + 1.8), layout="constrained")
    ax = fig.subplots()
    names = [e["name"] + (" *" if e["extrapolated"] else "") for e in timed]
    palette = {"numpy": "tab:gray", "jax": "tab:blue", "cupynumeric": "tab:green", "cupy": "tab:orange",
               "torch": "tab:red"}
    colors = [palette[e["backend"]] for e in timed]
    ax.barh(names, [e["seconds"] for e in timed], color=colors)
    for y, entry in enumerate(timed):
        ax.text(entry["seconds"], y, f" {entry['seconds']:.3g} s", va="center", fontsize=8)
        if _a100(results["workload"], entry["name"]):
            ax.plot(A100[entry["name"]][0], y, "k|", markersize=14)
    if any(_a100(results["workload"], entry["name"]) for entry in timed):
        ax.plot([], [], "k|", markersize=14, label="original course, A100 (same workload)")
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


if __name__ == "__main__":
    # The child process of run(isolate=True): one library's cases, answered as JSON in a file.
    request = json.loads(sys.argv[1])
    report = run_backend(request["backend"], Workload(**request["workload"]), request["budget_s"], request["only"],
                         request["output_folder"], log=lambda line: print(line, file=sys.stderr, flush=True))
    Path(request["answer"]).write_text(json.dumps(report))
