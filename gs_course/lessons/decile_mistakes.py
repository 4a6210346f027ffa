"""Why a deciles answer is wrong, named by recomputing from the same batch what each usual mistake
gives (`gs_course.lessons.analysis_check.deciles` knows by then that it is wrong): edges of values
sorted in pieces (along one axis: xp.sort's default is the last, each row apart) or of a piece of
the batch only, in descending order, the pieces' deciles averaged, interpolated, at another index, of the distinct values; classes
of a search with its arguments swapped, or one off. Each names the mistake, where a first
difference ("off at (0,)") or a shape would leave the student to find it.
"""

from __future__ import annotations

import numpy as np

from . import analysis
from .analysis_inputs import first_difference

_SORT_ALL = "sort all the batch's values together, xp.sort(images, axis=None) (or xp.sort(images.ravel()))"
_SEARCH = "xp.searchsorted(edges, images, side='right')"

#: How each binary search is called: the array it searches in (its position, its name), and the right call.
_SEARCHED_IN = {
    "searchsorted": (0, "a", "xp.searchsorted(a, v) searches in a, one sorted axis, for where each value of v goes",
                     f"the edges come first, {_SEARCH}"),
    "digitize": (1, "bins", "xp.digitize(x, bins) searches in bins, one sorted axis, for where each value of x goes",
                 "the edges go second, xp.digitize(images, edges)"),
}


def searched_in_a_batch(searches: list, images: np.ndarray) -> tuple:
    """(type, pattern, hint) of xp.searchsorted's or xp.digitize's error (NumPy's and CuPy's) where the array
    searched in has more than one axis. Two mistakes give it: the batch given where the edges go, or edges of
    more than one axis (deciles per image or per row: xp.sort sorts each row apart unless given axis=None).
    The hint tells them apart by the shape of the array searched in at the call that failed, the last of
    `searches` ((name, args, kwargs) of the student's calls, seen as they start); a call not seen there (a
    method, edges.searchsorted(images)) leaves the last one 1-D or none, and the hint names both."""
    def hint(message: str) -> str:
        name, args, kwargs = searches[-1] if searches else ("searchsorted", (), {})
        at, keyword, searches_in, right = _SEARCHED_IN[name]
        searched = kwargs[keyword] if keyword in kwargs else args[at] if len(args) > at else 0
        shape = tuple(searched.shape) if hasattr(searched, "shape") else np.shape(searched)
        said = f"{searches_in} ({message})"
        if len(shape) > 1 and shape[-1] == len(analysis.DECILES):
            return (f"{said}, and your edges have shape {shape}: "
                    f"{edges_shape(shape, images) or f'deciles of pieces of the batch: {_SORT_ALL}'}")
        if len(shape) > 1 and np.prod(shape) == images.size:
            return f"{said}: you gave it the batch to search in; {right}"
        return (f"{said}: either the batch went where the edges go ({right}), or your edges have more than one axis, "
                f"deciles per image or per row (xp.sort sorts each row apart unless given axis=None: {_SORT_ALL})")
    return ValueError, "object too deep for desired array", hint


def _at(n: int) -> np.ndarray:
    """The index of each decile among n sorted values, floor(q (n - 1))."""
    return np.floor(analysis.DECILES * (n - 1)).astype(int)


def _deciles_of(values: np.ndarray) -> np.ndarray:
    ordered = np.sort(values, axis=None)
    return ordered[_at(ordered.size)]


def edges_shape(shape: tuple, images: np.ndarray) -> str | None:
    """The hint where the edges have the shape of deciles taken per image or per row, else None."""
    if shape == (len(images), len(analysis.DECILES)):
        return "deciles per image: the deciles are of the whole batch, all its values sorted together"
    if shape == (*images.shape[:-1], len(analysis.DECILES)):
        return ("deciles per row: xp.sort sorts along the last axis (each row apart) unless given axis=None, and you "
                f"took each row's deciles: {_SORT_ALL}")
    return None


def _piece(edges: np.ndarray, images: np.ndarray) -> str | None:
    """The hint where `edges` are the deciles of one image only, or of one of its rows or columns (what
    an answer gives that sorted the batch in pieces, xp.sort's default each row apart, then read one)."""
    rows = "xp.sort(images) sorts each row apart (along the last axis) unless given axis=None"
    for axis, what, why in ((2, "image {0}'s row {1}", rows), (1, "image {0}'s column {1}", "a column sorted apart"),
                            (None, "image {0}", "the deciles are of the whole batch")):
        lines = np.moveaxis(images, 2, 1) if axis == 1 else images if axis == 2 else images.reshape(len(images), -1)
        ordered = np.sort(lines, axis=-1)
        same = (ordered[..., _at(ordered.shape[-1])] == edges).all(axis=-1)
        if same.any():
            where = np.argwhere(same)[0]
            return (f"your edges are the deciles of {what.format(*where)} only ({ordered.shape[-1]:,} of the batch's "
                    f"{images.size:,} values): {why}. {_SORT_ALL[0].upper()}{_SORT_ALL[1:]}")
    return None


