"""The course benchmark ("32 x 1000"): every library and formulation, side by side, in one run.

The workload is `workload.FULL` by default (the school's model, 1000 images with 32 steps between
two). Each formulation is first checked against the float64 reference (a fast wrong answer is a
failure, not a result), then timed `repeats` times by its library's `timer.Timer` (median and range):

- compute: the steps, the clock stopped when the device has finished them (the quantity
  `gs-course scale` times too); the first image is timed apart
  (it includes compilation); formulations too slow for the time budget run fewer images and the
  total is extrapolated, and labelled so;
- with output: the V images written to an HDF5 file (no compression), in line (compute,
  copy, write, in turn) and overlapped (a second thread writes while the GPU computes), against
  the time to write the same images alone.

The same run measures the GPU's device-to-device copy bandwidth, which gives "one pass through
memory": a step reads U and V and writes them (`Workload.bytes_moved_per_step`), those bytes over
the bandwidth. It is a yardstick, not a limit: the state fits in the H200's L2 cache, and a kernel
that does several steps on data kept on chip need not move them every step. So the same run also
measures a copy that stays in L2 (the state's bytes copied from one buffer to another and back,
the two buffers together as large as a step's arrays), which gives "the same bytes at the L2
copy rate": a kernel faster than that keeps its data closer still (shared memory, registers).

Each library runs in a child process of its own, started by the one `gs-course bench` command:
libraries loaded in one process slow each other down (BENCHMARKS.md has the measurement;
`isolate=False` runs everything in the calling process, as the tests and notebooks do).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .. import backends
from ..devices import gpus
from ..workload import FULL, Workload
from .timer import Samples
from ..model import PARITY_ATOL, reference_run
from ..output import BackgroundWriter, FrameWriter
from ..parameters import Parameters
from ..runner import simulate
from . import records
from . import timer
from .transfer import CopyBench

KIND, SCHEMA = "bench", 2

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


def time_compute(backend: str, formulation: str, workload: Workload, budget_s: float, repeats: int = 3) -> dict:
    """Seconds for the workload's steps, compilation apart."""
    sim = backends.create(backend, Parameters(), workload.rows, workload.cols, formulation)
    return time_simulation(sim, workload, budget_s, repeats)


def _images(sim, images: int, steps_per_image: int):
    def run():
        for _ in range(images):
            sim.advance(steps_per_image)
    return run


