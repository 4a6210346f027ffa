"""The figures the documents quote, rendered from the current result files of results/<machine>/.

A Markdown document marks each rendered block:

    <!-- results: transfer-summary h200 -->
    ...rendered text...
    <!-- /results -->

The documents are README.md, BENCHMARKS.md, docs/satellite-sites.md and the Markdown cells of the
solved notebooks (where Jupyter shows only the rendered text between the comments).
`python -m gs_course.delivery.documents` renders every marked block again from the files (after a rerun on
the GPU); `--check` only says which blocks differ from their files, and the test suite runs it, so
a figure copied by hand cannot drift from its measurement.

results/ keeps the records alone: the table of any record (`--show RECORD`) and the figure of a
benchmark, a transfer or a scaling record (`--figure RECORD IMAGE`) are rendered on demand.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from ..measurement import bench, scale, transfer
from . import classroom, instructor, record_views
from ..measurement import records
from ..measurement import timer
from .. import paths
from ..workload import Workload

DOCUMENTS = ("README.md", "BENCHMARKS.md", "docs/satellite-sites.md")
BLOCK = re.compile(r"(<!-- results: (?P<name>[\w-]+) (?P<machine>[\w-]+) -->\n)(?P<body>.*?)(<!-- /results -->)",
                   re.S)


def transfer_summary(results: dict) -> str:
    """The README's table of the PCIe toll."""
    by_kind = {(d, m): dict(transfer.bandwidth(results, d, m)) for d in transfer.DIRECTIONS for m in transfer.MEMORIES}
    largest = max(c["bytes"] for c in results["copies"])
    size = transfer._size(largest)
    latency = min(results["latency"][d]["median_s"] for d in transfer.DIRECTIONS)
    device = transfer.device_bandwidth(results)
    best_link = max(bw for kind in by_kind.values() for bw in kind.values())
    pipe = results["pipeline"]
    cost = transfer.readback_cost(results)
    steps = Workload.from_dict(results["frame"]["workload"]).steps
    call = results["async_call"]
    prov = results["provenance"]
    rows = [
        f"On {prov['gpu']} ({prov['date'][:10]}, commit {prov['commit']}, `results/"
        f"{records.machine_name(prov['gpu'])}/transfer.json`; medians of the repeats):", "",
        "| | measured |", "|---|---|",
        f"| host -> device, {size} | {by_kind['host_to_device', 'pageable'][largest]:.1f} GB/s pageable, "
        f"{by_kind['host_to_device', 'pinned'][largest]:.1f} GB/s pinned |",
        f"| device -> host, {size} | {by_kind['device_to_host', 'pageable'][largest]:.1f} GB/s pageable, "
        f"{by_kind['device_to_host', 'pinned'][largest]:.1f} GB/s pinned |",
        f"| a 4-byte copy | {timer.format_seconds(latency)} |",
        f"| an async copy of {transfer._size(call['bytes'])} keeps Python waiting | "
        f"{timer.format_seconds(call['pinned']['median_s'])} from pinned memory, "
        f"{timer.format_seconds(call['pageable']['median_s'])} from pageable |",
        f"| device -> device copy | {device:,.0f} GB/s (read + write): {device / best_link:.0f} times the link |",
        f"| {pipe['chunks']} chunks of {transfer._size(pipe['chunk_bytes'])}, copy in, kernel, copy out | "
        f"{timer.format_seconds(pipe['serial']['median_s'])} on one stream, "
        f"{timer.format_seconds(pipe['overlapped']['median_s'])} on three |",
        f"| V to the host every step of the {steps:,}-step benchmark | {cost['every_step_pageable_s']:.1f} s pageable, "
        f"{cost['every_step_pinned_s']:.1f} s pinned; once: {cost['once_s'] * 1e3:.1f} ms; the steps themselves "
        f"need at least {cost['memory_floor_of_the_steps_s']:.2f} s |",
    ]
    return "\n".join(rows)


def bench_summary(results: dict) -> str:
    """BENCHMARKS.md's table: every case, median and range of its repeats."""
    return bench.markdown(results)


def _fastest(entries: list[dict]) -> dict[str, dict]:
    """Each backend's fastest compute-mode entry among `entries` (the first of equals)."""
    best = {}
    for entry in (e for e in entries if e["mode"] == "compute"):
        if entry["backend"] not in best or entry["seconds"] < best[entry["backend"]]["seconds"]:
            best[entry["backend"]] = entry
    return best


