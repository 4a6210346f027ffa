"""What a Legate task's body may not do, found by reading its code before it runs.

Inside a task, a processor works on its piece of the arrays with NumPy: a cuPyNumeric call there
asks Legate's runtime to issue work from a context that cannot (Legion stops the whole process with
"Invalid task context", the notebook's kernel dies). So before the student's function runs, the
Legate tasks it reaches (through the names its code uses, and the functions of the notebook those
call) are opened, and a body that reaches cuPyNumeric, directly or through a function of the
notebook, is told in one line that says what to do (`gs_course.lessons.checkers` raises it as its hint).
"""

from __future__ import annotations

import dis
import gc
import inspect
import re
import types

import numpy as np

from .hints import NotYet

#: Arrays smaller than this are cuPyNumeric's bookkeeping (a shift tuple made an array), not a grid.
_GRID_CELLS = 64

#: How deep the functions a function calls are followed (the notebook's step calls its Laplacian...).
_DEPTH = 4


#: The instructions that read a global name (co_names also holds attribute names: model.laplacian's
#: `laplacian` is gs_course's, not the notebook's function of that name).
_LOADS_A_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME"}


def nested_codes(function) -> list:
    """The code object of `function` (or `function` itself, a code object; none for a callable without
    code) and those nested in it: its comprehensions, its inner functions and theirs. Every reading
    of a student's function walks these, not its top level alone."""
    codes, pending = [], [function if isinstance(function, types.CodeType) else getattr(function, "__code__", None)]
    while pending:
        code = pending.pop()
        if code is not None:
            codes.append(code)
            pending += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return codes


def _globals_used(function) -> dict:
    """The global names `function`'s code (and the code nested in it) reads, with their values."""
    names = {i.argval for code in nested_codes(function) for i in dis.get_instructions(code)
             if i.opname in _LOADS_A_GLOBAL}
    scope = {**getattr(function, "__globals__", {})}
    for cell_name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            scope[cell_name] = cell.cell_contents
            names.add(cell_name)
        except ValueError:  # a cell not yet filled
            pass
    return {name: scope[name] for name in names if name in scope}


def _is_legate_task(value) -> bool:
    return type(value).__name__ == "PyTask" and type(value).__module__.startswith("legate")


def _task_bodies(task, runnable_here: bool = False) -> list:
    """The Python functions of a Legate task's variants, each once (PyTask keeps them in a dict it refers
    to, by variant: one function is often every variant's). `runnable_here`: only those of the processors
    this machine has (a GPU variant's body may import CuPy, which a machine without a GPU lacks)."""
    variants = [(code, f) for referent in gc.get_referents(task) if isinstance(referent, dict)
                for code, f in referent.items() if inspect.isfunction(f)]
    if runnable_here:
        from legate.core import TaskTarget, get_legate_runtime

        machine = get_legate_runtime().get_machine()
        here = {target.name for target in (TaskTarget.CPU, TaskTarget.GPU, TaskTarget.OMP) if machine.count(target)}
        variants = [(code, f) for code, f in variants if getattr(code, "name", None) in here]
    return list({id(f): f for _, f in variants}.values())


def _of_cupynumeric(value) -> bool:
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    if not isinstance(module, str) and not isinstance(value, types.ModuleType):
        module = type(value).__module__
    return isinstance(module, str) and module.split(".")[0] == "cupynumeric"


def _reaches_cupynumeric(function, home: str, depth: int = _DEPTH, seen=None) -> str | None:
    """The name through which `function` reaches cuPyNumeric ("cnp", or "step -> cnp"), else None.
    Functions of `home` (the notebook's module) are followed; the library's are not (gs_course's
    model is NumPy's)."""
    seen = seen if seen is not None else set()
    if function in seen or depth < 0:
        return None
    seen.add(function)
    used = _globals_used(function)
    direct = sorted(name for name, value in used.items() if _of_cupynumeric(value))
    if direct:
        return direct[0]
    for name, value in sorted(used.items()):
        if inspect.isfunction(value) and value.__module__ == home:
            inner = _reaches_cupynumeric(value, home, depth - 1, seen)
            if inner:
                return f"{name} -> {inner}"
    return None


def _tasks(student) -> dict:
    """The Legate tasks of the notebook's that `student`'s code names, by name ({} for a non-function);
    the stand-in of `task_trial.bodies_tried_first` is its task."""
    if not inspect.isfunction(student):
        return {}
    return {name: task for name, value in _globals_used(student).items()
            if _is_legate_task(task := getattr(value, "__wrapped__", value))}


def library_calls_in_tasks(student) -> str | None:
    """The hint for a function whose Legate tasks call cuPyNumeric inside their body, else None."""
    for name, task in _tasks(student).items():
        for body in _task_bodies(task):
            through = _reaches_cupynumeric(body, body.__module__)
            if through:
                return (f"your task {name} calls cuPyNumeric inside its body (through {through}), which stops "
                             "the whole kernel: inside a task, work with NumPy on the task's arrays (np.asarray(u), "
                             "model.reference_step), never cnp")
    return None


def _decorator_of(body) -> str | None:
    """The source of a task body's decorator (the lines above its def), None where its source cannot
    be read: the task's constraints and options are read from there, as the student wrote them."""
    try:
        source = inspect.getsource(body)
    except (OSError, TypeError):
        return None
    return source[: source.find("def ")]


