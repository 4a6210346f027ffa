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

from ..measurement import bench, transfer
from . import lesson_figures, record_views
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
    ranked = sorted(lesson_figures.fastest_cases(ok).values(), key=lambda e: e["seconds"])
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
    fastest = lesson_figures.fastest_cases(ok)
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


RENDERERS = {
    "transfer-summary": (lambda machine: transfer.load(lesson_figures.result_path(machine, "transfer.json")), transfer_summary),
    "bench-summary": (lesson_figures.bench_record("bench"), bench_summary),
    "bench-quick-summary": (lesson_figures.bench_record("bench-quick"), bench_summary),
    "bench-headline": (lesson_figures.bench_record("bench"), bench_headline),
    "bench-targets": (lesson_figures.bench_record("bench"), bench_targets),
    **lesson_figures.RENDERERS,
}


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
