"""The PCIe toll: how fast data crosses between host and GPU, next to the GPU's own memory.

The GPU day's first lesson is a number: a GPU reads and writes its own memory one to two orders
of magnitude faster than it is fed through its link to the host. `measure()` times, on this
machine's GPU (with CuPy):

- host -> device and device -> host copies from 4 KiB to 1 GiB, from pageable (ordinary NumPy)
  and from pinned (page-locked) host memory, and the latency of a 4-byte copy;
- a device -> device copy (the GPU's own bandwidth, counting bytes read and written);
- how long an asynchronous copy call blocks Python, from pinned and from pageable memory;
- one image of the course's grid (`workload.FULL`) brought back, to price "V every step" against
  "V once" over the course benchmark's steps;
- a pipeline of chunks (copy in, kernel, copy out), first on one stream, then spread over three
  so that the copies of one chunk overlap the kernel of another.

Every figure keeps its repeats (`timer.Samples`: median and range), timed after warm-up with
the stream synchronised (wall clock) or with CUDA events (device copy, pipeline). Without a GPU,
`recorded()` gives the course GPU's current result file (results/h200/transfer.json, shipped in
the package), labelled as such: never invented numbers.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from ..workload import FULL
from .timer import Samples
from . import records
from . import timer
from ..workload import Workload
from ..backends import probe
from ..devices import host_memory_available

KIND, SCHEMA = "transfer", 2
KIB, MIB, GIB = 2**10, 2**20, 2**30
#: Transfer sizes: 4 KiB to 1 GiB, by factors of 4.
SIZES = tuple(4 * KIB * 4**k for k in range(10))
DIRECTIONS = ("host_to_device", "device_to_host")
MEMORIES = ("pageable", "pinned")
RECORDED = "transfer-h200.json"


class NoGPU(RuntimeError):
    """No GPU that CuPy can use: nothing can be measured here."""


def recorded() -> dict:
    """The course GPU's transfer results (see `provenance` inside)."""
    with resources.as_file(resources.files("gs_course").joinpath("data", RECORDED)) as path:
        return load(path)


def load(path: str | Path) -> dict:
    """A transfer results file, read back after checking its kind and schema."""
    return records.load(path, KIND, SCHEMA)


save = records.save


# --- measuring (CuPy, on a GPU) -----------------------------------------------------------------


