"""One launch for all the steps: the geometry of CuPy's `persistent` kernel
(`gray_scott_persistent` in persistent.cu), in plain Python so that it is tested without a GPU.

Temporal blocking (temporal_blocking.py) still crosses memory once a launch and recomputes a halo
every launch. A persistent kernel goes further: ONE launch runs every step of an advance, each
block owning a fixed tile of the grid for the whole launch and keeping it on chip (in shared
memory, with a ring of `halo` cells around it: its *region*). Blocks share only their tiles'
borders: every `depth` <= `halo` steps, each block writes the cells of its tile within `halo` of
the tile's edge to global memory, all blocks wait at a grid-wide barrier
(`cooperative_groups::this_grid().sync()`), then each reads its ring from its neighbours' cells.
Between two exchanges a block advances its region as the fused kernel does, one cell narrower on
every side each step, so that its tile is exact at the exchange. Cells outside the grid are zero
in shared memory and never computed, as in the school's model.

A grid barrier only works if every block of the launch is resident at once (a *cooperative*
launch, which CUDA refuses otherwise): the grid has at most as many blocks as the GPU can hold
(one an SM here), so the tiles are as large as the grid divided by the SMs, and the whole state
must fit in the SMs' shared memory. The course grid (1080 x 1920, U and V: 16.6 MB) does on an
H200 (132 SMs x 227 KB); a grid that does not is run by `multistep` instead.

The region has one copy in shared memory (two would not fit for the course grid), updated in
place: each thread walks down a strip of `strip` rows of one column, row sums in registers, in
chunks of `chunk` rows with a barrier of the block between two chunks, so that no row is
overwritten before every thread that needs its old value has read it (persistent.cu says when).
"""

from __future__ import annotations

import dataclasses
import math

from .temporal_blocking import MAX_SHARED_BYTES

#: U and V, one copy each, float32.
ON_CHIP_BYTES_PER_CELL = 2 * 4
#: The most threads a block may have.
MAX_THREADS = 1024
#: The default ring: 2 steps between two grid barriers, the fastest of the H200's sweep of rings
#: 2, 4 and 8 (results/h200/logs/persistent-sweep.txt: 240 ms, 246 with 4, 248 with 8).
HALO = 2


@dataclasses.dataclass(frozen=True)
class PersistentOptions:
    """What a person chooses of the persistent kernel: the ring of halo cells, the steps between
    two exchanges of borders (1 to halo; the halo by default), and the rows a thread computes
    between two barriers of its block; the tiles follow from the grid and the GPU."""

    halo: int = HALO
    depth: int | None = None
    chunk: int = 8

    def __post_init__(self):
        if min(self.halo, self.chunk) < 1 or not 1 <= (self.halo if self.depth is None else self.depth) <= self.halo:
            raise ValueError(f"persistent: a ring of at least 1 cell, chunks of at least 1 row, and an exchange "
                             f"every 1 to halo steps, not halo {self.halo}, depth {self.depth}, chunk {self.chunk}")


class NotOnChip(ValueError):
    """A grid whose tiles cannot stay on chip; the message says why, in one line."""


@dataclasses.dataclass(frozen=True)
class OnChip:
    """The persistent kernel's shape: a tile of `tile_rows` x `tile_cols` cells a block, a ring of
    `halo` cells, `depth` steps (1 to `halo`) between two exchanges of borders, `strip` rows of a
    column a thread computes, `chunk` of them between two barriers of its block (a compile-time
    constant of the kernel: their new values wait in registers)."""

    tile_rows: int
    tile_cols: int
    halo: int = HALO
    depth: int | None = None
    strip: int = 16
    chunk: int = 8

    def __post_init__(self):
        object.__setattr__(self, "depth", self.halo if self.depth is None else self.depth)
        if min(self.tile_rows, self.tile_cols, self.strip, self.chunk) < 1 or not 1 <= self.depth <= self.halo:
            raise ValueError(f"{self}: tiles, strips and chunks of at least one cell, and an exchange every 1 to halo "
                             f"steps (a ring of {self.halo}), not {self.depth}")

    @property
    def region(self) -> tuple[int, int]:
        """(rows, cols) of a block's region: its tile and the ring around it."""
        return self.tile_rows + 2 * self.halo, self.tile_cols + 2 * self.halo

    @property
    def shared_bytes(self) -> int:
        return math.prod(self.region) * ON_CHIP_BYTES_PER_CELL

    @property
    def threads(self) -> int:
        """One thread per strip: the region's columns but the outermost two, times the strips
        that cover its rows but the outermost two."""
        rows, cols = self.region
        return (cols - 2) * -(-(rows - 2) // self.strip)

    def grid(self, rows: int, cols: int) -> tuple[int, int]:
        """Blocks (along columns, rows) whose tiles cover a rows x cols grid."""
        return -(-cols // self.tile_cols), -(-rows // self.tile_rows)

    def compile_options(self) -> tuple[str, ...]:
        return f"-DPERSISTENT_CHUNK={self.chunk}", f"-DPERSISTENT_THREADS={self.threads}"

    def check_fits(self, rows: int, cols: int, max_shared: int = MAX_SHARED_BYTES,
                   resident_blocks: int | None = None) -> None:
        """Raise NotOnChip unless each block of a rows x cols grid has its region in shared memory
        (`max_shared` bytes a block at most) and at most MAX_THREADS threads, and (where
        `resident_blocks` is given) the GPU holds all the blocks at once."""
        blocks_x, blocks_y = self.grid(rows, cols)
        tiled = f"a {rows} x {cols} grid in tiles of {self.tile_rows} x {self.tile_cols}"
        if self.shared_bytes > max_shared:
            raise NotOnChip(f"{tiled} needs {self.shared_bytes:,} bytes of shared memory a block, more than the "
                            f"{max_shared:,} a block may have")
        if self.threads > MAX_THREADS:
            raise NotOnChip(f"{tiled} with strips of {self.strip} rows needs {self.threads} threads a block, more "
                            f"than {MAX_THREADS}")
        if resident_blocks is not None and blocks_x * blocks_y > resident_blocks:
            raise NotOnChip(f"{tiled} needs {blocks_x * blocks_y} blocks resident at once, more than the "
                            f"{resident_blocks} the GPU can hold")

    @classmethod
    def for_grid(cls, rows: int, cols: int, blocks: int, halo: int = HALO, depth: int | None = None,
                 max_shared: int = MAX_SHARED_BYTES, max_threads: int = MAX_THREADS) -> OnChip:
        """The tiles of a rows x cols grid with at most `blocks` blocks: the smallest largest tile
        (the blocks run side by side, the largest sets the time), of the shortest perimeter among
        equals (fewer cells to exchange); strips as short as `max_threads` threads a block allow.
        NotOnChip where that tiling does not fit."""
        tilings = set()
        for blocks_y in range(1, min(blocks, rows) + 1):
            tile_rows = -(-rows // blocks_y)
            tile_cols = -(-cols // min(blocks // blocks_y, cols))
            tilings.add((tile_rows * tile_cols, tile_rows + tile_cols, tile_rows, tile_cols))
        _, _, tile_rows, tile_cols = min(tilings)
        region_rows = tile_rows + 2 * halo
        strip = -(-(region_rows - 2) // max(1, max_threads // (tile_cols + 2 * halo - 2)))
        tiles = cls(tile_rows, tile_cols, halo, depth, strip)
        tiles.check_fits(rows, cols, max_shared, blocks)
        return tiles
