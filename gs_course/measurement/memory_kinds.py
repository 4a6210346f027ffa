"""Four kinds of host memory, and what each costs a GPU program (CuPy, on an NVIDIA GPU).

- `pageable`: ordinary memory (NumPy's). No kernel reads it: the driver copies it through a staging
  buffer of its own, and the copy call waits.
- `pinned`: page-locked memory (`cudaHostAlloc`). Still copied, but by the GPU's copy engine
  straight from it, at the link's full speed, and a copy can be queued on a stream.
- `managed` (unified memory, `cudaMallocManaged`): one pointer for the host and the GPU. Its pages
  move to whichever side touches them, on demand (a page fault, then a migration), or ahead of use
  when prefetched (`cudaMemPrefetchAsync`).
- `mapped` (zero-copy, `cudaHostAllocMapped`): pinned memory mapped into the GPU's address space.
  Kernels read and write host memory in place: nothing is copied, so every access crosses the link,
  the second read as slow as the first.

`allocate(kind, shape)` gives a `Buffer`: `host`, a NumPy array for the CPU, and `device`, a CuPy
array for kernels: one memory seen from both sides for managed and mapped, two arrays for pageable
and pinned. `Buffer.to_device()` and `Buffer.to_host()` make the side about to read up to date: a
copy (pageable, pinned), a prefetch to the GPU (managed; its pages come back to the host on demand:
CuPy prefetches to GPUs only), nothing (mapped).

`measure(nbytes)` times each kind three ways (see ROWS and COLUMNS); `table` prints the result.
CuPy is imported only by the functions that need a GPU: the module loads without one.
"""

from __future__ import annotations

import ctypes
import dataclasses

from pathlib import Path

import numpy as np

from . import timer
from .timer import Samples
from .records import describe, provenance, write
from .records import load as load_result
from .transfer import MIB, NoGPU
from ..backends import probe

KIND, SCHEMA = "memory-kinds", 1
KINDS = ("pageable", "pinned", "managed", "mapped")
#: The rows of `measure`: (label, kind, whether `to_device`/`to_host` are called). Managed memory
#: is timed twice: its pages moving on demand, and prefetched to the GPU.
ROWS = (
    ("pageable", "pageable", True),
    ("pinned", "pinned", True),
    ("managed, pages on demand", "managed", False),
    ("managed, prefetched", "managed", True),  # to the GPU; back on demand
    ("mapped (zero-copy)", "mapped", True),
)
#: What `measure` times for each row, wall clock until the reader has everything: the host fills
#: the array, then a kernel reads it all (copy or prefetch included, the fill not timed); a kernel
#: reads it all again; a kernel fills it, then the host reads it all (NumPy's sum: the same host
#: work for every kind, so that the differences are what the kind adds).
COLUMNS = ("host writes, GPU reads", "GPU reads again", "GPU writes, host reads")
KEYS = ("gpu_first_read_s", "gpu_read_again_s", "host_read_s")


@dataclasses.dataclass(eq=False)
class Buffer:
    """An array in one kind of memory, seen from the host (`host`) and from kernels (`device`).

    For managed and mapped memory both are views of the same bytes; each keeps them allocated.
    """

    kind: str
    host: np.ndarray
    device: object  # cupy.ndarray

    @property
    def shared(self) -> bool:
        """True where the host and kernels use the same memory: no copy between them."""
        return self.kind in ("managed", "mapped")

    def to_device(self, stream=None) -> None:
        """Queue on `stream` (the current one by default) what makes `device` up to date after the
        host wrote `host`: a copy, a prefetch of managed pages to the GPU, or nothing (mapped)."""
        import cupy

        stream = stream or cupy.cuda.get_current_stream()
        if self.kind == "managed":
            cupy.cuda.runtime.memPrefetchAsync(self.device.data.ptr, self.device.nbytes, cupy.cuda.Device().id,
                                               stream.ptr)
        elif not self.shared:
            self.device.set(self.host, stream=stream)

    def to_host(self, stream=None) -> None:
        """Make `host` up to date after kernels wrote `device` (queued on `stream`), and wait for it:
        a copy, or only the wait (managed and mapped). Managed pages then move as the host touches
        them: CuPy's prefetch takes a GPU as its destination, not the host (with CUDA 13 it makes a
        device location of any number it is given)."""
        import cupy

        stream = stream or cupy.cuda.get_current_stream()
        if not self.shared:
            self.device.get(stream=stream, out=self.host)
        stream.synchronize()


