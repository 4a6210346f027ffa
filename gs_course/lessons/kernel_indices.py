"""The indices of a student's CUDA C kernel, read from its C once its values are known to be wrong
(or its reads outside an array have shown): the cell a histogram's loop reads at every iteration,
the index a step kernel writes its outputs at, the border cells it leaves unwritten, and the index
of a read outside an array whose value changed nothing (multiplied by 0), which a run with other
values around the arrays shows (`cuda_on_cpu`'s guard zones, `cupy_check`'s guarded buffers).

An index is evaluated where it is plain arithmetic of the kernel's integers (row, col, cell, rows,
cols and the int locals computed from them, CUDA's min and max of them); anything else is left
unread, never guessed.
"""

from __future__ import annotations

import re

import numpy as np

#: An index's arithmetic: names, whole numbers, + - * / %, parentheses and CUDA's min and max, nothing else.
_ARITHMETIC = re.compile(r"^[\w\s+\-*/%(),]+$")
_CLAMPS = {"min": np.minimum, "max": np.maximum}
_CELL = "the cell (row, col) is row * cols + col, the kernel's cell"


def without_comments(body: str) -> str:
    """`body`, a kernel's C, without its comments (what the checkers read of it)."""
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", body, flags=re.S)


def _spelt(expression: str) -> str:
    return " ".join(expression.split())


def evaluate(expression: str, names: dict):
    """The value of a C index made of `names` (numbers or NumPy arrays of integers), else None."""
    text = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expression.strip())
    words = re.findall(r"[A-Za-z_]\w*", text)
    if not text or not _ARITHMETIC.match(text) or any(w not in names and w not in _CLAMPS for w in words) or \
            re.search(r"(?<!min|max)\s*\([^()]*,", text):  # a comma outside min(a, b) or max(a, b)
        return None
    try:
        value = eval(text.replace("/", "//"), {"__builtins__": {}}, {**_CLAMPS, **names})  # noqa: S307 (checked above)
    except Exception:  # noqa: BLE001 (an index this reading cannot follow is left unread)
        return None
    return None if isinstance(value, tuple) else value


def step_names(code: str, rows: int, cols: int, at=None) -> dict:
    """The step kernel's integers for every cell (`at` None: arrays of the grid's shape) or for the
    cell `at` = (row, col), with the int locals the code computes from them."""
    row, col = np.indices((rows, cols)) if at is None else at
    names = {"row": row, "col": col, "cell": row * cols + col, "rows": rows, "cols": cols}
    for name, value in re.findall(r"\b(?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t)\s+(\w+)\s*=\s*([^;,{}]+);", code):
        if name not in names and (found := evaluate(value, names)) is not None:
            names[name] = found
    return names


# --- A loop that reads one cell at every iteration ------------------------------------------------------

def _statement_after(code: str, at: int) -> str:
    """The statement (a block in braces, or up to its ;) that starts at `at`."""
    at += len(code[at:]) - len(code[at:].lstrip())
    if code[at:at + 1] != "{":
        return code[at:code.find(";", at) + 1 or None]
    depth = 0
    for end in range(at, len(code)):
        depth += {"{": 1, "}": -1}.get(code[end], 0)
        if depth == 0:
            return code[at:end + 1]
    return code[at:]


def same_cell_each_time(body: str, array: str = "image", count: str = "cells") -> str | None:
    """The hint where the loop over the `count` reads `array` at an index its variable is not in
    (image[first] at every iteration), else None."""
    code = without_comments(body)
    for loop in re.finditer(r"\bfor\s*\(\s*(?:[\w\s]+?\s)?(\w+)\s*=[^;]*;([^;]*);", code):
        variable = loop[1]
        if not re.search(rf"\b{count}\b", loop[2]):
            continue
        depth, end = 0, code.index("(", loop.start())
        for end in range(end, len(code)):
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            if depth == 0:
                break
        for read in re.finditer(rf"\b{array}\s*\[([^\[\]]*)\]", _statement_after(code, end + 1)):
            if not re.search(rf"\b{variable}\b", read[1]):
                index = _spelt(read[1])
                what = ", the thread's first cell," if index == "first" else ""
                return (f"every iteration of the loop over the {count} counts {array}[{index}]{what} again: {index} "
                        f"does not change with {variable}, so one cell is counted over and over. Count the "
                        f"iteration's own cell, {array}[{variable}]")
    return None


# --- Where a step kernel writes, and what it leaves unwritten -------------------------------------------

