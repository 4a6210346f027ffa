"""CuPy: NumPy's interface on an NVIDIA GPU, then CUDA kernels written by hand.

Five formulations, slowest to fastest, each one lesson:
- `slices`: NumPy code unchanged, ~40 kernel launches and temporaries a step;
- `elementwise`: one `ElementwiseKernel` a step, CuPy writes the loop and the launch;
- `raw`: one `RawKernel` a step on 2-D blocks, which share neighbours in the cache;
- `graph`: the same kernel, the launches of a whole image captured once as a CUDA graph and
  replayed, so that Python's per-launch overhead (several microseconds) leaves the time loop;
- `strip`: each thread walks down a strip of a column, keeping row sums in registers: a third
  of the loads. Nsight Compute showed `raw` limited by its loads, not by memory bandwidth (the
  33 MB working set mostly stays in the GPU's L2 cache); this one runs 1.4 times faster.
- `multistep`: several steps a launch, each block advancing its tile and a halo in shared memory
  with the strip kernel's row sums (temporal_blocking.py): memory is crossed once a launch,
  not once a step, against the halo's cells computed twice.
- `persistent`: one cooperative launch for all the steps of an advance, each block's tile kept on
  chip throughout, borders exchanged at a grid-wide barrier (cupy_persistent.py).
Measured on an H200: results/h200/tune.txt.
"""

import abc
import dataclasses
import functools
import sys

import cupy
import cupyx
import numpy as np

from ..model import initial_state
from ..parameters import STENCIL, Parameters
from . import cupy_persistent
from .base import PaddedSlices, Probe, Simulation, first_line
from .cuda_source import GRAY_SCOTT_CU
from .temporal_blocking import BLOCKING, Blocking, launch_depths

NAME = "cupy"


def probe() -> Probe:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count == 0:
            raise RuntimeError("no CUDA device")
        float(cupy.arange(4, dtype=cupy.float32).sum())  # compiles and runs a kernel
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as err:  # CUDA reports a missing driver or device with many exception types
        return Probe(NAME, False, cupy.__version__, reason=f"no usable NVIDIA GPU ({first_line(err)})")
    return Probe(NAME, True, cupy.__version__, name, on_gpu=True)


def free_memory() -> int:
    return cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()


_STEP_KERNEL = cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_step")
#: Threads of a block along columns and rows.
BLOCK = (32, 8)


def scalars(params: Parameters, rows: int, cols: int) -> tuple:
    """The step kernels' scalar arguments, typed as their C signature expects."""
    return (np.int32(rows), np.int32(cols),
            *(np.float32(x) for x in (params.du, params.dv, params.feed, params.kill, params.dt)))


