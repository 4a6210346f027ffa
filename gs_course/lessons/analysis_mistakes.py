"""Mistakes of tutorial 4's array exercises that `gs_course.lessons.analysis_check` names by
recomputing them once an answer is known to be wrong (the deciles' are in `decile_mistakes`): a
similarity divided by other norms than the images' or rounded to float16 or its product of the
wrong orientation, a mass without a few rows or columns, values read at a flat index of the wrong
row length or coordinates split from one by it; and what a Python loop runs over, from how many
times its lines ran (over the bins and over the images both make loops, each with its own cost),
the student's code read with the code nested in it.
"""

from __future__ import annotations

import collections
import contextlib
import re
import sys

import numpy as np

from .check_core import NotYet
from .legate_check import nested_codes

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


def cells_left_out(got: np.ndarray, images: np.ndarray) -> str | None:
    """The hint where `got` is each image's mass without a few of its first or last rows or columns (a slice
    images[:, 1:, :] that skips the first row): which ones, whose sum alone the distance does not name."""
    rows, cols = images.shape[1:]
    for cut in ((top, bottom, left, right) for top in range(3) for bottom in range(3) for left in range(3)
                for right in range(3)):
        kept = images[:, cut[0]:rows - cut[1], cut[2]:cols - cut[3]].sum(axis=(1, 2), dtype=np.float64)
        if any(cut) and np.allclose(got, kept, rtol=1e-5, atol=1e-6):
            named = [f"{side} {f'{count} ' if count > 1 else ''}{axis}{'s' * (count > 1)}"
                     for count, side, axis in zip(cut, ("first", "last") * 2, ("row", "row", "column", "column")) if count]
            said = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
            return f"your masses leave out each image's {said}: sum all of its cells, axis=(1, 2)"
    return None


def flat_row_length(values: np.ndarray, image: np.ndarray, coordinates: np.ndarray) -> str | None:
    """The hint where `values` are the flat image at row * length + col with another length than a row's
    (image.shape[0], the number of rows): the row length named, whose values the coordinates do not show."""
    flat = image.ravel()

    def read(length: int) -> bool:  # CuPy wraps an index past the end around (NumPy raises: no values then)
        index = coordinates[:, 0] * length + coordinates[:, 1]
        return values.shape == index.shape and np.array_equal(values, flat[index % flat.size])

    length = _other_length(read, image.shape)
    return None if length is None else flat_index_hint(length, image.shape[0])


def shifted_read(values: np.ndarray, image: np.ndarray, coordinates: np.ndarray) -> str | None:
    """The hint where `values` are V a row or a column beside the coordinates (image[rows, cols + 1]), read as
    CuPy reads past an edge, wrapped around to the other side (NumPy raises there instead, and says so)."""
    rows, cols = (coordinates[:, i] for i in (0, 1))
    for (down, right), where in (((0, 1), "a column to the right of"), ((0, -1), "a column to the left of"),
                                 ((1, 0), "a row below"), ((-1, 0), "a row above")):
        beside = image[(rows + down) % image.shape[0], (cols + right) % image.shape[1]]
        if values.shape == beside.shape and np.array_equal(values, beside):
            return (f"your values are V {where} your coordinates (CuPy wraps an index past the image's edge around to "
                    "its other side): read the cells themselves, image[rows, cols]")
    return None


