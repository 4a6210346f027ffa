"""The figures the tutorials and the README's classroom paragraph quote, each rendered from a
record of results/<machine>/ (`documents.RENDERERS` names them; `python -m
gs_course.delivery.documents` puts them into the marked blocks)."""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths
from ..measurement import bench, records, scale, timer
from ..workload import Workload
from . import classroom, instructor


def fastest_cases(entries: list[dict]) -> dict[str, dict]:
    """Each backend's fastest compute-mode entry among `entries` (the first of equals)."""
    best = {}
    for entry in (e for e in entries if e["mode"] == "compute"):
        if entry["backend"] not in best or entry["seconds"] < best[entry["backend"]]["seconds"]:
            best[entry["backend"]] = entry
    return best


def result_path(machine: str, name: str) -> Path:
    """results/<machine>/<name> in the course's folder."""
    return paths.ROOT / "results" / machine / name


#: The CuPy tutorial's names of gs_course's CuPy formulations, slowest to fastest.
CUPY_FORMULATIONS = {
    "slices": "NumPy-style slices (about forty kernels a step)",
    "elementwise": "the whole step in one `ElementwiseKernel` (`raw` arguments: a thread reads its neighbours)",
    "raw": "one `RawKernel` a step, one thread a cell",
    "graph": "the same, an image's launches replayed as a CUDA graph",
    "strip": "the strip kernel as a graph (a thread walks down a column)",
    "multistep": "several steps a launch, each block's tile kept in shared memory",
    "persistent": "all the steps of a call in one cooperative launch, each block's tile kept on chip",
}


def _cupy_cases(results: dict) -> dict[tuple[str, str], dict]:
    """The CuPy entries that ran, by (formulation, mode)."""
    return {(e["formulation"], e["mode"]): e for e in results["cases"]
            if e["backend"] == "cupy" and e.get("status") == "ok"}


def cupy_formulations(results: dict) -> str:
    """The CuPy tutorial's table: each CuPy formulation's time a step in the course benchmark, and
    one pass through memory (the step's bytes at the GPU's own copy rate)."""
    prov = results["provenance"]
    workload = Workload.from_dict(results["workload"])
    cases = _cupy_cases(results)
    rows = [f"The course benchmark on one {prov['gpu']} ({prov['date'][:10]}, `results/"
            f"{records.machine_name(prov['gpu'])}/bench.json`), {workload.grid}, {workload.steps:,} steps:", "",
            "| CuPy formulation | a step | the whole run |", "|---|---|---|"]
    for formulation, label in CUPY_FORMULATIONS.items():
        entry = cases.get((formulation, "compute"))
        if entry:
            star = " *" if entry["extrapolated"] else ""
            rows.append(f"| {label} | {entry['seconds'] / workload.steps * 1e6:,.1f} us | {bench._seconds(entry)}{star} |")
    if results["floor_s"]:
        rows.append(f"| one pass through memory: U and V read, U and V written, at the GPU's copy rate "
                    f"({results['device_copy_gbps']:,.0f} GB/s, as the benchmark measured it) | {results['floor_s'] / workload.steps * 1e6:,.1f} us | "
                    f"{results['floor_s']:.2f} s |")
    if any(e["extrapolated"] for e in cases.values()):
        rows += ["", "\\* extrapolated from the images timed within the run's time budget."]
    return "\n".join(rows)


def cupy_output(results: dict) -> str:
    """The CuPy tutorial's line on overlapped output: the fastest CuPy formulation with its images
    written in line and by a second thread, against writing the images alone."""
    workload = Workload.from_dict(results["workload"])
    alone = bench._write_alone_s(results)
    cases = _cupy_cases(results)
    timed = [(mode, entry) for (_, mode), entry in cases.items() if mode.startswith("output")]
    if not alone or not timed:
        return "The course benchmark did not time CuPy's output here."
    parts = [f"{mode.removeprefix('output ')} {bench._seconds(entry)}, {entry['seconds'] / alone:.2f} times writing alone"
             for mode, entry in timed]
    return (f"In the course benchmark (`results/{records.machine_name(results['provenance']['gpu'])}/bench.json`), "
            f"writing its {workload.images:,} images alone took {timer.format_seconds(alone)}; the "
            f"{timed[0][1]['formulation']} kernel with its images written {'; '.join(parts)}.")


