"""Two mistakes of a time loop whose values alone do not say what they are: a loop that takes another
number of steps than its argument (the notebook's size.steps_per_image), and, with cuPyNumeric, a
loop that waits for Legate (a blocking execution fence) after every step.

The number of steps is read from the values: the state the loop returns is the reference's after k
steps. The fences are counted while the student's code runs: Legate's runtime object cannot be
changed (a Cython type), so the names the notebook reaches it by (get_legate_runtime, imported there,
or the runtime kept in a name) are replaced, while the checker runs, by ones that hand out a runtime
that counts its fences and passes everything else on. A round trip through the host (np.asarray,
float(), .item()), which also waits, is `check_core`'s.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from .check_core import NotYet, _of_a_library, names_replaced, notebook_of
from ..model import initial_state, reference_step

#: The most steps a run's result is followed to, to find the number of steps it took.
_FOLLOWED = 2000


def steps_taken(arrays, student, steps: int, p, atol: float, loop: str) -> str | None:
    """Where `arrays`, (u, v) that `student` returned after `steps` steps from the initial state, are
    the reference's after k steps, k other than steps (0, 1 and steps +- 1 have hints of their own),
    the hint that names k, and the notebook's size.steps_per_image where k is that; else None.
    `loop`: the exercise's loop over its argument steps."""
    own = getattr((notebook_of(student) or {}).get("size"), "steps_per_image", None)
    limit = min(max(4 * steps + 8, own + 1 if isinstance(own, int) else 0), _FOLLOWED)
    u, v = initial_state(*arrays[0].shape, np.float64)
    for k in range(1, limit + 1):
        u, v = reference_step(u, v, p)
        if k > 1 and abs(k - steps) > 1 and all(np.allclose(g, w, rtol=0, atol=max(atol, 1e-4))
                                                for g, w in zip(arrays, (u, v))):
            named = " (the notebook's size.steps_per_image?)" if k == own else ""
            return (f"your time loop runs {k} steps{named}, not steps = {steps}, the argument it is given: loop over "
                    f"that, {loop}")
    return None


def _legate_runtime():
    """Legate's get_legate_runtime where the notebook has imported Legate, else None (importing it here
    would start Legate in a notebook of another library)."""
    return getattr(sys.modules.get("legate.core"), "get_legate_runtime", None)


class _Counting:
    """Legate's runtime, its fences counted (those the student's code issues, not a library's own)."""

    def __init__(self, runtime, count: list):
        self._runtime, self._count = runtime, count

    def __getattr__(self, name):
        return getattr(self._runtime, name)

    def issue_execution_fence(self, *args, **kwargs):
        if not _of_a_library(sys._getframe(1)):
            self._count[0] += 1
        return self._runtime.issue_execution_fence(*args, **kwargs)


@contextlib.contextmanager
def fences_at_most(student, most: int, what: str, steps: int):
    """NotYet, at the end, where `student`'s code issued more than `most` Legate execution fences while
    inside (a run of `steps` steps): each one waits for every task issued so far, and the overlap of
    Python issuing with Legate running, which section 2 measures, is gone. Nothing is counted where
    Legate is not here, or where the notebook reaches its runtime by no name of its own."""
    factory = _legate_runtime()
    if factory is None:
        yield
        return
    count = [0]
    runtime = _Counting(factory(), count)
    with names_replaced(student, lambda name, value: (lambda: runtime) if value is factory
                        else runtime if value is runtime._runtime else None):
        yield
    if count[0] > most:
        each = "at every call" if most == 0 else f"{count[0]} times in a run of {steps} steps"
        raise NotYet(f"{what} waits for Legate {each} (issue_execution_fence(block=True), the notebook's "
                     "wait_for_legate()): Legate runs the tasks while Python issues the next ones, and each fence "
                     "stops Python until all have run. Leave the fences out of the steps; timed() fences once, after "
                     "the run")
