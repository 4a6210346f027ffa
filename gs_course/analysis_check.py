"""Answer checkers for tutorial 4 (analysing a run's images): each runs the student's function on a
fresh random batch of images, compares with `gs_course.analysis`, and names the typical mistake
when the answer is wrong (raising `gs_course.check.NotYet`, as every checker of the course does).

The batches look like the run's: mostly background near 0, spots of 0.1 to 0.5, on odd,
non-square grids, with cells planted exactly on the values where the mistakes differ (the spot
threshold, the top edge of the histograms, ties in the deciles). The kernels' checkers need an
NVIDIA GPU: without one they say what they could not check, and the notebook runs on.
"""

from __future__ import annotations

import contextlib
import dis
import re

import numpy as np

from . import analysis
from .check import NotYet, _gpu_cupy, _gpu_errors_as_hints, _to_numpy, ok


def batch(rng: np.random.Generator | None = None, images: int = 5, grid: tuple[int, int] | None = None,
          levels: int | None = None) -> np.ndarray:
    """A float32 batch like the run's images; `levels` quantises V (many cells then share each value)."""
    rng = rng or np.random.default_rng()
    rows, cols = grid or (int(rng.integers(15, 30)) * 2 + 1, int(rng.integers(18, 34)) * 2 + 1)
    values = 0.5 * rng.random((images, rows, cols)) ** 4  # most cells near 0, a tail of spots
    if levels:
        values = np.round(values * levels) / levels
    flat = values.reshape(-1)
    planted = rng.choice(flat.size, size=3 * images, replace=False)
    flat[planted[:images]] = analysis.SPOT_THRESHOLD  # exactly on the threshold: not above it
    flat[planted[images:2 * images]] = 1.0  # the top edge of the histograms' range
    return values.astype(np.float32)


def _close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> bool:
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=1e-6)


def _returned(result, what: str, device_type: type | None) -> np.ndarray:
    """The student's array on the host; a list (a Python loop's results) is refused."""
    if isinstance(result, (list, tuple)):
        raise NotYet(f"{what} is a Python {type(result).__name__}: compute it in one call over the whole batch, "
                     "which returns one array")
    return _to_numpy(result, what, device_type)


def _loops(student) -> bool:
    """Whether the student's function runs a Python loop (a `for` or a comprehension): one call, one
    kernel launch, per image instead of one over the batch."""
    codes, seen = [getattr(student, "__code__", None)], False
    while codes:
        code = codes.pop()
        if code is None:
            continue
        seen = seen or any(i.opname in ("FOR_ITER", "GET_ITER") for i in dis.get_instructions(code))
        codes += [c for c in code.co_consts if hasattr(c, "co_code")]
    return seen


def _no_loop(student, what: str) -> None:
    if _loops(student):
        raise NotYet(f"right values, but from a Python loop, which makes one call (a kernel launch on a GPU) per "
                     f"image. {what}")


@contextlib.contextmanager
def _their_errors(*hints: tuple[type, str, str]):
    """An error raised in the student's function that a typical mistake gives becomes that mistake's
    hint, shown alone: (exception type, pattern of its message, hint). Any other error shows as it is."""
    try:
        yield
    except Exception as err:  # noqa: BLE001 (re-raised unless it is a known mistake)
        for kind, pattern, hint in hints:
            if isinstance(err, kind) and re.search(pattern, str(err)):
                raise NotYet(hint.format(message=str(err))) from None
        raise


def _first_difference(got: np.ndarray, want: np.ndarray, what: str) -> str:
    where = np.unravel_index(np.argmax(~np.isclose(got, want, rtol=1e-5, atol=1e-6)), want.shape)
    return f"{what} is off at {tuple(int(i) for i in where)}: {got[where]!r} instead of {want[where]!r}"


def _spaceless(text: str) -> str:
    return "".join(text.split())


def _is_zero(expression: str) -> bool:
    try:
        return float(expression.strip().rstrip("fF")) == 0
    except ValueError:
        return False


def _raise_first(mistakes: list[tuple[bool, str]]) -> None:
    """The hint of the first typical mistake that shows in the code's text."""
    for found, hint in mistakes:
        if found:
            raise NotYet(hint)


