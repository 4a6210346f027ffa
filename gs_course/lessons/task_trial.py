"""A Legate task's Python body tried outside Legate before the task runs. An exception inside a task
that lacks `may_throw_exception=True` stops the whole process: the notebook's kernel dies and the
student's state with it, with a 60-line LEGATE ERROR dump. So the first call of each task the
student's function names runs the task's body on NumPy copies of the arguments it is handed, each
behind the interface of Legate's task arrays (`_LegateLike`: np.asarray reads it, arithmetic and .shape
fail as in the task), where an exception is the student's and is told in one line,
and where an output filled with NaN shows the rows or columns the body never writes. It costs one
run of the body on the checker's small grid.
"""

from __future__ import annotations

import contextlib
import inspect
import linecache
import re
import warnings
from collections import Counter

import numpy as np

from .check_core import NotYet, _checkers_own_copies, notebook_lines, their_errors
from .legate_check import _task_bodies, _tasks, task_decorator


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
        if tried:  # the checker's first call of the student's function is the one watched: one task for all the steps
            raise NotYet(f"your function issues {name} more than once in one call (a task per step, in a Python loop?): "
                         f"the exercise's run_task issues one task for all the steps, {name}(u, v, u_out, v_out, steps, "
                         "...), and the task's body loops over the steps")
        tried.append(True)
        for body in _task_bodies(task, runnable_here=True):
            hint = _trial(name, body, args, kwargs, task_decorator(task))
            if hint:
                raise NotYet(hint)
        with np.errstate(all="ignore"), warnings.catch_warnings():  # a task run on garbage: its overflows are not told
            warnings.simplefilter("ignore", RuntimeWarning)
            return task(*args, **kwargs)

    call.__wrapped__ = task  # still the task for legate_check's readings
    return call


def _annotation(parameter) -> str:
    return getattr(parameter.annotation, "__name__", str(parameter.annotation))


def _is_output(parameter) -> bool:
    return any(kind in _annotation(parameter) for kind in ("OutputArray", "OutputStore"))


class _BeyondStandIn(AttributeError):
    """A member Legate's task array has and the stand-in lacks (u.data().bind_data, ...): a right body may
    use it, so the trial gives way to the task itself rather than blame the student."""


class _LegateLike:
    """A NumPy array behind the interface of one of Legate's task arrays, and no more: a body that works
    here works in the task, and what fails in the task fails here too, before it can stop the process.
    Legate's PhysicalArray (InputArray, OutputArray) and PhysicalStore (its .data()) are read by NumPy
    through __array_interface__ (np.asarray, np.pad, np.sum take them) and answer .type, .ndim, .domain;
    they have no arithmetic, indexing, len, iteration, .shape or .dtype, and neither has the stand-in: a
    Python class without those slots raises Python's own TypeError or AttributeError, naming the type,
    whose name here is the parameter's (`_stand_in`), so that the trial tells which argument was used."""

    _legate = "PhysicalArray"  # the class of legate.core whose members a right body may call

    def __init__(self, values: np.ndarray):
        self._values = values

    @property
    def __array_interface__(self):
        return self._values.__array_interface__

    @property
    def ndim(self) -> int:
        return self._values.ndim

    @property
    def type(self):
        from legate.core import Type  # only a task's trial gets here, with Legate loaded
        return Type.from_numpy_dtype(self._values.dtype)

    def _domain(self):
        from legate.core import Domain
        return Domain(lo=(0,) * self._values.ndim, hi=tuple(n - 1 for n in self._values.shape))

    def __getattr__(self, attr: str):
        import legate.core
        if not attr.startswith("__") and attr in dir(getattr(legate.core, self._legate)):
            raise _BeyondStandIn(attr)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")


class _TaskStore(_LegateLike):
    """Legate's PhysicalStore, what `.data()` gives: its domain is a property, its memory the host's."""

    _legate = "PhysicalStore"
    domain = property(_LegateLike._domain)

    @property
    def target(self):
        from legate.core import StoreTarget
        return StoreTarget.SYSMEM

    def __dlpack__(self, **kwargs):
        return self._values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._values.__dlpack_device__()