def task_decorator(task) -> str | None:
    """The source of the task's own decorator, `@task(...)`, where its constraints and options are (a
    variant added with task.gpu_variant has none of its own); None where no body's source shows it."""
    headers = (_decorator_of(body) for body in _task_bodies(task))
    return next((header for header in headers if header and re.search(r"@\s*(?:[\w.]+\.)?task\b", header)), None)


def arrays_not_kept_whole(student) -> str | None:
    """The hint for a task of `student`'s whose array arguments lack their broadcast constraint, read
    from its decorator, else None (also where its source cannot be read). Without it Legate may hand
    each processor a piece of an array; one processor (a laptop's CPU) never shows it, several do,
    at every piece's edge, where the stencil needs the neighbours another piece holds."""
    for name, task in _tasks(student).items():
        header = task_decorator(task)
        for body in _task_bodies(task) if header else ():
            arrays = [argument for argument, kind in body.__annotations__.items()
                      if getattr(kind, "__name__", str(kind)) in ("InputArray", "OutputArray")]
            loose = [a for a in arrays if not re.search(rf"broadcast\(\s*['\"]{a}['\"]", header)]
            if loose:
                return (f"your task {name} does not keep {', '.join(loose)} whole: add broadcast(\"{loose[0]}\") to its "
                        "constraints, for each array. Without it Legate may hand each processor a piece of the array, "
                        "and at a piece's edge the stencil needs neighbours another piece holds (one processor never "
                        "shows it; a GPU node's several do)")
    return None


def _loads(code, name: str) -> bool:
    """Whether `code` (or code nested in it) reads the local or enclosed variable `name`."""
    for instruction in (i for nested in nested_codes(code) for i in dis.get_instructions(nested)):
        value = instruction.argval
        if instruction.opname.startswith("LOAD_") and (value == name or isinstance(value, tuple) and name in value):
            return True
    return False


def outputs_never_written(student) -> str | None:
    """The hint for a task of the student's whose body never reads an OutputArray it gets (a body
    that only rebinds it, u_out = a, or leaves it out): nothing is written into that output, and
    what Legate hands back in it is whatever its memory held (zeros, or an earlier array's values)."""
    for name, task in _tasks(student).items():
        for body in _task_bodies(task):
            outputs = [p.name for p in inspect.signature(body).parameters.values()
                       if "OutputArray" in getattr(p.annotation, "__name__", str(p.annotation))]
            unwritten = [output for output in outputs if not _loads(body.__code__, output)]
            if unwritten:
                return (f"your task {name} never writes {' and '.join(unwritten)} (its body does not use "
                        f"{'them' if len(unwritten) > 1 else 'it'}, or only rebinds the name): an OutputArray is "
                        f"written through its NumPy view, np.asarray({unwritten[0]})[:] = a")
    return None


def reaches_a_task(student) -> bool:
    """Whether `student` launches a Legate task of the notebook's (its outputs are written, not returned)."""
    return bool(_tasks(student))


def host_arrays_sent(call) -> list[tuple]:
    """The shapes of the NumPy arrays of a grid's size that cuPyNumeric copied to the device while
    `call()` ran (a NumPy operand mixed into cnp's operations, cnp.asarray of a host array): on a
    second call with the same grid, each is a host-to-device copy made at every call."""
    from cupynumeric.runtime import runtime

    sent, original = [], runtime.find_or_create_array_thunk

    def counted(obj, *args, **kwargs):
        if isinstance(obj, np.ndarray) and obj.size >= _GRID_CELLS:
            sent.append(obj.shape)
        return original(obj, *args, **kwargs)

    runtime.find_or_create_array_thunk = counted
    try:
        call()
    finally:
        del runtime.find_or_create_array_thunk  # the class's method again
    return sent


def convolutions_run(call) -> int | None:
    """How many convolutions cuPyNumeric ran while `call()` ran: cnp.convolve, np.convolve of a cnp
    array (cuPyNumeric takes it over) and cupynumeric.ndimage.convolve each reach a deferred array's
    convolve, however the student's code spells the call. None where this cuPyNumeric has no such
    method to watch (its internals are not an API). The exercise convolves with the 3 x 3 window: a
    window of another shape (the separable 1 x 3 then 3 x 1, two tasks where one does) is refused here,
    where the windows are seen."""
    try:
        from cupynumeric._thunk.deferred import DeferredArray
    except ImportError:
        return None
    ran, originals = [0], {name: vars(DeferredArray)[name] for name in ("convolve", "ndimage_convolve")
                           if name in vars(DeferredArray)}
    if "convolve" not in originals:
        return None

    windows = []

    def counted(original):
        def convolve(self, *args, **kwargs):
            ran[0] += 1
            window = args[1] if len(args) > 1 else kwargs.get("filter", kwargs.get("weights"))  # (input, window, ...)
            windows.append(tuple(getattr(window, "shape", (3, 3))))
            return original(self, *args, **kwargs)
        return convolve

    for name, original in originals.items():
        setattr(DeferredArray, name, counted(original))
    try:
        call()
    finally:
        for name, original in originals.items():
            setattr(DeferredArray, name, original)
    other = [shape for shape in windows if shape != (3, 3)]
    if other:
        shapes = " and ".join(dict.fromkeys(" x ".join(map(str, shape)) for shape in other))
        raise NotYet(f"your function convolves with a {shapes} window ({ran[0]} convolutions, each a task of its own): "
                     "the exercise is one cnp.convolve of the grid with the 3 x 3 window, whose single pass sums the "
                     "whole window, cnp.convolve(a, window, mode=\"same\") - counts * a")
    return ran[0]
