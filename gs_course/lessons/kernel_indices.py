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


def step_names(code: str, rows: int, cols: int, at=None, loops: bool = True) -> dict:
    """The step kernel's integers for every cell (`at` None: arrays of the grid's shape) or for the
    cell `at` = (row, col), with the int locals the code computes from them; a for loop's variables at
    their start (one value the loop takes), or left out (`loops` False: an index that holds whatever
    the loop's iteration)."""
    row, col = np.indices((rows, cols)) if at is None else at
    names = {"row": row, "col": col, "cell": row * cols + col, "rows": rows, "cols": cols}
    skipped = set() if loops else set(_LOOP_VARIABLE.findall(code))  # for (int dr = 0; ...): 0 at the start only
    for name, value in _int_locals(code):
        if name not in names and name not in skipped and (found := evaluate(value, names)) is not None:
            names[name] = found
    return names


#: An int variable declared in a for loop's header, for (int dr = 0; ...): its value changes at every iteration.
_LOOP_VARIABLE = re.compile(r"\bfor\s*\(\s*(?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t)\s+(\w+)\s*=")


def _int_locals(code: str) -> list[tuple[str, str]]:
    """(name, its expression as written) of each int local the code declares with a value."""
    return re.findall(r"\b(?:const\s+)?(?:unsigned\s+)?(?:int|long|size_t)\s+(\w+)\s*=\s*([^;,{}]+);", code)


def _expanded(index: str, code: str) -> str:
    """`index` with the int locals it uses replaced by their expressions (as written), those of
    theirs too: what the index is made of (threadIdx, blockIdx, row...)."""
    values = {name: f"({value.strip()})" for name, value in _int_locals(code)}
    for _ in range(5):
        index = re.sub(r"\b\w+\b", lambda word: values.get(word[0], word[0]), index)
    return index


def block_left_out(body: str) -> str | None:
    """The hint where an index of u, v, u_next or v_next is made of threadIdx without blockIdx (and
    without row, col or cell, which hold it): the thread's place in its block only, so every block's
    threads read or write the first block's cells, and the other cells are never written."""
    code = without_comments(body)
    for array, index in re.findall(r"\b(u_next|v_next|u|v)\s*\[([^\[\]]*)\]", code):
        made_of = _expanded(index, code)
        if "threadIdx" in made_of and not re.search(r"\bblockIdx\b|\b(?:row|col|cell)\b", made_of):
            written = array.endswith("_next")
            return (f"your kernel {'writes' if written else 'reads'} {array}[{_spelt(index)}], an index made of threadIdx "
                    "alone: the thread's place in its block, the same in every block, so every block "
                    f"{'writes' if written else 'reads'} the first block's cells"
                    f"{' and the other cells are never written' if written else ''}. The cell's index adds the block's "
                    f"offset (blockIdx * blockDim): {array}[cell] ({_CELL})")
    return None


def reads_own_cell(body: str, rows: int, cols: int) -> str | None:
    """The read of u or v at the cell itself (u[row * cols + col], u[cell]) that a += of the code adds,
    an index that does not change with the window's loop (its variables left out, not taken at their
    start: u[(row + dr) * cols + col + dc] with for (int dr = 0; ...) is not the cell): None where there is none."""
    code = without_comments(body)
    names = step_names(code, rows, cols, loops=False)
    for added in re.findall(r"\b\w+\s*\+=([^;]*);", code):
        for array, index in re.findall(r"\b(u|v)\s*\[([^\[\]]*)\]", added):
            k = evaluate(index, names)
            if k is not None and np.array_equal(np.broadcast_to(k, names["cell"].shape), names["cell"]):
                return f"{array}[{_spelt(index)}]"
    return None


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
        at = tuple(int(i) for i in np.argwhere(differs)[0])
        read = _read_outside_at(code, (array,), differs.shape, at, where)
        if read is None:
            count = int(differs.sum())
            read = f"{array} outside the array at {count} cell{'s' * (count > 1)}, the first {at}{where}"
        return (f"your kernel reads {read}: its value changes nothing (multiplied by 0?), but multiplying by 0 does not "
                "make an out-of-bounds read safe: on a GPU it may fault, or read a NaN (0 * NaN is NaN). Guard the read "
                "itself with a condition, so that no index leaves its array")
    return None


def _read_outside_at(code: str, arrays, shape, at: tuple, where: str = "") -> str | None:
    """"u[index] outside u at cell `at`, past its end (index k)": the first read of one of `arrays`
    whose index, evaluated at the cell `at` of a grid of `shape`, is outside the array; else None."""
    rows, cols = shape
    names = step_names(code, rows, cols, at)
    for array in arrays:
        for index in re.findall(rf"\b{array}\s*\[([^\[\]]*)\]", code):
            k = evaluate(index, names)
            if isinstance(k, (int, np.integer)) and not 0 <= k < rows * cols:
                side = "past its end" if k >= rows * cols else "before its start"
                return f"{array}[{_spelt(index)}] outside {array} at cell {at}{where}, {side} (index {int(k)})"
    return None


def computed_nan(body: str, got, refilled, where: str = "") -> str | None:
    """The hint where the step's outputs hold NaN at cells that also hold NaN when the outputs start
    as 0 (`refilled`, the same step run so): the kernel wrote a NaN there, no cell left unwritten (the
    checker's NaN marks those). Most often a read outside the arrays, whose memory holds anything;
    named by its index where the C's arithmetic gives one outside the array at that cell."""
    written = np.zeros(np.shape(got[0]), bool)
    for a, b in zip(got, refilled):
        written |= np.isnan(a) & np.isnan(b)
    if not written.any():
        return None
    at, count = tuple(int(i) for i in np.argwhere(written)[0]), int(written.sum())
    nan = f"your kernel computes NaN at {count} cell{'s' * (count > 1)} (it writes them: not cells left unwritten)"
    read = _read_outside_at(without_comments(body), ("u", "v"), written.shape, at, where)
    if read:
        return (f"{nan}: it reads {read}. What lies outside an array is anything (a NaN here; on a GPU the read may "
                "fault), and multiplying it by 0 leaves a NaN a NaN. Keep every index inside its array")
    return (f"{nan}, the first at {at}{where}: most often a read outside the arrays, whose memory holds anything (a NaN "
            "here), or a 0 / 0. Keep every index inside its array, the window inside the grid")


def read_outside_everywhere(body: str, shape) -> str | None:
    """The hint where a read of u or v has an index outside its array at every cell of a grid of
    `shape` (u[cell + rows * cols * 64]): no condition can make that read right, whatever values the
    memory there gave this run (a far read reaches past the checker's guard zones, unwatched)."""
    code = without_comments(body)
    names = step_names(code, *shape)
    for array, index in re.findall(r"\b(u|v)\s*\[([^\[\]]*)\]", code):
        k = evaluate(index, names)
        if k is not None and np.all((np.asarray(k) < 0) | (np.asarray(k) >= shape[0] * shape[1])):
            side = "past its end" if np.all(np.asarray(k) >= 0) else "before its start"
            return (f"your kernel reads {array}[{_spelt(index)}] outside {array} at every cell, {side}: what lies there "
                    "is anything (this run's values hid it; another gives a NaN, or a fault on a GPU). Keep every index "
                    "inside its array")
    return None