def launch_step(u, v, u_next, v_next, step_scalars: tuple, kernel: cupy.RawKernel = _STEP_KERNEL,
                block: tuple[int, int] = BLOCK) -> None:
    """Queue one step of a one-thread-a-cell kernel (ours by default) on the current stream:
    (u, v) in, (u_next, v_next) out, blocks of `block` threads (along columns, rows)."""
    rows, cols = u.shape
    grid = (-(-cols // block[0]), -(-rows // block[1]))
    kernel(grid, block, (u, v, u_next, v_next, *step_scalars))


@dataclasses.dataclass(frozen=True)
class Strips:
    """The shape of the strip kernel's launch: threads of a block along columns and rows, and
    the cells of a column each thread walks down (a compile-time constant of the kernel)."""

    cols: int = 128
    rows: int = 2
    strip_rows: int = 8

    def __post_init__(self):
        if self.cols * self.rows > 1024 or min(self.cols, self.rows, self.strip_rows) < 1:
            raise ValueError(f"{self}: a block has 1 to 1024 threads and a strip at least one row")


#: The fastest of twelve shapes measured on an H200 (results/h200/tune.txt:
#: 8.5 us a step; 32 x 4 threads gave 8.6, strips of 4 or 16 rows 9.1 to 9.9).
STRIPS = Strips()


@functools.cache
def strip_kernel(strip_rows: int) -> cupy.RawKernel:
    return cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_strip", options=(f"-DSTRIP_ROWS={strip_rows}",))


def launch_strip(u, v, u_next, v_next, step_scalars: tuple, strips: Strips = STRIPS) -> None:
    """Queue one step of the strip kernel on the current stream."""
    rows, cols = u.shape
    grid = (-(-cols // strips.cols), -(-rows // (strips.rows * strips.strip_rows)))
    strip_kernel(strips.strip_rows)(grid, (strips.cols, strips.rows), (u, v, u_next, v_next, *step_scalars))


def run_steps(u, v, u_out, v_out, steps: int, params: Parameters) -> None:
    """`steps` >= 1 steps of the strip kernel from (u, v), which stay untouched, the result left
    in (u_out, v_out): what cuPyNumeric's own task runs on a GPU."""
    step_scalars = scalars(params, *u.shape)
    spare = (cupy.empty_like(u), cupy.empty_like(v)) if steps > 1 else None
    # Alternate between the output and a spare pair so that the last step writes the output.
    targets = [(u_out, v_out) if (steps - k) % 2 == 0 else spare for k in range(1, steps + 1)]
    source = (u, v)
    for target in targets:
        launch_strip(*source, *target, step_scalars)
        source = target


# --- The CuPy tutorial's variants, measured against the kernels above (not benchmark formulations)

_TRANSPOSED_KERNEL = cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_step_transposed")


def launch_transposed(u, v, u_next, v_next, step_scalars: tuple, block: tuple[int, int] = BLOCK) -> None:
    """Queue one step of gray_scott_step_transposed: blocks of `block` threads, x along rows."""
    rows, cols = u.shape
    grid = (-(-rows // block[0]), -(-cols // block[1]))
    _TRANSPOSED_KERNEL(grid, block, (u, v, u_next, v_next, *step_scalars))


@functools.cache
def tiled_kernel(tile: tuple[int, int]) -> cupy.RawKernel:
    return cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_tiled", options=(f"-DTILE_COLS={tile[0]}", f"-DTILE_ROWS={tile[1]}"))


def launch_tiled(u, v, u_next, v_next, step_scalars: tuple, tile: tuple[int, int] = BLOCK) -> None:
    """Queue one step of gray_scott_tiled: a block of tile[0] x tile[1] threads per tile."""
    launch_step(u, v, u_next, v_next, step_scalars, kernel=tiled_kernel(tuple(tile)), block=tuple(tile))


class _ConstantStep:
    """gray_scott_step_constant, and the values its module's constant memory holds."""

    def __init__(self):
        self.module = cupy.RawModule(code=GRAY_SCOTT_CU)
        self.kernel = self.module.get_function("gray_scott_step_constant")
        self.constants = None

    def write(self, constants: np.ndarray) -> None:
        """Copy `constants` (float32: the nine weights, du, dv, feed, kill, dt) into the module's
        step_constants on the current stream, unless it holds them already: a copy at every step
        would cost about as much as the step (and cannot be captured in a CUDA graph)."""
        if self.constants is None or not np.array_equal(constants, self.constants):
            symbol = self.module.get_global("step_constants")
            cupy.ndarray(constants.shape, constants.dtype, symbol).set(constants)
            self.constants = constants


@functools.cache
def _constant_step() -> _ConstantStep:
    return _ConstantStep()


def launch_constant(u, v, u_next, v_next, step_scalars: tuple, weights=STENCIL) -> None:
    """Queue one step of gray_scott_step_constant, the stencil's `weights` (3 x 3) and the
    parameters (step_scalars after rows and cols) in constant memory."""
    step = _constant_step()
    step.write(np.array([*np.ravel(weights), *step_scalars[2:]], np.float32))
    launch_step(u, v, u_next, v_next, step_scalars[:2], kernel=step.kernel)


#: The tutorial's comparisons: each a `launch(u, v, u_next, v_next, step_scalars)` of one step.
VARIANTS = {
    f"one thread a cell, {BLOCK[0]} x {BLOCK[1]} blocks": launch_step,
    "one thread a cell, 8 x 32 blocks": functools.partial(launch_step, block=(8, 32)),
    f"threads along rows (transposed), {BLOCK[0]} x {BLOCK[1]}": launch_transposed,
    f"tiled in shared memory, {BLOCK[0]} x {BLOCK[1]}": launch_tiled,
    "stencil and parameters in __constant__": launch_constant,
    f"strip kernel, {STRIPS.cols} x {STRIPS.rows} threads, {STRIPS.strip_rows} rows each": launch_strip,
}


def step_time_us(launch, params: Parameters, rows: int, cols: int, steps: int = 32, repeats: int = 10) -> float:
    """The GPU's time of one step of `launch` (as in VARIANTS) from the school's initial state, in
    microseconds: the median of `repeats` replays of `steps` launches captured once as a CUDA
    graph, timed by CUDA events, so that Python's launch overhead is left out."""
    u, v = (cupy.asarray(a) for a in initial_state(rows, cols))
    pairs = [(u, v), (cupy.empty_like(u), cupy.empty_like(v))]
    step_scalars = scalars(params, rows, cols)
    stream = cupy.cuda.Stream()  # capture needs a stream other than the legacy default one
    with stream:
        launch(*pairs[0], *pairs[1], step_scalars)  # compiles, loads, writes constants: not allowed in a capture
        stream.begin_capture()
        for k in range(steps):
            launch(*pairs[k % 2], *pairs[1 - k % 2], step_scalars)
        graph = stream.end_capture()
    return replay_ms(graph, stream, repeats) * 1e3 / steps


def replay_ms(graph, stream, repeats: int = 10) -> float:
    """The GPU's time of one replay of a CUDA graph on `stream`, in milliseconds: the median of
    `repeats` replays timed by CUDA events, after one that warms up."""
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats + 1):
        start.record(stream)
        graph.launch(stream)
        end.record(stream)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return float(np.median(times[1:]))


class CupySlices(PaddedSlices):
    backend = NAME
    xp = cupy

    def _to_host(self, a):
        return cupy.asnumpy(a)

    def synchronize(self) -> None:
        cupy.cuda.Device().synchronize()


class _DoubleBuffered(Simulation):
    """U, V and a second pair on the GPU (no padding); a step reads one pair and writes the other."""

    backend = NAME
    arrays_per_cell = 4

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        u0, v0 = initial_state(rows, cols)
        self._pairs = [(cupy.asarray(u0), cupy.asarray(v0)), (cupy.empty_like(u0), cupy.empty_like(v0))]
        self._current = 0
        self._scalars = scalars(params, rows, cols)

    @abc.abstractmethod
    def _launch(self, u, v, u_next, v_next) -> None:
        """Queue one step that reads (u, v) and writes (u_next, v_next)."""

    def _launches(self, steps: int) -> list[int]:
        """The steps of each launch that advances `steps`: one each, unless a kernel fuses several."""
        return [1] * steps

    def _launch_steps(self, u, v, u_next, v_next, steps: int) -> None:
        """Queue one launch of `steps` steps (one, unless `_launches` fuses several)."""
        self._launch(u, v, u_next, v_next)

    def _advance(self, steps: int) -> None:
        for launch in self._launches(steps):
            (u, v), (u_next, v_next) = self._pairs[self._current], self._pairs[1 - self._current]
            self._launch_steps(u, v, u_next, v_next, launch)
            self._current = 1 - self._current

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        u, v = self._pairs[self._current]
        return cupy.asnumpy(u), cupy.asnumpy(v)

    def fetch_v(self) -> np.ndarray:
        """V copied into pinned (page-locked) host memory, which the GPU copies to about five times
        faster than to ordinary memory (`gs-course transfer`): it counts when every image is saved.
        The buffer goes back to CuPy's pinned pool once the caller drops it."""
        v = self._pairs[self._current][1]
        return v.get(out=cupyx.empty_pinned(v.shape, v.dtype))

    def synchronize(self) -> None:
        cupy.cuda.Device().synchronize()

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        """Copied into the current pair in place: a captured CUDA graph keeps its pointers."""
        for device, host in zip(self._pairs[self._current], (u, v)):
            device.set(np.ascontiguousarray(host, np.float32))


class CupyElementwise(_DoubleBuffered):
    """CuPy launches one thread per cell on a 1-D grid; we write only what one cell does."""

    formulation = "elementwise"
    _kernel = cupy.ElementwiseKernel(
        "raw float32 u, raw float32 v, int32 rows, int32 cols, "
        "float32 du, float32 dv, float32 feed, float32 kill, float32 dt",
        "raw float32 u_next, raw float32 v_next",
        "gray_scott_cell(&u[0], &v[0], &u_next[0], &v_next[0], i / cols, i % cols, rows, cols, "
        "du, dv, feed, kill, dt);",
        "gs_course_elementwise",
        preamble=GRAY_SCOTT_CU,
    )

    def _launch(self, u, v, u_next, v_next) -> None:
        self._kernel(u, v, *self._scalars, u_next, v_next, size=self.rows * self.cols)


class CupyRaw(_DoubleBuffered):
    """Our own kernel and launch: 2-D blocks of 32 x 8 threads tile the grid."""

    formulation = "raw"

    def _launch(self, u, v, u_next, v_next) -> None:
        launch_step(u, v, u_next, v_next, self._scalars)


class CupyGraph(CupyRaw):
    """The raw kernel, `steps` launches captured once as a CUDA graph, then replayed in one call."""

    formulation = "graph"

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        # Capture needs a stream other than the legacy default one; a blocking stream stays
        # ordered with the default stream that `fetch` copies on.
        self._stream = cupy.cuda.Stream()
        self._graphs = {}
        self._compile()  # loading a module is not allowed while a stream is captured

    def _compile(self) -> None:
        _STEP_KERNEL.compile()

    def _advance(self, steps: int) -> None:
        if not steps:
            return
        start = self._current
        graph = self._graphs.get((steps, start))
        with self._stream:
            if graph is None:
                self._stream.begin_capture()
                super()._advance(steps)  # recorded, not run
                graph = self._graphs[(steps, start)] = self._stream.end_capture()
            graph.launch(self._stream)
        self._current = (start + len(self._launches(steps))) % 2


class CupyStrip(CupyGraph):
    """One step per launch, each thread walking down a strip of a column and keeping row sums in
    registers: a third of the loads of `raw`, replayed as a graph."""

    formulation = "strip"
    strips = STRIPS

    def __init__(self, params: Parameters, rows: int, cols: int, strips: Strips | None = None):
        if strips is not None:
            self.strips = strips
        super().__init__(params, rows, cols)

    def _compile(self) -> None:
        strip_kernel(self.strips.strip_rows).compile()

    def _launch(self, u, v, u_next, v_next) -> None:
        launch_strip(u, v, u_next, v_next, self._scalars, self.strips)


@functools.cache
def fused_kernel(blocking: Blocking) -> cupy.RawKernel:
    """gray_scott_fused for the blocking's tile and halo (the depth and threads are the launch's),
    allowed the dynamic shared memory its region needs (over 48 KB needs asking)."""
    kernel = cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_fused", options=blocking.compile_options())
    kernel.compile()
    kernel.max_dynamic_shared_size_bytes = blocking.shared_bytes
    return kernel


def _kernel_shape(blocking: Blocking) -> Blocking:
    """The blocking with what the compiled kernel does not depend on set to defaults: one kernel
    serves every depth and thread shape."""
    return Blocking(blocking.tile_cols, blocking.tile_rows, blocking.halo, threads=(1, 1))


def launch_fused(u, v, u_next, v_next, step_scalars: tuple, steps: int, blocking: Blocking = BLOCKING) -> None:
    """Queue one launch of the fused kernel: `steps` (1 to blocking.halo) steps from (u, v) to
    (u_next, v_next)."""
    kernel = fused_kernel(_kernel_shape(blocking))
    kernel(blocking.grid(*u.shape), blocking.threads, (u, v, u_next, v_next, *step_scalars, np.int32(steps)),
           shared_mem=blocking.shared_bytes)


class CupyMultistep(CupyGraph):
    """`blocking.depth` steps a launch on tiles with a halo in shared memory (a shorter last launch
    where the depth does not divide the steps), replayed as a graph."""

    formulation = "multistep"
    blocking = BLOCKING

    def __init__(self, params: Parameters, rows: int, cols: int, blocking: Blocking | None = None):
        if blocking is not None:
            self.blocking = blocking
        super().__init__(params, rows, cols)

    def _compile(self) -> None:
        fused_kernel(_kernel_shape(self.blocking))

    def _launches(self, steps: int) -> list[int]:
        return launch_depths(steps, self.blocking.depth)

    def _launch_steps(self, u, v, u_next, v_next, steps: int) -> None:
        launch_fused(u, v, u_next, v_next, self._scalars, steps, self.blocking)


class CupyPersistent(CupyMultistep):
    """Each advance ONE cooperative launch whose blocks keep their tiles on chip for all its steps;
    `multistep`, said in one line, where the grid does not stay on chip."""

    formulation = "persistent"

    def __init__(self, params: Parameters, rows: int, cols: int, tiles: cupy_persistent.OnChip | None = None):
        try:
            self.tiles = cupy_persistent.plan(rows, cols, tiles)
        except cupy_persistent.NotOnChip as err:
            print(f"cupy/persistent: {err}: running cupy/multistep instead", file=sys.stderr)
            self.tiles = None
        super().__init__(params, rows, cols)

    def _compile(self) -> None:
        if self.tiles is None:
            super()._compile()

    def _advance(self, steps: int) -> None:
        if self.tiles is None or not steps:
            return super()._advance(steps)
        (u, v), (u_next, v_next) = self._pairs[self._current], self._pairs[1 - self._current]
        cupy_persistent.launch_persistent(u, v, u_next, v_next, self._scalars, steps, self.tiles)
        self._current = 1 - self._current


FORMULATIONS = {cls.formulation: cls
                for cls in (CupySlices, CupyElementwise, CupyRaw, CupyGraph, CupyStrip, CupyMultistep, CupyPersistent)}
DEFAULT_FORMULATION = FASTEST = "multistep"
