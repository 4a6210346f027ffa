"""A Legate task's Python body tried outside Legate before the task runs. An exception inside a task
that lacks `may_throw_exception=True` stops the whole process: the notebook's kernel dies and the
student's state with it, with a 60-line LEGATE ERROR dump. So the first call of each task the
student's function names runs the task's body on NumPy copies of the arguments it is handed
(np.asarray of a NumPy array is itself), where an exception is the student's and is told in one line,
and where an output filled with NaN shows the rows or columns the body never writes. It costs one
run of the body on the checker's small grid.
"""

from __future__ import annotations

import contextlib
import inspect
import re

import numpy as np

from .check_core import NotYet, _checkers_own_copies, their_errors
from .legate_check import _task_bodies, _tasks


@contextlib.contextmanager
def bodies_tried_first(student):
    """While it lasts, the first call of each Legate task `student` names through the notebook's
    globals tries the task's body first (`_trial`): a hint there is raised as NotYet before Legate
    runs the task. The task stands in the notebook under its name again afterwards."""
    notebook = getattr(student, "__globals__", {})
    tasks = {name: task for name, task in _tasks(student).items() if notebook.get(name) is task}
    for name, task in tasks.items():
        notebook[name] = _tried_first(name, task)
    try:
        yield
    finally:
        notebook.update(tasks)


def _tried_first(name: str, task):
    tried = []

    def call(*args, **kwargs):
        if not tried:
            tried.append(True)
            for body in _task_bodies(task):
                hint = _trial(name, body, args, kwargs)
                if hint:
                    raise NotYet(hint)
        return task(*args, **kwargs)

    call.__wrapped__ = task  # still the task for legate_check's readings
    return call


def _is_output(parameter) -> bool:
    return "OutputArray" in getattr(parameter.annotation, "__name__", str(parameter.annotation))


#: What a NumPy copy lacks of Legate's PhysicalArray, which a right body may use (np.asarray(u.data()),
#: u.type, u.domain()): the copy cannot stand in for it, so the trial gives way to the task.
_STAND_IN_LACKS = re.compile(r"'numpy\.ndarray' object has no attribute|'memoryview' object is not callable")


def _unwritten(output) -> np.ndarray:
    """An output's stand-in: NaN in the output's own dtype (a body may read it), float64 for another kind."""
    dtype = np.dtype(getattr(output, "dtype", np.float64))
    return np.full(output.shape, np.nan, dtype if np.issubdtype(dtype, np.floating) else np.float64)


def _trial(name: str, body, args, kwargs) -> str | None:
    """The hint for `body` run on NumPy copies of the task's arguments, its outputs NaN, else None."""
    signature = inspect.signature(body)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None  # Legate tells a call that does not fit the task
    outputs = [p.name for p in signature.parameters.values() if _is_output(p)]
    with _checkers_own_copies():  # the checker's copies, not the student's round trips
        for key, value in bound.arguments.items():
            if hasattr(value, "shape") and hasattr(value, "__array__"):
                bound.arguments[key] = _unwritten(value) if key in outputs else np.array(value)
    try:  # the student's error told as any error of theirs is: a common mistake's hint, or what and where
        with np.errstate(all="ignore"), their_errors(f"your task {name}", library="cupynumeric"):
            try:
                body(*bound.args, **bound.kwargs)
            except (AttributeError, TypeError) as err:
                if _STAND_IN_LACKS.search(str(err)):
                    return None  # Legate's own array API (u.data(), u.type, u.domain): the task itself tells
                raise
    except NotYet as told:
        return f"{told}{_may_throw(body)}"
    for output in outputs:
        unwritten = np.isnan(np.asarray(bound.arguments.get(output, np.zeros(0)), np.float64))
        lines = _whole_lines(unwritten) if unwritten.ndim == 2 and unwritten.any() and not unwritten.all() else None
        if lines:
            return (f"your task {name} never writes {output}'s {lines}: write the whole output, "
                    f"np.asarray({output})[:] = a")
    return None


def _may_throw(body) -> str:
    """What to do where the task's decorator lacks may_throw_exception (read from its source)."""
    try:
        source = inspect.getsource(body)
    except (OSError, TypeError):
        return ""
    if "may_throw_exception" in source[: source.find("def ")]:
        return ""
    return ("; put may_throw_exception back while it fails, options=VariantOptions(may_throw_exception=True): "
            "without it an error inside a task stops the whole kernel")


def _whole_lines(unwritten: np.ndarray) -> str | None:
    """The rows and columns `unwritten` whole ("row 34 (the last)"), where they are all of it, else None
    (cells here and there are an overflow's NaN, not a slice left out)."""
    rows, cols = np.flatnonzero(unwritten.all(axis=1)), np.flatnonzero(unwritten.all(axis=0))
    covered = np.zeros_like(unwritten)
    covered[rows, :] = True
    covered[:, cols] = True
    if not np.array_equal(covered, unwritten):
        return None

    def named(indices, count: int, what: str) -> list[str]:
        edge = {0: " (the first)", count - 1: " (the last)"}
        return [f"{what} {i}{edge.get(int(i), '')}" for i in indices]

    return " and ".join(named(rows, unwritten.shape[0], "row") + named(cols, unwritten.shape[1], "column"))
