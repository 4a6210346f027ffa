"""Mistakes of tutorial 4's histograms exercise that `gs_course.lessons.analysis_check.histograms` names
once the counts are known to be wrong, where "off at (i, j)" would leave the student to find them: the
bins numbered bin-major (bin x images + image) but read image by image; the whole batch counted in
the first image's row (a histogram over (0, images) of values never moved to their image's range);
a few cells in a neighbouring bin, likely from rounding near the bins' edges (V shifted by its image's
number in float32). Each recomputes, or reads from the counts, what the mistake gives.
"""

from __future__ import annotations

import numpy as np

#: How each image's own bins are numbered, as bin_major's hint says it.
_OWN_BINS = ("image m's bins are numbered from m * bins (its cell's bin int(v * bins) plus m * bins), so that "
             "one xp.bincount counts image by image and reshape(images, bins) gives one row per image")


def bin_major(got: np.ndarray, want: np.ndarray) -> str | None:
    """The hint where the counts are those of bins numbered bin x images + image (each bin's images together),
    reshaped (images, bins) as if numbered image by image: the flat counts are the transposed histograms'."""
    count, bins = want.shape
    if got.shape != want.shape or not np.array_equal(got.ravel(), want.T.ravel()):
        return None
    return (f"your bins are numbered bin x images + image (bin-major: each bin's {count} images together), but "
            f"reshape(images, bins) reads the counts image by image, so each row mixes the images: {_OWN_BINS}")


def whole_batch_in_one_row(got: np.ndarray, want: np.ndarray) -> str | None:
    """The hint where the first image's row holds the whole batch's histogram and the other rows (next to) nothing:
    no offsets, or a histogram of the whole batch over (0, images) in images x bins bins (its values, all in
    [0, 1], counted where they are; its top edge, 1, in the second row's first bin). Exactly or nearly: the
    cells equal to 1 or a GPU's rounding at the edges move a few counts."""
    total, batch_histogram = int(want.sum()), want.sum(axis=0)
    if got.shape != want.shape or len(want) < 2 or int(got.sum()) != total:
        return None
    if np.abs(got[0] - batch_histogram).sum() > 0.01 * total or got[1:].sum() > 0.01 * total:
        return None
    return ("every image's cells went into the first image's bins (row 0 is the whole batch's histogram): the values, "
            "all in [0, 1], were never moved to their own image's bins, as in a histogram of the whole batch over "
            "(0, images). Number image m's bins from m * bins, (xp.arange(images) * bins)[:, None, None]")


def moved_to_a_neighbour(got: np.ndarray, want: np.ndarray) -> str | None:
    """The hint where every cell was counted but a few (at most 1 %) in a neighbouring bin, the images' bins
    numbered one after the other (the last bin of image m next to the first of image m + 1): rounding near
    the bins' edges. Its likely cause: V shifted by its image's number to count the batch with one histogram,
    v + m in float32, which keeps fewer of V's digits as m grows (0.99999994 + 1 rounds to 2.0, the next
    image), or in float64 for a value just under 1. Read from the counts, not recomputed: a GPU's histogram may
    round at its edges otherwise than NumPy's."""
    if got.shape != want.shape:
        return None
    difference = (got.astype(np.int64) - want.astype(np.int64)).ravel()
    # A count moved from a bin to the next leaves -c, +c: the running sum is what crossed each border between bins.
    crossed = np.abs(np.cumsum(difference))
    if not difference.any() or difference.sum() or crossed.sum() > 0.01 * want.sum():
        return None
    first = np.unravel_index(int(np.flatnonzero(difference)[0]), want.shape)
    at = tuple(int(i) for i in first)
    return (f"{int(crossed.sum())} cell(s) counted in a neighbouring bin (at {at}: {got[first]} instead of {want[first]}): "
            "likely rounding at the bins' edges, as v + m does (in float32, or in float64 for a value just under 1). "
            "Take each cell's bin from V itself, int(v * bins), then add m * bins")
