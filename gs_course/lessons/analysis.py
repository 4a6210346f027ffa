"""Analysing a run's images on the GPU: the reference implementations of tutorial 4.

The same functions serve the notebook (to compare the students' answers with, and to time) and its
checkers (`gs_course.lessons.analysis_check`, which computes the expected answers here). Each takes `xp`
(CuPy or NumPy) implicitly from its input: `xp = array_module(a)`.

- a run of images written with the course's own simulation and HDF5 writer (`write_run`);
- the run streamed from HDF5 through a fixed GPU buffer (`stream`), whose size is chosen from the
  GPU's free memory (`images_per_buffer`): two slots, each a pinned host buffer and a device
  buffer, filled in turn, the copy and the work of each slot queued on its own stream, and an event
  per slot that the host waits on before it overwrites the slot. The same loop runs with the other
  kinds of host memory of `gs_course.measurement.memory_kinds` (pageable, managed, mapped), so that they are
  measured on one task; NumPy runs it on the host without a GPU;
- the patterns: reductions, histograms (a call, and CUDA kernels with atomics, with and without
  shared-memory privatisation), masks and integer-array indexing, sorting and searching (with a
  bitonic sort kernel), the similarity (Gram) matrix through cuBLAS, and broadcasting throughout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np

from .. import backends
from ..measurement import memory_kinds
from ..output import DATASET, BackgroundWriter, FrameWriter
from ..parameters import Parameters
from ..runner import simulate
from ..measurement import timer
from ..workload import GRIDS


@dataclasses.dataclass(frozen=True)
class RunSize:
    """The run the notebook writes and analyses, and the GPU memory it may use for the streaming."""

    images: int
    rows: int
    cols: int
    budget_bytes: int  # both slots' device buffers together: smaller than the run
    pattern_images: int  # the batch the patterns are shown on

    @property
    def frame_bytes(self) -> int:
        return self.rows * self.cols * 4

    @property
    def bytes(self) -> int:
        return self.images * self.frame_bytes


#: On a GPU: 250 images of the school's grid (2.07 GB) through a 1 GB budget, 5 batches (the last
#: one short). Without one: the course's small grid, 200 images (26 MB) through 8 MB, 7 batches.
FULL = RunSize(250, 1080, 1920, 10**9, 8)
SMALL = RunSize(200, 135, 240, 8 * 10**6, 16)

#: V lies in [0, 1]: its histograms count 64 bins of that range (a power of two: v * 64 is exact in
#: float32, so a kernel's bin and numpy.histogram's agree at the edges).
BINS = 64
#: V above this is a spot (the background, where V is about 0, and the spots, V 0.2 to 0.4).
SPOT_THRESHOLD = 0.1


def array_module(a):
    """CuPy for a CuPy array, else NumPy."""
    if type(a).__module__.split(".")[0] != "cupy":
        return np
    import cupy

    return cupy


def run_size(size_name: str) -> RunSize:
    """The run for the notebook's grid (`gs_course.sizing.choice().workload.name`): the school's
    grid where the notebooks run it, the small run on the small grid, and in between (a small GPU)
    the small run's images and budget scaled to that grid."""
    if size_name == "full":
        return FULL

    grid = next(g for g in GRIDS if g.name == size_name)
    if size_name == "small":
        return SMALL
    scale = grid.rows * grid.cols / (SMALL.rows * SMALL.cols)
    return RunSize(SMALL.images, grid.rows, grid.cols, int(SMALL.budget_bytes * scale), SMALL.pattern_images)


def write_run(path: str | Path, size: RunSize, steps_per_image: int = 32, backend: str | None = None) -> dict:
    """The run's images in the school's HDF5 layout, by the fastest simulation here (or `backend`),
    a second thread writing while the next images are computed. No compression: the streaming then
    measures the copies, not gzip. Returns what the run was made with and how long it took."""
    sim = backends.create(backend, Parameters(), size.rows, size.cols)
    stopwatch = timer.for_library(sim.backend).stopwatch()
    writer = FrameWriter(path, size.images, size.rows, size.cols, sim.params, steps_per_image, deflate=None)
    with BackgroundWriter(writer) as sink:
        simulate(sim, size.images, steps_per_image, sink)
    return {"backend": sim.backend, "formulation": sim.formulation, "seconds": stopwatch.elapsed(sim)}


# --- Batches larger than memory ------------------------------------------------------------------

#: Each slot is filled while the other is worked on.
SLOTS = 2
#: How a slot's batch reaches the GPU: the kinds of host memory of `gs_course.measurement.memory_kinds` (a copy
#: from pageable or pinned memory, managed pages prefetched to the GPU, mapped memory read in place
#: by the kernels), and managed memory left to move page by page when the kernels touch it.
ROUTES = ("pinned", "pageable", "managed", "managed, on demand", "mapped")