def time_simulation(sim, workload: Workload, budget_s: float, repeats: int = 3) -> dict:
    """`time_compute` for a simulation already made on the workload's grid, just created: the
    first image (compilation, first allocations) apart, then as many images as `budget_s` allows
    over the repeats, the clock stopped when the device has finished."""
    clock = timer.for_library(sim.backend)
    one = clock.time(_images(sim, 1, workload.steps_per_image), repeats=1, warmup=1, on=sim)
    images = int(min(workload.images, max(1, budget_s / repeats // max(one.median, 1e-9))))
    samples = clock.time(_images(sim, images, workload.steps_per_image), repeats, warmup=0, on=sim)
    total = Samples(samples.scaled(workload.images / images).seconds, one.compile_s)
    return {**_stored(total), "images_timed": images, "extrapolated": images < workload.images,
            "us_per_step": total.median / workload.steps * 1e6}


def _stored(samples: Samples) -> dict:
    """A case's timing as the results file keeps it: `seconds` is the median."""
    stored = samples.as_dict()
    return {"seconds": stored.pop("median_s"), **stored}


def time_write_alone(workload: Workload, folder: Path, repeats: int = 3) -> dict:
    """Seconds to write the workload's images to HDF5 from host memory: the output's own floor."""
    frame = np.random.default_rng(0).random((workload.rows, workload.cols), dtype=np.float32)
    path = folder / "write-alone.h5"

    def write():
        with FrameWriter(path, workload.images, workload.rows, workload.cols, Parameters(),
                         workload.steps_per_image, deflate=0) as writer:
            for _ in range(workload.images):
                writer.write(frame)
        path.unlink()

    return _stored(timer.Timer().time(write, repeats, warmup=0))


def time_output(backend: str, formulation: str, workload: Workload, folder: Path, overlapped: bool,
                repeats: int = 3) -> dict:
    """Seconds for the workload with every image written, from the first step to the file closed."""
    sim = backends.create(backend, Parameters(), workload.rows, workload.cols, formulation)
    clock = timer.for_library(sim.backend)
    compile_s = clock.time(_images(sim, 1, workload.steps_per_image), 1, warmup=0, on=sim).median
    path = folder / f"{backend}-{formulation}.h5"

    def run():
        writer = FrameWriter(path, workload.images, workload.rows, workload.cols, Parameters(),
                             workload.steps_per_image, deflate=0)
        with BackgroundWriter(writer) if overlapped else writer as sink:
            simulate(sim, workload.images, workload.steps_per_image, sink, stopwatch=clock.stopwatch())
        path.unlink()

    samples = clock.time(run, repeats, warmup=0, on=sim)
    return {**_stored(Samples(samples.seconds, compile_s)), "images_timed": workload.images, "extrapolated": False}


def device_copy_gbps() -> float | None:
    """The GPU's own copy bandwidth (bytes read + written), measured now; None without CuPy."""
    if not backends.probe("cupy").ok:
        return None
    import cupy

    nbytes = min(1 << 30, cupy.cuda.runtime.memGetInfo()[0] // 4)  # small cards: a quarter of what is free
    bench = CopyBench(cupy, nbytes)
    return 2 * nbytes / bench.device_copy(nbytes).median / 1e9


def l2_copy_gbps(nbytes: int, copies: int = 64, repeats: int = 10) -> float | None:
    """The GPU's copy rate (bytes read + written) between two buffers of `nbytes` each that stay in
    its L2 cache, measured now; None without CuPy. `copies` copies, one way then the other,
    captured once as a CUDA graph (launched from Python one by one, each copy of a few
    microseconds would wait for Python), timed with CUDA events: the median of `repeats` replays.
    Each copy is an operation of its own, as each step of a one-step kernel is a launch of its
    own: the GPU's gaps between operations count in both."""
    if not backends.probe("cupy").ok:
        return None
    import cupy

    buffers = cupy.ones(nbytes, np.uint8), cupy.zeros(nbytes, np.uint8)

    def copy_back_and_forth():
        stream = cupy.cuda.get_current_stream()
        for k in range(copies):
            buffers[1 - k % 2].data.copy_from_device_async(buffers[k % 2].data, nbytes, stream)

    samples = timer.CupyTimer().time_graph(copy_back_and_forth, repeats)
    return 2 * nbytes * copies / samples.device_median / 1e9


def _output_wanted(backend: str) -> bool:
    """Output modes run for the fastest formulation of each GPU library (JAX's without a GPU)."""
    found = backends.probe(backend)
    return found.on_gpu if gpus() else backend == "jax" and found.ok


def run_backend(backend: str, workload: Workload, budget_s: float, only: list[str] | None,
                output_folder: str | Path | None, repeats: int = 3, log=print) -> dict:
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
                entry.update(time_compute(backend, formulation, workload, budget_s, repeats), status="ok")
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
            entry.update(time_output(backend, fastest, workload, Path(output_folder), overlapped, repeats),
                         status="ok")
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
        done = subprocess.run([sys.executable, "-m", "gs_course.measurement.bench", request])
        if done.returncode == 0 and answer.exists():
            return json.loads(answer.read_text())
    reason = f"its process exited with code {done.returncode}"
    return {"probe": {"name": backend, "ok": False, "reason": reason}, "cases": [
        {"name": f"{backend}/*", "backend": backend, "formulation": "*", "mode": "compute",
         "on_gpu": False, "status": f"failed: {reason}"}]}


def copy_rates(state_bytes: int) -> tuple[float | None, float | None]:
    """(the device copy's GB/s, the L2 copy's for two buffers of `state_bytes`), None without CuPy."""
    return device_copy_gbps(), l2_copy_gbps(state_bytes)


def _copy_rates_in_child(state_bytes: int) -> tuple[float | None, float | None]:
    code = f"import json; from gs_course.measurement.bench import copy_rates; print(json.dumps(copy_rates({state_bytes})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    last = (done.stdout.strip().splitlines() or ["null"])[-1]
    return (None, None) if done.returncode or last == "null" else tuple(json.loads(last))


def run(workload: Workload = FULL, budget_s: float = 20.0, only: list[str] | None = None,
        output_dir: str | Path | None = None, log=print, isolate: bool = True, repeats: int = 3,
        command: str | None = None) -> dict:
    """Check and time every formulation of every library (or those whose 'backend/formulation'
    contains a word of `only`), each `repeats` times; with `output_dir` (where the HDF5 files go
    while timed, removed after), the output modes too, against writing alone. Returns a
    `records.record` of kind 'bench'."""
    state_bytes = workload.bytes_moved_per_step // 2  # U and V; a copy between two such buffers
    bandwidth, l2_bandwidth = _copy_rates_in_child(state_bytes) if isolate else copy_rates(state_bytes)
    floor_s, l2_floor_s = (workload.steps * workload.bytes_moved_per_step / (rate * 1e9) if rate else None
                           for rate in (bandwidth, l2_bandwidth))
    results = records.record(KIND, {
        "workload": workload.as_dict(),
        "repeats": repeats,
        "device_copy_gbps": bandwidth,
        "floor_s": floor_s,
        "l2_copy_gbps": l2_bandwidth,
        "l2_copy_bytes": state_bytes,
        "l2_floor_s": l2_floor_s,
        "isolated": isolate,
        "backends": {},
        "unavailable": {},
        "cases": [],
    }, schema=SCHEMA, command=command)
    with tempfile.TemporaryDirectory(prefix="gs-course-bench-", dir=output_dir) as folder:
        if output_dir is not None:
            needed = 2 * workload.images * workload.frame_bytes
            if shutil.disk_usage(folder).free < needed:
                results["output"] = {"status": f"skipped: {output_dir} has less than {needed / 1e9:.1f} GB free"}
                folder = None
            else:
                results["output"] = {"folder": str(Path(output_dir).resolve()),
                                     **time_write_alone(workload, Path(folder), repeats)}
            log(results["output"].get("status") or
                f"writing the {workload.images} images alone: {results['output']['seconds']:.2f} s")
        else:
            folder = None
        arguments = {"workload": workload.as_dict(), "budget_s": budget_s, "only": only,
                     "output_folder": folder, "repeats": repeats}
        for backend in (b for b in backends.BACKENDS if _may_select(b, only)):
            if isolate:
                report = _run_backend_in_child(backend, **arguments)
            else:
                report = run_backend(backend, **{**arguments, "workload": workload}, log=log)
            if report["probe"]["ok"]:
                results["backends"][backend] = report["probe"]["version"]
            else:
                results["unavailable"][backend] = report["probe"]["reason"]
            results["cases"] += report["cases"]
    for entry in results["cases"]:
        timed_on_gpu = entry.get("on_gpu") and "seconds" in entry and entry["mode"] == "compute"
        entry["x_floor"] = entry["seconds"] / floor_s if floor_s and timed_on_gpu else None
        entry["x_l2"] = entry["seconds"] / l2_floor_s if l2_floor_s and timed_on_gpu else None
    return results


def _a100(workload: dict | Workload, name: str) -> tuple[int, str] | None:
    """The school's figure for a case, only where the workload is the table's own."""
    return A100.get(name) if FULL.same_run(workload) else None


def _school(name: str, seconds: int) -> str:
    """The school's figure, named for what it is: its own program on its A100, or (NumPy) the best
    CPU code of day 5; the course never ran either."""
    return f"{seconds} s ({'CPU, day 5' if name.startswith('numpy/') else 'A100'})"


def _write_alone_s(results: dict) -> float | None:
    return results.get("output", {}).get("seconds")


def _seconds(entry: dict) -> str:
    """'271 ms (270-275)': a case's median and the range of its repeats."""
    return timer.format_range(entry["seconds"], entry.get("min_s"), entry.get("max_s"))


def _line(entry: dict, workload: dict | Workload, write_alone_s: float | None = None) -> str:
    if entry["status"] != "ok":
        return f"{entry['name']:<38} {entry['status']}"
    text = f"{entry['name']:<38} {_seconds(entry):>24}{'*' if entry['extrapolated'] else ' '}"
    text += f" compile {entry['compile_s']:>6.2f} s"
    if entry["mode"] == "compute":
        text += f" {entry['us_per_step']:>10.1f} us/step"
        if entry.get("x_floor"):
            text += f" {entry['x_floor']:>7.1f} x one pass"
        if entry.get("x_l2"):
            text += f" {entry['x_l2']:>7.1f} x L2 copy"
    elif write_alone_s:
        text += f" {entry['seconds'] / write_alone_s:>7.2f} x writing alone"
    a100 = _a100(workload, entry["name"])
    if a100:
        text += f"   the school's: {a100[0]} s ({a100[1]}{'' if entry['name'].startswith('numpy/') else ', A100'})"
    return text


def _title(results: dict) -> str:
    return f"The course benchmark: {Workload.from_dict(results['workload']).describe()}"


def _how(results: dict) -> str:
    repeats = "timed once" if results["repeats"] == 1 else f"median (range) of {results['repeats']} repeats"
    where = "each library in its own process" if results["isolated"] else "all libraries in one process"
    return f"{repeats}, {where}"


def _l2_copy(results: dict) -> str:
    return (f"L2 copy {results['l2_copy_gbps']:.0f} GB/s, between two buffers of "
            f"{results['l2_copy_bytes'] / 1e6:.1f} MB")


def table(results: dict) -> str:
    """The results as text: one line a case, the median and the range of its repeats."""
    lines = [
        _title(results),
        f"on {records.describe(results['provenance'])}; {_how(results)}",
    ]
    if results["floor_s"]:
        lines.append(f"one pass through memory: {results['floor_s']:.3f} s (device copy "
                     f"{results['device_copy_gbps']:.0f} GB/s, one step per kernel)")
    if results.get("l2_floor_s"):
        lines.append(f"the same bytes at the L2 copy rate: {results['l2_floor_s']:.3f} s ({_l2_copy(results)})")
    lines += [_line(entry, results["workload"], _write_alone_s(results)) for entry in results["cases"]]
    for backend, reason in results["unavailable"].items():
        lines.append(f"{backend:<38} not run here: {reason}")
    if any(entry.get("extrapolated") for entry in results["cases"]):
        lines.append("* extrapolated from the images timed (images_timed in the JSON)")
    if "output" in results:
        out = results["output"]
        lines.append(out.get("status") or f"output: HDF5 without compression in {out['folder']}; "
                     f"writing the images alone takes {_seconds(out)}")
    return "\n".join(lines)


def markdown(results: dict) -> str:
    """The results as a Markdown table (BENCHMARKS.md renders it: `gs_course.delivery.documents`)."""
    prov = results["provenance"]
    write_alone_s = _write_alone_s(results)
    # The L2 column only where the run measured it (result files from before it have none).
    l2 = bool(results.get("l2_floor_s"))
    columns = ["case", "seconds", "us a step", "x one pass through memory", *(["x L2 copy"] if l2 else []),
               "x writing alone", "the school's"]
    rows = [f"{_title(results)}; {records.describe(prov)}; {_how(results)}.", "",
            f"| {' | '.join(columns)} |", "|" + "---|" * len(columns)]
    for entry in results["cases"]:
        if entry["status"] != "ok":
            rows.append(f"| {entry['name']} | {entry['status']} |" + " |" * (len(columns) - 2))
            continue
        a100 = _a100(results["workload"], entry["name"])
        compute = entry["mode"] == "compute"
        rows.append(
            f"| {entry['name']} | {_seconds(entry)}{' *' if entry['extrapolated'] else ''} | "
            f"{entry['us_per_step']:.1f} |" if compute else f"| {entry['name']} | {_seconds(entry)} | |")
        for key in ("x_floor", "x_l2") if l2 else ("x_floor",):
            rows[-1] += (f" {entry[key]:.1f} |" if compute and entry.get(key) else " |")
        rows[-1] += (f" {entry['seconds'] / write_alone_s:.2f} |" if not compute and write_alone_s else " |")
        rows[-1] += f" {_school(entry['name'], a100[0])} |" if a100 else " |"
    notes = []
    if results["floor_s"]:
        notes.append(f"one pass through memory {results['floor_s']:.3f} s (device copy "
                     f"{results['device_copy_gbps']:.0f} GB/s)")
    if l2:
        notes.append(f"the same bytes at the L2 copy rate {results['l2_floor_s']:.3f} s ({_l2_copy(results)})")
    if write_alone_s:
        notes.append(f"writing the images alone {_seconds(results['output'])}")
    if any(entry.get("extrapolated") for entry in results["cases"]):
        notes.append("* extrapolated from the images timed")
    if results["unavailable"]:
        notes.append("not run: " + "; ".join(f"{b} ({r})" for b, r in results["unavailable"].items()))
    return "\n".join(rows + ([""] + ["; ".join(notes) + "."] if notes else []))


def load(path: str | Path) -> dict:
    """A benchmark results file, read back after checking its kind and schema."""
    return records.load(path, KIND, SCHEMA)


save = records.save


def figure(results: dict):
    """Bars of seconds (log scale) per case, the school's figures and one pass through memory marked."""
    from matplotlib.figure import Figure

    timed = [e for e in results["cases"] if e.get("status") == "ok"]
    fig = Figure(figsize=(10, 0.38 * len(timed) + 1.8), layout="constrained")
    ax = fig.subplots()
    names = [e["name"] + (" *" if e["extrapolated"] else "") for e in timed]
    palette = {"numpy": "tab:gray", "jax": "tab:blue", "cupynumeric": "tab:green", "cupy": "tab:orange",
               "torch": "tab:red"}
    colors = [palette[e["backend"]] for e in timed]
    ax.barh(names, [e["seconds"] for e in timed], color=colors,
            xerr=[[e["seconds"] - e["min_s"] for e in timed], [e["max_s"] - e["seconds"] for e in timed]],
            error_kw={"elinewidth": 1, "capsize": 2})
    for y, entry in enumerate(timed):
        ax.text(entry["seconds"], y, f" {entry['seconds']:.3g} s", va="center", fontsize=8)
        if _a100(results["workload"], entry["name"]):
            ax.plot(A100[entry["name"]][0], y, "k|", markersize=14)
    if any(_a100(results["workload"], entry["name"]) for entry in timed):
        ax.plot([], [], "k|", markersize=14, label="the school's own programs (A100; NumPy: CPU)")
    if results["floor_s"]:
        ax.axvline(results["floor_s"], color="red", ls=":", label=f"one pass through memory {results['floor_s']:.2f} s")
    if results.get("l2_floor_s"):
        ax.axvline(results["l2_floor_s"], color="darkorange", ls=":",
                   label=f"the same bytes at the L2 copy rate {results['l2_floor_s']:.2f} s")
    if _write_alone_s(results):
        ax.axvline(_write_alone_s(results), color="purple", ls="--", lw=1, label="writing the images alone")
    ax.set_xscale("log")
    ax.invert_yaxis()
    w = Workload.from_dict(results["workload"])
    ax.set(xlabel=f"seconds for {w.images} x {w.steps_per_image} steps of {w.grid} (median, range of "
                  f"{results['repeats']} repeats; * extrapolated)",
           title=f"The course benchmark on {records.describe(results['provenance'])}")
    if ax.get_legend_handles_labels()[0]:  # none on a CPU without the school's figures
        ax.legend(fontsize=8, loc="lower right")
    return fig


if __name__ == "__main__":
    # The child process of run(isolate=True): one library's cases, answered as JSON in a file.
    request = json.loads(sys.argv[1])
    report = run_backend(request["backend"], Workload.from_dict(request["workload"]), request["budget_s"],
                         request["only"], request["output_folder"], request["repeats"],
                         log=lambda line: print(line, file=sys.stderr, flush=True))
    Path(request["answer"]).write_text(json.dumps(report))