def _read_as_text(what: str, mistakes: list[tuple[bool, str]]) -> None:
    """Without a GPU: the typical mistakes that show in the code's text, then what was not checked."""
    _raise_first(mistakes)
    ok(f"{what}: read as text, it has the parts it needs (its results need a GPU to check)")


# --- Exercise: the mass of each image ----------------------------------------------------------------

def mass(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the mass of V (sum over the cells) of each image, shape (images,)."""
    images = batch()
    count, rows, cols = images.shape
    result = student(to_device(images))
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
    if not _close(got, want):
        raise NotYet(_first_difference(got, want, "your mass"))
    if got.dtype != np.float64 and not type(result).__module__.startswith("jax"):  # JAX: float64 needs x64
        raise NotYet(f"your masses are {got.dtype}: sum in float64 (dtype=np.float64), as a float32 running sum "
                     "of millions of cells loses digits")
    _no_loop(student, "Sum over axes 1 and 2 of the whole batch in one call: images.sum(axis=(1, 2), ...)")
    ok(f"mass: one per image, right on {count} random images of {rows} x {cols}")


# --- Exercise: a ReductionKernel (GPU only) ----------------------------------------------------------

def spot_mass_kernel(map_expr: str, reduce_expr: str, identity: str):
    """The three expressions of a ReductionKernel that gives each image's spot mass (V summed over
    the cells above a threshold). Returns the kernel, called as `kernel(images, threshold, axis=(1, 2))`
    with the threshold a float32 array of 0 dimensions (None without a GPU)."""
    value = map_expr.split("?", 1)[1].split(":", 1)[0] if "?" in map_expr else map_expr
    if re.search(r"\b(if|else)\b", map_expr):  # before compiling: the compiler's error would not say this
        raise NotYet("map_expr is C, not Python: C's conditional is condition ? value : other, as in "
                     "v > threshold ? v : 0")
    as_text = [
        ("threshold" not in map_expr, "your map_expr does not use the threshold: map each cell to v where "
                                      "v > threshold, else to 0"),
        ("v" not in re.findall(r"\w+", value) or ("?" not in map_expr and "*" not in map_expr),
         "your map_expr gives a spot 1 (true), not its value: that counts the spots. Map a spot to v: "
         "v > threshold ? v : 0"),
        (">=" in map_expr, "a cell exactly on the threshold is not above it: v > threshold, not >="),
        (_spaceless(reduce_expr) not in ("a+b", "b+a"), "reduce_expr combines two partial sums: a + b"),
        (not _is_zero(identity), "the identity starts every thread's partial sum, so it must add nothing "
                                 "(0 for a sum)"),
    ]
    cupy = _gpu_cupy("your ReductionKernel")
    if cupy is None:
        _read_as_text("ReductionKernel", as_text)
        return None
    images = batch()
    threshold = np.float32(analysis.SPOT_THRESHOLD)
    with _gpu_errors_as_hints(cupy):
        kernel = analysis.spot_mass_kernel(cupy, map_expr, reduce_expr, identity)
        got = kernel(cupy.asarray(images), cupy.asarray(threshold), axis=(1, 2)).get()
    want = analysis.spot_mass(images)
    if not _close(got, want):
        spots = np.where(images > threshold, images, 0)
        if _close(got, analysis.mass(images)):
            raise NotYet("that is the mass of every cell: map each cell to v where v > threshold, else to 0")
        if _close(got, np.where(images >= threshold, images, 0).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("a cell exactly on the threshold is not above it: v > threshold, not >=")
        if _close(got, (images > threshold).sum(axis=(1, 2)).astype(np.float64)):
            raise NotYet("that counts the spots: map a spot to its value v, not to 1 (v > threshold ? v : 0)")
        if _close(got, spots.max(axis=(1, 2))):
            raise NotYet("that is the largest value: reduce_expr combines two partial sums, a + b")
        offset = got - want
        if np.all(offset > 1e-3) and np.allclose(offset, offset[0], rtol=1e-3):
            raise NotYet(f"each image's sum is {offset[0]:.4g} too large: the identity starts every thread's "
                         "partial sum, so it must add nothing (0 for a sum)")
        raise NotYet(_first_difference(got, want, "your spot mass"))
    _raise_first(as_text)
    ok(f"spot mass kernel: right on {len(images)} random images, cells on the threshold left out")
    return kernel


# --- Exercise: histograms of each image ---------------------------------------------------------------

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
    with _their_errors(
            (ValueError, "could not be broadcast", "the offsets do not broadcast against the batch ({message}): "
             "make them a column of shape (images, 1, 1), (xp.arange(images) * bins)[:, None, None]")):
        try:
            result = student(to_device(images), bins)
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
    if got.shape != want.shape:
        raise NotYet(f"your histograms have shape {got.shape}, expected (images, bins) = {want.shape}")
    if np.issubdtype(got.dtype, np.floating) and not np.allclose(got, np.round(got)):
        raise NotYet("your histograms are not counts (densities?): count the cells in each bin")
    if np.array_equal(got, want):
        _no_loop(student, "Give each image bins of its own (offsets image x bins) and count all the cells with one "
                          "xp.bincount")
        ok(f"histograms: {count} images, {bins} bins of [0, 1], the top edge in the last bin")
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
             "a bin holds the values from its left edge up to the next: round down, int(v * bins), not round()")):
        if np.array_equal(got, _counts(np.minimum(index(), bins - 1), bins)):
            raise NotYet(hint)
    if np.array_equal(want.sum(axis=1) - got.sum(axis=1), top):
        raise NotYet("the cells equal to 1 are missing: the top edge belongs to the last bin (as in "
                     "numpy.histogram); clip the bin index to bins - 1")
    own_range = np.stack([np.histogram(image, bins)[0] for image in images])
    if np.array_equal(got, own_range):
        raise NotYet("each image got its own bins, from its own smallest to largest value: give every image "
                     "the same range, [0, 1]")
    raise NotYet(_first_difference(got, want, "your histograms"))


def _bincount_length(err: ValueError, expected: int) -> None:
    """A bincount of the wrong length, found when the student's reshape to (images, bins) fails:
    short, it lacks minlength (it counts up to the largest index only); long, a 1 went past the last bin."""
    size = re.search(r"size (\d+)", str(err))  # NumPy's and CuPy's words
    if "reshape" not in str(err) or size is None:
        return
    if int(size[1]) < expected:
        raise NotYet(f"bincount returned {size[1]} counts, fewer than images x bins = {expected}: it counts up to "
                     "the largest bin index only, and the last bins are empty. Give it minlength=images * bins") from None
    raise NotYet(f"bincount returned {size[1]} counts, more than images x bins = {expected}: a value of 1 gives the "
                 "bin int(1 * bins) = bins, one past the last bin. Clip the bin index to bins - 1 (xp.minimum), as "
                 "numpy.histogram counts the top edge in the last bin") from None


def _counts(index: np.ndarray, bins: int) -> np.ndarray:
    """Each image's counts of the bin indices `index` (images, rows, cols)."""
    return np.stack([np.bincount(image.ravel(), minlength=bins)[:bins] for image in index])