def cupy_step_range(results: dict) -> str:
    """The CuPy tutorial's line in its timing section: the NumPy-style step (many launches) against
    one RawKernel a step, from one benchmark file."""
    prov = results["provenance"]
    workload = Workload.from_dict(results["workload"])
    cases = _cupy_cases(results)
    slices, raw = (cases[(name, "compute")]["seconds"] / workload.steps for name in ("slices", "raw"))
    return (f"On one {prov['gpu']} ({prov['date'][:10]}, `results/{records.machine_name(prov['gpu'])}/bench.json`, "
            f"{workload.grid}): the NumPy-style step took {slices * 1e6:,.1f} us, the whole step as one "
            f"`RawKernel` {raw * 1e6:,.1f} us, {slices / raw:,.0f} times less.")


def _instructor_check(machine: str) -> dict:
    """Each notebook's peak GPU memory in the instructor check the course keeps for `machine`
    (its record, results/<machine>/instructor-check.json)."""
    record = instructor.load(result_path(machine, "instructor-check.json"))
    return {"file": f"results/{machine}/instructor-check.json", "gpu": record["provenance"]["gpu"],
            "peaks": {row["notebook"]: f"{row['peak_mib']:,} MiB" for row in record["notebooks"]
                      if row["passed"] and row["peak_mib"] is not None}}


def notebook_peaks(record: dict, name: str) -> str:
    """A line on an instructor check's record (results/<machine>/`name`): with how much memory free,
    on which grid, each notebook's result and peak GPU memory."""
    prov = record["provenance"]
    free = f" with {record['free_gb']:g} GB of its memory free (--free-gb)" if record.get("free_gb") is not None else ""
    rows = [f"{row['notebook'].removesuffix('.ipynb').rsplit('_', 1)[-1]} {'passed' if row['passed'] else 'FAILED'}"
            + (f" within {row['peak_mib']:,} MiB" if row["peak_mib"] is not None else "") for row in record["notebooks"]]
    return (f"On one {prov['gpu'] or 'CPU'}{free} ({prov['date'][:10]}, commit {prov['commit']}, "
            f"`results/{records.machine_name(prov['gpu'])}/{name}`; {record['grid']}): "
            + ", ".join(rows) + ", CUDA's context and libraries included.")


def cupy_gpu_memory(found: dict) -> str:
    """The CuPy tutorial's line on the GPU memory it needs: its row of the instructor check."""
    return (f"On the course's {found['gpu']}, this notebook took at most {found['peaks']['3_Python_GPU_CuPy.ipynb']} "
            f"of GPU memory above what was in use when it started (`{found['file']}`).")


def cupy_kernel_variants(text: str) -> str:
    """The CuPy tutorial's kernel variants: the first section of results/<machine>/logs/cupy-topics.txt
    (each kernel's time a step, as a CUDA graph), with the run's GPU and date (a lesson names its
    file, not the commit: that is the file's provenance)."""
    fields = dict(re.findall(r"(commit|date|GPU): ([^;\n]+)", text))
    gpu = fields["GPU"].split(",")[0]
    section = text.split("\n## ")[1].split("\n\n")[0].splitlines()
    return "\n".join([f"{section[0]}, on one {gpu} ({fields['date'][:10]}, "
                      f"`results/{records.machine_name(gpu)}/logs/cupy-topics.txt`):", "", "```", *section[1:], "```"])


# --- The synthesis (session 4) --------------------------------------------------------------------

#: The three libraries of the day, each with the formulation the student writes first (NumPy-style slices).
SYNTHESIS_LIBRARIES = {"cupy": "CuPy", "cupynumeric": "cuPyNumeric", "jax": "JAX"}


