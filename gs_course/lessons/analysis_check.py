"""Answer checkers for tutorial 4 (analysing a run's images): each runs the student's function on a
fresh random batch of images, compares with `gs_course.lessons.analysis`, and names the typical mistake
when the answer is wrong (raising `gs_course.lessons.checkers.NotYet`, as every checker of the course does).

The batches look like the run's: mostly background near 0, spots of 0.1 to 0.5, on odd,
non-square grids, with cells planted exactly on the values where the mistakes differ (the spot
threshold, the top edge of the histograms, ties in the deciles). The kernels' checkers need an
NVIDIA GPU: without one they say what they could not check, and the notebook runs on.
"""

from __future__ import annotations

import dis
import re

import numpy as np

from . import analysis
from .analysis_watch import edges_picked_one_by_one, loop_over, pairs_broadcast, values_by_mask
from .analysis_inputs import batch, close as _close, first_difference as _first_difference, oblong_image
from .analysis_mistakes import (cells_left_out, flat_index_hint, flat_row_length, flat_split,
                                half_operand, loop_turns, narrow_index, narrow_index_hint, narrow_in_place, other_norms,
                                shifted_read, split_named, wrapping_type, wrong_products)
from .histogram_mistakes import bin_major, moved_to_a_neighbour, whole_batch_in_one_row
from .decile_mistakes import class_shift, classes_shape, edges_mistake, edges_shape, searched_in_a_batch
from .analysis_calls import (called as _called, exercise, library_calls, names_used as _names_used,
                             returned as _returned, their_errors_of as _their_errors)
from .check_core import NotYet, _to_numpy, device_note, ok
from .legate_check import nested_codes
from .bitonic_check import bitonic_step  # noqa: F401 (the notebook's check.*)
from .kernel_check import histogram_kernel, spot_mass_kernel  # noqa: F401 (the notebook's check.*)


def _loops(student) -> bool:
    """Whether the student's function runs a Python loop (a `for` or a comprehension): one call, one
    kernel launch, per image instead of one over the batch."""
    return any(i.opname in ("FOR_ITER", "GET_ITER") for code in nested_codes(student) for i in dis.get_instructions(code))


def _no_loop(student, what: str, per: str = "image", again=None, watch: tuple | None = None, **turns: int) -> None:
    """A Python loop refused, named as the loop over the `per`s; with `again` (the student called once more)
    and `turns` (each loop's turns by name: image=5, bin=64), the one whose turns its lines ran nearest; with
    `watch` (arrays, other arguments), a loop of any spelling over the arrays' first axis (analysis_watch)."""
    if watch is not None and not _loops(student):
        loop_over(student, *watch, per=per, what=what)
    if _loops(student):
        if again is not None:
            ran = loop_turns(student, again)
            per = min(turns, key=lambda name: abs(turns[name] - ran))
        raise NotYet(f"right values, but from a Python loop over the {per}s, which makes one call (a kernel launch on a "
                     f"GPU) per {per}. {what}")


#: The widest count or index a batch of the course needs (the full grid's cells): int32 and wider hold it.
_WIDE_ENOUGH = np.iinfo(np.int32).max


def _narrow(dtype: np.dtype) -> bool:
    """Whether integers of `dtype` overflow on the course's full-size images (int8, uint8, int16...)."""
    return not np.issubdtype(dtype, np.integer) or np.iinfo(dtype).max < _WIDE_ENOUGH


# --- Exercise: the mass of each image ----------------------------------------------------------------