def flat_split(coordinates: np.ndarray, image: np.ndarray, mask: np.ndarray) -> str | None:
    """The hint where `coordinates` are the flat indices of the mask's cells split into (row, col) by another row length
    than a row's (idx // rows, idx % rows): the flat index of `flat_row_length` read the other way, the length named,
    where "not in row-major order" would send the student to the order of cells that are not the ones found."""
    index = np.flatnonzero(mask)
    if coordinates.shape != (index.size, 2) or not index.size:
        return None
    rows, cols = image.shape
    right = (np.array_equal(coordinates[:, 0], index // cols), np.array_equal(coordinates[:, 1], index % cols))
    # A length of 1 splits nothing (idx // 1 is the flat index itself, idx % 1 zeros): a frame's idx beside its columns
    # is no split, and would name one where the IndexError is another mistake's.
    by_row = _other_length(lambda length: length > 1 and np.array_equal(coordinates[:, 0], index // length), image.shape)
    by_col = _other_length(lambda length: length > 1 and np.array_equal(coordinates[:, 1], index % length), image.shape)
    if not (right[0] or by_row) or not (right[1] or by_col) or not (by_row or by_col):
        return None
    part, length, written = (("", by_row, f"idx // {by_row}, idx % {by_row}") if by_row == by_col else
                             ("into rows ", by_row, f"idx // {by_row}") if by_row else ("into columns ", by_col, f"idx % {by_col}"))
    return (f"your coordinates: your flat index is split {part}by a row length of {_length_said(length, rows)} "
            f"({written}): {_ROW_HOLDS}, so the flat index idx is the cell (idx // image.shape[1], "
            "idx % image.shape[1]), as xp.unravel_index(idx, image.shape) gives it (or xp.argwhere(image > threshold))")


def _other_length(matches, shape: tuple[int, int]) -> int | None:
    """The first row length other than a row's (shape[1]), up to past twice the image's longer side, that `matches`."""
    return next((length for length in range(1, 2 * max(shape) + 2) if length != shape[1] and matches(length)), None)


def _length_said(length: int, rows: int) -> str:
    return "image.shape[0], the number of rows" if length == rows else str(length)


#: Why a flat index's row length is the number of columns, as every hint on a flat index says it.
_ROW_HOLDS = "in image.ravel() a row holds image.shape[1] cells (the number of columns)"


def flat_index_hint(length: int | None, rows: int) -> str:
    """The hint for a flat index of rows `length` long (None: unknown, it went past the image's end)."""
    said = "goes past the image's end" if length is None else f"takes a row length of {_length_said(length, rows)}"
    return (f"your values: your flat index {said}: {_ROW_HOLDS}, so the cell (row, col) is row * image.shape[1] + col, "
            "or index with the two arrays, image[rows, cols]")


@contextlib.contextmanager
def split_named(student, image: np.ndarray, mask: np.ndarray):
    """An IndexError in the student's bright_cells named as `flat_split` names it where coordinates in the student's
    frame (an (n, 2) array, or two 1-D arrays side by side) are a flat index split by another row length: indexing the
    image with them went past its edge before the checker could see them, and the error alone reads as (col, row)."""
    try:
        yield
    except IndexError as err:
        hint = next(filter(None, (flat_split(c, image, mask) for c in _coordinates_in(err.__traceback__, student))), None)
        if hint is None:
            raise
        raise NotYet(f"{hint} ({err})") from None


def _coordinates_in(traceback, student) -> list[np.ndarray]:
    """The candidate coordinates among the local arrays of the student's frames in `traceback` (on the host)."""
    codes, found = set(nested_codes(student)), []
    while traceback is not None:
        if traceback.tb_frame.f_code in codes:
            values = [_host(value) for value in traceback.tb_frame.f_locals.values()]
            values += [_host(part) for value in traceback.tb_frame.f_locals.values()
                       if isinstance(value, tuple) and len(value) == 2 for part in value]
            arrays = [a for a in values if a is not None and np.issubdtype(a.dtype, np.integer)]
            found += [a for a in arrays if a.ndim == 2 and a.shape[1:] == (2,)]
            columns = [a for a in arrays if a.ndim == 1]
            found += [np.stack(pair, axis=1) for pair in zip(columns, columns[1:]) if pair[0].shape == pair[1].shape]
        traceback = traceback.tb_next
    return found


def _host(value) -> np.ndarray | None:
    """`value` as a NumPy array where it is a NumPy or CuPy array (.get()), else None."""
    if isinstance(value, np.ndarray):
        return value
    return value.get() if hasattr(value, "__cuda_array_interface__") and hasattr(value, "get") else None


def wrong_products(shape: tuple[int, int, int]) -> tuple:
    """The (error, pattern, hint) of a similarity's product of the wrong orientation, for `_their_errors` ahead of the
    norms' own: its division by the images' norms (images x images) fails to broadcast, and the product's shape in the
    message tells it from norms of the wrong shape, which the student would otherwise be sent to fix although right.
    The Gram matrix of the cells (rows.T @ rows, cells x cells), or each image by its own transpose (images, r, r)."""
    count, rows, cols = shape
    cells = rows * cols
    return ((ValueError, rf"could not be broadcast.*\({cells}, ?{cells}\)",
             f"your product is a {cells} x {cells} Gram matrix of the cells (rows.T @ rows: each cell against each cell), "
             "not of the images (images x images): with one image a row, the product is rows @ rows.T"),
            (ValueError, rf"could not be broadcast.*\({count}, ?({rows}, ?{rows}|{cols}, ?{cols})\)",
             "your product multiplies each image by its own transpose, one matrix an image, not the images together: "
             "with one image a row, rows = images.reshape(len(images), -1), the product is rows @ rows.T"))


def half_operand(got: np.ndarray, want: np.ndarray, rows: np.ndarray) -> str | None:
    """The hint where the similarity `got` went through float16 on the way: an operand of the product, the
    images, the product itself (a GEMM in float16 rounds its result) or the similarity, cast back to float32
    after. Such a result is off `want` by more than float32's rounding gives at the checker's sizes (a float16
    product by 2e-4, past the checker's tolerance), and nearer (by half) to the same computation in float16.
    The distance alone does not tell them apart: a GEMM that sums the products in one sequence (as a GPU's may)
    with norms taken apart (xp.linalg.norm, which the hints suggest) is off by up to 3e-6 in float32, a
    float16 operand by 5e-6 and more."""
    error = float(np.abs(got - want).max())
    if error <= _FLOAT32_SIMILARITY:
        return None
    half = rows.astype(np.float16).astype(np.float64)
    own = np.linalg.norm(rows, axis=1)
    products = ((rows, half, False, "one operand of the product is"), (half, rows, False, "one operand of the product is"),
                (half, half, False, "the images are"), (half, half, True, "the product (the Gram matrix) is"),
                (rows, rows, True, "the product (the Gram matrix) is"))
    candidates = [(cosine, said) for a, b, rounded, said in products
                  for product in ((a @ b.T).astype(np.float16).astype(np.float64) if rounded else a @ b.T,)
                  for cosine in (_cosine(product), product / np.outer(own, own))]
    candidates.append((want.astype(np.float16).astype(np.float64), "the similarity is"))
    # The nearest: a float16 product's values hardly tell whether its operands were float16 too (their rounding
    # moves it less than its own does), so it is named as the product either way.
    distance, named = min(((float(np.abs(got - cosine).max()), said) for cosine, said in candidates), key=lambda c: c[0])
    named = named if distance < error / 2 else None
    return named and (f"your similarity is off by up to {error:.1g}, more than float32's rounding gives "
                      f"({_FLOAT32_SIMILARITY:g}): {named} rounded to float16 (about 3 digits). Keep the images float32, "
                      "no .astype(np.float16)")


#: The distance past which a similarity may be float16's, not float32's rounding (float32's worst seen at the checker's
#: sizes: 3.3e-7 by NumPy's matmul, 1.2e-6 summed in one sequence, 3.3e-6 with norms taken apart; float16's least 4.9e-6).
_FLOAT32_SIMILARITY = 1.5e-6


def _cosine(gram: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.diagonal(gram))
    return gram / np.outer(norms, norms)


#: Integer types too narrow for the histograms' bin numbers (images x bins of them, 320 in the checker's batch).
NARROW_INDICES = ("int8", "uint8", "int16", "uint16")


def narrow_index_hint(dtype: str, count: int, bins: int) -> str:
    """The line for bin numbers held in `dtype`, which wraps them around past its largest value."""
    return (f"your bin numbers wrapped around: {dtype} holds up to {np.iinfo(dtype).max}, and the bin numbers go up to "
            f"images x bins - 1 = {count * bins - 1}. Keep the index int64, .astype(np.int64)")


def wrapping_type(names: set[str], count: int, bins: int) -> str | None:
    """Of the integer types an answer names (xp.int8...), the narrowest signed one that cannot hold the
    largest bin number, images x bins - 1 (it wraps around to a negative one, which bincount refuses)."""
    return next((dtype for dtype in NARROW_INDICES if dtype in names and dtype.startswith("int")
                 and np.iinfo(dtype).max < count * bins - 1), None)


def narrow_in_place(count: int, bins: int) -> tuple:
    """(type, pattern, hint) of NumPy's and CuPy's error for the image offsets (int64) added in place to unsigned
    bin numbers: their same_kind rule will not put a signed sum into an unsigned integer (a signed one, int8 or
    int16, takes it: wrapped, told by narrow_index). The refusal is the mistake whatever the width, so the hint
    says so, and that the type is too small as well only where it is (uint8's 255 < images x bins - 1 = 319 in
    the checker's batch; uint16 holds 65535)."""
    largest = count * bins - 1

    def hint(message: str) -> str:
        dtype = re.search(r"to dtype\('(uint\d+)'\)", message)[1]
        said = "an 8- or 16-bit integer" if dtype in NARROW_INDICES else dtype
        small = (f", and {dtype} holds up to {np.iinfo(dtype).max} only, below the largest bin number, images x bins - 1 "
                 f"= {largest}" if np.iinfo(dtype).max < largest else "")
        return (f"your bin numbers are {said} ({message}): NumPy and CuPy will not add the int64 image offsets into "
                f"{dtype}, an unsigned integer, in place{small}. Make the bin numbers int64, .astype(np.int64)")
    return TypeError, r"[Cc]annot cast .*(int32|int64|float64)'?\)? to dtype\('uint(8|16|32|64)'\)", hint


def narrow_index(got: np.ndarray, binned: np.ndarray, bins: int) -> str | None:
    """The hint where the histograms `got` are those of bin numbers (`binned` plus each image's offset)
    wrapped around in an 8- or 16-bit integer: kept as they are (unsigned), taken modulo images x bins, or
    clipped at 0 (a negative number is no index for bincount)."""
    count = len(binned)
    index, total = binned + bins * np.arange(count)[:, None, None], count * bins
    for dtype in NARROW_INDICES:
        wrapped = index.astype(dtype).astype(np.int64)
        if np.array_equal(wrapped, index):
            continue
        for kept in (wrapped % total, np.maximum(wrapped, 0)):
            if np.array_equal(got, np.bincount(kept.ravel(), minlength=total)[:total].reshape(count, bins)):
                return narrow_index_hint(dtype, count, bins)
    return None


def loop_turns(student, call) -> int:
    """How many times the line of the student's code run most often ran while `call()` runs it (the
    turns of its busiest loop): traced in this thread only, the tracer before restored."""
    codes, counts = set(nested_codes(student)), collections.Counter()

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
