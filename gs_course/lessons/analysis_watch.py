"""How the student's analysis functions reach into their arrays, watched while they run: a Python loop
over the images (a `for`, a comprehension, `map` or `filter` with a lambda or a function, itertools, a
generator handed to `np.stack` or `sum()`, a while loop, recursion) takes the images one by one, by
iteration or by an integer index, however it is spelled; the deciles' edges picked by nine scalar
indexings; the bright cells' values taken by a boolean mask where the exercise asks for integer-array
indexing; the similarity computed through a broadcast product of every pair of images, whose temporary
takes images times the batch's memory, where the exercise asks for one matrix product (told by the memory
the call takes). The arrays are handed over as a subclass of NumPy's array that counts those reads, and every
array made from them (a reshape, a sort, a comparison) counts too. Where the notebook's `xp` is CuPy, the
call is watched on NumPy, `xp` being NumPy for its length: CuPy's arrays made from a subclass (a sort, a
cast) are its plain arrays again, whose loops went unseen. The values were checked on the device before;
a function that cannot run on NumPy (CuPy named in it) is not watched, and nothing is told from it.
"""

from __future__ import annotations

import contextlib
import threading
import tracemalloc

import numpy as np

from .analysis_inputs import batch

from .check_core import NotYet, names_replaced


class Reads:
    """What a watched call did: `picks`, (the shape of the array, its kind of index, the integers of an
    "int" index, the size of what it picked) for each indexing (kinds: "int" one item of the first axis,
    "bool" a boolean mask, "array" integer arrays, "slice"); `iterations`, the length of each array
    iterated; `on`, whether it still counts."""

    def __init__(self):
        self.picks: list[tuple[tuple, str, tuple, int]] = []
        self.iterations: list[int] = []
        self.on = True

    def ints(self, length: int | None = None) -> int:
        """How many different single items of a first axis (of that length) were taken by an integer index
        (images[0] read twice, for its shape, is one: a loop reads each)."""
        return len({(shape[:1], at) for shape, kind, at, _ in self.picks
                    if kind == "int" and (length is None or shape[:1] == (length,))})

    def over(self, shape: tuple) -> bool:
        """Whether an array of `shape` (or of its first axis's length) was iterated, indexed item by item, or
        sliced along its first axis to ever fewer items (a recursion on images[1:])."""
        shorter = {picked[0] for picked, *_ in self.picks if len(picked) == len(shape) and picked[1:] == shape[1:]}
        return shape[0] in self.iterations or self.ints(shape[0]) >= min(3, shape[0]) or len(shorter) >= 3


def _integers(key) -> tuple:
    """The integers of an index (image[3, 4]: (3, 4)); () where it holds none."""
    parts = key if isinstance(key, tuple) else (key,)
    return tuple(int(part) for part in parts if isinstance(part, (int, np.integer)) and not isinstance(part, bool)
                 or getattr(part, "ndim", None) == 0 and np.issubdtype(getattr(part, "dtype", np.float64), np.integer))


def _kind(key) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    first = parts[0] if parts else None
    if isinstance(first, (int, np.integer)) and not isinstance(first, bool) or \
            getattr(first, "ndim", None) == 0 and np.issubdtype(getattr(first, "dtype", np.float64), np.integer):
        return "int"
    dtypes = [getattr(part, "dtype", None) for part in parts if getattr(part, "ndim", 0) >= 1]
    if any(dtype == np.bool_ for dtype in dtypes) or any(isinstance(part, list) and part and
                                                          isinstance(part[0], bool) for part in parts):
        return "bool"
    return "array" if dtypes or any(isinstance(part, list) for part in parts) else "slice"


class _Watched(np.ndarray):
    """A NumPy array whose reads are counted in the `Reads` it carries, as are those of every array made from it."""

    def __array_finalize__(self, obj):
        self._reads = getattr(obj, "_reads", None)

    def __getitem__(self, key):
        picked = super().__getitem__(key)
        reads = getattr(self, "_reads", None)
        if reads is not None and reads.on:
            reads.picks.append((tuple(self.shape), _kind(key), _integers(key), int(getattr(picked, "size", 1))))
        return picked

    def __iter__(self):
        reads = getattr(self, "_reads", None)
        if reads is not None and reads.on and self.ndim:
            reads.iterations.append(int(self.shape[0]))
        return super().__iter__()


def _watched(array: np.ndarray, reads: Reads):
    """`array` as a watched NumPy array sharing its memory."""
    watched = array.view(_Watched)
    watched._reads = reads
    return watched


def _asarray(a, dtype=None, order=None, *, copy=None, **_):
    """np.asarray keeping a watched array watched, its copy (copy=True) a copy still, its order kept."""
    return np.array(a, dtype, copy=True if copy else None if copy is None else False, order=order or "K", subok=True)


class _NumpyKeepingWatch:
    """NumPy, but for its conversions, which keep a watched array watched (np.asarray, np.ascontiguousarray make
    plain ones); a copy asked for is made."""

    asarray = staticmethod(_asarray)
    ascontiguousarray = staticmethod(lambda a, dtype=None, **_: np.require(a, dtype, "C"))
    array = staticmethod(lambda a, *args, **kwargs: np.array(a, *args, **{**kwargs, "subok": True}))

    def __getattr__(self, name):
        return getattr(np, name)


