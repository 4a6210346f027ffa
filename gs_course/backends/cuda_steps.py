"""The CUDA kernels of gray_scott.cu and how they are launched: one step a launch, one thread a cell
(`launch_step`) or a strip of a column each thread (`launch_strip`), and `run_steps`, which
cuPyNumeric's own task runs on a GPU. The CuPy backend's formulations, the Legate task and the
CuPy tutorial's variants all launch them through this module.
"""

import dataclasses
import functools

import cupy
import numpy as np

from ..parameters import Parameters
from .cuda_source import GRAY_SCOTT_CU

STEP_KERNEL = cupy.RawKernel(GRAY_SCOTT_CU, "gray_scott_step")
#: Threads of a block along columns and rows.
BLOCK = (32, 8)


def scalars(params: Parameters, rows: int, cols: int) -> tuple:
    """The step kernels' scalar arguments, typed as their C signature expects."""
    return (np.int32(rows), np.int32(cols),
            *(np.float32(x) for x in (params.du, params.dv, params.feed, params.kill, params.dt)))


def launch_step(u, v, u_next, v_next, step_scalars: tuple, kernel: cupy.RawKernel = STEP_KERNEL,
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


#: The fastest of twelve shapes measured on an H200 (results/h200/logs/tune.txt:
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
