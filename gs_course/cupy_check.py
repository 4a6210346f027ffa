"""Checkers for the CuPy tutorial's lessons on the launch of a kernel, beside gs_course.check's.

`strip_launch` checks the arithmetic of a launch configuration anywhere (it is plain Python), then,
where CuPy finds a GPU, runs the course's strip kernel with it against the reference.
"""

from __future__ import annotations

import numpy as np

from .check import PARAMS, NotYet, _grid, compare, ok
from .model import reference_step

#: (rows, cols, threads of a block along columns and rows, cells each thread walks down): the
#: school's grid, the small one, and shapes that no block size divides.
LAUNCH_CASES = (
    (1080, 1920, (128, 2), 8),
    (135, 240, (32, 8), 4),
    (77, 103, (64, 4), 3),
    (17, 1000, (32, 16), 16),
)


def _blocks(n: int, per_block: int) -> int:
    """Blocks of `per_block` cells that cover n cells: the division rounded up."""
    return -(-n // per_block)


def _as_pair(value, what: str) -> tuple[int, int]:
    try:
        pair = tuple(int(x) for x in value)
    except (TypeError, ValueError):
        pair = ()
    if len(pair) != 2:
        raise NotYet(f"your {what} is {value!r}: give two whole numbers, along columns (x) then along rows (y)")
    return pair


def _launch_hint(rows: int, cols: int, block: tuple[int, int], strip_rows: int, got) -> str | None:
    """What is wrong with `got`, the (grid, block) of the strip kernel on rows x cols; None if right."""
    if not isinstance(got, tuple) or len(got) != 2 or not all(hasattr(part, "__len__") for part in got):
        return f"return a pair (grid, block), each two numbers; got {got!r}"
    grid, got_block = _as_pair(got[0], "grid"), _as_pair(got[1], "block")
    if got_block != block:
        return f"your block is {got_block}: a block's threads are given ({block}), return them unchanged"
    want = (_blocks(cols, block[0]), _blocks(rows, block[1] * strip_rows))
    if grid == want:
        return None
    where = f"on {rows} x {cols} with blocks of {block[0]} x {block[1]} threads, {strip_rows} rows each"
    if grid == want[::-1]:
        return f"your grid {grid} has x and y swapped ({where}): x counts blocks along the columns, y along the rows"
    if grid[1] == _blocks(rows, block[1]) and strip_rows > 1:
        return (f"your grid {grid} launches a thread for every row ({where}): each thread walks down "
                f"{strip_rows} rows, so a block covers block[1] x strip_rows rows")
    covered = (grid[0] * block[0], grid[1] * block[1] * strip_rows)
    for axis, n, per_block, covers in ((0, cols, block[0], "columns"), (1, rows, block[1] * strip_rows, "rows")):
        if covered[axis] < n:
            return (f"your grid {grid} covers {covered[axis]} of the {n} {covers} ({where}): round the "
                    f"division up, -(-{n} // {per_block}) = {want[axis]} blocks")
    return (f"your grid {grid} launches blocks that lie wholly outside the domain ({where}): "
            f"{want} blocks cover it")


def strip_launch(student) -> None:
    """`student(rows, cols, block, strip_rows)` must return (grid, block) for gs_course's strip
    kernel: `block` unchanged, `grid` the blocks along columns and along rows that cover the
    domain, a block covering block[0] columns and block[1] x strip_rows rows."""
    from .backends import probe

    rng = np.random.default_rng()
    odd = (*_grid(rng), (int(rng.choice([32, 64, 128])), int(rng.choice([1, 2, 4]))), int(rng.integers(2, 9)))
    for rows, cols, block, strip_rows in (*LAUNCH_CASES, odd):
        hint = _launch_hint(rows, cols, block, strip_rows, student(rows, cols, block, strip_rows))
        if hint:
            raise NotYet(hint)
    done = f"launch configuration: right on {len(LAUNCH_CASES) + 1} grids"
    found = probe("cupy")
    if not found.ok:
        ok(f"{done} (the strip kernel runs with it only on an NVIDIA GPU: {found.reason})")
        return
    import cupy

    from .backends.cupy_backend import scalars, strip_kernel

    rows, cols, block, strip_rows = odd
    u, v = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    u_next, v_next = (cupy.full((rows, cols), np.nan, np.float32) for _ in range(2))  # unwritten cells show
    grid, _ = student(rows, cols, block, strip_rows)
    strip_kernel(strip_rows)(tuple(int(n) for n in grid), block,
                             (cupy.asarray(u), cupy.asarray(v), u_next, v_next, *scalars(PARAMS, rows, cols)))
    want = reference_step(u.astype(np.float64), v.astype(np.float64), PARAMS)
    for name, got, w in zip("uv", (u_next, v_next), want):
        compare(cupy.asnumpy(got), w.astype(np.float32), f"{name}_next of the strip kernel with your launch", 1e-5)
    ok(f"{done}; the strip kernel launched with it computed every cell of a {rows} x {cols} step")
