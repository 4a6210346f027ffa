"""The CuPy tutorial's kernel variants (block shapes, a transposed launch, a tiled kernel with shared
memory, the stencil's weights in constant memory), timed against the backend's kernels: what the
tutorial's "Going further" measures. Not formulations of the benchmark.
"""

import functools

import cupy
import numpy as np

from ..backends.cuda_source import GRAY_SCOTT_CU
from ..backends.cuda_steps import BLOCK, STRIPS, launch_step, launch_strip, scalars
from ..measurement.timer import CupyTimer
from ..model import initial_state
from ..parameters import STENCIL, Parameters

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
    microseconds: the median, on the device's clock (`CupyTimer`), of `repeats` replays of `steps`
    launches captured once as a CUDA graph, so that Python's launch overhead is left out."""
    u, v = (cupy.asarray(a) for a in initial_state(rows, cols))
    pairs = [(u, v), (cupy.empty_like(u), cupy.empty_like(v))]
    step_scalars = scalars(params, rows, cols)

    def steps_from_the_initial_state():
        for k in range(steps):
            launch(*pairs[k % 2], *pairs[1 - k % 2], step_scalars)

    return CupyTimer().time_graph(steps_from_the_initial_state, repeats).device_median * 1e6 / steps
