"""The batches of images the analysis checkers try answers on, and how they compare results
(`gs_course.lessons.analysis_check` for the array functions, `gs_course.lessons.kernel_check` for the kernels).

The batches look like the run's: mostly background near 0, spots of 0.1 to 0.5, on odd,
non-square grids, with cells planted exactly on the values where the mistakes differ (the spot
threshold, the top edge of the histograms).
"""

from __future__ import annotations

import numpy as np

from . import analysis


def batch(rng: np.random.Generator | None = None, images: int = 5, grid: tuple[int, int] | None = None,
          levels: int | None = None) -> np.ndarray:
    """A float32 batch like the run's images; `levels` quantises V (many cells then share each value). Its
    images are never square unless `grid` says so: a square one hides a transposed index or product."""
    rng = rng or np.random.default_rng()
    rows, cols = grid or (int(rng.integers(15, 30)) * 2 + 1, int(rng.integers(18, 34)) * 2 + 1)
    cols += 2 * (cols == rows and grid is None)
    values = 0.5 * rng.random((images, rows, cols)) ** 4  # most cells near 0, a tail of spots
    if levels:
        values = np.round(values * levels) / levels
    flat = values.reshape(-1)
    planted = rng.choice(flat.size, size=3 * images, replace=False)
    flat[planted[:images]] = analysis.SPOT_THRESHOLD  # exactly on the threshold: not above it
    flat[planted[images:2 * images]] = 1.0  # the top edge of the histograms' range
    return values.astype(np.float32)


def oblong_image() -> np.ndarray:
    """A random image of fewer rows than columns, its largest value not 1 (a threshold scaled by it shows): a
    flat index of rows for columns reads other cells every time, where a square image (at random) hid it."""
    rng = np.random.default_rng()
    rows = int(rng.integers(15, 30)) * 2 + 1
    return np.minimum(batch(rng, images=1, grid=(rows, rows + 2 * int(rng.integers(3, 8))))[0], np.float32(0.9))


def with_every_bin(images: np.ndarray, bins: int = analysis.BINS) -> np.ndarray:
    """`images` with a cell in the middle of each of the histograms' bins in every image (the batch's
    values stop near 0.5): a histogram kernel that leaves some bins out then shows it."""
    images = images.copy()
    images.reshape(len(images), -1)[:, :bins] = (np.arange(bins, dtype=np.float32) + 0.5) / bins
    return images


def close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> bool:
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=1e-6)


def first_difference(got: np.ndarray, want: np.ndarray, what: str) -> str:
    where = np.unravel_index(np.argmax(~np.isclose(got, want, rtol=1e-5, atol=1e-6)), want.shape)
    verb = "are" if what.endswith("s") and not what.endswith("ss") else "is"  # masses are, a mass is
    return f"{what} {verb} off at {tuple(int(i) for i in where)}: {got[where]} instead of {want[where]}"