def synthesis_routes(results: dict) -> str:
    """The synthesis's table of the three routes on the course's GPU (NumPy-style slices against
    each library's fastest formulation), then the school's own figures beside it, labelled as the
    school's: its programs, on its A100 and CPU, were not run by this course."""
    prov = results["provenance"]
    workload = Workload.from_dict(results["workload"])
    ok = {e["name"]: e for e in results["cases"] if e.get("status") == "ok" and e["mode"] == "compute"}
    fastest = fastest_cases(list(ok.values()))
    star = lambda e: "*" if e["extrapolated"] else ""  # noqa: E731
    rows = [f"The course benchmark ({workload.steps:,} steps on {workload.grid}) on one {prov['gpu']} "
            f"({prov['date'][:10]}, `results/{records.machine_name(prov['gpu'])}/bench.json`; * extrapolated "
            "from the images timed):", "",
            "| library | NumPy-style slices | its fastest formulation | slices / fastest |", "|---|---|---|---|"]
    for backend, label in SYNTHESIS_LIBRARIES.items():
        if f"{backend}/slices" not in ok:
            rows.append(f"| {label} | not measured | | |")
            continue
        slices, best = ok[f"{backend}/slices"], fastest[backend]
        rows.append(f"| {label} | {bench._seconds(slices)}{star(slices)} | {best['formulation']}: "
                    f"{bench._seconds(best)}{star(best)} | {_ratio(slices['seconds'] / best['seconds'])} |")
    if "numpy/slices" in ok:
        numpy = ok["numpy/slices"]
        rows.append(f"| NumPy, on that host's CPU | {bench._seconds(numpy)}{star(numpy)} | | |")
    school = [f"{label} {seconds} s" for name, (seconds, label) in bench.A100.items() if not name.startswith("numpy/")]
    cpu_seconds = bench.A100["numpy/slices"][0]
    rows += ["", "The school's own figures for the same workload, from the original course's table "
             f"(its own programs, not run by this course): on an A100, {', '.join(school)}; on the CPU, "
             f"the best program of its CPU day (day 5), {cpu_seconds} s. Side by side, not like for like: other programs, "
             "another GPU."]
    return "\n".join(rows)


def _ratio(ratio: float) -> str:
    return f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}"


#: The two-GPU measurements the synthesis quotes: (label, file under results/<machine>/).
SYNTHESIS_TWO_GPUS = (
    ("cuPyNumeric, NumPy-style slices", "cupynumeric-scale/8192/scale-cupynumeric-slices.json"),
    ("cuPyNumeric, `convolve`", "cupynumeric-scale/8192/scale-cupynumeric-convolve.json"),
    ("cuPyNumeric, a Legate task written for the step", "cupynumeric-scale/8192/scale-cupynumeric-task.json"),
    ("JAX, `shard_map` with deep halos", "jax-scale/8192/scale-jax-sharded-deep.json"),
    ("JAX, `shard_map` with deep halos", "jax-scale-128/8192/scale-jax-sharded-deep.json"),
    ("cuPyNumeric, NumPy-style slices", "cupynumeric-scale/1080/scale-cupynumeric-slices.json"),
    ("cuPyNumeric, a Legate task written for the step", "cupynumeric-scale/1080/scale-cupynumeric-task.json"),
)


def _two_gpu_results(machine: str) -> list[tuple[str, str, dict]]:
    return [(label, name, records.load(result_path(machine, name), scale.KIND)) for label, name in SYNTHESIS_TWO_GPUS]


def synthesis_two_gpus(measured: list[tuple[str, str, dict]]) -> str:
    """The synthesis's table of one against two GPUs (strong scaling: the same grid on both), with the
    steps of each timed call: `gs-course scale` times calls, not a whole run as the benchmark does."""
    gpu = measured[0][2]["provenance"]["gpu"]
    machine = records.machine_name(gpu)
    rows = [f"One grid on one and on two {gpu} of one host ([strong scaling](glossary.md#strong-scaling), "
            f"`gs-course scale`: the median of its timed calls; files under `results/{machine}-x2/`):", "",
            "| formulation | grid | steps a call | ms a step, 1 GPU | 2 GPUs | speed-up |", "|---|---|---|---|---|---|"]
    for label, _, result in measured:
        strong = {p["devices"]: p for p in scale.speedups(result) if p["mode"] == "strong"}
        one, two = strong[1], strong[2]
        rows.append(f"| {label} | {one['rows']} x {one['cols']} | {one['steps_per_call']} | "
                    f"{one['step_s'] * 1e3:.3g} | {two['step_s'] * 1e3:.3g} | {two['ratio']:.2f} |")
    return "\n".join(rows)


