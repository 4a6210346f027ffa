"""Several steps per launch (temporal blocking): the geometry of CuPy's `multistep` kernel
(`gray_scott_fused` in gray_scott.cu), and a NumPy emulation of it that runs without a GPU.

A one-step kernel reads U and V from memory and writes them back every step. The fused kernel
gives each block a tile of the grid plus a halo of `halo` cells on every side (its *region*),
copies the region into shared memory once, then advances it `depth` <= `halo` steps there:
after each step the cells next to the region's edge are wrong (their neighbours beyond the edge
were never loaded), so each step computes a region one cell narrower on every side than the step
before, and after `depth` steps what is left is exactly the tile, written back to memory. The
price is the halo's cells, computed by two or four blocks each. Cells outside the grid are absent
at every step, as in the school's model: zero in shared memory, never computed, left out of the
window counts.

Within a step each thread walks down a strip of one column of the region, keeping row sums in
registers (as the one-step `strip` kernel does from memory): 6 reads of shared memory a cell.

Everything here is plain Python and NumPy, so that the tests check the index arithmetic of tiles,
halos and launches on a CPU; cupy_backend launches the kernel with the same numbers.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from ..model import updated
from ..parameters import Parameters

#: Shared memory one block may use on an H200 (227 KB; an A100 has 163 KB).
MAX_SHARED_BYTES = 227 * 1024
#: U and V, each in two buffers (one step reads one, writes the other), float32.
SHARED_ARRAYS = 4


@dataclasses.dataclass(frozen=True)
class Blocking:
    """The fused kernel's shape: a tile of `tile_cols` x `tile_rows` cells a block, a halo of
    `halo` cells (the most steps one launch can fuse; a compile-time constant, as the tile is),
    `depth` steps a launch (1 to `halo`), and `threads` (along columns, rows) a block."""

    tile_cols: int = 112
    tile_rows: int = 48
    halo: int = 8
    depth: int | None = None
    threads: tuple[int, int] = (128, 4)

    def __post_init__(self):
        if self.depth is None:
            object.__setattr__(self, "depth", self.halo)
        object.__setattr__(self, "threads", tuple(self.threads))  # as read back from JSON, say
        if min(self.tile_cols, self.tile_rows, self.halo, *self.threads) < 1:
            raise ValueError(f"{self}: tile, halo and threads must all be at least 1")
        if not 1 <= self.depth <= self.halo:
            raise ValueError(f"{self}: a launch fuses 1 to halo = {self.halo} steps, not {self.depth}")
        if self.threads[0] * self.threads[1] > 1024:
            raise ValueError(f"{self}: a block has at most 1024 threads")
        if self.shared_bytes > MAX_SHARED_BYTES:
            raise ValueError(f"{self}: its region needs {self.shared_bytes} bytes of shared memory, more than "
                             f"the {MAX_SHARED_BYTES} a block may have; take a smaller tile or halo")

    @property
    def region(self) -> tuple[int, int]:
        """(rows, cols) of a block's region: its tile and the halo around it."""
        return self.tile_rows + 2 * self.halo, self.tile_cols + 2 * self.halo

    @property
    def shared_bytes(self) -> int:
        rows, cols = self.region
        return SHARED_ARRAYS * rows * cols * np.dtype(np.float32).itemsize

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        """Blocks (along columns, rows) whose tiles cover a rows x cols grid."""
        return -(-cols // self.tile_cols), -(-rows // self.tile_rows)

    def origin(self, block_col: int, block_row: int) -> tuple[int, int]:
        """The grid's (row, col) of the region's first cell (negative beyond the grid's edge)."""
        return block_row * self.tile_rows - self.halo, block_col * self.tile_cols - self.halo

    def computed(self, step: int, depth: int) -> tuple[int, int, int, int]:
        """The region's rows [first, end) and cols [first, end) that step `step` (1 to `depth`) of
        a launch of `depth` steps computes: the ring the launch does not need (halo - depth) and
        one more cell for each step, so that step `depth` computes the tile."""
        ring = self.halo - depth + step
        rows, cols = self.region
        return ring, rows - ring, ring, cols - ring

    def compile_options(self) -> tuple[str, ...]:
        return (f"-DFUSED_TILE_COLS={self.tile_cols}", f"-DFUSED_TILE_ROWS={self.tile_rows}",
                f"-DFUSED_HALO={self.halo}")

    def traffic(self, depth: int | None = None) -> float:
        """The memory traffic of a step over one pass through memory's (U and V read and written
        once): a launch reads the region it needs and writes the tile, once for `depth` steps."""
        depth = depth or self.depth
        read = (self.tile_rows + 2 * depth) * (self.tile_cols + 2 * depth) / (self.tile_rows * self.tile_cols)
        return (read + 1) / (2 * depth)

    def recomputed(self, depth: int | None = None) -> float:
        """Cells a launch computes over the cells it advances (tile x depth): 1 + the halo's share."""
        depth = depth or self.depth
        computed = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in
                       (self.computed(s, depth) for s in range(1, depth + 1)))
        return computed / (depth * self.tile_rows * self.tile_cols)