class _TaskArray(_LegateLike):
    """Legate's PhysicalArray: not nullable, not nested, its domain a method, its store `.data()`."""

    nullable = nested = False
    domain = _LegateLike._domain

    def data(self) -> _TaskStore:
        return _stand_in(_TaskStore, self._name, self._values)


#: How a stand-in's type is named, and found again in an error's message.
_STAND_IN_NAME = "task array {}"
_STAND_IN_NAMED = re.compile(r"'task array (\w+)'")


def _stand_in(kind: type, name: str, values: np.ndarray) -> _LegateLike:
    """`values` behind Legate's interface, in a type named after the task's parameter `name`."""
    return type(_STAND_IN_NAME.format(name), (kind,), {"_name": name})(values)


def _used_as_array(name: str, err: Exception) -> str | None:
    """The hint for an error the body met using a task array as a NumPy array, else None."""
    used = _STAND_IN_NAMED.search(str(err))
    if not isinstance(err, (AttributeError, TypeError)) or not used:
        return None
    arg = used.group(1)
    what = _STAND_IN_NAMED.sub(lambda m: m.group(1), str(err))
    if "item assignment" in what:
        return (f"your task {name} writes into {arg} itself ({what}): a task's array is written through its NumPy "
                f"view, np.asarray({arg})[:] = a")
    return (f"your task {name} uses {arg} as an array ({what}): a task's InputArray and OutputArray have no "
            f"arithmetic, indexing, len or .shape; inside a task take np.asarray({arg}) first and compute with that")


def _unwritten(output) -> np.ndarray:
    """An output's stand-in: NaN in the output's own dtype (a body may read it), float64 for another kind."""
    dtype = np.dtype(getattr(output, "dtype", np.float64))
    return np.full(output.shape, np.nan, dtype if np.issubdtype(dtype, np.floating) else np.float64)


def _trial(name: str, body, args, kwargs, header: str | None) -> str | None:
    """The hint for `body` run on NumPy copies of the task's arguments, its outputs NaN, else None;
    `header`: the task's decorator (`legate_check.task_decorator`), whose options the hint may name."""
    signature = inspect.signature(body)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return None  # Legate tells a call that does not fit the task
    outputs = [p.name for p in signature.parameters.values() if _is_output(p)]
    given = dict(bound.arguments)
    _stand_ins(signature, bound, given, outputs)
    cells = max((int(np.prod(value.shape)) for value in given.values() if hasattr(value, "shape")), default=0)
    try:  # the student's error told as any error of theirs is: a common mistake's hint, or what and where
        with np.errstate(all="ignore"), their_errors(f"your task {name}", library="cupynumeric"), \
                _no_loop_over_cells(body, cells, name):
            try:
                body(*bound.args, **bound.kwargs)
            except _BeyondStandIn:
                return None  # a member of Legate's the stand-in lacks: the task itself tells
            except (AttributeError, TypeError) as err:
                used = _used_as_array(name, err)
                if used:
                    return f"{used}{_may_throw(header)}"
                raise
    except NotYet as told:
        return f"{told}{_may_throw(header)}"
    for output in outputs:
        unwritten = np.isnan(np.asarray(getattr(bound.arguments.get(output), "_values", np.zeros(0)), np.float64))
        lines = _whole_lines(unwritten) if unwritten.ndim == 2 and unwritten.any() and not unwritten.all() else None
        if lines:
            return (f"your task {name} never writes {output}'s {lines}: write the whole output, "
                    f"np.asarray({output})[:] = a")
    return _outputs_read(name, body, signature, given, outputs, bound)