def _launches(kernels: list[dict]) -> str:
    """'spot_mass: 8640 blocks; cub::DeviceFixedSizeSegmentedReduceKernel: 8 blocks': each kernel
    and its blocks, in the order first launched, with how many launches where there were several."""
    counts: dict[tuple[str, int], int] = {}
    for kernel in kernels:
        name = kernel["kernel"].removeprefix("void ").split("<")[0]
        counts[name, kernel["blocks"]] = counts.get((name, kernel["blocks"]), 0) + 1
    return "; ".join(f"`{name}`: {blocks:,} block{'s' * (blocks != 1)}{f', {n} launches' if n > 1 else ''}"
                     for (name, blocks), n in counts.items())


def synthesis_reductions(results: dict) -> str:
    """The synthesis's reductions timed on a batch of the full-size run, with the kernels each one
    launched and their blocks (counted by Nsight Compute): results/<machine>/synthesis-reductions.json."""
    prov = results["provenance"]
    rows = [f"On one {prov['gpu']} ({prov['date'][:10]}, `results/{records.machine_name(prov['gpu'])}/"
            f"synthesis-reductions.json`), a batch of {results['images']} images of {results['rows']} x "
            f"{results['cols']}, on a GPU of {results['multiprocessors']} multiprocessors (GPU time, median of "
            "the repeats; the kernels of one call and their blocks, as Nsight Compute counted them):", "",
            "| reduction | GPU time | kernels launched |", "|---|---|---|"]
    rows += [f"| {t['case']} | {timer.format_seconds(t['median_s'])} | {_launches(t['kernels'])} |"
             for t in results["timings"]]
    return "\n".join(rows)


def synthesis_deciles(results: dict) -> str:
    """The deciles of V over every cell of a full-size batch, and over its spots only."""
    edges = lambda name: " ".join(f"{e:.3g}" for e in results[name])  # noqa: E731
    return (f"The batch of {results['images']} images of {results['rows']} x {results['cols']} of the full-size run "
            f"(`results/{records.machine_name(results['provenance']['gpu'])}/synthesis-reductions.json`): its "
            f"deciles of V over every cell are {edges('deciles_of_every_cell')}; over its spots, "
            f"{results['spot_fraction']:.1%} of the cells, {edges('deciles_of_the_spots')}.")


# --- The cuPyNumeric tutorial (session 2) ---------------------------------------------------------

def cupynumeric_steps(results: dict) -> str:
    """Tutorial 2's table: a step of each cuPyNumeric formulation of the benchmark beside the
    course's CUDA kernel (`cupy/strip`), from one benchmark file."""
    prov = results["provenance"]
    cases = {c["name"]: c for c in results["cases"] if c.get("status") == "ok" and c["mode"] == "compute"}
    kernel = cases["cupy/strip"]
    rows = [f"On one {prov['gpu']} ({prov['date'][:10]}, `results/{records.machine_name(prov['gpu'])}/bench.json`, "
            f"{Workload.from_dict(results['workload']).grid}, arrays of Legate's own):", "",
            "| formulation | a step | times the CUDA kernel's |", "|---|---|---|"]
    for name in ("cupynumeric/slices", "cupynumeric/convolve", "cupynumeric/task", "cupy/strip"):
        if name in cases:
            case = cases[name]
            rows.append(f"| `{name}` | {timer.format_seconds(case['us_per_step'] * 1e-6)} | "
                        f"{case['us_per_step'] / kernel['us_per_step']:,.0f} |")
    return "\n".join(rows)


#: A line of the output of tools/gpu-host-cupynumeric-variants.py (removed since: `git show b26f6b8:tools/...`), which
#: wrote results/<machine>/cupynumeric-variants.md: a way of writing the step, its median.
_VARIANT = re.compile(r"^  (?P<way>\S.*?)\s{2,}(?P<ms>[\d.]+) ms a step", re.M)


def _variants(machine: str) -> dict:
    """ms a step of each way of writing the step, under the course's settings, for arrays attached
    and arrays of Legate's own (results/<machine>/cupynumeric-variants.md)."""
    text = result_path(machine, "cupynumeric-variants.md").read_text()
    course = text.split("## course settings", 1)[1].split("\n## ", 1)[0]
    attached, own = course.split("arrays Legate's own", 1)
    return {"file": f"results/{machine}/cupynumeric-variants.md", "grid": re.search(r"(\d+ x \d+)", course)[1],
            "attached": [float(m["ms"]) for m in _VARIANT.finditer(attached)],
            "own": [float(m["ms"]) for m in _VARIANT.finditer(own)]}