def written_elsewhere(code: str, rows: int, cols: int) -> str | None:
    """The hint where the code writes u_next or v_next at an index that is not the cell's (u_next[row]), also
    where it writes its own cell besides (u_next[min(cell + 1, ...)] = 0 first), else None."""
    code = without_comments(code)
    names = step_names(code, rows, cols)
    wrong: dict[str, list[str]] = {}
    own = set()  # the outputs also written at the cell's own index
    for output, index in re.findall(r"\b(u_next|v_next)\s*\[([^\[\]]*)\]\s*(?:[-+*/]?=(?!=)|\+\+|--)", code):
        k = evaluate(index, names)
        if k is not None and np.array_equal(np.broadcast_to(k, names["cell"].shape), names["cell"]):
            own.add(output)
        elif k is not None and output not in wrong.setdefault(_spelt(index), []):
            wrong[_spelt(index)].append(output)
    if not wrong:
        return None
    index, outputs = next(iter(wrong.items()))
    k = np.broadcast_to(evaluate(index, names), names["cell"].shape)
    cells, inside = rows * cols, k[(k >= 0) & (k < rows * cols)]
    what = {"row": "row is the cell's row, not its index", "col": "col is the cell's column, not its index"}.get(
        index, f"{index} is not the cell's index")
    outside = f"{what}: at some cells it points outside the arrays"
    if both := [o for o in outputs if o in own]:  # a race with the thread of that cell
        return (f"your kernel writes {' and '.join(f'{o}[{index}]' for o in both)}, another cell than its own, besides "
                f"{' and '.join(f'{o}[cell]' for o in both)}{f' ({outside})' if inside.size < k.size else ''}: that "
                "cell's thread writes it too (a race: which write lands last depends on the threads' order). Write the "
                "cell's own values only, at [cell]")
    if inside.size < k.size:
        detail = outside
    else:
        distinct = np.unique(inside).size
        detail = (f"{what}: {distinct:,} distinct indices for {cells:,} cells, so several threads write each of them "
                  f"and the other {cells - distinct:,} cells are never written" if distinct < cells else what)
    return (f"your kernel writes {' and '.join(f'{o}[{index}]' for o in outputs)}, another cell than its own ({detail}): "
            f"write {' and '.join(f'{o}[cell]' for o in outputs)} ({_CELL})")


def border_unwritten(code: str, got, want) -> str | None:
    """The hint where the cells left unwritten (NaN) are whole edges of the grid, every other cell
    right: the kernel returns early at the border, which the model computes too."""
    unwritten = np.isnan(got[0]) | np.isnan(got[1])
    rows, cols = unwritten.shape
    border = np.ones(unwritten.shape, bool)
    border[1:-1, 1:-1] = False
    if not unwritten.any() or (unwritten & ~border).any() or not all(
            np.allclose(g[~unwritten], w[~unwritten], rtol=1e-5, atol=1e-4) for g, w in zip(got, want)):
        return None
    edges = [name for name, line in (("first row", unwritten[0]), ("last row", unwritten[-1]),
                                     ("first column", unwritten[:, 0]), ("last column", unwritten[:, -1])) if line.all()]
    if not edges:
        return None
    which = "the border cells (the first and last rows and columns)" if len(edges) == 4 else \
        "the " + " and the ".join(edges)
    why = ", skipped by your return" if re.search(r"\breturn\b", code) else ""
    return (f"your kernel leaves {which} unwritten ({int(unwritten.sum())} cells{why}): the model computes them too, "
            "the window cut at the grid's edge (only the neighbours inside count, as with zero padding). Compute every "
            "cell: no early return; keep the window inside the grid, r from max(row - 1, 0) to min(row + 1, rows - 1), "
            "the same for columns")


# --- A read outside an array that its values did not show -----------------------------------------------

def unseen_read_outside(body: str, plain, probed: dict, where: str = "") -> str | None:
    """The hint where the outputs with NaN around one input array (`probed`: its name -> (u_next,
    v_next)) differ from those with the usual fill around it (`plain`): the kernel reads outside that
    array, though the value it read changed nothing (0.0f * v[cell + 1]). Else None."""
    code = without_comments(body)
    for array, outputs in probed.items():
        differs = np.zeros(np.shape(plain[0]), bool)
        for a, b in zip(plain, outputs):
            differs |= ~((a == b) | (np.isnan(a) & np.isnan(b)))
        if not differs.any():
            continue
        rows, cols = differs.shape
        at = tuple(int(i) for i in np.argwhere(differs)[0])
        names = step_names(code, rows, cols, at)
        for index in re.findall(rf"\b{array}\s*\[([^\[\]]*)\]", code):
            k = evaluate(index, names)
            if isinstance(k, (int, np.integer)) and not 0 <= k < rows * cols:
                side = "past its end" if k >= rows * cols else "before its start"
                read = f"{array}[{_spelt(index)}] outside {array} at cell {at}{where}, {side} (index {int(k)})"
                break
        else:
            count = int(differs.sum())
            read = f"{array} outside the array at {count} cell{'s' * (count > 1)}, the first {at}{where}"
        return (f"your kernel reads {read}: its value changes nothing (multiplied by 0?), but multiplying by 0 does not "
                "make an out-of-bounds read safe: on a GPU it may fault, or read a NaN (0 * NaN is NaN). Guard the read "
                "itself with a condition, so that no index leaves its array")
    return None