def _output_ratios(results: dict, entries: list[dict]) -> list[tuple[str, float]]:
    """(backend, time over writing the images alone) of each output-overlapped entry among
    `entries`; none where writing alone was not timed."""
    alone = bench._write_alone_s(results)
    return [(e["backend"], e["seconds"] / alone) for e in entries if e["mode"] == "output overlapped"] if alone else []


def bench_headline(results: dict) -> str:
    """The README's paragraph: each library's fastest formulation, the floor, output overlapped."""
    prov = results["provenance"]
    workload = Workload.from_dict(results["workload"])
    ok = [e for e in results["cases"] if e.get("status") == "ok"]
    ranked = sorted(_fastest(ok).values(), key=lambda e: e["seconds"])
    parts = [f"{e['backend']} {bench._seconds(e)}{'*' if e['extrapolated'] else ''} ({e['formulation']}"
             f"{', on the host CPU' if not e['on_gpu'] else ''})" for e in ranked]
    text = (f"On one {prov['gpu']} ({prov['date'][:10]}, commit {prov['commit']}, `results/"
            f"{records.machine_name(prov['gpu'])}/bench.json`), the {workload.steps:,} steps of the course "
            f"benchmark on {workload.grid} take, for each library's fastest formulation: {'; '.join(parts)}")
    if results["floor_s"]:
        text += f". One step per kernel through memory would need {results['floor_s']:.2f} s"
    ratios = _output_ratios(results, ok)
    if ratios:
        text += (f". With the {workload.images} images written to HDF5 by a second thread: "
                 + ", ".join(f"{backend} {ratio:.2f}" for backend, ratio in ratios)
                 + " times as long as writing the images alone")
    return text + ("; * extrapolated." if any(e["extrapolated"] for e in ranked) else ".")


#: The course's targets (issue 4): each library's best compute time, and output overlapped.
TARGETS = {"cupy": 0.30, "jax": 0.40, "cupynumeric": 30.0}
OUTPUT_TARGET = 1.15


def bench_targets(results: dict) -> str:
    """BENCHMARKS.md's targets table: the best formulation of each library against its target, and
    the overlapped output against writing the images alone."""
    rows = ["| target | measured | |", "|---|---|---|"]
    ok = [e for e in results["cases"] if e.get("status") == "ok" and e.get("on_gpu")]
    fastest = _fastest(ok)
    for backend, target in TARGETS.items():
        if backend not in fastest:
            rows.append(f"| {backend} best <= {target:g} s | not measured | |")
            continue
        best = fastest[backend]
        rows.append(f"| {backend} best <= {target:g} s | {bench._seconds(best)} ({best['formulation']}) | "
                    f"{'met' if best['seconds'] <= target else 'missed'} |")
    ratios = _output_ratios(results, ok)
    if ratios:
        measured = ", ".join(f"{backend} {ratio:.2f}" for backend, ratio in ratios)
        met = [backend for backend, ratio in ratios if ratio <= OUTPUT_TARGET]
        rows.append(f"| with output <= {OUTPUT_TARGET} x writing alone | {measured} | met by {', '.join(met) or 'none'} |")
    return "\n".join(rows)


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
    """Each notebook's peak GPU memory in the instructor check the course keeps for `machine`:
    its record (results/<machine>/instructor-check.json), or, until a run has made one, the
    summary that was written by hand before the check wrote records (instructor-check.md)."""
    if _path(machine, "instructor-check.json").exists():
        record = instructor.load(_path(machine, "instructor-check.json"))
        return {"file": f"results/{machine}/instructor-check.json", "gpu": record["provenance"]["gpu"],
                "peaks": {row["notebook"]: f"{row['peak_mib']:,} MiB" for row in record["notebooks"]
                          if row["passed"] and row["peak_mib"] is not None}}
    rows = re.findall(r"^\| (\S+\.ipynb) \| pass \| [^|]+\| ([^|]+) \| ([^|]+) \|$",
                      _path(machine, "instructor-check.md").read_text(), re.M)
    return {"file": f"results/{machine}/instructor-check.md", "gpu": rows[0][1].strip(),
            "peaks": {name: peak.strip() for name, _, peak in rows}}


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
    fastest = _fastest(list(ok.values()))
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
    return [(label, name, records.load(_path(machine, name), scale.KIND)) for label, name in SYNTHESIS_TWO_GPUS]


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
    text = _path(machine, "cupynumeric-variants.md").read_text()
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
    folder = _path(machine, "cupynumeric-scale")
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


