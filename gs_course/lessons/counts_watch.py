"""The CuPy notebook's counts (how many cells of each cell's window lie inside the grid) made on the
host and copied to the device at every call of the student's Laplacian, where the notebook makes them
once a grid shape (a functools.cache'd window_counts) and warns that each copy pays section 1's toll.

Watched through the host's maker, `gs_course.model.window_counts`: a cached function calls it once a
grid shape, the first time; a Laplacian that calls it again for a grid it has already seen makes
(and copies) them at every call. Told alike with CuPy on a GPU and with NumPy in its place, where the
copy itself costs nothing but the code is the same. cuPyNumeric's checker watches its copies itself
(`legate_check.host_arrays_sent`); JAX traces the call once, the counts a constant of the program.
"""

from __future__ import annotations

import contextlib
import weakref

from .hints import NotYet
from .. import model

#: The grid shapes whose counts each student function has made, over the checker's calls.
_MADE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def counts_made_again(student, what: str):
    """While `student` runs: the hint where it makes the counts of a grid it made them for before
    (in an earlier call of the checker's)."""
    made, original = [], model.window_counts

    def watched(rows, cols, *args, **kwargs):
        made.append((int(rows), int(cols)))
        return original(rows, cols, *args, **kwargs)

    model.window_counts = watched
    try:
        yield
    finally:
        model.window_counts = original
    try:
        seen = _MADE.setdefault(student, set())
    except TypeError:  # not weakly referable (a builtin, a callable object of a kind without it): not watched
        return
    again = [shape for shape in made if shape in seen]
    seen.update(made)
    if again:
        raise NotYet(f"{what} makes the counts on the host and copies them to the device at every call "
                     f"(model.window_counts({again[0][0]}, {again[0][1]}) again): call the notebook's cached "
                     "window_counts(rows, cols) instead")
