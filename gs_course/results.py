"""The figures the documents quote, rendered from the current result files of results/<machine>/.

A Markdown document marks each rendered block:

    <!-- results: transfer-summary h200 -->
    ...rendered text...
    <!-- /results -->

`python -m gs_course.results` renders every marked block of the course's documents again from
the files (after a rerun on the GPU); `--check` only says which blocks differ from their files,
and the test suite runs it, so a figure copied by hand cannot drift from its measurement.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import bench, measure, transfer

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
    steps = measure.Workload.from_dict(results["frame"]["workload"]).steps
    call = results["async_call"]
    prov = results["provenance"]
    rows = [
        f"On {prov['gpu']} ({prov['date'][:10]}, commit {prov['commit']}, `results/"
        f"{measure.machine_name(prov['gpu'])}/transfer.json`; medians of the repeats):", "",
        "| | measured |", "|---|---|",
        f"| host -> device, {size} | {by_kind['host_to_device', 'pageable'][largest]:.1f} GB/s pageable, "
        f"{by_kind['host_to_device', 'pinned'][largest]:.1f} GB/s pinned |",
        f"| device -> host, {size} | {by_kind['device_to_host', 'pageable'][largest]:.1f} GB/s pageable, "
        f"{by_kind['device_to_host', 'pinned'][largest]:.1f} GB/s pinned |",
        f"| a 4-byte copy | {measure.format_seconds(latency)} |",
        f"| an async copy of {transfer._size(call['bytes'])} keeps Python waiting | "
        f"{measure.format_seconds(call['pinned']['median_s'])} from pinned memory, "
        f"{measure.format_seconds(call['pageable']['median_s'])} from pageable |",
        f"| device -> device copy | {device:,.0f} GB/s (read + write): {device / best_link:.0f} times the link |",
        f"| {pipe['chunks']} chunks of {transfer._size(pipe['chunk_bytes'])}, copy in, kernel, copy out | "
        f"{measure.format_seconds(pipe['serial']['median_s'])} on one stream, "
        f"{measure.format_seconds(pipe['overlapped']['median_s'])} on three |",
        f"| V to the host every step of the {steps:,}-step benchmark | {cost['every_step_pageable_s']:.1f} s pageable, "
        f"{cost['every_step_pinned_s']:.1f} s pinned; once: {cost['once_s'] * 1e3:.1f} ms; the steps themselves "
        f"need at least {cost['memory_floor_of_the_steps_s']:.2f} s |",
    ]
    return "\n".join(rows)


def bench_summary(results: dict) -> str:
    """BENCHMARKS.md's table: every case, median and range of its repeats."""
    return bench.markdown(results)


RENDERERS = {
    "transfer-summary": (lambda machine: transfer.load(_path(machine, "transfer.json")), transfer_summary),
    "bench-summary": (lambda machine: bench.load(_path(machine, "bench.json")), bench_summary),
    "bench-quick-summary": (lambda machine: bench.load(_path(machine, "bench-quick.json")), bench_summary),
}


def _path(machine: str, name: str) -> Path:
    return measure.ROOT / "results" / machine / name


def render(text: str) -> str:
    """`text` with every marked block rendered again from its result file."""

    def again(match: re.Match) -> str:
        name, machine = match["name"], match["machine"]
        if name not in RENDERERS:
            raise ValueError(f"unknown results block {name!r}: known are {', '.join(RENDERERS)}")
        read, draw = RENDERERS[name]
        return f"{match.group(1)}{draw(read(machine))}\n{match.group(5)}"

    return BLOCK.sub(again, text)


def stale(root: Path = measure.ROOT) -> list[str]:
    """The documents whose marked blocks differ from their result files."""
    return [name for name in DOCUMENTS if (root / name).exists()
            and render((root / name).read_text()) != (root / name).read_text()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gs_course.results", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say which documents differ from the files")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for name in found:
            print(f"{name}: its figures differ from results/: run python -m gs_course.results")
        return 1 if found else 0
    for name in DOCUMENTS:
        path = measure.ROOT / name
        if path.exists():
            text = path.read_text()
            if render(text) != text:
                path.write_text(render(text))
                print(f"rendered {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