#: Issue 32's targets for the benchmark's 32,000 steps on one H200 (seconds).
SEVERAL_STEPS_TARGETS = {"cupy": 0.15, "jax": 0.25}


def beyond_one_pass(results: dict) -> str:
    """The CuPy tutorial's "Beyond one pass through memory": the fast formulations of one benchmark
    run beside both yardsticks (one pass through memory, the L2 copy), and each library's target."""
    prov = results["provenance"]
    rows = [f"{bench._title(results)}; one {prov['gpu']} ({prov['date'][:10]}, `results/"
            f"{records.machine_name(prov['gpu'])}/bench-multistep.json`); {bench._how(results)}:", "",
            "| formulation | seconds | us a step | x one pass | x L2 copy |", "|---|---|---|---|---|"]
    timed = [e for e in results["cases"] if e.get("status") == "ok" and e["mode"] == "compute"]
    for entry in timed:
        rows.append(f"| `{entry['name']}` | {bench._seconds(entry)} | {entry['us_per_step']:.2f} | "
                    f"{entry['x_floor']:.2f} | {entry['x_l2']:.2f} |")
    rows += ["", f"One pass through memory: {timer.format_seconds(results['floor_s'])}; the L2 copy: "
                 f"{timer.format_seconds(results['l2_floor_s'])}."]
    for library, target in SEVERAL_STEPS_TARGETS.items():
        best = min((e for e in timed if e["backend"] == library), key=lambda e: e["seconds"], default=None)
        if best:
            verdict = "met" if best["seconds"] <= target else f"missed by {best['seconds'] / target:.2f} times"
            rows.append(f"{library}'s target, {target:g} s: {verdict} (`{best['name']}`, {bench._seconds(best)}).")
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

