"""JAX's own kernel language: the Gray-Scott step written as a Pallas kernel (`jax.experimental.pallas`),
which JAX compiles through Triton on an NVIDIA GPU, and runs in its interpreter elsewhere (slow,
but the same program: how the tests check it on a CPU).

A Pallas kernel is a function of *refs* (views of arrays in memory) run once per block of the
output, on a grid of blocks: here a block of `block` = (rows, cols) cells, powers of two (Triton
computes on tensors of such shapes). The block reads the nine shifted copies of its cells from U
and from V, in memory (the GPU's caches serve the overlaps), sums them and writes its block of
the next U and V.

The layout: each field lives in an array with a margin of one block all round, zero there and
beyond the grid's last row and column, so that every read of a block and its neighbours lies
inside the array and every cell outside the grid reads as zero (absent, the model's rule). The
kernel writes every block of the output, the margin's as zeros, so that no cell of the next
state is left unwritten.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl

from ..parameters import Parameters
from .base import is_positive_integer

#: Cells a block (rows, cols), a power of two each: `gs-course tune --apply-best` writes the diff that sets
#: the fastest of its sweep on the GPU host (results/h200/multistep-sweep.json).
BLOCK = (16, 64)


@dataclasses.dataclass(frozen=True)
class PallasOptions:
    """The block of cells (rows, columns) one program instance computes."""

    block: tuple[int, int] = BLOCK

    def __post_init__(self):
        if len(self.block) != 2 or not all(is_positive_integer(n) for n in self.block):
            raise ValueError(f"block must be two integers >= 1 (rows, columns), got {self.block!r}")


def layout_shape(rows: int, cols: int, block: tuple[int, int]) -> tuple[int, int]:
    """The array that holds a rows x cols field: the grid rounded up to whole blocks, plus a margin
    of one block on each side."""
    return (-(-rows // block[0]) + 2) * block[0], (-(-cols // block[1]) + 2) * block[1]


def to_layout(a: np.ndarray, block: tuple[int, int]) -> np.ndarray:
    """A rows x cols field placed in its layout (zero around)."""
    out = np.zeros(layout_shape(*a.shape, block), np.float32)
    out[block[0] : block[0] + a.shape[0], block[1] : block[1] + a.shape[1]] = a
    return out


def from_layout(a, rows: int, cols: int, block: tuple[int, int]):
    """The grid's cells of a field in its layout."""
    return a[block[0] : block[0] + rows, block[1] : block[1] + cols]


def _step_kernel(u_ref, v_ref, u_next_ref, v_next_ref, *, rows: int, cols: int, p: Parameters):
    block_rows, block_cols = u_next_ref.shape
    height, width = u_ref.shape
    i, j = pl.program_id(0), pl.program_id(1)
    # The grid's row and column of each cell of the block (the margin is one block).
    row = (i - 1) * block_rows + lax.broadcasted_iota(jnp.int32, (block_rows, block_cols), 0)
    col = (j - 1) * block_cols + lax.broadcasted_iota(jnp.int32, (block_rows, block_cols), 1)
    inside = (row >= 0) & (row < rows) & (col >= 0) & (col < cols)

    def window_sum(ref):
        """The nine shifted blocks summed. Only the margin's blocks would read beyond the array:
        their starts are clamped into it, and what they read is discarded (`inside`)."""
        total = None
        for dr in (-1, 0, 1):
            start_row = jnp.clip(i * block_rows + dr, 0, height - block_rows)
            for dc in (-1, 0, 1):
                start_col = jnp.clip(j * block_cols + dc, 0, width - block_cols)
                shifted = ref[pl.ds(start_row, block_rows), pl.ds(start_col, block_cols)]
                total = shifted if total is None else total + shifted
        return total

    here = (pl.ds(i * block_rows, block_rows), pl.ds(j * block_cols, block_cols))
    u, v = u_ref[here], v_ref[here]
    in_grid = ((3 - (row == 0).astype(jnp.float32) - (row == rows - 1).astype(jnp.float32))
               * (3 - (col == 0).astype(jnp.float32) - (col == cols - 1).astype(jnp.float32)))
    lu, lv = window_sum(u_ref) - in_grid * u, window_sum(v_ref) - in_grid * v
    uvv = u * v * v
    u_next = u + p.dt * (p.du * lu - uvv + p.feed * (1 - u))
    v_next = v + p.dt * (p.dv * lv + uvv - (p.feed + p.kill) * v)
    u_next_ref[...] = jnp.where(inside, u_next, 0.0)
    v_next_ref[...] = jnp.where(inside, v_next, 0.0)


def step(u, v, p: Parameters, rows: int, cols: int, block: tuple[int, int], interpret: bool):
    """One step of (u, v) in their layout, as one Pallas kernel."""
    height, width = u.shape
    out_block = pl.BlockSpec(block, lambda i, j: (i, j))
    whole = pl.BlockSpec((height, width), lambda i, j: (0, 0))  # the kernel reads where it needs
    return pl.pallas_call(
        partial(_step_kernel, rows=rows, cols=cols, p=p),
        out_shape=(jax.ShapeDtypeStruct(u.shape, u.dtype),) * 2,
        grid=(height // block[0], width // block[1]),
        in_specs=[whole, whole],
        out_specs=[out_block, out_block],
        interpret=interpret,
        name="gray_scott_pallas",
    )(u, v)


@partial(jax.jit, static_argnames=("p", "rows", "cols", "steps", "block", "interpret", "unroll"))
def advance(u, v, p: Parameters, rows: int, cols: int, steps: int, block: tuple[int, int], interpret: bool,
            unroll: int = 1):
    """`steps` Pallas steps in one compiled loop."""
    body = lambda _, uv: step(*uv, p, rows, cols, block, interpret)  # noqa: E731
    return lax.fori_loop(0, steps, body, (u, v), unroll=unroll)