def images_per_buffer(frame_bytes: int, free_bytes: int, budget_bytes: int | None = None,
                      fraction: float = 0.5) -> int:
    """Images in each slot's device buffer: the slots together take at most `fraction` of the free
    memory (the rest is for the work on the batches), and at most `budget_bytes`."""
    usable = free_bytes * fraction if budget_bytes is None else min(budget_bytes, free_bytes * fraction)
    images = int(usable // (SLOTS * frame_bytes))
    if images < 1:
        raise ValueError(f"{usable / 1e6:.1f} MB cannot hold {SLOTS} buffers of one {frame_bytes / 1e6:.1f} MB image")
    return images


def stream(path: str | Path, batch_images: int, process: Callable, route: str = "pinned") -> int:
    """Call `process(start, batch)` for each batch of `batch_images` images of the run at `path`,
    `batch` on the GPU (CuPy) where CuPy runs, else on the host (NumPy). Returns the batches.

    On the GPU, two slots alternate: while the GPU copies and processes one (queued on that slot's
    stream), the host reads the next batch from the file into the other. Before the host overwrites
    a slot, it waits for the event recorded after that slot's last work: the copy out of the
    pinned buffer (or the kernels reading managed or mapped memory) must be over. `process` runs
    with the slot's stream as the current stream, so what it launches is ordered after the copy;
    it must not keep `batch` (the slot is reused), only what it computes from it. The results are
    complete when `stream` returns (it waits for both streams)."""
    cupy = _gpu_cupy()
    with h5py.File(path, "r") as file:
        dataset = file[DATASET]
        count, rows, cols = dataset.shape
        shape = (min(batch_images, count), rows, cols)
        if cupy is None:
            buffer = np.empty(shape, np.float32)
            for start in range(0, count, batch_images):
                images = min(batch_images, count - start)
                dataset.read_direct(buffer, np.s_[start:start + images], np.s_[:images])
                process(start, buffer[:images])
            return -(-count // batch_images)
        if route not in ROUTES:
            raise ValueError(f"route must be one of {', '.join(ROUTES)}, got {route!r}")
        kind = route.split(",")[0]
        slots = [memory_kinds.allocate(kind, shape) for _ in range(SLOTS)]
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(SLOTS)]
        done = [None] * SLOTS  # per slot, the event recorded after its last work
        managed_waits = kind == "managed" and not cupy.cuda.Device().attributes.get("ConcurrentManagedAccess", 0)
        for batch, start in enumerate(range(0, count, batch_images)):
            slot, on = batch % SLOTS, streams[batch % SLOTS]
            images = min(batch_images, count - start)
            if done[slot] is not None:
                done[slot].synchronize()  # the GPU is done with this slot's memory
            if managed_waits:  # such GPUs let the host touch managed memory only while no kernel runs
                cupy.cuda.Device().synchronize()
            dataset.read_direct(slots[slot].host, np.s_[start:start + images], np.s_[:images])
            with on:
                if not route.endswith("on demand"):
                    slots[slot].to_device(on)  # a copy, a prefetch, or nothing (mapped)
                process(start, slots[slot].device[:images])
                done[slot] = on.record()
        for on in streams:
            on.synchronize()
    return -(-count // batch_images)


def _gpu_cupy():
    """CuPy where it runs on a GPU here, else None."""
    if not backends.probe("cupy").ok:
        return None
    import cupy

    return cupy


def stream_masses(path: str | Path, batch_images: int, route: str = "pinned"):
    """The mass of V of every image of the run (float64, on the GPU where there is one), streamed:
    the task on which the routes are compared."""
    with h5py.File(path, "r") as file:
        count = file[DATASET].shape[0]
    xp = _gpu_cupy() or np
    masses = xp.empty(count, np.float64)

    def process(start, batch):
        masses[start:start + len(batch)] = mass(batch)

    stream(path, batch_images, process, route)
    return masses


def read_seconds(path: str | Path, batch_images: int) -> float:
    """Seconds to read the run into one host buffer, batch by batch, doing nothing else: the floor of
    every route (the file is in the operating system's cache after the first read)."""
    with h5py.File(path, "r") as file:
        dataset = file[DATASET]
        count = dataset.shape[0]
        buffer = np.empty((min(batch_images, count), *dataset.shape[1:]), np.float32)
        stopwatch = timer.Timer().stopwatch()
        for start in range(0, count, batch_images):
            images = min(batch_images, count - start)
            dataset.read_direct(buffer, np.s_[start:start + images], np.s_[:images])
        return stopwatch.elapsed()


def load_batch(path: str | Path, images: int, xp=np):
    """The last `images` images of the run (where the pattern has grown), on xp's device."""
    with h5py.File(path, "r") as file:
        return xp.asarray(file[DATASET][-images:])


# --- Timing ----------------------------------------------------------------------------------------

def seconds(function: Callable, *args, repeat: int = 5, gpu: bool | None = None) -> float:
    """Median seconds of `function(*args)`: on the GPU's own clock (`timer.CupyTimer`: CUDA events
    around each call) with `gpu` (by default: when an argument is a CuPy array), else the host's."""
    if gpu is None:
        gpu = any(array_module(a) is not np for a in args)
    if gpu:
        return timer.CupyTimer().time(lambda: function(*args), repeats=repeat, warmup=2).device_median
    return timer.Timer().time(lambda: function(*args), repeats=repeat, warmup=2).median


# --- Reductions ------------------------------------------------------------------------------------

def mass(images):
    """The mass of V of each image (sum over its cells), in one call over the batch, summed in
    float64: a float32 running sum of two million cells loses digits."""
    return images.sum(axis=(1, 2), dtype=np.float64)


#: A ReductionKernel: map each cell (v, threshold) to what it contributes, reduce pairs, then
#: write the result; the identity starts each thread's partial sum.
SPOT_MASS_PARAMS = ("float32 v, float32 threshold", "float64 mass")
SPOT_MASS = {"map_expr": "v > threshold ? v : 0.0", "reduce_expr": "a + b", "identity": "0"}


def spot_mass(images, threshold: float = SPOT_THRESHOLD):
    """The mass of V in the spots (cells above `threshold`) of each image."""
    xp = array_module(images)
    return xp.where(images > np.float32(threshold), images, 0).sum(axis=(1, 2), dtype=np.float64)


def spot_mass_kernel(cupy, map_expr: str, reduce_expr: str, identity: str):
    """`kernel(images, threshold, axis=(1, 2))` gives each image's spot mass (`threshold` a float32
    array of 0 dimensions, broadcast against the images). The partial sums are doubles:
    `reduce_type` is pasted into the kernel's C source as it is (`typedef double _type_reduce;`), so
    it is C's name for the type, where the parameters take NumPy's (float64)."""
    return cupy.ReductionKernel(*SPOT_MASS_PARAMS, map_expr, reduce_expr, "mass = a", identity, "spot_mass",
                                reduce_type="double")


# --- Histograms ------------------------------------------------------------------------------------

def histograms(images, bins: int = BINS):
    """Each image's histogram of V over [0, 1], `bins` bins, in one call: each cell's bin, offset by
    its image's index times `bins` (broadcasting an (images, 1, 1) column), counted by one bincount.
    A value of 1 belongs to the last bin, as in numpy.histogram."""
    xp = array_module(images)
    count = images.shape[0]
    index = xp.minimum((images * np.float32(bins)).astype(np.int64), bins - 1)
    index += (xp.arange(count) * bins)[:, None, None]
    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)


#: A kernel that makes each image's histogram: blockIdx.y is the image, the block's threads walk its
#: cells (a grid-stride loop over blockIdx.x). BODY is one of the two below.
HISTOGRAM_KERNEL = r"""extern "C" __global__ void histograms(const float* images, int cells, int bins, unsigned int* counts)
{
    const float* image = images + (size_t)blockIdx.y * cells;
    unsigned int* image_counts = counts + (size_t)blockIdx.y * bins;
    const int first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
BODY
}"""

#: Every thread adds 1 to a bin in global memory: thousands of threads hit the few bins of the
#: background, and each atomicAdd on one address waits for the one before.
GLOBAL_ATOMICS = r"""
    for (int i = first; i < cells; i += stride) {
        const int bin = min((int)(image[i] * bins), bins - 1);
        atomicAdd(&image_counts[bin], 1u);
    }
"""

#: The block counts into its own copy of the histogram in shared memory (on chip, contended by the
#: block's threads only), then adds it to global memory once: one atomicAdd per bin and block.
PRIVATISED = r"""
    extern __shared__ unsigned int block_counts[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;
    __syncthreads();
    for (int i = first; i < cells; i += stride) {
        const int bin = min((int)(image[i] * bins), bins - 1);
        atomicAdd(&block_counts[bin], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&image_counts[b], block_counts[b]);
"""

HISTOGRAM_THREADS = 256
#: Blocks per image: enough to fill the GPU with a batch of a few images, few enough that each
#: block has thousands of cells to count (the privatised kernel's cost per block is the bins).
HISTOGRAM_BLOCKS = 64


def histogram_kernel(cupy, body: str):
    """The RawKernel of HISTOGRAM_KERNEL with `body`."""
    return cupy.RawKernel(HISTOGRAM_KERNEL.replace("BODY", body), "histograms")


def launch_histograms(kernel, images, bins: int = BINS, spare: int = 0, counts=None):
    """Each image's histogram by `kernel` (counts as uint32, shape (images, bins)). `spare` more
    words of shared memory past the histogram, and `counts` given (zeros, the histograms first),
    let a checker see what a kernel writes past their ends."""
    import cupy

    count = images.shape[0]
    cells = images[0].size
    counts = cupy.zeros((count, bins), np.uint32) if counts is None else counts
    blocks = min(HISTOGRAM_BLOCKS, -(-cells // HISTOGRAM_THREADS))
    kernel((blocks, count), (HISTOGRAM_THREADS,), (cupy.ascontiguousarray(images), np.int32(cells), np.int32(bins),
                                                   counts), shared_mem=(bins + spare) * 4)
    return counts


# --- Masks and integer-array indexing --------------------------------------------------------------

def bright_cells(image, threshold: float = SPOT_THRESHOLD):
    """The (row, col) of each cell of `image` above `threshold`, shape (cells, 2) in row-major order,
    and V at those cells, taken by integer-array indexing."""
    xp = array_module(image)
    where = xp.argwhere(image > np.float32(threshold))
    return where, image[where[:, 0], where[:, 1]]


def spot_fraction(images, threshold: float = SPOT_THRESHOLD):
    """The fraction of each image's cells above `threshold`: a mask, averaged over the batch's cells."""
    return (images > np.float32(threshold)).mean(axis=(1, 2))


# --- Sorting and searching -------------------------------------------------------------------------

DECILES = np.arange(1, 10) / 10


def percentiles(values, fractions):
    """The values at `fractions` (0 to 1) of the sorted values: index floor(q (n - 1)), as
    numpy.percentile's method="lower" (no interpolation)."""
    xp = array_module(values)
    ordered = xp.sort(values.ravel())
    index = np.floor(np.asarray(fractions) * (ordered.size - 1)).astype(np.int64)
    return ordered[xp.asarray(index)]


def deciles(images):
    """The nine deciles of V over the batch, then each cell's decile class (0 to 9) by a binary
    search of its value among them; a cell equal to an edge belongs to the class above it."""
    xp = array_module(images)
    edges = percentiles(images, DECILES)
    return edges, xp.searchsorted(edges, images, side="right")


#: One compare-and-exchange step (j, k) of a bitonic sort: thread i pairs with i ^ j; the pair is
#: put in ascending order where i & k is 0, descending elsewhere. BODY is the student's.
BITONIC_KERNEL = r"""extern "C" __global__ void bitonic_step(float* values, int j, int k, int n)
{
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned int partner = i ^ j;
BODY
}"""

BITONIC_BODY = r"""
    if (partner > i) {
        const bool ascending = (i & k) == 0;
        const float a = values[i], b = values[partner];
        if ((a > b) == ascending) {
            values[i] = b;
            values[partner] = a;
        }
    }
"""

BITONIC_THREADS = 256


def bitonic_kernel(cupy, body: str):
    return cupy.RawKernel(BITONIC_KERNEL.replace("BODY", body), "bitonic_step")


def bitonic_sort(kernel, values):
    """`values` (any size) sorted by `kernel`'s steps: padded with +inf to a power of two n, then
    log2(n) (log2(n) + 1) / 2 launches, each comparing n / 2 pairs."""
    import cupy

    count = values.size
    n = 1 << max(0, count - 1).bit_length()
    padded = cupy.full(n, np.inf, np.float32)
    padded[:count] = values.ravel()
    threads = min(BITONIC_THREADS, n)
    blocks = n // threads
    k = 2
    while k <= n:
        j = k // 2
        while j > 0:
            kernel((blocks,), (threads,), (padded, np.int32(j), np.int32(k), np.int32(n)))
            j //= 2
        k *= 2
    return padded[:count]


# --- Batched matrix operations ---------------------------------------------------------------------

def similarity(images):
    """The cosine similarity of every pair of images, (images, images): one matrix product of the
    images as rows, X X^T (a GEMM in cuBLAS), divided by the norms (its diagonal's square roots),
    broadcast along rows and along columns."""
    xp = array_module(images)
    rows = images.reshape(images.shape[0], -1)
    gram = rows @ rows.T
    norms = xp.sqrt(xp.diagonal(gram))
    return gram / (norms[:, None] * norms[None, :])


def window_similarity(images, window: int):
    """The similarity within each window of `window` consecutive images, (windows, window, window):
    `matmul` on a stack of matrices, one batched GEMM for all windows."""
    xp = array_module(images)
    windows = images.shape[0] // window
    rows = images[:windows * window].reshape(windows, window, -1)
    gram = xp.matmul(rows, rows.transpose(0, 2, 1))
    norms = xp.sqrt(xp.diagonal(gram, axis1=1, axis2=2))
    return gram / (norms[:, :, None] * norms[:, None, :])
