"""CuPy's `persistent` kernel on the GPU: its compilation, whether a grid stays on chip here (the
blocks a cooperative launch may have, from CUDA's occupancy calculator), and its launch.
persistent_tiles.py explains the scheme; cupy_backend.CupyPersistent is the formulation.
"""

from __future__ import annotations

import dataclasses
import functools

import cupy
import numpy as np

from .cuda_source import GRAY_SCOTT_CU, PERSISTENT_CU
from .persistent_tiles import NotOnChip, OnChip, PersistentOptions  # noqa: F401 (NotOnChip, PersistentOptions: the formulation's)


def _max_shared() -> int:
    """The shared memory a block of the current GPU may ask for (227 KB on an H200)."""
    return cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]


@functools.cache
def persistent_kernel(options: tuple[str, ...]) -> cupy.RawKernel:
    """gray_scott_persistent compiled with `options` (OnChip.compile_options: the chunk and the
    threads), for a cooperative launch (CuPy then launches it with cuLaunchCooperativeKernel),
    allowed all the dynamic shared memory a block may have: every tiling of these options fits."""
    kernel = cupy.RawKernel(GRAY_SCOTT_CU + PERSISTENT_CU, "gray_scott_persistent", options=options,
                            enable_cooperative_groups=True)
    kernel.compile()
    kernel.max_dynamic_shared_size_bytes = _max_shared()  # over 48 KB needs asking
    return kernel


def resident_blocks(tiles: OnChip) -> int:
    """How many blocks of the kernel for `tiles` the GPU holds at once: what CUDA's occupancy
    calculator gives an SM for its threads, registers and shared memory, times the SMs."""
    kernel = persistent_kernel(tiles.compile_options())
    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, tiles.threads,
                                                                        tiles.shared_bytes)
    return per_sm * cupy.cuda.Device().attributes["MultiProcessorCount"]


def plan(rows: int, cols: int, options: PersistentOptions | OnChip = PersistentOptions()) -> OnChip:
    """The tiles of a rows x cols grid (OnChip.for_grid's, one block an SM) for the options chosen,
    or the tiles given (a test's, a sweep's), checked against what this GPU holds at once;
    NotOnChip, with the reason, where they do not fit."""
    attributes = cupy.cuda.Device().attributes
    if not attributes.get("CooperativeLaunch"):
        raise NotOnChip("this GPU cannot launch cooperative kernels")
    sms, max_shared = attributes["MultiProcessorCount"], _max_shared()
    if isinstance(options, OnChip):
        tiles = options
    else:
        tiles = dataclasses.replace(OnChip.for_grid(rows, cols, sms, options.halo, options.depth, max_shared=max_shared),
                                    chunk=options.chunk)
    tiles.check_fits(rows, cols, max_shared)  # before compiling for threads and shared memory it cannot have
    tiles.check_fits(rows, cols, max_shared, resident_blocks(tiles))
    return tiles


def launch_persistent(u, v, u_next, v_next, step_scalars: tuple, steps: int, tiles: OnChip) -> None:
    """Queue ONE cooperative launch of `steps` >= 1 steps from (u, v) to (u_next, v_next) on the
    current stream; (u, v) serve as a buffer of borders and no longer hold the state after it.
    `plan` has checked that the grid's blocks are resident at once (CuPy would shrink a 1-D grid
    that is not, with a warning, and refuse a 2-D one)."""
    kernel = persistent_kernel(tiles.compile_options())
    geometry = tuple(np.int32(n) for n in (steps, tiles.tile_rows, tiles.tile_cols, tiles.halo, tiles.depth,
                                           tiles.strip))
    kernel(tiles.grid(*u.shape), (tiles.threads,), (u, v, u_next, v_next, *step_scalars, *geometry),
           shared_mem=tiles.shared_bytes)
