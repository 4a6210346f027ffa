"""How tutorial 4's checkers (`gs_course.lessons.analysis_check`) call the student's array functions:
each checker's student function read from its signature before any call and every error of the
student's own code told in one line, wherever the checker calls it (`exercise`); the call on device
copies of the inputs, an input changed in place refused (`called`); the result brought to the host
(`returned`); the library calls it makes seen as it runs (`library_calls`) and the names its code
uses (`names_used`), for what the values alone do not tell (a binary search, the edges from
percentile).
"""

from __future__ import annotations

import contextlib
import functools
import importlib

import numpy as np

from .check_core import NotYet, _changed, _to_numpy, their_errors
from .hints import checks
from .legate_check import nested_codes


def their_errors_of(*hints: tuple):
    """The exercises' typical errors (exception type, pattern of its message, hint) named, and any other
    error of the student's own code in one line (check_core's rule, the same in every notebook)."""
    return their_errors("your function", hints)


def exercise(call: str):
    """A checker of the student function the notebook calls as `call` ("mass(images)"): its signature
    read first (`checks`: not a function, other parameters, the same names in another order), then any
    error of the student's own code one line ("your function raised ...", with its line), wherever the
    checker calls it: its first call, a second batch, another argument. The checker's own `their_errors_of`
    blocks, inside, name the exercise's typical errors first; an error of the checker's own shows as it is."""
    def decorate(checker):
        @checks(call)
        @functools.wraps(checker)
        def checked(student, *args, **kwargs):
            with their_errors_of():
                return checker(student, *args, **kwargs)
        return checked
    return decorate


def called(student, arrays: tuple[np.ndarray, ...], *others, to_device=np.asarray, what: str = "images"):
    """The student's result on device copies of `arrays` (then `others`): a function that changes an
    input in place is refused, as its caller still needs it (and the checker's reference with it)."""
    passed = [to_device(a.copy()) for a in arrays]
    result = student(*passed, *others)
    if _changed(passed, arrays):
        raise NotYet(f"your function changed its input, the {what} it was given (an in-place *=, /=, .sort() or "
                     "a[...] = ...): compute into new arrays, the caller still needs its own")
    return result


def returned(result, what: str, device_type: type | None) -> np.ndarray:
    """The student's array on the host; a list (a Python loop's results) is refused."""
    if isinstance(result, tuple) and 1 < len(result) <= 3 and all(hasattr(part, "shape") for part in result):
        raise NotYet(f"you returned {len(result)} arrays, a tuple: return {what} alone, "
                     "one array")
    if isinstance(result, (list, tuple)):
        raise NotYet(f"{what} is a Python {type(result).__name__}: compute it in one call over the whole batch, "
                     "which returns one array")
    return _to_numpy(result, what, device_type)


@contextlib.contextmanager
def library_calls(device_type, names: tuple[str, ...]):
    """The calls of the student's library's functions `names` (those it has) while the student runs, a list of
    (name, args, kwargs): the library is CuPy where `device_type` is its array, else NumPy."""
    module = importlib.import_module(device_type.__module__.split(".")[0] if device_type is not None else "numpy")
    calls, originals = [], {name: getattr(module, name) for name in names if hasattr(module, name)}

    def watched(name):
        def call(*args, **kwargs):
            calls.append((name, args, kwargs))  # the arrays too: searched_in_a_batch reads the one searched in
            return originals[name](*args, **kwargs)
        return call

    for name in originals:
        setattr(module, name, watched(name))
    try:
        yield calls
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


def names_used(function) -> set[str]:
    """The attribute and global names the function's code (nested code included) uses: a method
    call (edges.searchsorted) is not seen by `library_calls`."""
    return {name for code in nested_codes(function) for name in code.co_names}