def cupynumeric_variants(found: dict) -> str:
    """Tutorial 2's sentence on attached arrays: the range of the ways of writing the step, each kind."""
    def span(times: list[float]) -> str:
        return f"{min(times):.1f} to {max(times):.1f} ms a step"

    return (f"{len(found['own'])} ways of writing the step took {span(found['attached'])} with arrays attached "
            f"to NumPy's buffers, and {span(found['own'])} with arrays of Legate's own ({found['grid']}, "
            f"`{found['file']}`).")


def _cupynumeric_scale(machine: str) -> dict:
    """The one- and two-GPU results of each cuPyNumeric formulation, by (formulation, rows), and
    the folder they are in (results/<machine>/cupynumeric-scale/)."""
    folder = result_path(machine, "cupynumeric-scale")
    return {"folder": f"results/{machine}/cupynumeric-scale/",
            "results": {(formulation, rows): records.load(folder / str(rows) / f"scale-cupynumeric-{formulation}.json",
                                                          scale.KIND)
                        for rows in (8192, 1080) for formulation in ("slices", "convolve", "task")}}


def cupynumeric_scale(found: dict) -> str:
    """Tutorial 2's two-GPU table: ms a step on one and two GPUs, the strong speed-up, the weak efficiency."""
    rows = ["| formulation | grid | 1 GPU | 2 GPUs | speed-up | weak scaling (twice the rows on 2) |",
            "|---|---|---|---|---|---|"]
    for result in found["results"].values():
        points = {(p["mode"], p["devices"]): p for p in scale.speedups(result)}
        one, two = points["strong", 1], points["strong", 2]
        weak = points.get(("weak", 2))
        efficiency = f"{weak['ratio']:.0%}" if weak else "not measured"
        rows.append(f"| `{result['formulation']}` | {result['rows']} x {result['cols']} | "
                    f"{one['step_s'] * 1e3:.3f} ms | {two['step_s'] * 1e3:.3f} ms | {two['ratio']:.2f}x | {efficiency} |")
    provenances = [result["provenance"] for result in found["results"].values()]
    dates = ", ".join(sorted({prov["date"][:10] for prov in provenances}))
    first = provenances[0]
    return "\n".join(rows + ["", f"({first['gpu_count']} x {first['gpu']}, {dates}, "
                                  f"`{found['folder']}`; medians of the repeats.)"])


def beyond_one_pass(found: dict) -> str:
    """The CuPy tutorial's "Beyond one pass through memory": the fast formulations of one benchmark
    run beside both yardsticks (one pass through memory, the L2 copy), then what JAX's compiled
    programs show of why its formulations stay above one pass."""
    results, compiled = found["bench"], {f["formulation"]: f for f in found["compiled"]["formulations"]}
    prov = results["provenance"]
    rows = [f"{bench._title(results)}; one {prov['gpu']} ({prov['date'][:10]}, `results/"
            f"{records.machine_name(prov['gpu'])}/bench-multistep.json`); {bench._how(results)}:", "",
            "| formulation | seconds | us a step | x one pass | x L2 copy |", "|---|---|---|---|---|"]
    for entry in (e for e in results["cases"] if e.get("status") == "ok" and e["mode"] == "compute"):
        rows.append(f"| `{entry['name']}` | {bench._seconds(entry)} | {entry['us_per_step']:.2f} | "
                    f"{entry['x_floor']:.2f} | {entry['x_l2']:.2f} |")
    rows += ["", f"One pass through memory: {timer.format_seconds(results['floor_s'])}; the L2 copy: "
                 f"{timer.format_seconds(results['l2_floor_s'])}."]
    stacked, pallas = compiled.get("stacked"), compiled.get("pallas")
    if stacked and stacked["bytes_per_step"]:
        one_pass = 2 * stacked["state_bytes"]  # U and V read, U and V written
        rows.append(f"JAX's compiled programs (`results/{records.machine_name(prov['gpu'])}/jax-compiled.json`): "
                    f"`stacked` is {stacked['kernels_per_step']:g} kernel a step, which by XLA's own estimate moves "
                    f"{stacked['bytes_per_step'] / one_pass:.2f} times the bytes of one pass; a kernel a step cannot "
                    f"move less than one pass, so XLA, which fuses within a step and not across the loop's steps, "
                    f"stays above it"
                    + (f"; the Pallas kernel reads {pallas['block_reads_per_block']} blocks for each block it writes "
                       f"(two would read U and V once)." if pallas and pallas["block_reads_per_block"] else "."))
    return "\n".join(rows)