def classroom_summary(record: dict) -> str:
    """The README's paragraph on a classroom on one GPU: the largest that passed, how much slower
    its students ran than one alone, one student's GPU memory at most, the first failure beyond."""
    prov = record["provenance"]
    figures = classroom.summary_figures(record)
    text = (f"On one {prov['gpu'] or 'CPU'} ({prov['date'][:10]}, commit {prov['commit']}, `results/"
            f"{records.machine_name(prov['gpu'])}/classroom.json`), students started {record['stagger_s']:g} s apart "
            f"ran {', '.join(record['notebooks'])} in that order at {record['size']} size, each in its own "
            f"kernels: ")
    if figures["largest"] is None:
        text += "no classroom size tried passed"
    else:
        text += f"{figures['largest']} at once passed every notebook ({figures['wall_s']:.0f} s in all"
        if figures["worst_slowdown"] is not None:
            text += f"; the slowest notebook {figures['worst_slowdown']:.2f} times its time for one student alone"
        text += ")"
    if figures["peak_mib"] is not None:
        peak = figures["peak_mib"]
        (first, n), *others = [(gb, gb * 10**9 // (peak * 2**20)) for gb in (16, 40, 80, 141)]
        text += (f". Each of those students' processes took at most {peak:,} MiB of GPU memory: by memory "
                 f"alone, a GPU with {first} GB free holds about {n} students, "
                 + ", ".join(f"{gb} GB about {count}" for gb, count in others))
    failure = figures["first_failure"]
    if failure:
        text += (f". The first failure, with {failure['students']} students: student {failure['student']}, "
                 f"{failure['notebook']}: {failure['message']}")
    return text + "."


RENDERERS = {
    "classroom-summary": (lambda machine: classroom.load(_path(machine, "classroom.json")), classroom_summary),
    "transfer-summary": (lambda machine: transfer.load(_path(machine, "transfer.json")), transfer_summary),
    "bench-summary": (lambda machine: bench.load(_path(machine, "bench.json")), bench_summary),
    "bench-quick-summary": (lambda machine: bench.load(_path(machine, "bench-quick.json")), bench_summary),
    "bench-headline": (lambda machine: bench.load(_path(machine, "bench.json")), bench_headline),
    "bench-targets": (lambda machine: bench.load(_path(machine, "bench.json")), bench_targets),
    "cupy-formulations": (lambda machine: bench.load(_path(machine, "bench.json")), cupy_formulations),
    "cupy-output": (lambda machine: bench.load(_path(machine, "bench.json")), cupy_output),
    "cupy-step-range": (lambda machine: bench.load(_path(machine, "bench.json")), cupy_step_range),
    "cupy-gpu-memory": (_instructor_check, cupy_gpu_memory),
    "cupy-kernel-variants": (lambda machine: _path(machine, "logs/cupy-topics.txt").read_text(), cupy_kernel_variants),
    "synthesis-routes": (lambda machine: bench.load(_path(machine, "bench.json")), synthesis_routes),
    "synthesis-two-gpus": (_two_gpu_results, synthesis_two_gpus),
    "synthesis-reductions": (lambda machine: records.load(_path(machine, "synthesis-reductions.json"),
                                                          "synthesis-reductions"), synthesis_reductions),
    "synthesis-deciles": (lambda machine: records.load(_path(machine, "synthesis-reductions.json"),
                                                       "synthesis-reductions"), synthesis_deciles),
    "cupynumeric-steps": (lambda machine: bench.load(_path(machine, "bench.json")), cupynumeric_steps),
    "cupynumeric-variants": (_variants, cupynumeric_variants),
    "cupynumeric-scale": (_cupynumeric_scale, cupynumeric_scale),
    "jax-bench": (lambda machine: bench.load(_path(machine, "bench.json")), jax_bench),
    "beyond-one-pass": (lambda machine: bench.load(_path(machine, "bench-multistep.json")), beyond_one_pass),
}


def _path(machine: str, name: str) -> Path:
    return paths.ROOT / "results" / machine / name


def render(text: str) -> str:
    """`text` with every marked block rendered again from its result file."""

    def again(match: re.Match) -> str:
        name, machine = match["name"], match["machine"]
        if name not in RENDERERS:
            raise ValueError(f"unknown results block {name!r}: known are {', '.join(RENDERERS)}")
        read, draw = RENDERERS[name]
        return f"{match.group(1)}{draw(read(machine))}\n{match.group(5)}"

    return BLOCK.sub(again, text)


def _notebook_render(text: str) -> str:
    """A solved notebook with the marked blocks of its Markdown cells rendered again (a block in
    a Markdown cell is an HTML comment pair: Jupyter shows only what lies between)."""
    notebook = json.loads(text)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            if BLOCK.search(source):
                cell["source"] = render(source).splitlines(keepends=True)
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def _documents(root: Path) -> list[tuple[Path, object]]:
    """(path, renderer) of every document that may hold marked blocks."""
    found = [(root / name, render) for name in DOCUMENTS if (root / name).exists()]
    notebooks = [path for path in sorted((root / "solutions").glob("*.ipynb")) if "<!-- results: " in path.read_text()]
    return found + [(path, _notebook_render) for path in notebooks]


def stale(root: Path = paths.ROOT) -> list[str]:
    """The documents whose marked blocks differ from their result files."""
    return [str(path.relative_to(root)) for path, again in _documents(root)
            if again(text := path.read_text()) != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.delivery.documents", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which documents differ from the files")
    parser.add_argument("--show", metavar="RECORD", help="print the Markdown table of a record, e.g. results/h200/bench.json")
    parser.add_argument("--figure", nargs=2, metavar=("RECORD", "IMAGE"),
                        help="save the figure of a record (bench, transfer, scale) as IMAGE (.png, .svg, .pdf)")
    args = parser.parse_args(argv)
    try:
        if args.show:
            print(record_views.show(args.show))
            return 0
        if args.figure:
            print(f"saved {record_views.save_figure(*args.figure)}")
            return 0
    except records.ResultError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    if args.check:
        found = stale()
        for name in found:
            print(f"{name}: its figures differ from results/: run python -m gs_course.delivery.documents")
        return 1 if found else 0
    for path, again in _documents(paths.ROOT):
        text = path.read_text()
        rendered = again(text)
        if rendered != text:
            path.write_text(rendered)
            print(f"rendered {path.relative_to(paths.ROOT)}")
            if path.suffix == ".ipynb":
                print("  (a solved notebook: take its lock, then regenerate the students' with python -m gs_course.lessons.notebooks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