# --- Exercise: the privatised histogram kernel (GPU only) ---------------------------------------------

def histogram_kernel(body: str):
    """`body` completes analysis.HISTOGRAM_KERNEL: each block counts its cells into a histogram in
    shared memory, then adds it to the image's histogram in global memory. Returns the kernel
    (None without a GPU)."""
    as_text = [
        ("__shared__" not in body, "no __shared__ array: count into a histogram of the block in shared memory "
                                   "(extern __shared__), then add it to global memory once"),
        (body.count("atomicAdd") < 2, "two additions must be atomicAdd: a thread's +1 to the block's histogram, "
                                      "and the block's counts to the image's (other threads add at the same time)"),
        (body.count("__syncthreads") < 2, "__syncthreads() twice: after the block's histogram is set to 0, and "
                                          "before it is added to global memory"),
        (re.search(r"\]\s*=\s*0", body) is None, "set the block's histogram to 0 first (block_counts[b] = 0 for "
                                                 "each bin): shared memory starts with whatever an earlier kernel "
                                                 "left there"),
    ]
    if "bins-1" not in _spaceless(body):  # before any launch: past the last bin is past the shared array
        raise NotYet("a value of 1 gives (int)(v * bins) = bins, one past the last bin: min((int)(v * bins), bins - 1)")
    cupy = _gpu_cupy("your histogram kernel")
    if cupy is None:
        _read_as_text("histogram kernel", as_text)
        return None
    images = batch(images=3, grid=(301, 419))  # 64 blocks of 256 threads per image, each thread several cells
    with _gpu_errors_as_hints(cupy):
        kernel = analysis.histogram_kernel(cupy, body)
        _poison_shared_memory(cupy)  # a histogram never set to 0 then starts from what this leaves in shared memory
        got = analysis.launch_histograms(kernel, cupy.asarray(images)).get().astype(np.int64)
    want = analysis.histograms(images)
    cells = images[0].size
    if np.any(got.sum(axis=1) > cells):
        raise NotYet("more counts than cells: the block's histogram in shared memory starts with whatever was "
                     "there; set it to 0, then __syncthreads(), before counting")
    if np.any(got.sum(axis=1) < cells):
        raise NotYet("fewer counts than cells: increments were lost. Two threads adding to one bin at once keep "
                     "one +1 unless the addition is atomicAdd; and wait with __syncthreads() for every thread "
                     "of the block to have counted before adding the block's histogram to global memory")
    if not np.array_equal(got, want):
        raise NotYet("every cell counted once, but in the wrong bins: bin = min((int)(v * bins), bins - 1). "
                     + _first_difference(got, want, "your histograms"))
    if "__shared__" not in body:
        raise NotYet("right counts, with every thread adding to global memory: that is the first kernel. Count "
                     "into a histogram of the block in shared memory (extern __shared__), then add it once")
    _raise_first(as_text)  # a race can give the right counts by luck
    ok(f"histogram kernel: right on {len(images)} images of {cells:,} cells, privatised in shared memory")
    return kernel