# --- The JAX tutorial (session 3) ------------------------------------------------------------------

def jax_bench(results: dict) -> str:
    """The JAX tutorial's table: JAX's compute cases of the course benchmark, beside the school's
    A100 figure where its table has one, and one pass through memory (the tutorial's other
    libraries have their own sessions)."""
    workload = results["workload"]
    prov = results["provenance"]
    rows = [f"{bench._title(results)}; one {prov['gpu']} ({prov['date'][:10]}, `results/"
            f"{records.machine_name(prov['gpu'])}/bench.json`); {bench._how(results)}.", "",
            "| JAX formulation | seconds | us a step | A100, the school's table |", "|---|---|---|---|"]
    for entry in results["cases"]:
        if entry["backend"] != "jax" or entry["mode"] != "compute":
            continue
        if entry["status"] != "ok":
            rows.append(f"| {entry['formulation']} | {entry['status']} | | |")
            continue
        a100 = bench._a100(workload, entry["name"])
        rows.append(f"| {entry['formulation']} | {bench._seconds(entry)}{' *' if entry['extrapolated'] else ''} | "
                    f"{entry['us_per_step']:.1f} | {f'{a100[0]} s' if a100 else ''} |")
    notes = []
    if any(e["extrapolated"] for e in results["cases"] if e["backend"] == "jax" and e.get("status") == "ok"):
        notes.append("`*`: extrapolated from the images timed.")
    if results["floor_s"]:
        notes.append(f"One pass through memory a step (each step's arrays read and written once, at the device's "
                     f"copy speed) would take {timer.format_seconds(results['floor_s'])}.")
    return "\n".join(rows + ([""] + notes if notes else []))


# --- The classroom check (README) -------------------------------------------------------------------

def _slowest(step: dict) -> str:
    ratios = [a["slowdown"] for a in step["attempts"] if a["slowdown"] is not None]
    return f"the slowest notebook {max(ratios):.2f} times its time for one student alone" if ratios else ""


def _over_the_limit(record: dict, step: dict) -> str:
    """A step where every notebook passed but not every student kept within the limit, in words."""
    limit = record["slowdown_limit"]
    within = sum(all((a["slowdown"] or 0) <= limit for a in step["attempts"] if a["student"] == student)
                 for student in range(1, step["students"] + 1))
    over = [(n, sum(a["notebook"] == n and (a["slowdown"] or 0) > limit for a in step["attempts"])) for n in record["notebooks"]]
    return (f"with {step['students']} at once every notebook passed, {within or 'none'} of the students within "
            f"{limit:g}x of their times alone ({_slowest(step)}; over {limit:g}x: "
            + ", ".join(f"{n} for {count} of the {step['students']}" for n, count in over if count) + ")"
            + f" ({classroom.cores_line(step)})")


