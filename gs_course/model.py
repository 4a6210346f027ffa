"""The school's Gray-Scott model in plain NumPy: the reference every backend is checked against.

Written for clarity, not speed: the Laplacian is the literal sum over the 3 x 3 window of
w * (u[n] - u[i, j]), with neighbours outside the grid left out (no wrap-around, no ghost value).
"""

from __future__ import annotations

import numpy as np

from .parameters import STENCIL, Parameters

#: The school's initial block needs at least this many rows and columns to be non-empty.
MIN_SIZE = 16

#: How far (absolute, on U and V in [0, 1]) a float32 backend may land from the float64 reference
#: after a few hundred steps. Evaluating the model in float32 moves the state by about 1e-6 over
#: 300 steps (tests/test_backends.py keeps that below PARITY_ATOL / 10); backends also sum the
#: window in other orders. A wrong model (dt on one term only, a wrapped border) lands more than
#: 1e4 x PARITY_ATOL away (tested too): the tolerance tells right from wrong.
PARITY_ATOL = 2e-5


class GridError(ValueError):
    """A grid size the model cannot use."""


def check_grid(rows: int, cols: int) -> None:
    """Reject sizes that are not integers or too small for the school's initial block."""
    for name, value in (("rows", rows), ("columns", cols)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise GridError(f"{name} must be an integer, got {value!r}")
        if value < MIN_SIZE:
            raise GridError(
                f"{name} must be at least {MIN_SIZE} (the initial block sits at 7/16 to 8/16 of "
                f"each axis), got {value}"
            )


def seed_block(rows: int, cols: int) -> tuple[slice, slice]:
    """Rows [7R/16 - 4, 8R/16 - 4) and columns [7C/16, 8C/16), integer division, as the school's code."""
    return (
        slice(7 * rows // 16 - 4, 8 * rows // 16 - 4),
        slice(7 * cols // 16, 8 * cols // 16),
    )


def initial_state(rows: int, cols: int, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """U = 1, V = 0 everywhere except the seed block, where U = 0, V = 1."""
    check_grid(rows, cols)
    u = np.ones((rows, cols), dtype=dtype)
    v = np.zeros((rows, cols), dtype=dtype)
    block = seed_block(rows, cols)
    u[block] = 0
    v[block] = 1
    return u, v


def _overlap(offset: int, size: int) -> tuple[slice, slice]:
    """(cells, their neighbours at `offset`) along one axis, both inside the grid."""
    return slice(max(0, -offset), size - max(0, offset)), slice(max(0, offset), size + min(0, offset))


def laplacian(a: np.ndarray, weights: np.ndarray = STENCIL) -> np.ndarray:
    """sum over the 3 x 3 window of w * (a[n] - a[i, j]), neighbours outside the grid left out."""
    out = np.zeros_like(a)
    rows, cols = a.shape
    for (di, dj), w in np.ndenumerate(weights):
        cell_rows, nb_rows = _overlap(di - 1, rows)
        cell_cols, nb_cols = _overlap(dj - 1, cols)
        out[cell_rows, cell_cols] += w * (a[nb_rows, nb_cols] - a[cell_rows, cell_cols])
    return out


def window_counts(rows: int, cols: int, dtype=np.float32) -> np.ndarray:
    """How many cells of each cell's 3 x 3 window lie inside the grid (9 inside, 6 on edges, 4 in corners).

    Fast formulations use L(a) = (window sum of a, zero outside) - counts * a, which equals the
    reference's sum of w * (a[n] - a) for the all-ones stencil.
    """
    per_row, per_col = window_count_factors(rows, cols, dtype)
    return per_row * per_col


def window_count_factors(rows: int, cols: int, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """window_counts as a column (rows x 1) and a row (1 x cols) whose product it is: a kernel
    that multiplies them reads rows + cols numbers instead of rows x cols."""
    per_row = np.full((rows, 1), 3, dtype=dtype)
    per_row[[0, -1]] = 2
    per_col = np.full((1, cols), 3, dtype=dtype)
    per_col[:, [0, -1]] = 2
    return per_row, per_col


def updated(u, v, lap_u, lap_v, p: Parameters):
    """(u, v) one explicit Euler step later, given their Laplacians, as two fresh arrays of any
    NumPy-like library; dt multiplies every term."""
    uvv = u * v * v
    du = p.du * lap_u - uvv + p.feed * (1 - u)
    dv = p.dv * lap_v + uvv - (p.feed + p.kill) * v
    return u + p.dt * du, v + p.dt * dv


def reference_step(u: np.ndarray, v: np.ndarray, p: Parameters) -> tuple[np.ndarray, np.ndarray]:
    """One explicit Euler step of the model, in the dtype of u and v."""
    return updated(u, v, laplacian(u), laplacian(v), p)


def reference_run(
    rows: int, cols: int, steps: int, p: Parameters, dtype=np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """(U, V) after `steps` steps from the school's initial state, evaluated in `dtype`."""
    u, v = initial_state(rows, cols, dtype)
    for _ in range(steps):
        u, v = reference_step(u, v, p)
    return u, v