#: The `multistep` formulation's default shape: `gs-course tune --apply-best` writes the diff that sets it
#: to the fastest of its sweep on the GPU host (results/h200/multistep-sweep.json).
BLOCKING = Blocking(tile_cols=112, tile_rows=80, halo=8, depth=8, threads=(256, 4))


def launch_depths(steps: int, depth: int) -> list[int]:
    """The steps of each launch that advances `steps`: full launches of `depth`, then the rest."""
    full, rest = divmod(steps, depth)
    return [depth] * full + ([rest] if rest else [])


def strip_of(first: int, end: int, threads: int, thread: int) -> tuple[int, int]:
    """Rows [first, end) shared by `threads` threads in strips of equal length (the last shorter):
    the strip of thread number `thread`, empty where the rows run out."""
    length = -(-(end - first) // threads)
    start = first + thread * length
    return min(start, end), min(start + length, end)


def window_cells(rows: int, cols: int, grid_rows: np.ndarray, grid_cols: np.ndarray) -> np.ndarray:
    """How many cells of each window lie in the grid, for the grid's row and column indices given
    (both inside the grid)."""
    per_row = 3 - (grid_rows == 0) - (grid_rows == rows - 1)
    per_col = 3 - (grid_cols == 0) - (grid_cols == cols - 1)
    return np.outer(per_row, per_col).astype(np.float32)


def emulate_launch(u: np.ndarray, v: np.ndarray, params: Parameters, blocking: Blocking, depth: int):
    """(u, v) after one launch of `depth` steps, computed block by block as the kernel does, in
    float32: each region loaded with zeros outside the grid, each step on the region it computes,
    row sums then window sums, and only the tile written back."""
    rows, cols = u.shape
    out = np.empty((2, rows, cols), np.float32)
    region_rows, region_cols = blocking.region
    blocks_x, blocks_y = blocking.grid(rows, cols)
    for block_col, block_row in itertools.product(range(blocks_x), range(blocks_y)):
        top, left = blocking.origin(block_col, block_row)
        grid_rows, grid_cols = np.arange(top, top + region_rows), np.arange(left, left + region_cols)
        in_rows = (grid_rows >= 0) & (grid_rows < rows)
        in_cols = (grid_cols >= 0) & (grid_cols < cols)
        region = np.zeros((2, region_rows, region_cols), np.float32)
        region[np.ix_([0, 1], in_rows, in_cols)] = np.stack((u, v))[:, grid_rows[in_rows]][:, :, grid_cols[in_cols]]
        for step in range(1, depth + 1):
            r0, r1, c0, c1 = blocking.computed(step, depth)
            row_sums = region[:, :, c0 - 1 : c1 - 1] + region[:, :, c0:c1] + region[:, :, c0 + 1 : c1 + 1]
            window = row_sums[:, r0 - 1 : r1 - 1] + row_sums[:, r0:r1] + row_sums[:, r0 + 1 : r1 + 1]
            inside = np.outer(in_rows[r0:r1], in_cols[c0:c1])
            counts = window_cells(rows, cols, np.clip(grid_rows[r0:r1], 0, rows - 1),
                                  np.clip(grid_cols[c0:c1], 0, cols - 1))
            centre = region[:, r0:r1, c0:c1]
            new = np.stack(updated(*centre, *(window - counts * centre), params)).astype(np.float32)
            region = region.copy()  # the kernel writes the other buffer
            region[:, r0:r1, c0:c1] = np.where(inside, new, 0)  # cells outside the grid stay absent
        r0, r1, c0, c1 = blocking.computed(depth, depth)
        tile = np.ix_([0, 1], np.arange(r0, r1)[in_rows[r0:r1]], np.arange(c0, c1)[in_cols[c0:c1]])
        out[np.ix_([0, 1], grid_rows[r0:r1][in_rows[r0:r1]], grid_cols[c0:c1][in_cols[c0:c1]])] = region[tile]
    return out[0], out[1]


def emulate(u: np.ndarray, v: np.ndarray, params: Parameters, blocking: Blocking, steps: int):
    """(u, v) after `steps` steps in the launches `launch_depths` gives."""
    u, v = np.asarray(u, np.float32), np.asarray(v, np.float32)
    for depth in launch_depths(steps, blocking.depth):
        u, v = emulate_launch(u, v, params, blocking, depth)
    return u, v
