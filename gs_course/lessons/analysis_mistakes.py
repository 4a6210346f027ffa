"""Mistakes of tutorial 4's array exercises that `gs_course.lessons.analysis_check` names by
recomputing them once an answer is known to be wrong: the decile's index written another way, the
classes counted from 1, a similarity divided by other norms than the images'; and what a Python loop
runs over, from how many times its lines ran (over the bins and over the images both make loops,
each with its own cost), the student's code read with the code nested in it.
"""

from __future__ import annotations

import collections
import sys

import numpy as np

#: Other indices of the decile q among n sorted values than floor(q (n - 1)), as students write them.
_OTHER_INDICES = (
    (lambda q, n: np.floor(q * n - 1), "q n - 1"),
    (lambda q, n: np.floor(q * (n + 1)) - 1, "q (n + 1) - 1"),
    (lambda q, n: np.floor(q * (n + 1)), "q (n + 1)"),
    (lambda q, n: np.floor(q * (n - 1)) + 1, "floor(q (n - 1)) + 1"),
    (lambda q, n: np.floor(q * (n - 1)) - 1, "floor(q (n - 1)) - 1"),
)


def decile_index(edges: np.ndarray, ordered: np.ndarray, deciles: np.ndarray) -> str | None:
    """The hint where `edges` are the sorted values `ordered` at another index than floor(q (n - 1))."""
    n = ordered.size
    for index, written in _OTHER_INDICES:
        if np.array_equal(edges, ordered[np.clip(index(deciles, n).astype(np.int64), 0, n - 1)]):
            return (f"your edges are the sorted values at index {written}: with n values, from index 0 to n - 1, the "
                    "decile q is at index floor(q (n - 1))")
    return None


def class_shift(classes: np.ndarray, want: np.ndarray) -> str | None:
    """The hint where every class is one off the right one (a + 1 or - 1 after the search)."""
    for shift, said in ((1, "one too high, 1 to 10"), (-1, "one too low, -1 to 8")):
        if np.array_equal(classes, want + shift):
            return (f"your classes are {said}: a cell's class is the number of edges at or below it, 0 to 9, which "
                    "xp.searchsorted(edges, images, side='right') gives as it is")
    return None


def other_norms(got: np.ndarray, gram: np.ndarray, rows: np.ndarray) -> str | None:
    """The hint where `got` is the Gram matrix divided by norms[:, None] * norms[None, :] of other
    norms than the images' (read back from its diagonal): what they are, where they are a usual slip."""
    diagonal = np.diagonal(got).astype(np.float64)
    if not np.isfinite(got).all() or (diagonal <= 0).any():
        return None
    implied, norms = np.sqrt(np.diagonal(gram) / diagonal), np.sqrt(np.diagonal(gram))
    if np.allclose(implied, norms, rtol=1e-3) or not np.allclose(got, gram / np.outer(implied, implied), rtol=1e-4,
                                                                   atol=1e-6):
        return None
    named = ((np.sqrt(np.abs(rows.sum(axis=1))), "the square roots of each image's sum (of V, not of its squares)"),
             (np.abs(rows).max(axis=1), "each image's largest value"),
             (norms / np.sqrt(rows.shape[1]), "the root mean squares (the norms divided by the square root of the cells)"))
    what = next((said for other, said in named if np.allclose(implied, other, rtol=1e-3)), "not the images' norms")
    return (f"your norms are {what}: an image's norm is the square root of the sum of its squares, "
            "xp.sqrt(xp.diagonal(gram)) (or xp.linalg.norm(rows, axis=1))")


def own_codes(function) -> list:
    """The code objects of `function`, those nested in it (its comprehensions, its inner functions) included."""
    codes, pending = [], [getattr(function, "__code__", None)]
    while pending:
        code = pending.pop()
        if code is not None:
            codes.append(code)
            pending += [c for c in code.co_consts if hasattr(c, "co_code")]
    return codes


def loop_turns(student, call) -> int:
    """How many times the line of the student's code run most often ran while `call()` runs it (the
    turns of its busiest loop): traced in this thread only, the tracer before restored."""
    codes, counts = set(own_codes(student)), collections.Counter()

    def lines(frame, event, arg):
        if event == "line":
            counts[frame.f_code, frame.f_lineno] += 1
        return lines

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: lines if frame.f_code in codes else None)
    try:
        call()
    finally:
        sys.settrace(previous)
    return max(counts.values(), default=0)