def _host_view(pointer: int, shape: tuple[int, ...], dtype, owner) -> np.ndarray:
    """A NumPy array over `pointer`, host-accessible memory that `owner` frees when it goes: the
    array holds on to `owner` (through its base), so that the memory outlives every view of it."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = (ctypes.c_byte * nbytes).from_address(pointer)
    raw.owner = owner
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def allocate(kind: str, shape: tuple[int, ...], dtype=np.float32) -> Buffer:
    """An uninitialised array of `shape` in `kind` memory (one of KINDS) on the current GPU."""
    if kind not in KINDS:
        raise ValueError(f"unknown memory kind {kind!r}: one of {', '.join(KINDS)}")
    import cupy
    import cupyx

    shape = tuple(shape)
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if kind == "pageable":
        return Buffer(kind, np.empty(shape, dtype), cupy.empty(shape, dtype))
    if kind == "pinned":
        return Buffer(kind, cupyx.empty_pinned(shape, dtype), cupy.empty(shape, dtype))
    if kind == "managed":
        memory = cupy.cuda.malloc_managed(nbytes)
        return Buffer(kind, _host_view(memory.ptr, shape, dtype, memory), cupy.ndarray(shape, dtype, memptr=memory))
    runtime = cupy.cuda.runtime
    memory = cupy.cuda.PinnedMemory(nbytes, runtime.hostAllocMapped)
    # The kernels' address of the host memory (the same number wherever addressing is unified).
    device_pointer = runtime.pointerGetAttributes(memory.ptr).devicePointer
    on_device = cupy.cuda.UnownedMemory(device_pointer, nbytes, memory, cupy.cuda.Device().id)
    return Buffer(kind, _host_view(memory.ptr, shape, dtype, memory),
                  cupy.ndarray(shape, dtype, memptr=cupy.cuda.MemoryPointer(on_device, 0)))


def _samples(prepare, run, repeats: int) -> Samples:
    """`repeats` timings of `run()`, each after an untimed `prepare()`; a first, warm-up run (kernel
    compilation, the pages' first touch) is timed apart."""
    clock = timer.Timer()  # each run ends with its own wait (a float() of the sum)
    seconds = []
    for _ in range(repeats + 1):
        prepare()
        stopwatch = clock.stopwatch()
        run()
        seconds.append(stopwatch.elapsed())
    return Samples.of(seconds[1:], compile_s=seconds[0])


def _time_row(kind: str, sync_calls: bool, count: int, repeats: int) -> dict:
    """The three timings of COLUMNS for one row of ROWS. Each run writes a new value and checks
    the sum the reader gets: a wrong result would make its time meaningless."""
    import cupy

    buffer = allocate(kind, (count,))
    stream = cupy.cuda.get_current_stream()
    written = [0]

    def check(total: float, what: str) -> None:
        if total != written[0] * count:
            raise RuntimeError(f"{kind} memory: {what} summed to {total}, expected {written[0] * count}")

    def host_writes() -> None:
        written[0] += 1
        buffer.host.fill(written[0])

    def gpu_reads() -> None:
        check(float(buffer.device.sum(dtype=cupy.float64)), "the GPU's read")  # float() waits for it

    def updated_then_gpu_reads() -> None:
        if sync_calls:
            buffer.to_device(stream)
        gpu_reads()

    def gpu_writes() -> None:
        written[0] += 1
        buffer.device.fill(written[0])
        stream.synchronize()

    def host_reads() -> None:
        if sync_calls:
            buffer.to_host(stream)
        check(float(buffer.host.sum(dtype=np.float64)), "the host's read")

    timings = (_samples(host_writes, updated_then_gpu_reads, repeats), _samples(lambda: None, gpu_reads, repeats),
               _samples(gpu_writes, host_reads, repeats))
    return {key: samples.as_dict() for key, samples in zip(KEYS, timings)}


def measure(nbytes: int = 64 * MIB, repeats: int = 5) -> dict:
    """Time every row of ROWS on an array of `nbytes` (float32) on GPU 0, in seconds, with the
    provenance of gs_course.measurement.records: what `save` writes and `table` prints."""

    found = probe("cupy")
    if not found.ok:
        raise NoGPU(f"no GPU to measure: {found.reason}")
    count = nbytes // 4
    rows = [{"label": label, "kind": kind, **_time_row(kind, sync_calls, count, repeats)}
            for label, kind, sync_calls in ROWS]
    return {"provenance": provenance(), "bytes": count * 4, "repeats": repeats, "rows": rows}


def save(results: dict, path: str | Path) -> Path:
    """`results` of `measure` as a result file of gs_course.measurement.records (kind, schema, provenance)."""
    payload = {key: value for key, value in results.items() if key not in ("kind", "schema", "provenance")}
    return write(KIND, payload, path, schema=SCHEMA, prov=results["provenance"])


def load(path: str | Path) -> dict:
    """A memory-kinds result file, read back after checking its kind and schema."""
    return load_result(path, KIND, SCHEMA)


def table(results: dict) -> str:
    """The medians as text: milliseconds and GB/s (bytes of the array over the time)."""
    nbytes = results["bytes"]
    lines = [f"{nbytes / MIB:g} MiB of float32 between host and GPU, by kind of host memory "
             f"(median of {results['repeats']}; {describe(results['provenance'])})",
             f"{'':26}" + "".join(f"{column:>26}" for column in COLUMNS)]
    for row in results["rows"]:
        medians = [row[key]["median_s"] for key in KEYS]
        cells = "".join(f"{s * 1e3:>12.2f} ms {nbytes / s / 1e9:>7.1f} GB/s" for s in medians)
        lines.append(f"{row['label']:26}{cells}")
    return "\n".join(lines)