def _poison_shared_memory(cupy) -> None:
    """Fill every multiprocessor's shared memory with nonzero counts. Shared memory is not cleared
    between kernels, so a kernel that never zeroes its block's histogram then shows it at once,
    instead of only after some other kernel has left something there."""
    kernel = cupy.RawKernel(r"""extern "C" __global__ void poison(int bins) {
        extern __shared__ unsigned int junk[];
        for (int b = threadIdx.x; b < bins; b += blockDim.x) junk[b] = 7u;
    }""", "poison")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    kernel((8 * sms,), (analysis.HISTOGRAM_THREADS,), (np.int32(analysis.BINS),), shared_mem=analysis.BINS * 4)


# --- Exercise: masks and integer-array indexing -------------------------------------------------------

def bright_cells(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(image, threshold)` must return the (row, col) of each cell above `threshold`, shape
    (cells, 2) in row-major order, and V at those cells, by integer-array indexing."""
    image = batch(images=1)[0]
    threshold = np.float32(analysis.SPOT_THRESHOLD)  # compared in float32, as the images
    with _their_errors((IndexError, "out of bounds|too many indices", "your values: an index went past the image's "
                        "edge ({message}). Index it with two integer arrays, the rows first, then the columns: "
                        "image[coordinates[:, 0], coordinates[:, 1]] (image[coordinates] takes whole rows)")):
        result = student(to_device(image), threshold)
    if not isinstance(result, tuple) or len(result) != 2:
        raise NotYet("return a pair: (coordinates, values)")
    coordinates = _to_numpy(result[0], "your coordinates", device_type)
    values = _to_numpy(result[1], "your values", device_type)
    want, want_values = analysis.bright_cells(image, threshold)
    if coordinates.shape == image.shape:
        raise NotYet("your coordinates are the mask itself: the coordinates of its True cells are "
                     "xp.argwhere(mask), one (row, col) per cell")
    if coordinates.shape == want.T.shape and coordinates.shape != want.shape:
        raise NotYet(f"your coordinates have shape {coordinates.shape}, one row per axis (as nonzero gives them): "
                     "return one (row, col) per cell, shape (cells, 2) (argwhere)")
    at_threshold = int((image == np.float32(threshold)).sum())
    if len(coordinates) == len(want) + at_threshold:
        raise NotYet("you kept the cells exactly on the threshold: above means v > threshold, not >=")
    if coordinates.shape != want.shape:
        raise NotYet(f"your coordinates have shape {coordinates.shape}, expected (cells, 2) = {want.shape}")
    if np.array_equal(coordinates, want[:, ::-1]):
        raise NotYet("your coordinates are (col, row): the first index is the row")
    if np.array_equal(coordinates, np.argwhere(image.T > threshold)):
        raise NotYet("your coordinates are (col, row), those of the transposed image, column after column: take "
                     "xp.argwhere of the image itself, one (row, col) per cell, row after row")
    if not np.array_equal(coordinates, want):
        raise NotYet("your coordinates are not those of the cells above the threshold, in row-major order "
                     "(xp.argwhere gives that order)")
    if values.shape != want_values.shape or not np.array_equal(values, want_values):
        raise NotYet("your values are not V at your coordinates: index the image with the two integer arrays, "
                     "image[rows, cols]")
    ok(f"bright cells: the cells above {analysis.SPOT_THRESHOLD} of a random {image.shape[0]} x {image.shape[1]} image, "
       "in row-major order, and their values")


# --- Exercise: deciles by sorting, classes by binary search -------------------------------------------

def deciles(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the nine deciles of V over the batch (by sorting: the value at
    index floor(q (n - 1)) of the sorted values) and each cell's decile class, 0 to 9, by a binary
    search among them (a cell equal to an edge in the class above it)."""
    images = batch()  # each edge is one of the values: the cells equal to it tell side='left' from 'right'
    with _their_errors((IndexError, "integer", "an index must be an integer ({message}): take "
                        "np.floor(q * (n - 1)).astype(int)")):
        result = student(to_device(images))
    if not isinstance(result, tuple) or len(result) != 2:
        raise NotYet("return a pair: (edges, classes)")
    edges = _to_numpy(result[0], "your edges", device_type)
    classes = _to_numpy(result[1], "your classes", device_type)
    want, want_classes = analysis.deciles(images)
    ordered = np.sort(images.ravel())
    n = ordered.size
    if edges.shape == (len(images), 9):
        raise NotYet("deciles per image: the deciles are of the whole batch, all its values sorted together")
    if edges.shape != want.shape:
        raise NotYet(f"your edges have shape {edges.shape}, expected the nine deciles, {want.shape}")
    if not np.array_equal(edges, want):
        if np.allclose(edges, np.percentile(images, 100 * analysis.DECILES)):
            raise NotYet("your edges are interpolated between two values (numpy.percentile's default): take the "
                         "sorted values at index floor(q (n - 1))")
        if np.array_equal(edges, ordered[np.minimum((analysis.DECILES * n).astype(int), n - 1)]):
            raise NotYet("index q n is one too far: with n values the last index is n - 1, so q (n - 1)")
        at = np.floor(analysis.DECILES * (n - 1)).astype(int)
        if np.array_equal(edges, images.ravel()[at]):
            raise NotYet("your edges are taken from the values as they are: sort them first")
        if any(np.array_equal(edges, np.sort(images, axis=axis).ravel()[at]) for axis in (0, 1, 2)):
            raise NotYet("you sorted along one axis only, so the values are sorted in pieces: sort all the batch's "
                         "values together, xp.sort(images.ravel())")
        if np.array_equal(edges, ordered[np.round(analysis.DECILES * (n - 1)).astype(int)]):
            raise NotYet("your indices are rounded to the nearest: round down, floor(q (n - 1))")
        if np.allclose(edges, np.percentile(images, analysis.DECILES, method="lower")):
            raise NotYet("percentile takes percents, 10 to 90, not fractions: 100 * analysis.DECILES")
        raise NotYet(_first_difference(edges, want, "your edges"))
    if classes.shape != images.shape:
        raise NotYet(f"your classes have shape {classes.shape}, expected one per cell, {images.shape}")
    if not np.array_equal(classes, want_classes):
        if np.array_equal(classes, np.searchsorted(want, images, side="left")):
            raise NotYet("the cells equal to an edge went to the class below it: search with side='right'")
        raise NotYet(_first_difference(classes, want_classes, "your classes"))
    ok("deciles: the nine edges of a random batch by sorting, every cell's class by binary search, the cells on "
       "an edge in the class above")


# --- Exercise: a bitonic sort kernel (GPU only) -------------------------------------------------------

def bitonic_step(body: str):
    """`body` completes analysis.BITONIC_KERNEL: one compare-and-exchange step. Checked by sorting
    random arrays of several sizes (one not a power of two) with analysis.bitonic_sort; returns
    `sort(values)` (None without a GPU)."""
    code = _spaceless(body)
    as_text = [
        (not any(x in code for x in ("partner>i", "i<partner", "partner<=i", "i>=partner")),
         "thread i and thread partner share a pair: only the one with partner > i may compare and swap"),
        ("&k" not in code, "the direction of a pair comes from i & k: ascending where it is 0"),
        (not ("values[i]=" in code and "values[partner]=" in code), "an exchange writes both values[i] and "
                                                                     "values[partner]"),
    ]
    cupy = _gpu_cupy("your bitonic sort kernel")
    if cupy is None:
        _read_as_text("bitonic step", as_text)
        return None
    rng = np.random.default_rng()
    with _gpu_errors_as_hints(cupy):
        kernel = analysis.bitonic_kernel(cupy, body)
        for size in (1000, 4096, 2**16 + 3):
            values = rng.random(size, dtype=np.float32)
            got = analysis.bitonic_sort(kernel, cupy.asarray(values)).get()
            want = np.sort(values)
            if np.array_equal(got, want):
                continue
            padded_descending = np.sort(np.concatenate([values, np.full((1 << (size - 1).bit_length()) - size,
                                                                        np.inf, np.float32)]))[::-1]
            if np.array_equal(got, want[::-1]) or np.array_equal(got, padded_descending[:size]):
                raise NotYet("sorted in descending order: a pair goes in ascending order where (i & k) == 0")
            if not np.array_equal(np.sort(got), want):
                raise NotYet("values were lost or duplicated: two threads exchanged the same pair. Thread i and "
                             "thread partner share a pair: only the one with partner > i may compare and swap")
            _raise_first(as_text)  # the mistake by name, where the code shows it
            first = int(np.argmax(got[1:] < got[:-1]))
            raise NotYet(f"not sorted ({size:,} values): {got[first]} comes before {got[first + 1]} at index {first}")
    _raise_first(as_text)
    ok("bitonic sort: 1,000, 4,096 and 65,539 random values sorted as numpy.sort sorts them")
    return lambda values: analysis.bitonic_sort(kernel, values)


# --- Exercise: the similarity matrix ---------------------------------------------------------------------

def similarity(student, device_type: type | None = None, to_device=np.asarray) -> None:
    """`student(images)` must return the cosine similarity of every pair of images, (images, images):
    one matrix product of the images as rows, divided by their norms."""
    images = batch(images=7)
    count = len(images)
    with _their_errors((ValueError, "matmul|mismatch|not aligned|could not be broadcast",
                        "the images are (images, rows, cols), so @ multiplies them image by image ({message}): make "
                        "each image a row first, rows = images.reshape(len(images), -1), then rows @ rows.T")):
        got = _returned(student(to_device(images)), "your similarity matrix", device_type)
    want = analysis.similarity(images)
    rows = images.reshape(count, -1).astype(np.float64)
    gram = rows @ rows.T
    norms = np.sqrt(np.diag(gram))
    if got.shape == (rows.shape[1],) * 2:
        raise NotYet(f"your matrix is {got.shape[0]} x {got.shape[1]}: it compares cells, not images. With one "
                     "image a row, the product is rows @ rows.T")
    if got.shape != want.shape:
        raise NotYet(f"your matrix has shape {got.shape}, expected (images, images) = {want.shape}")
    if _close(got, gram, 1e-4):
        raise NotYet("that is the Gram matrix: divide by the two images' norms, "
                     "gram / (norms[:, None] * norms[None, :])")
    if _close(got, gram / norms[:, None], 1e-4) or _close(got, gram / norms[None, :], 1e-4):
        raise NotYet("divided by one image's norm only: by both, broadcast as norms[:, None] * norms[None, :]")
    if _close(got, gram / (norms[:, None] * norms[None, :]) ** 2, 1e-4):
        raise NotYet("you divided by the squared norms (the Gram matrix's diagonal): the norms are its square roots")
    if not _close(got, want, 1e-4):
        raise NotYet(_first_difference(got, want, "your similarity"))
    _no_loop(student, "Put the images as rows of one matrix and multiply it by its transpose: rows @ rows.T")
    ok(f"similarity: {count} x {count}, right on random images of {images.shape[1]} x {images.shape[2]}")