@contextlib.contextmanager
def _as_numpy(student):
    """The student's globals with their array modules (`xp`, the notebook's, and NumPy's names) NumPy keeping
    the watch, while the call runs (`names_replaced`: module-wide, a thread of the notebook running meanwhile
    sees NumPy)."""
    keeping = _NumpyKeepingWatch()
    with names_replaced(student, lambda name, module: keeping if name in ("xp", "np", "numpy") and hasattr(
            module, "ndarray") and hasattr(module, "asarray") else None):
        yield


def reads_of(student, arrays: tuple, others: tuple = ()) -> Reads | None:
    """What `student(*arrays, *others)` reads of its arrays (watched NumPy copies of `arrays`, `xp` NumPy);
    None where the call fails (its values were checked before: that call told its errors)."""
    reads = Reads()
    passed = [_watched(np.array(a, copy=True), reads) for a in arrays]
    try:
        with _as_numpy(student):
            student(*passed, *others)
    except Exception:  # noqa: BLE001 (see above)
        return None
    finally:
        reads.on = False
    return reads


def loop_over(student, arrays: tuple, others: tuple, per: str, what: str) -> None:
    """A loop over the first axis of `arrays[0]` (the images) refused,
    whatever its spelling, with the hint _no_loop gives a `for`."""
    reads = reads_of(student, arrays, others)
    if reads is not None and reads.over(np.shape(arrays[0])):
        raise NotYet(f"right values, but from a Python loop over the {per}s (map, a generator, a while loop or recursion "
                     f"takes them one by one too), which makes one call (a kernel launch on a GPU) per {per}. {what}")


def edges_picked_one_by_one(student, values) -> None:
    """The deciles' nine edges picked by scalar indexings (a loop, a comprehension, nine lines): the exercise
    picks them with one device array of the indices."""
    reads = reads_of(student, (values,))
    if reads is None:
        return
    scalars = sum(len(shape) == 1 and (kind == "int" or kind == "slice" and size <= 1) for shape, kind, _, size in reads.picks)
    if scalars >= 3:
        raise NotYet(f"right edges, but picked by {scalars} scalar indexings of the sorted values, one launch each on a "
                     "GPU: index them once with a device array of the nine indices, ordered[xp.asarray(index)]")


#: The library functions that select by a boolean mask without indexing (np.extract(mask, image)...).
_MASK_SELECTIONS = ("extract", "compress")


def values_by_mask(student, image, threshold, names: set[str]) -> None:
    """The bright cells' values taken by a boolean mask (image[mask], xp.extract) where the exercise takes
    them by integer-array indexing at the coordinates; a loop over the cells refused as well."""
    reads = reads_of(student, (image,), (threshold,))
    masked = names & set(_MASK_SELECTIONS) or reads is not None and any(
        kind == "bool" and int(np.prod(shape)) == image.size for shape, kind, *_ in reads.picks)
    if masked:
        raise NotYet("right values, but taken by a boolean mask (image[mask]): the exercise takes them by integer-array "
                     "indexing at the coordinates, image[coordinates[:, 0], coordinates[:, 1]]")
    cells = int((np.asarray(image) > threshold).sum())
    if reads is not None and cells > 2 and (cells in reads.iterations or reads.ints() >= 3):
        raise NotYet("right values, but from a Python loop over the cells (map, a generator, a loop of image[r, c]), one "
                     "indexing (a launch on a GPU) per cell: index the image once with the two integer arrays, "
                     "image[coordinates[:, 0], coordinates[:, 1]]")




def _peak_bytes(student, arrays: tuple) -> int | None:
    """The most memory that student(*arrays) held at once beyond what was held before it, run as the watch runs
    it (`xp` NumPy, whose arrays' memory tracemalloc traces, on a GPU as on the CPU); None where the call fails, and
    while another (non-daemon) thread of the notebook runs: tracemalloc counts every thread's memory, and theirs
    would count as the call's."""
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.current_thread()):
        return None
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        with _as_numpy(student):
            student(*arrays)
        return tracemalloc.get_traced_memory()[1] - before
    except Exception:  # noqa: BLE001 (its values were checked before: that call told its errors)
        return None
    finally:
        if not was_tracing:
            tracemalloc.stop()


#: The batch the similarity's memory is measured on: many small images, so that an (images, images, cells)
#: temporary (32 times the batch) stands far above the few copies of the batch a matrix product's answer makes.
_MANY_IMAGES, _SMALL_GRID = 32, (17, 19)


def pairs_broadcast(student) -> None:
    """A similarity right in its values but computed without a matrix product, every pair's product broadcast,
    (rows[:, None, :] * rows[None, :, :]).sum(2), however spelt (4-D images, xp.multiply, np.sum): the call's peak of memory is
    then half or more of that (images, images, cells) temporary's size, told by the memory, not the spelling. A
    matrix product (@, matmul, dot, tensordot, einsum('ic,jc->ij'), which CuPy hands to cuBLAS too, and which the
    notebook's "one matrix product" counts as such) holds a few copies of the batch at most."""
    images = batch(images=_MANY_IMAGES, grid=_SMALL_GRID)
    temporary = _MANY_IMAGES * images.nbytes  # (images, images, cells) in float32
    peak = _peak_bytes(student, (images,))
    if peak is None or peak < temporary // 2:
        return
    raise NotYet(f"right values, but with no matrix product: your broadcast made an (images, images, cells) temporary, "
                 f"{peak / images.nbytes:.0f} times the batch's memory. The exercise asks for one matrix product, "
                 "which sums as it multiplies: rows @ rows.T (or xp.matmul, xp.dot, xp.einsum('ic,jc->ij'))")