def _stand_ins(signature, bound, given: dict, outputs: list, filled: dict | None = None) -> None:
    """The task's arrays in `bound` as stand-ins of copies of `given`'s: each output NaN (never written), or
    the value `filled` gives it."""
    with _checkers_own_copies():  # the checker's copies, not the student's round trips
        for key, value in given.items():
            if hasattr(value, "shape") and hasattr(value, "__array__"):
                kind = _TaskStore if "Store" in _annotation(signature.parameters[key]) else _TaskArray  # InputStore: a store
                array = _unwritten(value) if key in outputs else np.array(value)
                if key in outputs and filled is not None and key in filled:
                    array[...] = filled[key]
                bound.arguments[key] = _stand_in(kind, key, array)


def _written(bound, outputs: list) -> dict:
    return {output: np.asarray(getattr(bound.arguments.get(output), "_values", np.zeros(0)), np.float64)
            for output in outputs}


def _outputs_read(name: str, body, signature, given: dict, outputs: list, bound) -> str | None:
    """The hint for a body whose results come from what its outputs held before it (NaN in the trial): it starts
    from u_out and v_out (np.asarray(u_out) where np.asarray(u) was meant) instead of its inputs. Told from the
    body run again with every output holding a number (0.5), then with each output alone NaN: an output it writes
    whose NaN reaches what the body writes is one it reads first (one it never writes is told as such elsewhere)."""
    if not any(np.isnan(values).any() for values in _written(bound, outputs).values()):
        return None

    def run(filled: dict) -> dict | None:
        again = signature.bind(*bound.args, **bound.kwargs)
        _stand_ins(signature, again, given, outputs, filled)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                body(*again.args, **again.kwargs)
        except Exception:  # noqa: BLE001 (the first run told its errors)
            return None
        return _written(again, outputs)

    numbers = run({o: 0.5 for o in outputs})
    if numbers is None:
        return None
    read = []
    for output in outputs:
        if (numbers[output] == 0.5).all():
            continue  # never written: outputs_never_written tells it
        alone = run({o: 0.5 for o in outputs if o != output})
        if alone is not None and any(np.isnan(values).any() for values in alone.values()):
            read.append(output)
    return _FROM_OUTPUTS.format(name=name, outputs=" and ".join(read), hold="hold" if len(read) > 1 else "holds") \
        if read else None


_FROM_OUTPUTS = ("your task {name} starts its steps from {outputs}, which {hold} nothing yet (the caller's empty_like: "
                 "whatever its memory held), not from its inputs: read the state from u and v, a, b = np.asarray(u), "
                 "np.asarray(v), and write the results into the outputs only, np.asarray(u_out)[:] = a")


def _may_throw(header: str | None) -> str:
    """What to do where the task's decorator lacks may_throw_exception (read from its source)."""
    if header is None or "may_throw_exception" in header:
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


@contextlib.contextmanager
def _no_loop_over_cells(body, cells: int, name: str):
    """A line of the task's body (or of the notebook's functions it calls) run as many times as the grid has
    `cells` is a Python loop over them, the technique the array exercises replace, inside a task too: each
    cell a Python step, millions a call at full size. Counted a line at a time, not in all (the array
    checkers' `check_core._no_loop_over_cells`): a body that runs the notebook's own step each step runs many
    lines, each a few times a step (21 steps here, a line a slice of the window: far fewer than the cells)."""
    notebook = getattr(body, "__globals__", None)
    if notebook is None or cells < 64:
        yield
        return
    ran = Counter()

    def line(frame):
        key = frame.f_code, frame.f_lineno
        ran[key] += 1
        if ran[key] >= cells:
            text = linecache.getline(frame.f_code.co_filename, frame.f_lineno, notebook).strip()
            raise NotYet(f"your task {name} runs a Python loop over the grid's cells (line {frame.f_lineno} of your "
                         f"cell, in {frame.f_code.co_name}{f', {text[:80]!r}' if text else ''}, run {cells} times on "
                         f"a grid of {cells} cells): inside a task too each cell is a Python step of its own, millions "
                         "a call at full size. Compute with NumPy on whole arrays: np.asarray(u_out)[:] = a")

    with notebook_lines(notebook, line):
        yield
