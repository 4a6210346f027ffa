"""The Laplacians the checkers recognise as a mistake, each as the values it gives (float64, like
the reference) with the one line that names it: the border, the stencil, the window, the counts,
the sign. The step and time-loop checkers build on them (`check_model`)."""

from __future__ import annotations

import contextlib
import importlib
import itertools

import numpy as np

from ..model import laplacian as reference_laplacian, window_counts


def window_of(a: np.ndarray, mode: str, size: int = 3) -> np.ndarray:
    rows, cols = a.shape
    padded = np.pad(a, size // 2, mode=mode)
    return sum(padded[i : i + rows, j : j + cols] for i in range(size) for j in range(size))


#: Laplacians with the border handled otherwise than the model, and what each is.
BORDER_MISTAKES = (
    (lambda a: window_of(a, "constant") - 9 * a,
     "cells at the border have fewer neighbours: subtract each cell's own window count (model.window_counts: "
     "9 inside, 6 on an edge, 4 in a corner), not 9"),
    *((lambda a, mode=mode, counted=counted: window_of(a, mode) - (window_counts(*a.shape) if counted else 9) * a,
       hint) for mode, hint in (("wrap", "neighbours outside the grid are wrapped around from the other side "
                                         "(np.roll?): leave them out of the sum"),
                                ("edge", "neighbours outside the grid are copied from the edge: leave them out "
                                         "of the sum"))
      for counted in (False, True)),
)


def _nearest_four(a: np.ndarray) -> np.ndarray:
    """The sum of each cell's four nearest neighbours (no diagonals), those outside the grid left out."""
    padded = np.pad(a, 1)
    return padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]


_FIVE_POINT = ("it is the five-point stencil (the four nearest neighbours): the model sums over the 3 x 3 "
               "window, all eight neighbours, the diagonals included")


def _rolled_four(a: np.ndarray) -> np.ndarray:
    """The sum of each cell's four nearest neighbours, wrapped around at the border (np.roll)."""
    return sum(np.roll(a, shift, axis) for shift in (1, -1) for axis in (0, 1))


#: Laplacians of another stencil than the 3 x 3 window (the border left out, as the model's), and what each is.
STENCIL_MISTAKES = (
    *((lambda a, c=c: _nearest_four(a) - c(a) * a, _FIVE_POINT)  # each cell's own count of neighbours, or 4
      for c in (lambda a: _nearest_four(np.ones_like(a)), lambda a: 4)),
    (lambda a: _nearest_four(a) + a - window_counts(*a.shape) * a,
     "the window is the five-point cross (the cell and its four nearest neighbours): the model's is the 3 x 3 "
     "window, all nine cells, the diagonals included"),
    (lambda a: _rolled_four(a) - 4 * a,
     "it is the five-point stencil (the four nearest neighbours) and np.roll wraps around the border: the model "
     "sums over the 3 x 3 window, all eight neighbours, those outside the grid left out"),
    *((lambda a, c=c: window_of(a, "constant", 5) - c(a) * a,
       "the window is 5 x 5: the model's is 3 x 3 (cnp.ones((3, 3)), offsets range(3))")
      for c in (lambda a: window_counts(*a.shape), lambda a: window_of(np.ones_like(a), "constant", 5),
                lambda a: 25)),
)

INTEGER_HINT = ("an integer array truncates the values (between 0 and 1) to 0 (astype(int), an int dtype): keep the "
            "arrays float32")


RUNNING_SUM_HINT = ("a running sum (cumsum) in float32 rounds more with every cell it adds: accumulate it in "
                    "float64 (cumsum(..., dtype=np.float64)), or sum the nine slices")