@exercise("mass(images)")
def mass(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the mass of V (sum over the cells) of each image, shape (images,)."""
    images = batch()
    while np.array_equal(images.max(axis=(1, 2)), images.astype(np.int64).sum(axis=(1, 2))):
        images = batch()  # each image's one V of 1 its largest: a max and a whole-number sum would read alike
    count, rows, cols = images.shape
    result = _called(student, (images,), to_device=to_device)
    got = _returned(result, "your masses", device_type)
    want = analysis.mass(images)
    if got.shape in ((rows,), (cols,)):
        raise NotYet(f"your result has shape {got.shape}: you summed over the images (axis 0) and one axis of the "
                     "image; sum over axes 1 and 2, each image's rows and columns")
    if got.shape == ():
        raise NotYet("one number for the whole batch: sum over each image's cells only (axis=(1, 2)), "
                     "one mass per image")
    if got.shape == (rows, cols):
        raise NotYet("your result has one value per cell: you summed over the images (axis 0); sum over "
                     "axes 1 and 2, each image's rows and columns")
    if got.shape in ((count, rows), (count, cols)):
        raise NotYet(f"your result has shape {got.shape}: you summed over one axis of the image only; "
                     "sum over both, axis=(1, 2)")
    if got.shape != want.shape:
        raise NotYet(f"your masses have shape {got.shape}, expected (images,) = {want.shape}")
    if _close(got, want / (rows * cols)):
        raise NotYet("that is the mean V of each image: the mass is the sum of V over the cells")
    if not got.any() and want.any():
        raise NotYet("your masses are all 0: nothing was summed, or V was made integers first (astype(int) turns "
                     "each V, between 0 and 1, into 0); sum V itself, in float64")
    # The largest V first: where each image's largest V is 1, its whole-number sum is that 1 too.
    for wrong, hint in ((images.max(axis=(1, 2)), "your masses are each image's largest V (max): the mass is the sum of "
                         "V over its cells, axis=(1, 2)"),
                        (images.astype(np.int64).sum(axis=(1, 2)), "your masses are sums of whole numbers: astype(int) "
                         "turns each V (between 0 and 1) into 0 before the sum; sum V itself, in float64"),
                        (images[:, 0, :].sum(axis=1), "your masses sum each image's first row only (images[:, 0, :]): "
                         "sum all of its cells, axis=(1, 2)"),
                        (images[:, :, 0].sum(axis=1), "your masses sum each image's first column only: sum all of its "
                         "cells, axis=(1, 2)"),
                        ((images.astype(np.float64) ** 2).sum(axis=(1, 2)), "your masses sum V squared (a norm squared, "
                         "an energy): the mass sums V itself over the cells, axis=(1, 2)")):
        if not _close(got, want, rtol=1e-2) and _close(got, np.asarray(wrong, np.float64), rtol=1e-4):
            raise NotYet(hint)
    if not _close(got, want) and (left_out := cells_left_out(got, images)):
        raise NotYet(left_out)
    if not _close(got, want, rtol=1e-2):  # near enough for float16's digits: its dtype is then named
        raise NotYet(_first_difference(got, want, "your mass"))
    in_float64 = not type(result).__module__.startswith("jax")  # JAX: float64 needs x64
    if got.dtype != np.float64 and in_float64:
        raise NotYet(f"your masses are {got.dtype}: sum in float64 (dtype=np.float64), as a float32 running sum "
                     "of millions of cells loses digits")
    if not _close(got, want):
        raise NotYet(_first_difference(got, want, "your mass"))
    if in_float64 and not np.allclose(got, want, rtol=1e-12, atol=0):  # float32's last digit: 1e-7
        raise NotYet("your masses are float64 but were summed in float32, then converted (they are off in the 7th "
                     "digit): sum in float64, images.sum(axis=(1, 2), dtype=np.float64)")
    _no_loop(student, "Sum over axes 1 and 2 of the whole batch in one call: images.sum(axis=(1, 2), ...)",
             watch=((images,), ()))
    ok(f"mass: one per image, right on {count} random images of {rows} x {cols}" + device_note(student, device_type))


# --- Exercise: histograms of each image ---------------------------------------------------------------

@exercise("histograms(images, bins)")
def histograms(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images, bins)` must return each image's histogram of V over [0, 1], counts of shape
    (images, bins), a value of 1 in the last bin (as numpy.histogram counts it)."""
    images = batch()
    # A 1 in every image but the last: an unclipped bin of 1 then spills into the next image's
    # first bin (shown as such), and a bincount without minlength comes out short every time.
    images[-1][images[-1] == 1.0] = 0.25
    images[:-1, 0, 0] = 1.0
    count, rows, cols = images.shape
    bins = analysis.BINS
    narrow = wrapping_type(_names_used(student), count, bins)  # xp.int8: a bin number wrapped to a negative one
    wrapped = [(ValueError, "negative", narrow_index_hint(narrow, count, bins))] if narrow else []
    with _their_errors(
            *wrapped, narrow_in_place(count, bins),
            (ValueError, "could not be broadcast", "the offsets do not broadcast against the batch ({message}): "
             "make them a column of shape (images, 1, 1), (xp.arange(images) * bins)[:, None, None]"),
            (TypeError, "positional argument", "histograms is called as histograms(images, bins): take both "
             "arguments ({message})"),
            (TypeError, "[Cc]annot cast array data from dtype\\('float|must (be|have) (an? )?int|requires integer",
             "your bin indices are floats (floor and minimum keep the dtype), and bincount counts integers: cast "
             "them, .astype(np.int64)"),
            *((kind, words, "bincount's second argument is weights, one per index: give the number of counts by name, "
               "minlength=images * bins") for kind, words in (  # NumPy's words, then CuPy's (its weights need a .shape)
                (ValueError, "weights and list don't have the same length|weights should have the same shape|too small depth"),
                (AttributeError, "'int' object has no attribute 'shape'"))),
            (ValueError, "negative", "a bin index is negative: V lies in [0, 1], so its bin, int(v * bins), is 0 or "
             "more; scale V itself, (images * bins), without shifting it")):
        try:
            result = _called(student, (images,), bins, to_device=to_device)
        except ValueError as err:
            _bincount_length(err, count * bins)
            raise
    if isinstance(result, tuple) and len(result) == 2:
        raise NotYet("you returned a pair, (counts, edges) as histogram gives them: return the counts only")
    got = _returned(result, "your histograms", device_type)
    want = analysis.histograms(images, bins)
    if got.shape == (bins,):
        raise NotYet("one histogram for the whole batch: count each image apart, shape (images, bins)")
    if got.shape == want.shape[::-1]:
        raise NotYet(f"your histograms are transposed, shape {got.shape}: one row per image, (images, bins)")
    if got.shape == want.shape and np.array_equal(got, want.ravel().reshape(bins, count).T):
        raise NotYet("bincount's counts come image by image, each image's bins together: reshape(images, bins) "
                     "as they are; reshape(bins, images).T mixes the images")
    if got.shape != want.shape:
        raise NotYet(f"your histograms have shape {got.shape}, expected (images, bins) = {want.shape}")
    if np.issubdtype(got.dtype, np.floating) and not np.allclose(got, np.round(got)):
        raise NotYet("your histograms are not counts (densities?): count the cells in each bin")
    if np.issubdtype(got.dtype, np.floating):
        raise NotYet(f"your counts are {got.dtype}: a count is a whole number, keep bincount's integer counts")
    if _narrow(got.dtype):
        raise NotYet(f"your counts are {got.dtype}, which holds up to {np.iinfo(got.dtype).max}: an image of the full "
                     "run has millions of cells, keep bincount's int64 counts")
    if np.array_equal(got, want):
        _no_loop(student, "Give each image bins of its own (offsets image x bins) and count all the cells with one "
                          "xp.bincount", again=lambda: _called(student, (images,), bins, to_device=to_device),
                 watch=((images,), (bins,)), image=count, bin=bins)
        _other_bins(student, images, to_device, device_type)
        _other_range(student, images, to_device, device_type)
        ok(f"histograms: {count} images, {bins} bins of [0, 1], the top edge in the last bin"
           + device_note(student, device_type))
        return
    top = (images == 1.0).sum(axis=(1, 2))
    spilled = want.copy()
    spilled[:, -1] -= top
    spilled[1:, 0] += top[:-1]
    if np.array_equal(got, spilled):
        raise NotYet("the cells equal to 1 went into the next image's first bin: int(1 * bins) is bins, one past "
                     "the last bin. Clip the bin index to bins - 1 (xp.minimum), as numpy.histogram counts the top "
                     "edge in the last bin")
    for index, hint in (
            (lambda: np.minimum(images * bins, bins - 1).astype(np.int64) + 1,
             "your bins are one too high: the bin of v is int(v * bins), counted from 0 (xp.digitize counts from 1)"),
            (lambda: np.minimum(images * (bins - 1), bins - 1).astype(np.int64),
             "each bin is 1/bins wide: the bin of v is int(v * bins), not int(v * (bins - 1))"),
            (lambda: np.minimum(np.round(images * bins), bins - 1).astype(np.int64),
             "a bin holds the values from its left edge up to the next: round down, int(v * bins), not round()"),
            (lambda: images.astype(np.int64) * bins,
             "images.astype(int) * bins turns V into 0 (or 1) before it is scaled: scale first, (images * bins).astype(int)"),
            *((index, "your bin indices are computed in float16, which keeps about 3 digits of V: cells near a bin's edge "
                      "go to the next bin. Scale V as it is, (images * bins).astype(np.int64)") for index in (
                lambda: (images.astype(np.float16) * bins).astype(np.int64),
                lambda: (images * bins).astype(np.float16).astype(np.int64)))):
        if np.array_equal(got, _counts(np.minimum(index(), bins - 1), bins)):
            raise NotYet(hint)
    binned = np.minimum((images * bins).astype(np.int64), bins - 1)
    for spacing, what in ((1, "the image numbers, not image x bins"), (count, "image x images, not image x bins"),
                          (bins - 1, "image x (bins - 1), so each image's last bin is the next one's first"),
                          (bins + 1, "image x (bins + 1), a bin between two images")):
        unspread = binned + spacing * np.arange(count)[:, None, None]
        if np.array_equal(got, np.bincount(unspread.ravel(), minlength=count * bins)[:count * bins].reshape(count, bins)):
            raise NotYet(f"your offsets are {what}: image m's bins start at m * bins, "
                         "(xp.arange(images) * bins)[:, None, None]")
    if hint := whole_batch_in_one_row(got, want):  # exactly or nearly (the cells equal to 1, a GPU's rounding)
        raise NotYet(hint)
    if (got == want.sum(axis=0)).all():
        raise NotYet("each row is the histogram of the whole batch: count each image apart, its bins numbered from "
                     "m * bins")
    along_rows = binned + bins * np.arange(rows)[None, :, None]
    if np.array_equal(got, np.bincount(along_rows.ravel(), minlength=count * bins)[:count * bins].reshape(count, bins)):
        raise NotYet("your offsets follow the rows of an image (axis 1), not the images: image m's bins start at "
                     "m * bins, (xp.arange(images) * bins)[:, None, None]")
    if np.array_equal(want.sum(axis=1) - got.sum(axis=1), top):
        raise NotYet("the cells equal to 1 are missing: the top edge belongs to the last bin (as in "
                     "numpy.histogram); clip the bin index to bins - 1")
    own_range = np.stack([np.histogram(image, bins)[0] for image in images])
    if np.array_equal(got, own_range):
        raise NotYet("each image got its own bins, from its own smallest to largest value: give every image "
                     "the same range, [0, 1]")
    raise NotYet(narrow_index(got, binned, bins) or bin_major(got, want) or moved_to_a_neighbour(got, want)
                 or _first_difference(got, want, "your histograms"))


#: The second number of bins the histograms are tried with: an answer that writes out 64 fails it.
_OTHER_BINS = 10


def _other_bins(student, images: np.ndarray, to_device, device_type) -> None:
    """The histograms again with _OTHER_BINS bins: right with analysis.BINS only, the answer ignores `bins`."""
    want = analysis.histograms(images, _OTHER_BINS)
    try:
        got = _returned(_called(student, (images,), _OTHER_BINS, to_device=to_device), "your histograms", device_type)
        wrong = "" if np.array_equal(got, want) else f"shape {got.shape}" if got.shape != want.shape else "other counts"
    except NotYet:
        raise
    except Exception as err:  # noqa: BLE001 (the mistake is named: the argument ignored)
        wrong = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    if wrong:
        raise NotYet(f"right with {analysis.BINS} bins, but not with bins={_OTHER_BINS} ({wrong}): use the argument "
                     f"bins everywhere, not {analysis.BINS}")


def _other_range(student, images: np.ndarray, to_device, device_type) -> None:
    """The histograms again of a batch within [0, 0.5] (the run's V stays well under 1): an answer
    that scales V by the batch's own smallest and largest values is right only where they are 0 and 1."""
    lower = (images * 0.5).astype(images.dtype)
    want = analysis.histograms(lower, analysis.BINS)
    got = _returned(_called(student, (lower,), analysis.BINS, to_device=to_device), "your histograms", device_type)
    if not np.array_equal(got, want):
        raise NotYet("right on a batch from 0 to 1, not on one within [0, 0.5]: your bins follow the batch's own "
                     "smallest and largest values. The bins are of [0, 1] whatever V holds, int(v * bins)")


def _bincount_length(err: ValueError, expected: int) -> None:
    """A bincount of the wrong length, found when the student's reshape to (images, bins) fails:
    short, it lacks minlength (it counts up to the largest index only); long, a 1 went past the last bin."""
    size = re.search(r"size (\d+)", str(err))  # NumPy's and CuPy's words
    if "reshape" not in str(err) or size is None:
        return
    if int(size[1]) == expected:
        shape = re.search(r"into shape (\([^)]*\))", str(err))
        raise NotYet(f"bincount's {expected} counts are images x bins, but you reshaped them to "
                     f"{shape[1] if shape else 'another shape'}: reshape them to (images, bins)") from None
    if int(size[1]) < expected:
        raise NotYet(f"bincount returned {size[1]} counts, fewer than images x bins = {expected}: it counts up to "
                     "the largest bin index only, and the last bins are empty. Give it minlength=images * bins") from None
    if int(size[1]) > expected + 1:  # the checker's last image has no 1: an index well past it is an offset's
        raise NotYet(f"bincount returned {size[1]} counts, more than images x bins = {expected}: the last image's "
                     "bins run past the end, so the offsets are too large. Image m's bins start at m * bins, from 0: "
                     "(xp.arange(images) * bins)[:, None, None]") from None
    raise NotYet(f"bincount returned {size[1]} counts, one more than images x bins = {expected}: a bin index of bins "
                 "is one past the last bin. Clip the bin index to bins - 1 (xp.minimum), as numpy.histogram counts "
                 "the top edge in the last bin") from None


def _counts(index: np.ndarray, bins: int) -> np.ndarray:
    """Each image's counts of the bin indices `index` (images, rows, cols)."""
    return np.stack([np.bincount(image.ravel(), minlength=bins)[:bins] for image in index])


# --- Exercise: masks and integer-array indexing -------------------------------------------------------

@exercise("bright_cells(image, threshold)")
def bright_cells(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(image, threshold)` must return the (row, col) of each cell above `threshold`, shape
    (cells, 2) in row-major order, and V at those cells, by integer-array indexing."""
    image = oblong_image()
    threshold = np.float32(analysis.SPOT_THRESHOLD)  # compared in float32, as the images
    with _index_errors(image), split_named(student, image, image > threshold):
        result = _called(student, (image,), threshold, to_device=to_device, what="image")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise NotYet("return a pair: (coordinates, values)")
    if np.ndim(result[0]) == 1 and np.shape(result[1])[1:] == (2,):
        raise NotYet("you returned (values, coordinates): return them in the order (coordinates, values)")
    coordinates = _to_numpy(result[0], "your coordinates", device_type)
    values = _to_numpy(result[1], "your values", device_type)
    want, want_values = analysis.bright_cells(image, threshold)
    if coordinates.shape == image.shape:
        raise NotYet("your coordinates are the mask itself: the coordinates of its True cells are "
                     "xp.argwhere(mask), one (row, col) per cell")
    if coordinates.shape == want.T.shape and coordinates.shape != want.shape:
        raise NotYet(f"your coordinates have shape {coordinates.shape}, one row per axis (as nonzero gives them): "
                     "return one (row, col) per cell, shape (cells, 2) (argwhere)")
    if any(np.array_equal(coordinates, np.argwhere(below)) for below in (image < threshold, image <= threshold)):
        raise NotYet("your cells are those below the threshold: a bright cell is above it, image > threshold")
    at_threshold = int((image == np.float32(threshold)).sum())
    if len(coordinates) == len(want) + at_threshold:
        raise NotYet("you kept the cells exactly on the threshold: above means v > threshold, not >=")
    cut = _threshold_used(image, coordinates)
    if cut is not None and len(coordinates) != len(want):
        raise NotYet(f"your cells are those above {cut}, not above the threshold your function is given ({threshold:g}): "
                     "compare with it, image > threshold")
    if coordinates.shape != want.shape:
        raise NotYet(f"your coordinates have shape {coordinates.shape}, expected (cells, 2) = {want.shape}")
    if np.array_equal(coordinates, want[:, ::-1]):
        raise NotYet("your coordinates are (col, row): the first index is the row")
    if np.array_equal(coordinates, np.argwhere(image.T > threshold)):
        raise NotYet("your coordinates are (col, row), those of the transposed image, column after column: take "
                     "xp.argwhere of the image itself, one (row, col) per cell, row after row")
    if not np.issubdtype(coordinates.dtype, np.integer):
        raise NotYet(f"your coordinates are {coordinates.dtype}: an index is an integer, keep argwhere's (intp)")
    if _narrow(coordinates.dtype):
        raise NotYet(f"your coordinates are {coordinates.dtype}, which holds up to {np.iinfo(coordinates.dtype).max}: "
                     "the full run's images have rows and columns past it, keep argwhere's intp")
    if not np.array_equal(coordinates, want):
        raise NotYet(flat_split(coordinates, image, image > threshold) or "your coordinates are not those of the cells "
                     "above the threshold, in row-major order (xp.argwhere gives that order)")
    if values.shape != want_values.shape and values.size == want_values.size:
        raise NotYet(f"your values have shape {values.shape}: one value per cell, shape (cells,) = {want_values.shape}, "
                     "as image[rows, cols] gives them")
    if values.shape != want_values.shape or not np.array_equal(values, want_values):
        raise NotYet(flat_row_length(values, image, coordinates) or shifted_read(values, image, coordinates) or
                     "your values are not V at your coordinates: index the "
                     "image with the two integer arrays, image[rows, cols]")
    _no_loop(student, "Compare the whole image at once, then take the coordinates of its True cells: "
                      "xp.argwhere(image > threshold)", per="cell")
    values_by_mask(student, image, threshold, _names_used(student))
    _other_threshold(student, to_device, device_type)
    ok(f"bright cells: the cells above {analysis.SPOT_THRESHOLD} of a random {image.shape[0]} x {image.shape[1]} image, "
       "in row-major order, and their values" + device_note(student, device_type))


def _index_errors(image: np.ndarray):
    """The student's IndexErrors of bright_cells named: a flat index past the image's end, coordinates (col, row)."""
    return _their_errors((IndexError, rf"out of bounds for axis 0 with size {image.size}\b",
                          flat_index_hint(None, image.shape[0]) + " ({message})"),
                         (IndexError, "out of bounds|too many indices", "your values: an index went past the image's "
                          "edge ({message}). Are your coordinates (col, row), of image.T or reversed ([:, ::-1])? "
                          "xp.argwhere(image > threshold) gives (row, col); index with two integer arrays, the rows "
                          "first, then the columns: image[coordinates[:, 0], coordinates[:, 1]] (image[coordinates] "
                          "takes whole rows)"),
                         (AttributeError, "'tuple' object has no attribute 'transpose'", "your coordinates: "
                          "xp.nonzero returns a tuple of arrays, one per axis, which cupy.transpose (or .transpose()) "
                          "does not take: xp.argwhere(mask) gives one (row, col) per cell (or "
                          "xp.stack(xp.nonzero(mask), axis=1))"))


#: The second threshold bright_cells is tried with: an answer that ignores its argument fails it.
_OTHER_THRESHOLD = np.float32(0.25)


def _other_threshold(student, to_device, device_type) -> None:
    """bright_cells again with _OTHER_THRESHOLD: right with analysis.SPOT_THRESHOLD only, it ignores `threshold`."""
    image = oblong_image()
    want, want_values = analysis.bright_cells(image, _OTHER_THRESHOLD)
    with _index_errors(image):
        coordinates, values = _called(student, (image,), _OTHER_THRESHOLD, to_device=to_device, what="image")
    if not (np.array_equal(_to_numpy(coordinates, "your coordinates", device_type), want)
            and np.array_equal(_to_numpy(values, "your values", device_type), want_values)):
        raise NotYet(f"right with threshold {analysis.SPOT_THRESHOLD}, but not with {_OTHER_THRESHOLD:g}: compare with the "
                     "threshold your function is given, image > threshold")


def _threshold_used(image: np.ndarray, coordinates: np.ndarray) -> str | None:
    """Where `coordinates` are exactly the cells above some value (row-major), that value as the
    hint says it: a round number between the largest value left out and the smallest kept, else
    the range; None where they are not such a set."""
    if coordinates.ndim != 2 or coordinates.shape[1:] != (2,) or not len(coordinates) or \
            not np.issubdtype(coordinates.dtype, np.integer) or (coordinates < 0).any() or \
            (coordinates >= image.shape).any():
        return None
    lowest = image[coordinates[:, 0], coordinates[:, 1]].min()
    if not np.array_equal(coordinates, np.argwhere(image >= lowest)):
        return None
    below = image[image < lowest]
    highest_left = below.max() if below.size else -np.inf
    rounds = [t for t in (0.5, 0.25, 0.2, 0.3, 0.4, 0.15, 0.05, 0.01, 0.0) if highest_left <= t < lowest]
    return f"{rounds[0]:g}" if rounds else f"a value between {highest_left:.3g} and {lowest:.3g}"


# --- Exercise: deciles by sorting, classes by binary search -------------------------------------------

#: The library functions that find a class by binary search, and those that give the deciles without a sort of the
#: student's (percentile, quantile: their method="lower" is the exercise's floor(q (n - 1)) of the sorted values).
_BINARY_SEARCHES = ("searchsorted", "digitize")
_QUANTILES = ("percentile", "quantile", "nanpercentile", "nanquantile")


@exercise("deciles(values)")
def deciles(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the nine deciles of V over the batch (by sorting: the value at
    index floor(q (n - 1)) of the sorted values) and each cell's decile class, 0 to 9, by a binary
    search among them (a cell equal to an edge in the class above it)."""
    images = batch()  # each edge is one of the values: the cells equal to it tell side='left' from 'right'
    with library_calls(device_type, _BINARY_SEARCHES) as searches, library_calls(device_type, _QUANTILES) as quantiles, \
            _their_errors(
            (IndexError, "integer", "an index must be an integer ({message}): take np.floor(q * (n - 1)).astype(int)"),
            searched_in_a_batch(searches, images)):
        result = _called(student, (images,), to_device=to_device)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise NotYet("return a pair: (edges, classes)")
    if np.shape(result[0]) == images.shape and np.size(result[1]) == len(analysis.DECILES):
        raise NotYet("you returned (classes, edges): return them in the order (edges, classes)")
    edges = _to_numpy(result[0], "your edges", device_type)
    classes = _to_numpy(result[1], "your classes", device_type)
    want, want_classes = analysis.deciles(images)
    if edges.shape != want.shape:
        raise NotYet(edges_shape(edges.shape, images) or
                     f"your edges have shape {edges.shape}, expected the nine deciles, {want.shape}")
    if np.issubdtype(edges.dtype, np.floating) and edges.dtype.itemsize < images.dtype.itemsize:
        raise NotYet(f"your edges are {edges.dtype}, which rounds them: keep the values' dtype, {images.dtype}")
    if not np.array_equal(edges, want):
        raise NotYet(edges_mistake(edges, images, want))
    if classes.shape != images.shape:
        raise NotYet(classes_shape(classes.shape, images))
    if not np.issubdtype(classes.dtype, np.integer):
        raise NotYet(f"your classes are {classes.dtype}: a class is a whole number, 0 to 9, keep searchsorted's "
                     "integer classes")
    if not np.array_equal(classes, want_classes):
        if np.array_equal(classes, np.searchsorted(want, images, side="left")):
            raise NotYet("the cells equal to an edge went to the class below it: search with side='right'")
        raise NotYet(class_shift(classes, want_classes) or _first_difference(classes, want_classes, "your classes"))
    if len(searches) > 1 or (not searches and _names_used(student) & set(_BINARY_SEARCHES) and _loops(student)):
        raise NotYet(f"right classes, but from one call per image ({len(searches) or 'a loop of'} searchsorted calls): "
                     "search the whole batch in one call, xp.searchsorted(edges, images, side='right')")
    if not searches and not _names_used(student) & set(_BINARY_SEARCHES):
        raise NotYet("right classes, but not by a binary search (each cell compared with every edge?): "
                     "xp.searchsorted(edges, images, side='right') finds each class in log2(10) steps")
    edges_picked_one_by_one(student, images)
    ok(f"deciles: the nine edges of a random batch {_edges_by(student, quantiles)}, every cell's class by binary search, "
       "the cells on an edge in the class above" + device_note(student, device_type))


def _edges_by(student, quantiles: list) -> str:
    """How the tick says the edges were found: by sorting, or by the library's percentile (or quantile), which the
    section's text names as the same rule (method="lower") but which leaves the sort, the exercise's lesson, undone."""
    used = [name for name, *_ in quantiles] or sorted(_names_used(student) & set(_QUANTILES))
    if not used:
        return "by sorting"
    return f"by xp.{used[0]}(method='lower'), not by your own sort as the exercise asks"


# --- Exercise: the similarity matrix ---------------------------------------------------------------------

def _half_in_code(student, got: np.ndarray, want: np.ndarray) -> str | None:
    """float16 named in the student's code, for a similarity off by what half precision gives (a GPU's float16
    GEMM rounds in its own order, which none of half_operand's recomputations on the host matches)."""
    error = float(np.abs(got - want).max())
    if error < 1e-2 and _names_used(student) & {"float16", "half"}:
        return (f"your similarity is off by up to {error:.1g}, and your code names float16: its values are rounded to "
                "about 3 digits. Keep the images float32, no .astype(np.float16)")
    return None


@exercise("similarity(images)")
def similarity(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the cosine similarity of every pair of images, (images, images):
    one matrix product of the images as rows, divided by their norms."""
    images = batch(images=7)
    count = len(images)
    with _their_errors(*wrong_products(images.shape), (ValueError, "could not be broadcast",
                        "your norms do not broadcast against the images x images matrix ({message}): one norm per "
                        "image, each row's (axis=1), divided as norms[:, None] * norms[None, :]"),
                       (ValueError, rf"size ({images.shape[1]}|{images.shape[2]}) is different from "
                                    rf"({images.shape[1]}|{images.shape[2]})|shapes \(\d+,\d+,\d+\)",
                        "the images are (images, rows, cols), so @ multiplies them image by image ({message}): make "
                        "each image a row first, rows = images.reshape(len(images), -1), then rows @ rows.T"),
                       (ValueError, "matmul|mismatch|not aligned",
                        "the product's shapes do not match ({message}): with each image a row, rows = "
                        "images.reshape(len(images), -1), the product is rows @ rows.T, images x images")):
        got = _returned(_called(student, (images,), to_device=to_device), "your similarity matrix", device_type)
    want = analysis.similarity(images)
    rows = images.reshape(count, -1).astype(np.float64)
    gram = rows @ rows.T
    norms = np.sqrt(np.diag(gram))
    if got.shape == (rows.shape[1],) * 2:
        raise NotYet(f"your matrix is {got.shape[0]} x {got.shape[1]}: it compares cells, not images. With one "
                     "image a row, the product is rows @ rows.T")
    if got.shape != want.shape:
        raise NotYet(f"your matrix has shape {got.shape}, expected (images, images) = {want.shape}")
    if np.issubdtype(got.dtype, np.floating) and got.dtype.itemsize < 4:
        raise NotYet(f"your similarity is {got.dtype}, which keeps about 3 digits: compute in float32 (the images' "
                     "dtype) or float64")
    if _close(got, gram, 1e-4):
        raise NotYet("that is the Gram matrix: divide by the two images' norms, "
                     "gram / (norms[:, None] * norms[None, :])")
    if _close(got, gram / norms[:, None], 1e-4) or _close(got, gram / norms[None, :], 1e-4):
        raise NotYet("divided by one image's norm only: by both, broadcast as norms[:, None] * norms[None, :]")
    sums = rows.sum(axis=1)
    if _close(got, gram / (sums[:, None] * sums[None, :]), 1e-4):
        raise NotYet("you divided by the images' sums (their L1 norms): the cosine similarity divides by the Euclidean "
                     "norms, the square roots of the Gram matrix's diagonal, norms[:, None] * norms[None, :]")
    if got[0, 0] != 0 and _close(got * (gram[0, 0] / got[0, 0]), gram, 1e-4):
        raise NotYet("your matrix is the Gram matrix divided by one number for the whole batch (its norm?): divide "
                     "each pair by its own two images' norms, norms[:, None] * norms[None, :]")
    if _close(got, gram / (norms[:, None] + norms[None, :]), 1e-4):
        raise NotYet("divided by the sum of the two norms: divide by their product, norms[:, None] * norms[None, :]")
    if _close(got, gram / (norms[:, None] * norms[None, :]) ** 2, 1e-4):
        raise NotYet("you divided by the squared norms (the Gram matrix's diagonal): the norms are its square roots")
    if _close(got, gram / norms[:, None] ** 2, 1e-4) or _close(got, gram / norms[None, :] ** 2, 1e-4):
        raise NotYet("divided by one image's norm squared: by the two images' norms, norms[:, None] * norms[None, :]")
    if _close(got, analysis.similarity(rows - rows.mean(axis=1, keepdims=True)), 1e-4):
        raise NotYet("each image's mean was removed (that is the correlation, xp.corrcoef): the cosine similarity "
                     "multiplies the images as they are, rows @ rows.T, divided by their norms")
    if _close(got, 1 - want, 1e-4):
        raise NotYet("that is 1 - the similarity (a distance): return the similarity itself, 1 for an image with itself")
    for half, triangle in ((np.triu, "upper"), (np.tril, "lower")):
        if _close(got, half(want), 1e-4):
            raise NotYet(f"your matrix keeps its {triangle} triangle only: the similarity is symmetric, and the "
                         "exercise wants every pair both ways, the whole rows @ rows.T divided by the norms")
    off_diagonal = ~np.eye(count, dtype=bool)
    if np.abs(np.diagonal(got)).max() < 1e-6 and _close(got[off_diagonal], want[off_diagonal], 1e-4):
        raise NotYet("your matrix is right but for its diagonal, set to 0: every pair counts, an image with itself "
                     "too (similarity 1): keep the diagonal that rows @ rows.T divided by the norms gives")
    if np.abs(np.diagonal(got)).max() < 1e-2 * np.abs(got).max() and (got >= -1e-6).all():
        raise NotYet("your matrix is 0 on its diagonal, where an image meets itself: a distance (between the images), "
                     "not their similarity, which is 1 there: rows @ rows.T divided by the two images' norms")
    if _close(got, analysis.similarity(rows.reshape(-1, count).T), 1e-4):
        raise NotYet("your rows are not the images: images.reshape(-1, n).T puts cells of several images in each row. "
                     "Make each image a row, images.reshape(len(images), -1)")
    if not _close(got, want, 1e-4):
        raise NotYet(other_norms(got, gram, rows) or half_operand(got, gram / np.outer(norms, norms), rows) or
                     _half_in_code(student, got, want) or _first_difference(got, want, "your similarity"))
    if hint := half_operand(got, gram / np.outer(norms, norms), rows):
        raise NotYet(hint)
    _no_loop(student, "Put the images as rows of one matrix and multiply it by its transpose: rows @ rows.T",
             watch=((images,), ()))
    pairs_broadcast(student)
    ok(f"similarity: {count} x {count}, right on random images of {images.shape[1]} x {images.shape[2]}"
       + device_note(student, device_type))

