"""A Python loop over the grid's rows or columns, told from the whole-array answers by what it grows
with: the student's function runs on a grid, then on one with more rows and one with more columns,
and a line of the student's code that runs more often with them is a loop over those rows or columns
(one turn each, however short its body). A loop over the window's nine offsets, a roll, a padded
array run as many lines on any grid. JAX's checkers compare traced programs instead
(`jax_programs.not_unrolled`).
"""

from __future__ import annotations

import linecache
from collections import Counter

import numpy as np

from .check_core import NotYet, _call, _library

#: Rows (then columns) added to the grid: a loop over them turns this many times more.
MORE = 64
#: A line run this many times more on the larger grid is inside a loop over its rows or columns
#: (a loop that takes rows up to sixteen at a time too); a cached function's loop, run once a grid, is not
#: counted (the larger grid runs again, its caches filled, where a line grew).
GROWS = 4

#: The whole-array technique each exercise asks for instead, by what it is.
INSTEAD = {
    "laplacian": "Compute whole arrays at once: the nine slices of the padded array, padded[i : i + rows, j : j + cols] "
                 "(or np.roll), each a single operation on the whole grid",
    "convolve": "The exercise is one cnp.convolve of the whole 2-D grid with the 3 x 3 window, cnp.convolve(a, window, "
                "mode=\"same\") - counts * a, not one 1-D convolution per row or column",
    "step": "Compute whole arrays at once: your laplacian on the whole grid (its nine slices of the padded array), "
            "the update on whole arrays",
}


def _launches(library: str | None) -> str:
    return {"cupynumeric": "Legate tasks of its own",
            "cupy": "kernel launches of its own"}.get(library or "", "GPU launches of its own (kernels in CuPy, tasks "
                                                                     "in cuPyNumeric)")


def _where(code, line: int, notebook: dict) -> str:
    source = linecache.getline(code.co_filename, line, notebook).strip()
    return f"line {line} of your cell, in {code.co_name}" + (f", '{source[:100]}'" if source else "")


def grows_with_the_grid(student, run, shape: tuple[int, int], what: str, instead: str, library: str | None) -> None:
    """`run(shape, lines)` calls `student` (through `check_core._call`, `lines` given) on arrays of
    `shape`; where a line of the student's code runs `GROWS` or more times more often on a grid of
    `MORE` more rows (or columns), the hint that names that loop (the outermost, where they nest).
    `instead`: a key of `INSTEAD`."""
    notebook = getattr(student, "__globals__", None)
    if notebook is None or str(notebook.get("__name__", "")).startswith(f"{__package__.split('.')[0]}."):
        return  # the course's own function (a kernel's launch, checked as a step): its loops are the course's
    rows, cols = shape  # the grid the checker ran last: its caches are filled
    base = Counter()
    run((rows, cols), base)
    for axis, larger in (("rows", (rows + MORE, cols)), ("columns", (rows, cols + MORE))):
        for _ in range(2):  # again where it grew, its caches filled: a loop run once a grid (a cached function's) is not
            grown = Counter()
            run(larger, grown)
            growth = {key: count - base[key] for key, count in grown.items() if count - base[key] >= GROWS}
            if not growth:
                break
        if growth:  # the outer loop's line, where loops nest: it grows the least
            (code, line), _ = min(growth.items(), key=lambda item: (item[1], item[0][1]))
            raise NotYet(f"{what} runs a Python loop over the grid's {axis} ({_where(code, line, notebook)}, run "
                         f"{base[code, line]} times on {rows} x {cols}, {grown[code, line]} on {larger[0]} x "
                         f"{larger[1]}): each turn is {_launches(library)}, thousands a run at full size. "
                         + INSTEAD[instead])


def laplacian_grows(student, device_type, to_device, shape, hints, instead: str = "laplacian") -> None:
    """`grows_with_the_grid` for a Laplacian `student(a)`."""
    rng = np.random.default_rng()

    def run(grid, lines):
        a = to_device(rng.random(grid, dtype=np.float32))
        _call(student, (a,), device_type, "your Laplacian", hints, grid[0] * grid[1], lines)

    grows_with_the_grid(student, run, shape, "your Laplacian", instead, _library(device_type))


def step_grows(student, device_type, to_device, shape, params) -> None:
    """`grows_with_the_grid` for a step `student(u, v, params)`."""
    rng = np.random.default_rng()

    def run(grid, lines):
        u, v = (to_device(rng.random(grid, dtype=np.float32)) for _ in range(2))
        _call(student, (u, v, params), device_type, "your step", (), grid[0] * grid[1], lines)

    grows_with_the_grid(student, run, shape, "your step", "step", _library(device_type))
