"""CuPy: NumPy's interface on an NVIDIA GPU, then CUDA kernels written by hand.

Seven formulations, slowest to fastest, each one lesson:
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
Measured on an H200: results/h200/logs/tune.txt.
"""

import abc
import functools
import sys

import cupy
import cupyx
import numpy as np

from ..model import initial_state
from ..parameters import Parameters
from . import cupy_persistent
from .base import PaddedSlices, Probe, Simulation, first_line
from .cuda_source import GRAY_SCOTT_CU
from .cuda_steps import STEP_KERNEL, STRIPS, Strips, launch_step, launch_strip, scalars, strip_kernel
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
        STEP_KERNEL.compile()

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
    Options = Strips

    def __init__(self, params: Parameters, rows: int, cols: int, options: Strips = STRIPS):
        self.strips = options
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


def kernel_report(blocking: Blocking) -> dict:
    """Registers a thread, local bytes, shared bytes and blocks an SM of the fused kernel compiled
    for `blocking`: what `gs-course tune` records beside each shape's time."""
    kernel = fused_kernel(_kernel_shape(blocking))
    try:
        blocks_per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, blocking.threads[0] * blocking.threads[1], blocking.shared_bytes)
    except Exception:  # noqa: BLE001 (an occupancy query this CuPy does not offer: not reported)
        blocks_per_sm = None
    return {"registers": kernel.attributes["num_regs"], "local_bytes": kernel.attributes["local_size_bytes"],
            "shared_bytes": blocking.shared_bytes, "blocks_per_sm": blocks_per_sm}


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
    Options = Blocking

    def __init__(self, params: Parameters, rows: int, cols: int, options: Blocking = BLOCKING):
        self.blocking = options
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
    Options = cupy_persistent.PersistentOptions

    def __init__(self, params: Parameters, rows: int, cols: int,
                 options: cupy_persistent.PersistentOptions | cupy_persistent.OnChip = cupy_persistent.PersistentOptions()):
        try:
            self.tiles = cupy_persistent.plan(rows, cols, options)
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