def classroom_summary(record: dict, name: str = "classroom.json") -> str:
    """The README's paragraph on a classroom on one GPU (the record results/<machine>/`name`): the
    largest that passed and how much slower its students ran than one alone; where none passed,
    what the last size tried did; where a larger size ran over the time limit, that one; one student's
    GPU memory at most, and what that holds by memory."""
    prov = record["provenance"]
    figures = classroom.summary_figures(record)
    text = (f"On one {prov['gpu'] or 'CPU'} ({prov['date'][:10]}, commit {prov['commit']}, `results/"
            f"{records.machine_name(prov['gpu'])}/{name}`), students started {record['stagger_s']:g} s apart "
            f"ran {', '.join(record['notebooks'])}{' in that order' * (len(record['notebooks']) > 1)} at "
            f"{record['size']} size, each in its own kernels: ")
    step = next((s for s in record["steps"] if s["students"] == figures["largest"]), record["steps"][-1])
    slowest = _slowest(step)
    beyond = [s for s in record["steps"] if s["students"] > step["students"] and s["passed"] and s["within_limit"] is False]
    if figures["largest"] is not None:
        text += (f"{figures['largest']} at once passed every notebook ({step['wall_s']:.0f} s in all"
                 f"{'; ' * bool(slowest)}{slowest}) ({classroom.cores_line(step)})")
    elif step["passed"]:
        text += _over_the_limit(record, step)
    else:
        everyone = [n for n in record["notebooks"]
                    if sum(a["passed"] for a in step["attempts"] if a["notebook"] == n) == step["students"]]
        text += (f"no classroom size tried passed; with {step['students']} at once, "
                 f"{', '.join(everyone) or 'no notebook'} passed for every student ({classroom.cores_line(step)})")
    busy = classroom.cores_busy(step)
    if busy is not None:
        text += (f"; the students' processes kept {busy:.1f} of the host's {step['cpu_count']} CPU cores busy "
                 "on average")
    peaks = [a["peak_mib"] for a in step["attempts"] if a["passed"] and a["peak_mib"] is not None]
    if peaks:
        peak = max(peaks)
        (first, n), *others = [(gb, gb * 10**9 // (peak * 2**20)) for gb in (16, 40, 80, 141)]
        text += (f". Each student's processes took at most {peak:,} MiB of GPU memory in the notebooks that "
                 f"passed: by memory alone, a GPU with {first} GB free holds about {n} students, "
                 + ", ".join(f"{gb} GB about {count}" for gb, count in others))
    if figures["largest"] is not None and beyond:  # the size that stopped the ramp on time, its own sentence
        over = _over_the_limit(record, beyond[0])
        text += f". {over[0].upper()}{over[1:]}"
    failure = figures["first_failure"]
    if failure:
        text += (f". The first failure, with {failure['students']} students: student {failure['student']}, "
                 f"{failure['notebook']}: {failure['message']}")
    return text + "."


def bench_record(name: str):
    """The loader of results/<machine>/<name>.json, a benchmark record."""
    return lambda machine: bench.load(result_path(machine, f"{name}.json"))


#: Renderer name -> (the loader of its record for a machine, the text from the record).
RENDERERS = {
    **{f"{stem}-summary": (lambda machine, stem=stem: classroom.load(result_path(machine, f"{stem}.json")),
                           lambda record, stem=stem: classroom_summary(record, f"{stem}.json"))
       for stem in ("classroom", "classroom-mps")},
    "cupy-formulations": (bench_record("bench"), cupy_formulations),
    "cupy-output": (bench_record("bench"), cupy_output),
    "cupy-step-range": (bench_record("bench"), cupy_step_range),
    "cupy-gpu-memory": (_instructor_check, cupy_gpu_memory),
    **{f"notebook-peaks-{name}": ((lambda machine, name=name: instructor.load(result_path(machine, f"{name}.json"))),
                                  (lambda record, name=name: notebook_peaks(record, f"{name}.json")))
       for name in ("instructor-check", "small-gpu-4gb", "small-gpu-2gb")},
    "cupy-kernel-variants": (lambda machine: result_path(machine, "logs/cupy-topics.txt").read_text(), cupy_kernel_variants),
    "synthesis-routes": (bench_record("bench"), synthesis_routes),
    "synthesis-two-gpus": (_two_gpu_results, synthesis_two_gpus),
    "synthesis-reductions": (lambda machine: records.load(result_path(machine, "synthesis-reductions.json"),
                                                          "synthesis-reductions"), synthesis_reductions),
    "synthesis-deciles": (lambda machine: records.load(result_path(machine, "synthesis-reductions.json"),
                                                       "synthesis-reductions"), synthesis_deciles),
    "cupynumeric-steps": (bench_record("bench"), cupynumeric_steps),
    "cupynumeric-variants": (_variants, cupynumeric_variants),
    "cupynumeric-scale": (_cupynumeric_scale, cupynumeric_scale),
    "jax-bench": (bench_record("bench"), jax_bench),
    "beyond-one-pass": (lambda machine: {"bench": bench.load(result_path(machine, "bench-multistep.json")),
                                         "compiled": records.load(result_path(machine, "jax-compiled.json"), "jax-compiled")},
                        beyond_one_pass),
}
