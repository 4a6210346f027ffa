"""A Python loop over the grid's rows or columns, told from the whole-array answers by what it grows
with: the student's function runs on a grid, then on one with more rows and one with more columns,
and a line of the student's code that runs more often with them is a loop over those rows or columns
(one turn each, however short its body). A loop over the window's nine offsets, a roll, a padded
array run as many lines on any grid. JAX's checkers compare traced programs instead
(`jax_programs.not_unrolled`).
"""

from __future__ import annotations

import ast
import linecache
import sys
from collections import Counter

import numpy as np

from .check_core import NotYet, _a_librarys, _call, _library

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
    if notebook is None or _a_librarys(notebook):
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


def step_grows(student, device_type, to_device, shape, params, steps: int | None = None) -> None:
    """`grows_with_the_grid` for a step `student(u, v, params)`, or with `steps` for a time loop
    `student(u, v, params, steps)` (a loop over the rows inside the loop over the steps)."""
    rng = np.random.default_rng()
    what, more = ("your step", ()) if steps is None else ("your time loop", (steps,))

    def run(grid, lines):
        u, v = (to_device(rng.random(grid, dtype=np.float32)) for _ in range(2))
        _call(student, (u, v, params, *more), device_type, what, (), grid[0] * grid[1] * (steps or 1), lines)  # lines a step

    grows_with_the_grid(student, run, shape, what, "step", _library(device_type))


def _their_cell() -> str:
    """The source of the notebook cell that called the checker ("" where none): the first frame outward
    whose code is a cell's (IPython keeps each cell's source in linecache, under a file name of its own;
    the harness, under "<exercise answer>"), not a module's."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<") or "ipykernel" in name:
            return "".join(linecache.getlines(name))
        frame = frame.f_back
    return ""


def _over_the_pair(iterables) -> bool:
    """Whether every iterable is written out, (u0, v0): one copy an array, as the exercise's."""
    return bool(iterables) and all(isinstance(it, (ast.Tuple, ast.List)) for it in iterables)


#: Calls that go through an array element by element or row by row.
_ONE_BY_ONE = {"map", "filter", "tolist", "from_iterable", "chain"}


def copied_in_a_loop(library: str) -> None:
    """The copy exercise's arrays made by a Python loop in the student's cell (a for, a while, a
    comprehension, map, a list of the values): one copy a row (or a cell), where one call copies it whole."""
    source = _their_cell()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with a magic: not read
        return
    for node in ast.walk(tree):
        called = isinstance(node, ast.Call) and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
        iterables = ([node.iter] if isinstance(node, ast.For) else [g.iter for g in getattr(node, "generators", [])]
                     + (node.args[1:] if called in ("map", "filter") else []))
        if _over_the_pair(iterables):
            continue
        if isinstance(node, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp, ast.SetComp)) or called in _ONE_BY_ONE:
            line = source.splitlines()[node.lineno - 1].strip()
            raise NotYet(f"right values, but made by a Python loop (line {node.lineno} of your cell: {line[:80]}): each "
                         f"turn is a copy of its own, thousands at full size. Copy each whole array once, {library}.asarray(u0)")
