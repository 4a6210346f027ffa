"""A step, a time loop or the images that call the student's own function of an earlier exercise (their
`laplacian`, their `step`, their `run`) which is still wrong is wrong because of it: the hint names that
exercise, where its cell's catch-up (`%catch_up N`) loads a right one, instead of the values of
the exercise being checked, which the student may well have right. Likewise a step that returns a
list, right on its own, which a loop's carry cannot take back: the hint names the step, not the loop.
"""

from __future__ import annotations

import contextlib
import inspect
import json

import numpy as np

from .check_core import PARAMS, NotYet, _to_numpy
from .jax_programs import LIST_CARRY
from .legate_check import _globals_used
from .notebooks import SOLUTIONS, exercises
from ..model import laplacian as reference_laplacian, reference_step

#: The earlier exercises' functions, by the name the notebooks give them, and the checker each has.
_EARLIER = {"laplacian": "check.laplacian(", "step": "check.step(", "run": "check.time_loop("}

#: Each library's notebook (by the end of its file name): where the exercise numbers come from.
_NOTEBOOKS = {"jax": "_JAX", "cupynumeric": "_cuPyNumeric", "cupy": "_CuPy"}


def _theirs(student) -> list[tuple[str, object]]:
    """The notebook's functions of the earlier exercises that `student` calls, directly or through
    another of them, the deepest first (a time loop's step calls the laplacian); gs_course's own
    (model.laplacian, a checker's launcher) are right."""
    student = inspect.unwrap(student)  # a jitted function's Python one
    if not inspect.isfunction(student):
        return []
    found, todo = [], [student]
    while todo:
        function = todo.pop()
        for name, value in sorted(_globals_used(function).items()):
            value = inspect.unwrap(value) if callable(value) else value  # a jitted run or step: its Python function
            if (name in _EARLIER and inspect.isfunction(value) and value is not student
                    and not value.__module__.startswith("gs_course") and (name, value) not in found):
                found.insert(0, (name, value))
                todo.append(value)
    return found


def _still_wrong(name: str, function, to_device) -> bool:
    rng = np.random.default_rng()
    u, v = (rng.random((35, 41), dtype=np.float32) for _ in range(2))
    try:
        if name == "laplacian":
            got, want = [function(to_device(u.copy()))], [reference_laplacian(u.astype(np.float64))]
        elif name == "step":
            got = function(to_device(u.copy()), to_device(v.copy()), PARAMS)
            want = reference_step(u.astype(np.float64), v.astype(np.float64), PARAMS)
        else:
            got = function(to_device(u.copy()), to_device(v.copy()), PARAMS, 2)
            want = reference_step(*reference_step(u.astype(np.float64), v.astype(np.float64), PARAMS), PARAMS)
        return not all(np.allclose(_to_numpy(g, "", None), w, rtol=0, atol=1e-4) for g, w in zip(got, want))
    except Exception:  # noqa: BLE001 (an error is as wrong as a value)
        return True


def _exercise(library: str | None, name: str) -> int | None:
    """The number of the exercise whose checker is `name`'s in that library's notebook, else None."""
    paths = sorted(SOLUTIONS.glob(f"*{_NOTEBOOKS.get(library or 'cupy', '?')}.ipynb"))
    if not paths:
        return None
    solved = exercises(json.loads(paths[0].read_text()))
    return next((n for n, cell in enumerate(solved, 1) if _EARLIER[name] in cell), None)


@contextlib.contextmanager
def list_from_step_told(student, to_device):
    """A loop's body that returns a list where its start is a tuple (`LIST_CARRY`) is told where the
    list comes from where it is the notebook's step: right for the step exercise on its own (a pair
    either way), but lax.fori_loop takes it back as the carry, which must stay the tuple it started
    as. The student's loop itself is right: a hint about its carry or start would mislead."""
    try:
        yield
    except NotYet as err:
        if LIST_CARRY in str(err) and (hint := _step_returning_a_list(student, to_device)):
            raise NotYet(hint) from None
        raise


def _step_returning_a_list(student, to_device) -> str | None:
    for name, function in _theirs(student):
        if name == "step":
            u = to_device(np.ones((5, 7), np.float32))
            with contextlib.suppress(Exception):  # an error says nothing of a list
                if isinstance(function(u, u, PARAMS), list):
                    return ("your step returns a list: lax.fori_loop's body must return the same structure as its "
                            "start, the tuple (u, v): return a tuple from step (return u + ..., v + ...)")
    return None


def still_wrong_earlier(student, library: str | None, to_device, what: str) -> str | None:
    """The hint for `student` (a step, a time loop) that calls its notebook's earlier function which is
    still wrong, else None."""
    for name, function in _theirs(student):
        if _still_wrong(name, function, to_device):
            number = _exercise(library, name)
            fix = (f"fix exercise {number} first (or type %catch_up {number} in its cell and run it)" if number
                   else "fix it first")
            return f"{what} calls your {name}, which is still wrong: {fix}, then run this cell again"
    return None