def _pieces_combined(edges: np.ndarray, images: np.ndarray) -> str | None:
    """The hint where `edges` are the deciles of each image (or of each row), sorted apart, then averaged (or
    their median taken) into nine: near the batch's deciles, so that a first difference names no mistake, but
    not them: the deciles of the whole batch are those of all its values sorted together."""
    for lines, what in ((images.reshape(len(images), -1), "each image"), (images.reshape(-1, images.shape[-1]), "each row")):
        ordered = np.sort(lines, axis=-1)
        apart = ordered[:, _at(ordered.shape[-1])].astype(np.float64)
        for combine, said in ((np.mean, "averaged"), (np.median, "their median taken")):
            if np.allclose(edges, combine(apart, axis=0), rtol=1e-5, atol=0):
                return (f"your edges are the deciles of {what} apart, {said} over the {len(lines)}: the deciles of the "
                        f"batch are of all its values together, which no combination of the pieces' deciles gives. "
                        f"{_SORT_ALL[0].upper()}{_SORT_ALL[1:]}")
    return None


def edges_mistake(edges: np.ndarray, images: np.ndarray, want: np.ndarray) -> str:
    """The hint for edges of the right shape but not the batch's deciles `want`: the usual mistake
    whose edges they are, else where they first differ."""
    ordered = np.sort(images.ravel())
    n, at = ordered.size, _at(ordered.size)
    if np.array_equal(edges, ordered[::-1][at]):
        return "your values are sorted in descending order: xp.sort sorts in ascending order, take it as it is"
    if np.allclose(edges, np.percentile(images, 100 * analysis.DECILES)):
        return ("your edges are interpolated between two values (numpy.percentile's default): take the sorted values "
                "at index floor(q (n - 1))")
    if np.array_equal(edges, ordered[np.minimum((analysis.DECILES * n).astype(int), n - 1)]):
        return "index q n is one too far: with n values the last index is n - 1, so q (n - 1)"
    if np.array_equal(edges, images.ravel()[at]):
        return "your edges are taken from the values as they are: sort them first"
    if any(np.array_equal(edges, np.sort(images, axis=axis).ravel()[at]) for axis in (0, 1, 2)):
        return f"you sorted along one axis only, so the values are sorted in pieces: {_SORT_ALL}"
    if piece := _piece(edges, images):
        return piece
    if combined := _pieces_combined(edges, images):
        return combined
    if np.array_equal(edges, ordered[np.round(analysis.DECILES * (n - 1)).astype(int)]):
        return "your indices are rounded to the nearest: round down, floor(q (n - 1))"
    if np.array_equal(edges, ordered[np.ceil(analysis.DECILES * (n - 1)).astype(int)]):
        return "your indices are rounded up (ceil): round down, floor(q (n - 1))"
    distinct = np.unique(images)
    if np.array_equal(edges, _deciles_of(distinct)):
        return ("your edges are deciles of the distinct values (unique drops the repeats): sort all the values, repeats "
                "included, xp.sort(images.ravel())")
    if np.allclose(edges, np.percentile(images, analysis.DECILES, method="lower")):
        return "percentile takes percents, 10 to 90, not fractions: 100 * analysis.DECILES"
    if (np.diff(edges) < 0).any():  # read from values not sorted, in whatever way: no named one above
        return ("your edges are not in increasing order, as the deciles of sorted values are: take them from the "
                f"sorted values, {_SORT_ALL}")
    return decile_index(edges, ordered, analysis.DECILES) or first_difference(edges, want, "your edges")


def classes_shape(shape: tuple, images: np.ndarray) -> str:
    """The hint for classes of another shape than the images': one per edge is a search with its
    arguments swapped (the edges placed among the values)."""
    if shape == (len(analysis.DECILES),):
        return (f"your classes have one value per edge, {shape}: xp.searchsorted(a, v) gives where each value of v goes "
                f"in the sorted a, so yours placed the edges among the values. The edges come first, {_SEARCH}")
    return f"your classes have shape {shape}, expected one per cell, {images.shape}"


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