def running_sum_probe(shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(a grid, the cells to compare there) that tells a Laplacian summed from a float32 running sum
    (a summed-area table) from one of nine slices, whatever order the library adds in: small integers
    with 2**24 in the corner. Every running total holds the corner, so a float32 one rounds away odd
    units; the nine slices' sums, away from the corner's window, are exact in float32."""
    grid = np.random.default_rng(0).integers(0, 4, shape).astype(np.float32)
    grid[0, 0] = 2.0**24
    away = np.ones(shape, bool)
    away[:2, :2] = False
    return grid, away


def laplacian_mistakes(a: np.ndarray):
    yield from ((wrong(a), hint) for wrong, hint in (*BORDER_MISTAKES, *STENCIL_MISTAKES))
    window_sum, counts = window_of(a, "constant"), window_counts(*a.shape)
    yield window_sum, "it is the window sum: subtract counts * a (each cell's count times its value)"
    yield window_sum / counts - a, "it is the window's mean minus a (window_sum / counts): window_sum - counts * a"
    rows, cols = a.shape
    one = np.pad(a, 1)
    yield (sum(one[i : i + rows, j : j + cols] for i in (0, 2) for j in (0, 2)) - counts * a,
           "the window sums its four corners only (offsets 0 and 2): the 3 x 3 window's offsets are range(3) both ways")
    for first, two in itertools.product((0, 1), ((0, 1), (1, 0))):  # two offsets along one axis: rows, then columns
        offsets = [(first, first + 1) if axis else range(3) for axis in two]
        yield (sum(one[i : i + rows, j : j + cols] for i in offsets[0] for j in offsets[1]) - counts * a,
               "the window is 2 x 3 (window[:2]?): convolve with the whole 3 x 3 window, cnp.ones((3, 3))" if two[0] else
               "the window is 3 x 2, two columns (offsets range(2) for the columns, or a (3, 2) window): the window is "
               "3 x 3, offsets range(3) both ways (cnp.ones((3, 3)) for a convolution)")
    yield window_sum - counts, "it subtracts the counts alone: subtract counts * a (each cell's count times its value)"
    yield (window_sum - a - counts * a, "the window leaves the centre out (the eight neighbours, or a window whose "
           "centre is 0), yet counts * a counts it: each cell is off by its own value. Sum the whole 3 x 3 window, "
           "centre included")
    yield (window_sum / 9 - counts * a, "the window's weights are 1/9 (a mean, ones / 9): the window sum weighs every "
           "cell 1, a window of ones((3, 3))")
    for first, rows_first in itertools.product(((0, 0), (1, 1)), (True, False)):  # the first slice, the order
        in_a_view = np.pad(a, 1)
        view = in_a_view[first[0] : first[0] + rows, first[1] : first[1] + cols]
        for i, j in itertools.product(range(3), range(3)):
            if (i, j) != first:
                i, j = (i, j) if rows_first else (j, i)
                view += in_a_view[i : i + rows, j : j + cols]
        yield (view - counts * a, "the sum is added in place into a slice of the padded array (s = padded[...]; "
               "s += ...): that slice is a view, so the later slices read cells it has already changed. Start from a "
               "new array: padded[...].copy(), or sum(...) of the nine slices")
    yield window_sum - a, "it subtracts a once: subtract counts * a, the cell's value once per cell of its window"
    for eight in (8, counts - 1):
        yield (window_sum - eight * a, "the window sum includes the cell itself: subtract counts * a (9 inside, 6 on "
               "an edge, 4 in a corner), the cell's own value counted")
    yield -reference_laplacian(a), "the sign is reversed: sum (neighbour - cell), not (cell - neighbour)"
    yield (window_sum + counts * a, "the sign of counts * a is reversed: subtract it, window_sum - counts * a (each cell's "
           "count times its value)")
    yield (window_sum - 9 * a - counts * a, "the window's centre is -8 (the Laplacian's stencil, which subtracts the cell "
           "already) and counts * a subtracts it again: the cell is counted twice. Use a window of ones, then subtract "
           "counts * a (or the stencil alone, whose border counts are wrong)")
    rows, cols = a.shape
    counted = window_counts(rows, cols) * a
    one = np.pad(a, 1)
    yield (sum(one[i : i + rows, j : j + cols] for i in range(2) for j in range(2)) - counted,
           "the window is 2 x 2 (range(2)): the 3 x 3 window's offsets are range(3) in both directions")
    wide = np.pad(a, 2)
    yield (sum(wide[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - counted,
           "the grid is padded by 2, which shifts the window by a cell: pad by 1, pad(a, 1)")
    yield (np.convolve(a.ravel(), np.ones(9), "same").reshape(a.shape) - window_counts(*a.shape) * a,
           "it is a 1-D convolution of the flattened grid (a.ravel()): it sums 9 cells along a row, not the 3 x 3 "
           "window around each cell; convolve the 2-D grid with the 2-D window")


_PAD_MODULES = {"numpy": "numpy", "cupy": "cupy", "cupynumeric": "cupynumeric", "jax": "jax.numpy"}


@contextlib.contextmanager
def pads_recorded(library: str | None):
    """The pad widths of every `pad` the student's code calls from its library meanwhile (yielded
    list, each as ((before, after) of the rows, (before, after) of the columns)): the slices of a
    grid padded along one axis only fail to line up, which an error's shapes alone would blame on
    a slice."""
    module = importlib.import_module(_PAD_MODULES.get(library or "numpy", "numpy"))
    original, widths = getattr(module, "pad", None), []
    if original is None:
        yield widths
        return

    def recorded(array, pad_width, *args, **kwargs):
        with contextlib.suppress(Exception):  # a width NumPy cannot read is the library's to refuse
            widths.append(tuple(map(tuple, np.broadcast_to(np.asarray(pad_width), (2, 2)).tolist())))
        return original(array, pad_width, *args, **kwargs)

    module.pad = recorded
    try:
        yield widths
    finally:
        module.pad = original


def one_axis_padded(widths: list) -> str | None:
    """The line for a grid padded along one axis only (by all the pads of `pads_recorded` together:
    one pad a side may pad the rows, another the columns); None otherwise."""
    rows = max((max(r) for r, _ in widths), default=0)
    cols = max((max(c) for _, c in widths), default=0)
    if (rows == 0) == (cols == 0):
        return None
    axis, width = ("columns", cols) if rows == 0 else ("rows", rows)
    return (f"your padding pads the {axis} only (pad width {widths[-1]}){f', by {width}' if width != 1 else ''}: the "
            "window reaches one cell past both axes, so pad both by 1, pad(a, 1)")


def intermediates(a: np.ndarray):
    """(value, factor, what) of the Laplacian's intermediates a student may round to a half precision
    on the way (`gs_course.lessons.rounding`): the window sum (a padded grid cast), counts * a, the grid a
    as the operand of that product alone (counts * a.astype(...)), the result."""
    yield window_of(a, "constant"), 1.0, "the window sum (the padded grid?)"
    yield window_counts(*a.shape) * a, -1.0, "counts * a"
    yield a, -window_counts(*a.shape), "the grid a in counts * a"
    yield reference_laplacian(a), 1.0, "the Laplacian"


def _weights_text(weights: np.ndarray) -> str:
    """The weights row by row (the row above first), whole numbers as such: "1 1 1 / 1 -8 1 / 1 1 1"."""
    def number(w: float) -> str:
        return str(int(round(w))) if abs(w - round(w)) < 1e-4 else f"{w:.3g}"
    return " / ".join(" ".join(number(w) for w in row) for row in weights)


def stencil_hint(laplacian, a: np.ndarray, got: np.ndarray) -> str | None:
    """What the student's Laplacian does with a cell's neighbours, shown as its weights, where that is not the
    model's: `laplacian` (a NumPy grid to a float64 NumPy grid) run on a single 1 in a grid of zeros gives its
    stencil, which must also give its result `got` on `a` away from the border (else it is no stencil: a clip,
    a value of its own, and None). A shifted window, a slice typed twice, a weight of its own all show there,
    where its distance from the reference names nothing."""
    rows, cols = a.shape
    if min(rows, cols) < 9:
        return None
    impulse = np.zeros(a.shape, np.float32)
    impulse[rows // 2, cols // 2] = 1
    response = laplacian(impulse)
    around = (slice(rows // 2 - 2, rows // 2 + 3), slice(cols // 2 - 2, cols // 2 + 3))
    rest = response.copy()
    rest[around] = 0
    if not np.isfinite(response).all() or np.abs(rest).max() > 1e-4:
        return None
    weights = response[around][::-1, ::-1]  # weights[2 + dr, 2 + dc]: what the cell at (row + dr, col + dc) adds
    predicted = sum(weights[2 + dr, 2 + dc] * np.roll(a, (-dr, -dc), axis=(0, 1))
                    for dr in range(-2, 3) for dc in range(-2, 3))
    inner = (slice(2, -2), slice(2, -2))
    model = np.zeros((5, 5))
    model[1:4, 1:4], model[2, 2] = 1, -8
    if not np.allclose(predicted[inner], got[inner], rtol=0, atol=1e-4) or np.allclose(weights, model, rtol=0, atol=1e-4):
        return None
    shown = weights[1:4, 1:4] if np.abs(weights[[0, -1], :]).max() + np.abs(weights[:, [0, -1]]).max() < 1e-4 else weights
    hint = (f"your Laplacian's stencil is not the model's: a cell gets {_weights_text(shown)} from itself and its "
            f"neighbours (row above first), the model's is 1 1 1 / 1 -8 1 / 1 1 1")
    window = np.round(weights + 9 * (np.arange(25).reshape(5, 5) == 12), 4)  # the window sum alone, counts put back
    ones = np.argwhere(window == 1)
    if len(ones) == 9 and not (window != 0).sum() - 9 and np.ptp(ones, axis=0).tolist() == [2, 2]:
        dr, dc = (ones.mean(axis=0) - 2).astype(int)
        hint += (f": your window is centred {abs(dr)} row(s) {'below' if dr > 0 else 'above'} and " if dr else ": your window is centred ")
        hint += (f"{abs(dc)} column(s) to the {'right' if dc > 0 else 'left'} of the cell" if dc else "on the cell's own column")
        hint += ", its nine slices of the array padded by 1 are padded[i : i + rows, j : j + cols], i and j in range(3)"
    return hint