def _repeats(nbytes: int) -> int:
    """About 2 GB moved per size, between 3 and 50 runs."""
    return int(min(50, max(3, 2 * GIB // nbytes)))


class CopyBench:
    """Buffers on both sides, and the copy calls: one async call for both kinds of host memory,
    so that the only difference measured is whether the host buffer is pinned."""

    def __init__(self, cp, nbytes: int):
        self.cp = cp
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.device = cp.empty(nbytes, dtype=np.uint8)
        self.device2 = cp.empty(nbytes, dtype=np.uint8)
        self.host = {
            "pageable": np.ones(nbytes, dtype=np.uint8),
            "pinned": np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), dtype=np.uint8, count=nbytes),
        }
        self.host["pinned"][:] = 1

    def copy(self, direction: str, memory: str, nbytes: int) -> None:
        pointer = self.host[memory].ctypes.data
        if direction == "host_to_device":
            self.device.data.copy_from_host_async(pointer, nbytes, self.stream)
        else:
            self.device.data.copy_to_host_async(pointer, nbytes, self.stream)
        self.stream.synchronize()

    def call_return(self, memory: str, nbytes: int, repeats: int = 5) -> Samples:
        """How long an asynchronous host -> device call keeps Python waiting.

        From pinned memory the call returns at once and the copy engine works on alone; from
        pageable memory the driver must stage the data, so the 'asynchronous' call waits for it.
        """
        pointer = self.host[memory].ctypes.data
        return timer.Timer().time(lambda: self.device.data.copy_from_host_async(pointer, nbytes, self.stream),
                                  repeats, warmup=1, after=self.stream.synchronize)

    def device_copy(self, nbytes: int, repeats: int = 10) -> Samples:
        """A device -> device copy of `nbytes`, on the device's clock (CUDA events on the stream)."""
        with self.stream:
            samples = timer.CupyTimer().time(
                lambda: self.device2.data.copy_from_device_async(self.device.data, nbytes, self.stream), repeats, warmup=2)
        return Samples.of(samples.device_s)


def _busy_kernel(cp):
    """A kernel whose run time we choose: `iterations` multiply-adds per element."""
    return cp.ElementwiseKernel(
        "float32 x, int32 iterations",
        "float32 y",
        "float a = x; for (int i = 0; i < iterations; ++i) { a = a * 0.999f + 0.001f; } y = a;",
        "gs_course_busy",
    )


def _pipeline(cp, chunks: int, chunk_bytes: int) -> dict:
    """Copy in, compute, copy out, chunk by chunk: on one stream, then round-robin on three."""
    n = chunk_bytes // 4
    host_in = np.frombuffer(cp.cuda.alloc_pinned_memory(chunks * chunk_bytes), np.float32, chunks * n)
    host_out = np.frombuffer(cp.cuda.alloc_pinned_memory(chunks * chunk_bytes), np.float32, chunks * n)
    host_in[:] = np.random.default_rng(0).random(chunks * n, dtype=np.float32)
    dev_in = [cp.empty(n, np.float32) for _ in range(chunks)]
    dev_out = [cp.empty(n, np.float32) for _ in range(chunks)]
    busy = _busy_kernel(cp)

    # Calibrate the kernel to last about as long as one chunk's copy in.
    bench = CopyBench(cp, chunk_bytes)
    clock = timer.CupyTimer()
    copy_s = clock.time(lambda: bench.copy("host_to_device", "pinned", chunk_bytes), 5).median
    probe_iterations = 64
    kernel_s = clock.time(lambda: busy(dev_in[0], probe_iterations, dev_out[0]), 5).median
    iterations = max(1, int(probe_iterations * copy_s / kernel_s))

    def run(streams) -> dict:
        start = cp.cuda.Event()
        start.record(cp.cuda.Stream.null)
        spans = []
        for i in range(chunks):
            stream = streams[i % len(streams)]
            stream.wait_event(start)
            offset = i * chunk_bytes
            marks = [cp.cuda.Event() for _ in range(4)]
            marks[0].record(stream)
            dev_in[i].data.copy_from_host_async(host_in.ctypes.data + offset, chunk_bytes, stream)
            marks[1].record(stream)
            with stream:
                busy(dev_in[i], iterations, dev_out[i])
            marks[2].record(stream)
            dev_out[i].data.copy_to_host_async(host_out.ctypes.data + offset, chunk_bytes, stream)
            marks[3].record(stream)
            for stage, begin, end in zip(("copy in", "kernel", "copy out"), marks, marks[1:]):
                spans.append((stage, i, streams.index(stream), begin, end))
        for stream in streams:
            stream.synchronize()
        timeline = [
            {"stage": stage, "chunk": i, "stream": s,
             "start_ms": cp.cuda.get_elapsed_time(start, begin), "end_ms": cp.cuda.get_elapsed_time(start, end)}
            for stage, i, s, begin, end in spans
        ]
        return {"seconds": max(span["end_ms"] for span in timeline) / 1e3, "timeline": timeline}

    serial_streams = [cp.cuda.Stream(non_blocking=True)]
    overlap_streams = [cp.cuda.Stream(non_blocking=True) for _ in range(3)]
    run(serial_streams), run(overlap_streams)  # warm-up: kernel compilation, first touches
    serial = _median_run(run, serial_streams)
    overlapped = _median_run(run, overlap_streams)

    sample = np.arange(0, chunks * n, max(1, chunks * n // 1000))
    expected = host_in[sample].astype(np.float32)
    for _ in range(iterations):
        expected = expected * np.float32(0.999) + np.float32(0.001)
    if not np.allclose(host_out[sample], expected, rtol=1e-4):
        raise RuntimeError("the pipeline's output is wrong: its timings would mean nothing")
    return {"chunks": chunks, "chunk_bytes": chunk_bytes, "kernel_iterations": iterations,
            "serial": serial, "overlapped": overlapped}


def _median_run(run, streams, repeats: int = 5) -> dict:
    """The run whose total time is the median of `repeats`, with its timeline, and every total."""
    runs = sorted((run(streams) for _ in range(repeats)), key=lambda r: r["seconds"])
    return {**runs[repeats // 2], **Samples.of(r["seconds"] for r in runs).as_dict()}


def run(max_bytes: int = GIB, pipeline_chunks: int = 8, pipeline_chunk_bytes: int = 32 * MIB,
                      log=None, command: str | None = None) -> dict:
    """Measure everything listed in the module's docstring on GPU 0 (a few tens of seconds)."""

    found = probe("cupy")
    if not found.ok:
        raise NoGPU(f"no GPU to measure: {found.reason}")
    import cupy as cp

    free_device = cp.cuda.runtime.memGetInfo()[0]
    max_bytes = min(max_bytes, free_device // 4, host_memory_available() // 4)
    sizes = [size for size in SIZES if size <= max_bytes]
    log = log or (lambda message: None)
    bench = CopyBench(cp, max(sizes[-1], FULL.frame_bytes))

    def copy_time(direction: str, memory: str, nbytes: int, repeats: int) -> dict:
        return timer.CupyTimer().time(lambda: bench.copy(direction, memory, nbytes), repeats, warmup=2).as_dict()

    copies = []
    for nbytes in sizes:
        for direction in DIRECTIONS:
            for memory in MEMORIES:
                copies.append({"direction": direction, "memory": memory, "bytes": nbytes,
                               **copy_time(direction, memory, nbytes, _repeats(nbytes))})
        log(f"copies of {nbytes / MIB:g} MiB done")
    latency = {d: copy_time(d, "pinned", 4, 200) for d in DIRECTIONS}
    frame = {m: copy_time("device_to_host", m, FULL.frame_bytes, 20) for m in MEMORIES}
    device_copy = {"bytes": sizes[-1], **bench.device_copy(sizes[-1]).as_dict()}
    async_call = {"bytes": sizes[-1], **{m: bench.call_return(m, sizes[-1]).as_dict() for m in MEMORIES}}
    log("pipeline")
    pipeline = _pipeline(cp, pipeline_chunks, min(pipeline_chunk_bytes, max_bytes // pipeline_chunks))
    return records.record(KIND, {
        "copies": copies,
        "latency": latency,
        "device_copy": device_copy,
        "async_call": async_call,
        "frame": {"workload": FULL.as_dict(), "bytes": FULL.frame_bytes, "device_to_host": frame},
        "pipeline": pipeline,
    }, schema=SCHEMA, command=command)


# --- reading the results (no GPU needed) --------------------------------------------------------


def bandwidth(results: dict, direction: str, memory: str) -> list[tuple[int, float]]:
    """(bytes, GB/s) of one kind of copy, by size, from the median time."""
    return [(c["bytes"], c["bytes"] / c["median_s"] / 1e9) for c in results["copies"]
            if c["direction"] == direction and c["memory"] == memory]


def device_bandwidth(results: dict) -> float:
    """The device's own copy bandwidth in GB/s, bytes read plus bytes written."""
    copy = results["device_copy"]
    return 2 * copy["bytes"] / copy["median_s"] / 1e9


def readback_cost(results: dict) -> dict:
    """Seconds spent bringing V to the host, every step or once, over the course benchmark."""
    frame = results["frame"]["device_to_host"]
    workload = Workload.from_dict(results["frame"]["workload"])
    return {
        "every_step_pageable_s": workload.steps * frame["pageable"]["median_s"],
        "every_step_pinned_s": workload.steps * frame["pinned"]["median_s"],
        "once_s": frame["pageable"]["median_s"],
        "memory_floor_of_the_steps_s": workload.steps * workload.bytes_moved_per_step / (device_bandwidth(results) * 1e9),
    }


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} B"


def label(results: dict) -> str:
    return records.describe(results["provenance"])


def _timing(stored: dict) -> str:
    """Median and range of a stored timing (`Samples.as_dict`'s keys)."""
    return timer.format_range(stored["median_s"], stored.get("min_s"), stored.get("max_s"))


def spread(results: dict) -> float | None:
    """The largest (max - min) / median among the copies: how much the repeats disagreed (None
    where the repeats were not kept)."""
    return max(((c["max_s"] - c["min_s"]) / c["median_s"] for c in results["copies"] if c.get("min_s") is not None),
               default=None)


def table(results: dict) -> str:
    """The measurements as text: copy bandwidths by size, latency, device copy, pipeline, readback."""
    columns = [(d, m) for d in DIRECTIONS for m in MEMORIES]
    by_kind = {kind: dict(bandwidth(results, *kind)) for kind in columns}
    sizes = sorted({c["bytes"] for c in results["copies"]})
    names = {"host_to_device": "H->D", "device_to_host": "D->H"}
    lines = [f"Copies between host and GPU, GB/s (median of the repeats; {label(results)})",
             f"{'size':>9}" + "".join(f"{names[d] + ' ' + m:>16}" for d, m in columns)]
    for size in sizes:
        lines.append(f"{_size(size):>9}" + "".join(f"{by_kind[kind][size]:>16.2f}" for kind in columns))
    if spread(results) is not None:
        lines.append(f"(the repeats of a copy lay within {spread(results):.0%} of their median, at worst)")
    latency = results["latency"]
    device = device_bandwidth(results)
    best_link = max(bw for kind in columns for _, bw in bandwidth(results, *kind))
    pipe = results["pipeline"]
    cost = readback_cost(results)
    frame = Workload.from_dict(results["frame"]["workload"])
    lines += [
        f"latency of a 4-byte copy: H->D {_timing(latency['host_to_device'])}, "
        f"D->H {_timing(latency['device_to_host'])}",
        f"an asynchronous copy of {_size(results['async_call']['bytes'])} keeps Python waiting "
        f"{_timing(results['async_call']['pinned'])} from pinned memory (the copy runs on alone), "
        f"{_timing(results['async_call']['pageable'])} from pageable memory (the call waits for the copy)",
        f"device -> device copy: {device:.0f} GB/s (read + write), {device / best_link:.0f} x the best link figure",
        f"pipeline of {pipe['chunks']} chunks of {_size(pipe['chunk_bytes'])} (copy in, kernel, copy out): "
        f"one stream {_timing(pipe['serial'])}, three streams {_timing(pipe['overlapped'])} "
        f"({pipe['serial']['median_s'] / pipe['overlapped']['median_s']:.1f} x faster)",
        f"V of a {frame.grid} grid to the host, over {frame.steps:,} steps: every step "
        f"{cost['every_step_pageable_s']:.1f} s (pageable) or {cost['every_step_pinned_s']:.1f} s (pinned); "
        f"once {cost['once_s'] * 1e3:.1f} ms; the steps themselves need at least "
        f"{cost['memory_floor_of_the_steps_s']:.2f} s (memory bandwidth)",
    ]
    return "\n".join(lines)


def figure(results: dict, note: str = ""):
    """Bandwidth against size (log axes) beside the pipeline's timeline, one stream against three.

    A plain matplotlib Figure (no pyplot state): Jupyter shows it, `.savefig()` writes it.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(13, 4.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    for direction, style in zip(DIRECTIONS, ("-", "--")):
        for memory, marker in zip(MEMORIES, ("o", "s")):
            sizes, gbps = zip(*bandwidth(results, direction, memory))
            left.plot(sizes, gbps, style, marker=marker, label=f"{direction.replace('_', ' ')}, {memory}")
    left.axhline(device_bandwidth(results), color="k", lw=1, ls=":", label="device -> device (read + write)")
    left.set(xscale="log", yscale="log", xlabel="bytes per copy", ylabel="GB/s", title="Copy bandwidth")
    left.legend(fontsize=8)
    colors = {"copy in": "tab:blue", "kernel": "tab:orange", "copy out": "tab:green"}
    row, ticks = 0.0, []
    for name in ("overlapped", "serial"):
        timeline = results["pipeline"][name]["timeline"]
        for stream in sorted({span["stream"] for span in timeline}):
            bars = [(s["start_ms"], s["end_ms"] - s["start_ms"]) for s in timeline if s["stream"] == stream]
            stages = [colors[s["stage"]] for s in timeline if s["stream"] == stream]
            right.broken_barh(bars, (row - 0.4, 0.8), facecolors=stages, edgecolor="white", lw=0.5)
            ticks.append((row, f"{name}, stream {stream}"))
            row += 1
        row += 0.5
    right.set_yticks([t for t, _ in ticks], [name for _, name in ticks])
    right.set(xlabel="ms", title="Pipeline of chunks: one stream, then three")
    right.legend(handles=[Patch(color=c, label=stage) for stage, c in colors.items()], fontsize=8)
    fig.suptitle(label(results) + (f" ({note})" if note else ""))
    return fig
