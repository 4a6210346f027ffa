"""Answer checkers for the exercises: each tests a student's function on fresh random inputs
against the reference and says precisely what is wrong.

Every checker prints one line starting with a tick when the answer is right (`ok`), and raises
`NotYet` with a hint otherwise. The hint names the mistake where it is a common one (the start
state returned, one step too few, U for V, dt on some terms only, the border's window counts, a
wrong return shape), and the technique is checked as well as the values: with JAX the function must
run under `jax.jit` (the time loop and the images one loop on the device, the pairs one `vmap`),
with cuPyNumeric no array may take a round trip through NumPy, the overlapped output must write
from a second thread. Inputs are copies: a function that changes its arguments in place is judged
on what it returns.

In IPython (Jupyter) a `NotYet` shows as its hint alone, without the traceback through this module;
the cell still fails, so `Run all` and nbval stop there. Other checker modules raise the same
`NotYet` and reuse `compare` and `ok`.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .legate_check import library_calls_in_tasks
from .model import PARITY_ATOL, initial_state, laplacian as reference_laplacian, reference_run, reference_step
from .notebooks import YOUR_TURN_MESSAGE
from .parameters import Parameters

#: Odd, non-square, different each time: a right answer cannot depend on the grid.
PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)


class NotYet(AssertionError):
    """The answer is not right yet; the message says why."""


def _show_hints_alone() -> None:
    """In an IPython kernel, a NotYet shows as one line: the hint (the cell still fails)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or NotYet in shell.custom_exceptions:
        return
    others, their_handler = shell.custom_exceptions, shell.CustomTB  # IPython keeps one handler: share it

    def show(shell, etype, value, tb, tb_offset=None):
        if not issubclass(etype, NotYet):
            return their_handler(etype, value, tb, tb_offset)
        hint = [f"\N{BALLOT X} {value}"]
        shell._showtraceback(etype, value, hint)  # IPython ignores what a handler returns here
        return hint

    shell.set_custom_exc((*others, NotYet), show)


_show_hints_alone()


def ok(message: str) -> None:
    """The line a right answer gets."""
    print(f"\N{CHECK MARK} {message}")


def _grid(rng) -> tuple[int, int]:
    return int(rng.integers(17, 40)) * 2 + 1, int(rng.integers(20, 45)) * 2 + 1


def _to_numpy(result, what: str, device_type: type | None) -> np.ndarray:
    if device_type is not None and isinstance(result, np.ndarray):
        raise NotYet(f"{what} is a NumPy array: it went back to the host. Keep it on the device "
                     f"({device_type.__module__.split('.')[0]} arrays all the way)")
    if result is None:
        raise NotYet(f"{what} is None: end the function with return ...")
    if hasattr(result, "__cuda_array_interface__") and hasattr(result, "get"):
        return result.get()  # CuPy copies to the host only when asked to
    if isinstance(result, (tuple, list)):
        raise NotYet(f"{what} is a {type(result).__name__} of {len(result)}: return one array")
    return np.asarray(result)


def _close(got: np.ndarray, want: np.ndarray, atol: float) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=0, atol=atol))


def compare(got: np.ndarray, want: np.ndarray, what: str, atol: float, mistakes=()) -> None:
    """`got` must have `want`'s shape, dtype float32 and values to `atol`. `mistakes`: (value a
    common mistake gives, what it is), tried in order when the values are off, so that the hint
    names the mistake instead of a distance."""
    if got.shape != want.shape:
        raise NotYet(f"{what} has shape {got.shape}, expected {want.shape}")
    if got.dtype != np.float32:
        raise NotYet(f"{what} has dtype {got.dtype}, expected float32 (the course computes in float32)")
    wrong = ~np.isclose(got, want, rtol=0, atol=atol)
    if not wrong.any():
        return
    unwritten = np.isnan(got) & ~np.isnan(want)
    if unwritten.all():
        raise NotYet(f"{what} was never written: it still holds what its array held before")
    if not got.any() and want.any():  # a task's output is handed over fresh: zeros, whatever was in it
        raise NotYet(f"{what} holds zeros only: it was never written (an array from empty_like or zeros that "
                     "nothing filled; a task writes its outputs through np.asarray(u_out)[:] = ...)")
    for value, mistake in mistakes:
        if _close(got, np.asarray(value, np.float64), max(atol, 1e-4)):
            raise NotYet(f"{what} is off: {mistake}")
    border = np.zeros(want.shape, bool)
    border[[0, -1], :] = border[:, [0, -1]] = True
    where = np.unravel_index(np.argmax(np.where(wrong, np.abs(got - want), -1)), want.shape)
    detail = (f"{what} is off the reference at {wrong.sum()} of {wrong.size} cells, the worst at "
              f"{tuple(int(i) for i in where)} by {abs(got[where] - want[where]):.3g}")
    if unwritten.any():
        detail += f"; {unwritten.sum()} cells were never written (they still hold what the array held)"
    elif wrong[border].all() and not wrong[~border].any():
        detail += ("; only the border is wrong: cells at the border have fewer neighbours (6 on an edge, "
                   "4 in a corner), neighbours outside the grid are left out of the sum")
    raise NotYet(detail)


# The mistakes the checkers recognise, as the values they give (float64, like the reference).

def _window_sum(a: np.ndarray, mode: str) -> np.ndarray:
    rows, cols = a.shape
    padded = np.pad(a, 1, mode=mode)
    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))


#: Laplacians with the border handled otherwise than the model, and what each is.
_BORDER_MISTAKES = (
    (lambda a: _window_sum(a, "constant") - 9 * a,
     "cells at the border have fewer neighbours: subtract each cell's own window count (model.window_counts: "
     "9 inside, 6 on an edge, 4 in a corner), not 9"),
    (lambda a: _window_sum(a, "wrap") - 9 * a,
     "neighbours outside the grid are wrapped around from the other side (np.roll?): leave them out of the sum"),
    (lambda a: _window_sum(a, "edge") - 9 * a,
     "neighbours outside the grid are copied from the edge: leave them out of the sum"),
)


def _nearest_four(a: np.ndarray) -> np.ndarray:
    """The sum of each cell's four nearest neighbours (no diagonals), those outside the grid left out."""
    padded = np.pad(a, 1)
    return padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]


_FIVE_POINT = ("it is the five-point stencil (the four nearest neighbours): the model sums over the 3 x 3 "
               "window, all eight neighbours, the diagonals included")


def _laplacian_mistakes(a: np.ndarray):
    yield from ((wrong(a), hint) for wrong, hint in _BORDER_MISTAKES)
    for counts in (_nearest_four(np.ones_like(a)), 4):  # each cell's own count of neighbours, or 4 everywhere
        yield _nearest_four(a) - counts * a, _FIVE_POINT
    yield _window_sum(a, "constant"), "it is the window sum: subtract counts * a (each cell's count times its value)"
    yield -reference_laplacian(a), "the sign is reversed: sum (neighbour - cell), not (cell - neighbour)"


def _step_with(u, v, p, laplacian=reference_laplacian, dt_feed=None, dt_reaction=None, dt_diffusion=None):
    """One step with dt on each group of terms as given (p.dt where not given)."""
    dt_feed, dt_reaction, dt_diffusion = (p.dt if x is None else x for x in (dt_feed, dt_reaction, dt_diffusion))
    uvv = u * v * v
    return (u + dt_diffusion * p.du * laplacian(u) + dt_reaction * -uvv + dt_feed * p.feed * (1 - u),
            v + dt_diffusion * p.dv * laplacian(v) + dt_reaction * uvv - dt_feed * (p.feed + p.kill) * v)


def _step_mistakes(u, v, p):
    """(u_next, v_next) of the common wrong steps, and what each is."""
    right = reference_step(u, v, p)
    every_term = "multiply every term of the update by dt"
    yield (u, v), "it is the state you were given: return the updated arrays (return u + ..., v + ...)"
    yield right[::-1], "U and V are swapped: return u_next, v_next in that order"
    yield reference_step(u, v, p.replace(dt=1.0)), f"it is what a step without dt gives: {every_term}"
    groups = ("feed", "reaction", "diffusion")
    for with_dt in itertools.chain(itertools.combinations(groups, 1), itertools.combinations(groups, 2)):
        without = {f"dt_{g}": 1.0 for g in groups if g not in with_dt}
        yield (_step_with(u, v, p, **without),
               f"it is what dt on the {' and '.join(with_dt)} terms only gives (none on the "
               f"{' and '.join(g for g in groups if g not in with_dt)}): {every_term}")
    yield reference_step(u, v, p.replace(du=p.dv, dv=p.du)), "Du and Dv are swapped: U diffuses with p.du, V with p.dv"
    yield reference_step(u, v, Parameters()), _DEFAULT_PARAMETERS
    for wrong, hint in _BORDER_MISTAKES:
        yield _step_with(u, v, p, laplacian=wrong), f"only the border is wrong: {hint}"
    for counts in (_nearest_four(np.ones_like(u)), 4):
        yield _step_with(u, v, p, laplacian=lambda a, c=counts: _nearest_four(a) - c * a), _FIVE_POINT


#: The parameters a function uses when it reads the notebook's `params` (the course's defaults)
#: instead of the `p` it is given.
_DEFAULT_PARAMETERS = ("it is what the course's default parameters give: use the parameters your function is "
                       "given (p), not the notebook's params")


def _state_mistakes(rows, cols, steps):
    """(u, v) of a time loop that runs one step too few or too many, returns the start state, or
    uses the default parameters."""
    yield reference_run(rows, cols, 0, PARAMS), "it is the start state: run the steps and return their result"
    yield reference_run(rows, cols, steps, Parameters()), _DEFAULT_PARAMETERS
    yield reference_run(rows, cols, steps - 1, PARAMS), "it is the state one step too early: run all the steps"
    yield reference_run(rows, cols, steps + 1, PARAMS), "it is the state one step too late: run exactly `steps` steps"


def _per_array(mistakes, index: int):
    return [(pair[index], hint) for pair, hint in mistakes]


# How the functions are called: copies in, the returned shape checked before anything else.

def _pair(got, what: str):
    """(u, v) from what a step or a time loop returned, or the hint for what it returned instead."""
    if isinstance(got, (tuple, list)) and len(got) == 2:
        return got
    if got is None:
        raise NotYet(f"{what} returned None: it must return a pair, end it with return u, v")
    shape = getattr(got, "shape", None)
    if shape is not None and len(shape) == 3 and shape[0] == 2:
        raise NotYet(f"{what} returned one array of shape {tuple(shape)}: it must return a pair, return u, v "
                     "(two arrays, not stacked)")
    kind = f"{type(got).__name__} of {len(got)}" if isinstance(got, (tuple, list)) else type(got).__name__
    raise NotYet(f"{what} returned {'an' if kind[0].lower() in 'aeiou' else 'a'} {kind}: it must return a pair, return u, v")


def _changed(passed, originals) -> bool:
    """Whether the function changed the arrays it was given (in place)."""
    return any(not np.array_equal(_to_numpy(p, "", None), o, equal_nan=True) for p, o in zip(passed, originals))


def _changed_note(changed: bool, what: str) -> str:
    return (f" (your {what} changed its inputs in place: right here, but the caller's arrays changed too)"
            if changed else "")


def _jax(device_type):
    """JAX where the exercise is JAX's (its functions are then traced as jax.jit would), else None."""
    if device_type is not None and device_type.__module__.split(".")[0] == "jax":
        import jax

        return jax
    return None


def _jaxpr(jax, function, args, what: str, hints=()):
    """The program jax.jit makes of `function`, or the hint for why it cannot make one."""
    with their_errors(what, hints):
        return jax.make_jaxpr(function)(*args)


def _equations(jaxpr):
    """Every equation of a jaxpr, those of the programs nested in it (jit, loops) included."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    yield from _equations(inner)


#: Conversions of arrays smaller than this are a library's own bookkeeping (cuPyNumeric's `roll`
#: turns its shift tuple into an array and back), not a grid's round trip: the checkers' grids are
#: at least 35 x 41 cells.
_BOOKKEEPING_CELLS = 64


def _library(device_type) -> str | None:
    return device_type.__module__.split(".")[0] if device_type is not None else None


#: Set while a checker's own code, run inside the student's function (a kernel's launcher), copies
#: arrays to the host: those copies are not the student's.
_CHECKER = threading.local()


@contextlib.contextmanager
def _checkers_own_copies():
    _CHECKER.copies = True
    try:
        yield
    finally:
        _CHECKER.copies = False


@contextlib.contextmanager
def _no_host_round_trip(device_type, what: str):
    """A copy of a device array to the host, while the student runs: cuPyNumeric converts silently
    (np.asarray, a NumPy function it does not take over), so its `__array__` is watched; CuPy
    refuses an implicit conversion but copies when asked (`a.get()`, `cupy.asnumpy`), so its `get`
    is watched. JAX is traced instead (`_jaxpr`)."""
    library = _library(device_type)
    name = {"cupy": "get"}.get(library, "__array__")
    convert = getattr(device_type, name, None) if library not in (None, "jax") else None
    if convert is None:
        yield
        return
    calls, own = [], name in vars(device_type)

    def watched(self, *args, **kwargs):
        if getattr(self, "size", 0) >= _BOOKKEEPING_CELLS and not getattr(_CHECKER, "copies", False):
            calls.append(self.shape)
        return convert(self, *args, **kwargs)

    try:
        setattr(device_type, name, watched)
    except TypeError:  # a type that cannot be changed: not watched
        yield
        return
    try:
        yield
    finally:
        if own:
            setattr(device_type, name, convert)
        else:  # inherited (CuPy's get is its base class's): the base's shows again
            delattr(device_type, name)
    if calls:
        how = ("a.get() or cupy.asnumpy, then cupy.asarray back" if library == "cupy" else
               f"np.asarray, or a NumPy function that {library} does not take over, and back")
        raise NotYet(f"{what} copies arrays to the host ({len(calls)} times: {how}): a round trip through the "
                     f"host at every call. Use the library's own functions ({'xp' if library == 'cupy' else 'cnp'}"
                     ".pad, .roll...), which keep the arrays on the device")


@contextlib.contextmanager
def _unwritten_as_nan(device_type):
    """`empty` and `empty_like` of the student's library fill float arrays with NaN while the
    student runs: an output made with them and never written then shows as such (`compare`), where
    it would hold zeros or an earlier array's values."""
    import importlib

    library = _library(device_type) or "numpy"
    if library == "jax":
        yield
        return
    module = importlib.import_module(library)
    originals = {name: getattr(module, name) for name in ("empty", "empty_like") if hasattr(module, name)}

    def filled(original):
        def make(*args, **kwargs):
            made = original(*args, **kwargs)
            if np.dtype(made.dtype).kind == "f":
                made.fill(np.nan)
            return made
        return make

    for name, original in originals.items():
        setattr(module, name, filled(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


#: Errors that common mistakes raise inside the student's function, and the line each gets:
#: (exception types, pattern of the message, hint; {what} is the function, {shapes} the shapes
#: the message names).
_KNOWN_ERRORS = (
    (TypeError, "Implicit conversion to a NumPy array is not allowed",
     "{what} gives a CuPy array to NumPy (np.asarray, or a NumPy function that CuPy does not take over): use "
     "cupy's functions (xp.pad...), which keep it on the GPU"),
    ((TypeError, ValueError), r"[Ii]ncompatible shapes for broadcasting|could not be broadcast|operands could not be",
     "{what} combines arrays of different shapes ({shapes}): a slice one row or column off? each of the nine slices "
     "of the padded array is rows x cols, padded[i : i + rows, j : j + cols]"),
    (TypeError, r"takes \d+ positional arguments? but \d+ (were|was) given|missing \d+ required positional argument",
     "{what}: a function is called with other arguments than it takes ({message}). lax.fori_loop calls its body "
     "as body(i, carry), the carry (u, v) one tuple, and the body returns the new carry"),
    (TypeError, r"carry input and carry output must have the same|body_fun output and input must have identical",
     "{what}: the loop's body must return its carry as it got it, a tuple (u, v) of the same shapes and dtypes "
     "(not a list, not one array)"),
    (NotImplementedError, r"Only support mode='same'",
     "{what}: cnp.convolve computes mode='same' only (the result the grid's size): cnp.convolve(a, window, "
     "mode='same')"),
)


def _shapes(message: str) -> str:
    shapes = re.findall(r"\(\d+(?:,\s*\d+)*,?\)", message)
    return " and ".join(dict.fromkeys(s.replace(" ", "") for s in shapes)) or "see the error"


@contextlib.contextmanager
def their_errors(what: str, hints=()):
    """An error raised in the student's function by a common mistake becomes that mistake's line,
    shown alone: `hints` (the exercise's own, tried first) then `_KNOWN_ERRORS`, each
    (exception types, pattern of the message, hint). JAX's errors of a function that needs values
    under jit are told as such. Any other error shows as it is."""
    try:
        yield
    except NotYet:
        raise
    except Exception as err:  # noqa: BLE001 (re-raised unless it is a known mistake)
        jax = sys.modules.get("jax")
        if jax is not None:
            _jax_error_as_hint(jax, err, what)
        message = str(err)
        for kind, pattern, hint in (*hints, *_KNOWN_ERRORS):
            if isinstance(err, kind) and re.search(pattern, message):
                first = message.strip().splitlines()[0] if message.strip() else type(err).__name__
                raise NotYet(hint.format(what=what, shapes=_shapes(message), message=first[:200])) from None
        raise


def _jax_error_as_hint(jax, err: Exception, what: str) -> None:
    errors = jax.errors
    if isinstance(err, errors.TracerArrayConversionError):
        raise NotYet(f"{what} does not run under jax.jit: it hands a JAX array to NumPy (np.pad, np.roll, "
                     "np.asarray...), which needs its values on the host. Use jnp's functions") from None
    if isinstance(err, (errors.ConcretizationTypeError, errors.TracerBoolConversionError,
                        errors.TracerIntegerConversionError)):
        raise NotYet(f"{what} does not run under jax.jit: it needs an array's value in Python (if, float(), "
                     "int(), a loop bound from an array). Use jnp.where, lax.fori_loop, lax.cond") from None


def _call(student, args, device_type, what: str, hints=()):
    """student(*args): host round trips watched, `empty` outputs NaN, common errors told as hints."""
    if _library(device_type) == "cupynumeric":
        hint = library_calls_in_tasks(student)
        if hint:
            raise NotYet(hint)
    with _no_host_round_trip(device_type, what), _unwritten_as_nan(device_type), their_errors(what, hints):
        return student(*args)


# The checkers.

def on_device(*arrays, expected, device_type: type) -> None:
    """Each array must be a float32 array of `device_type` (on the device) holding the values of
    the host array at the same place in `expected`."""
    hosts = [np.asarray(e) for e in expected]
    if len(arrays) != len(hosts):
        raise NotYet(f"{len(arrays)} arrays given for {len(hosts)} host arrays")
    for i, (a, host) in enumerate(zip(arrays, hosts)):
        if not isinstance(a, device_type):
            raise NotYet(f"array {i} is a {type(a).__module__}.{type(a).__name__}, not on the device: "
                         f"copy it there once ({device_type.__module__.split('.')[0]})")
        if a.shape != host.shape or a.dtype != np.float32:
            raise NotYet(f"array {i} has shape {a.shape} and dtype {a.dtype}, expected {host.shape} float32")
        values = _to_numpy(a, f"array {i}", None)
        if not np.array_equal(values, host):
            others = [j for j, other in enumerate(hosts) if j != i and np.array_equal(values, other)]
            if others:
                raise NotYet(f"array {i} holds the values of host array {others[0]}: copy each host array to its "
                             "own device array (u from u0, v from v0)")
            raise NotYet(f"array {i} does not hold the values of host array {i}: copy that one (u from u0, v from v0); "
                         "an array left from an earlier cell holds other values")
    ok(f"{len(arrays)} arrays on the device, {hosts[0].shape[0]} x {hosts[0].shape[1]} float32, the host's values")


def laplacian(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(a)` must return L(a): sum over the 3 x 3 window of (a[n] - a), neighbours outside
    the grid left out."""
    rng = np.random.default_rng()
    jax = _jax(device_type)
    for _ in range(3):
        a = rng.random(_grid(rng), dtype=np.float32)
        want = reference_laplacian(a.astype(np.float64))
        passed = to_device(a.copy())
        got = _to_numpy(_call(student, (passed,), device_type, "your Laplacian"), "your Laplacian", device_type)
        compare(got, want.astype(np.float32), "your Laplacian", 1e-5, _laplacian_mistakes(a.astype(np.float64)))
        if _changed((passed,), (a,)):
            raise NotYet("your Laplacian changed its input: a Laplacian only reads its array")
    if jax is not None:
        _jaxpr(jax, student, (to_device(a),), "your Laplacian")
    ok("laplacian: right on three random odd, non-square grids, border included"
       + (", runs under jax.jit" if jax else ""))


def step(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params)` must return (u, v) after one step of the model, dt on every term."""
    rng = np.random.default_rng()
    rows, cols = _grid(rng)
    u, v = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    u64, v64 = u.astype(np.float64), v.astype(np.float64)
    want = reference_step(u64, v64, PARAMS)
    passed = (to_device(u.copy()), to_device(v.copy()))
    got = _pair(_call(student, (*passed, PARAMS), device_type, "your step"), "your step")
    changed = _changed(passed, (u, v))
    mistakes = list(_step_mistakes(u64, v64, PARAMS))
    for index, (name, g, w) in enumerate(zip("uv", got, want)):
        g = _to_numpy(g, f"your {name}_next", device_type)
        try:
            compare(g, w.astype(np.float32), f"your {name}_next", 1e-5, _per_array(mistakes, index))
        except NotYet as err:
            if changed:
                raise NotYet(f"{err}. Your step changed its inputs: compute both updates from the arrays as "
                             "given, then change them (or return new arrays)") from None
            raise
    jax = _jax(device_type)
    if jax is not None:
        _jaxpr(jax, lambda a, b: student(a, b, PARAMS), (to_device(u), to_device(v)), "your step")
    ok(f"step: right with dt = {PARAMS.dt}, F = {PARAMS.feed}, k = {PARAMS.kill}" + _changed_note(changed, "step"))


def time_loop(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params, steps)` must return (u, v) after `steps` steps. With JAX, the loop
    must be one loop on the device (fori_loop or scan), not a Python loop traced step by step."""
    rows, cols = _grid(np.random.default_rng())
    steps = 100
    u0, v0 = initial_state(rows, cols)
    jax = _jax(device_type)
    if jax is not None:  # traced first: XLA would take minutes to compile a Python loop's thousands of steps
        program = _jaxpr(jax, lambda u, v: student(u, v, PARAMS, steps), (to_device(u0), to_device(v0)),
                         "your time loop")
        operations = len(list(_equations(program.jaxpr)))
        looped = any(e.primitive.name in ("while", "scan") for e in _equations(program.jaxpr))
        if not looped and operations > steps:  # more operations than steps: the steps are unrolled
            raise NotYet(f"your time loop unrolls into {operations} operations: it is a Python loop traced step by "
                         "step. Use lax.fori_loop so that one loop runs on the device (XLA would take minutes to "
                         "compile the unrolled steps)")
    got = _pair(_call(student, (to_device(u0.copy()), to_device(v0.copy()), PARAMS, steps), device_type,
                      "your time loop"), "your time loop")
    want = reference_run(rows, cols, steps, PARAMS)
    mistakes = list(_state_mistakes(rows, cols, steps))
    mistakes.append((want[::-1], "U and V are swapped: return u, v in that order"))
    for index, (name, g, w) in enumerate(zip("uv", got, want)):
        compare(_to_numpy(g, f"your {name}", device_type), w.astype(np.float32), f"your {name} after {steps} steps",
                PARITY_ATOL, _per_array(mistakes, index))
    ok(f"time loop: right after {steps} steps" + (", one loop on the device" if jax else ""))


def _images_array(got, what: str, device_type):
    if isinstance(got, tuple) and len(got) == 2 and len(getattr(got[1], "shape", ())) == 3:
        raise NotYet(f"{what} are a pair: lax.scan returns (carry, stacked); return the stacked images only")
    if got is None:
        raise NotYet(f"{what} are None: end the function with return and the images")
    return _to_numpy(got, what, device_type)


def images(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params, nbimage, nbextrastep)` must return the V images, shape
    (nbimage, rows, cols), image i after (i + 1) x nbextrastep steps. With JAX, one lax.scan over
    the images must make them."""
    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 5, 7
    u0, v0 = initial_state(rows, cols)
    args = (PARAMS, nbimage, nbextrastep)
    got = _images_array(_call(student, (to_device(u0.copy()), to_device(v0.copy()), *args), device_type,
                              "your images"), "your images", device_type)
    _compare_images(got, rows, cols, nbimage, nbextrastep)
    jax = _jax(device_type)
    if jax is not None:
        program = _jaxpr(jax, lambda u, v: student(u, v, *args), (to_device(u0), to_device(v0)), "your images")
        if not any(e.primitive.name == "scan" and _makes_shape(e, (nbimage, rows, cols))
                   for e in _equations(program.jaxpr)):
            raise NotYet(f"your images are right but not made by one lax.scan over the {nbimage} images (a Python "
                         "loop?): scan one_image, which returns ((u, v), v), then return the stacked images")
    ok(f"images: {nbimage} images, each after (i + 1) x {nbextrastep} steps" + (", one scan" if jax else ""))


def _makes_shape(eqn, shape: tuple) -> bool:
    """Whether an equation outputs an array of that shape. Read from the outputs' types, not from
    the equation's params, whose names change between JAX versions (scan's num_carry, present in
    0.10, is gone in 0.11): a scan whose outputs include the images stacked is the scan over them."""
    return any(getattr(getattr(var, "aval", None), "shape", None) == shape for var in eqn.outvars)


def _compare_images(got: np.ndarray, rows: int, cols: int, nbimage: int, nbextrastep: int) -> None:
    if got.shape != (nbimage, rows, cols):
        raise NotYet(f"your images have shape {got.shape}, expected (nbimage, rows, cols) = {(nbimage, rows, cols)}")
    for i in range(nbimage):
        steps = (i + 1) * nbextrastep
        u, v = reference_run(rows, cols, steps, PARAMS)
        mistakes = [(reference_run(rows, cols, i * nbextrastep, PARAMS)[1],
                     f"it is V after {i} x nbextrastep steps: image i holds V after (i + 1) x nbextrastep steps"),
                    (u, "it is U: store V")]
        mistakes += _per_array(_state_mistakes(rows, cols, steps), 1)
        compare(got[i], v.astype(np.float32), f"image {i}", PARITY_ATOL, mistakes)


#: in_axes=(0, None) maps the feeds but hands every pair all the kills: an array where a number was meant.
_BATCH_ERRORS = (
    ((TypeError, ValueError), r"[Ii]ncompatible shapes for broadcasting",
     "{what} combines arrays of shapes {shapes}: one of F and k is a whole array where one number was meant. "
     "jax.vmap maps every argument along axis 0 unless in_axes says otherwise: in_axes=0 (or left out) for both"),
)


def batch(student, device_type: type | None = None) -> None:
    """`student(feeds, kills, rows, cols, steps)` must return V after `steps` steps for each
    (feed, kill) pair: shape (pairs, rows, cols). With JAX, the pairs must be one vmap, not a
    Python loop: the program must not grow with the number of pairs."""
    feeds = np.array([0.022, 0.03, 0.046], np.float32)
    kills = np.array([0.051, 0.06, 0.063], np.float32)
    rows, cols, steps = 33, 41, 60
    got = _to_numpy(_call(student, (feeds, kills, rows, cols, steps), device_type, "your batch", _BATCH_ERRORS),
                    "your batch", device_type)
    if got.shape != (len(feeds), rows, cols):
        raise NotYet(f"your batch has shape {got.shape}, expected (pairs, rows, cols) = {(len(feeds), rows, cols)}")
    for i, (f, k) in enumerate(zip(feeds, kills)):
        p = Parameters(feed=float(f), kill=float(k))
        u, v = reference_run(rows, cols, steps, p)
        _, swapped = reference_run(rows, cols, steps, Parameters(feed=float(k), kill=float(f)))
        compare(got[i], v.astype(np.float32), f"pattern {i} (F = {f:.3f}, k = {k:.3f})", PARITY_ATOL,
                [(swapped, "F and k are swapped"), (u, "it is U: return V, the second array of the pair")])
    jax = _jax(device_type)
    if jax is not None:
        sizes = [len(list(_equations(_jaxpr(jax, lambda: student(feeds[:n], kills[:n], rows, cols, steps), (),
                                            "your batch", _BATCH_ERRORS).jaxpr))) for n in (2, 3)]
        if sizes[1] > sizes[0]:
            raise NotYet(f"your batch is right, but its program grows with the pairs ({sizes[0]} operations for 2, "
                         f"{sizes[1]} for 3): a Python loop over the pairs. Write one pair's run and jax.vmap it")
    ok(f"batch: {len(feeds)} (F, k) pairs in one call, each right" + (", one vmap" if jax else ""))


@contextlib.contextmanager
def _watched_writers():
    """While the student runs: every FrameWriter and BackgroundWriter made, and the thread of each
    image written. Afterwards, writers left open are closed (their threads end) and reported, so
    that the checker never reads a file that a thread is still writing."""
    from . import output

    seen = {"frames": [], "background": [], "threads": []}
    patched = ((output.FrameWriter, "__init__"), (output.FrameWriter, "write"), (output.BackgroundWriter, "__init__"))
    originals = {key: getattr(*key) for key in patched}

    def frame_init(self, *args, **kwargs):
        seen["frames"].append(self)
        originals[output.FrameWriter, "__init__"](self, *args, **kwargs)

    def frame_write(self, frame):
        seen["threads"].append(threading.get_ident())
        originals[output.FrameWriter, "write"](self, frame)

    def background_init(self, *args, **kwargs):
        seen["background"].append(self)
        originals[output.BackgroundWriter, "__init__"](self, *args, **kwargs)

    for (cls, name), replacement in zip(patched, (frame_init, frame_write, background_init)):
        setattr(cls, name, replacement)
    threads_before = set(threading.enumerate())
    seen["left_open"] = []
    try:
        yield seen
    finally:
        ours = {writer._thread for writer in seen["background"] if hasattr(writer, "_thread")}
        started = set(threading.enumerate()) - threads_before - ours
        seen["alive"] = [t for t in started if t.is_alive() and not t.daemon]  # when the student's function returned
        for thread in started:  # still watched (their writes counted), before their writers are looked at
            thread.join(timeout=1 if thread.daemon else 10)
        for (cls, name), original in originals.items():
            setattr(cls, name, original)
        for writer in seen["background"]:
            if getattr(writer, "_thread", None) is not None and writer._thread.is_alive():
                seen["left_open"].append(writer)
                with contextlib.suppress(Exception):  # the student's error, if any, is the one to show
                    writer.close()
        for writer in seen["frames"]:
            if getattr(writer, "_file", None):  # None where its __init__ failed or has not finished
                seen["left_open"].append(writer)
                with contextlib.suppress(Exception):
                    writer.close()


#: h5py's words for an image of another shape than the file's: (rows, cols) it must be.
_WRITE_ERRORS = (
    ((TypeError, ValueError), r"[Cc]an't broadcast",
     "{what} writes an array of another shape than an image of the file ({shapes}): write V alone, one image "
     "of (rows, cols) a call, writer.write(simulation.fetch_v())"),
)


def saved_images(student, backend: str, overlapped: bool = False) -> None:
    """`student(simulation, path, nbimage, nbextrastep)` must store V in the HDF5 file `path` after
    every `nbextrastep` steps of `simulation` (a gs_course Simulation), `nbimage` images in all,
    and close the file. With `overlapped`, the images must be written from a second thread."""
    from .backends import create
    from .output import read_frames

    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 4, 7
    caller = threading.get_ident()
    simulation = create(backend, PARAMS, rows, cols)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "images.h5"
        with _watched_writers() as seen, their_errors("your function", _WRITE_ERRORS):
            student(simulation, path, nbimage, nbextrastep)
        if seen["alive"]:
            raise NotYet(f"a thread you started ({seen['alive'][0].name}) still ran when your function returned: "
                         "wait for it (join) before returning, or use a BackgroundWriter, which closing waits for")
        if seen["left_open"]:
            raise NotYet("your writer is still open when your function returns: close it (a with block does it; "
                         "closing a BackgroundWriter also waits for the images still queued)")
        if not path.is_file():
            raise NotYet(f"no file at path: write the images to {path.name} with a FrameWriter")
        frames, attributes = read_frames(path)
    _compare_images(frames, rows, cols, nbimage, nbextrastep)
    if not attributes.get("complete"):
        raise NotYet("the file is not marked complete: close the writer (a with block does it)")
    if overlapped and all(thread == caller for thread in seen["threads"]):
        raise NotYet("your images are right but written in line, by the thread that computes: write them from a "
                     "second thread (wrap the FrameWriter in a BackgroundWriter)")
    ok(f"saved images: {nbimage} images in the file, each after (i + 1) x {nbextrastep} steps, file complete"
       + (", written by a second thread" if overlapped else ""))


# CuPy's exercises: kernels and pinned memory need an NVIDIA GPU. Without one, each checker says
# what it could not check and why, and the notebook runs on.

#: The ElementwiseKernel of the update: per cell, U and V, their Laplacians and the parameters in.
UPDATE_INPUTS = "float32 u, float32 v, float32 lu, float32 lv, float32 du, float32 dv, float32 feed, float32 kill, float32 dt"
UPDATE_OUTPUTS = "float32 u_next, float32 v_next"

#: The RawKernel of a whole step, one thread a cell; the student writes what replaces BODY.
STEP_KERNEL = """extern "C" __global__ void step(
    const float* u, const float* v, float* u_next, float* v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    const int cell = row * cols + col;
BODY
}"""

#: cudaPointerGetAttributes' memory type of page-locked (pinned) host memory.
_CUDA_MEMORY_TYPE_HOST = 1

#: What fills the memory around the kernel's input arrays: a read outside them (a window not
#: clamped at the border) turns the cell's result into something this large.
_OUTSIDE = np.float32(1e20)

_CONTEXT_LOST = ("The GPU's context is lost: from now on every GPU cell fails. Restart the notebook's kernel "
                 "(Kernel > Restart Kernel), then run the cells from the top")


def _gpu_cupy(what: str):
    """CuPy where it runs on a GPU here; else None, after saying what is not checked and why."""
    from .backends import probe

    found = probe("cupy")
    if not found.ok:
        print(f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy ({found.reason})")
        return None
    import cupy

    return cupy


def _refuse_the_placeholder(student) -> None:
    """The "your turn" error of a student function still unwritten, without calling it: where a
    GPU-only checker cannot run the function, the student still learns that it is not written."""
    if YOUR_TURN_MESSAGE in student.__code__.co_consts:
        raise NotImplementedError(YOUR_TURN_MESSAGE)


@contextlib.contextmanager
def _gpu_errors_as_hints(cupy):
    """nvrtc's log (the compiler's error lines) instead of CuPy's long traceback; a kernel that
    touched memory outside its arrays told as such, with what it costs (the context is lost)."""
    try:
        yield
    except cupy.cuda.compiler.CompileException as err:
        lines = [line.strip() for line in str(err).splitlines() if "error" in line]
        raise NotYet("your kernel does not compile:\n" + "\n".join(lines[:5] or str(err).splitlines()[:5])) from None
    except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as err:
        # CUDA names a wild access in several ways (an illegal address, an invalid address space, a launch failure)
        raise NotYet(f"your kernel failed on the GPU ({err}): most often it reads or writes outside its arrays, at the "
                     f"border or with an index far too large. {_CONTEXT_LOST}") from None


def _guarded(cupy, a: np.ndarray, fill):
    """A device copy of `a` inside a larger buffer whose rest holds `fill`: (the copy, the buffer,
    the slice of the buffer that is the copy). A window read one row or column outside the copy
    stays inside the buffer."""
    margin = 2 * a.shape[1] + 64
    buffer = cupy.full(a.size + 2 * margin, fill, dtype=np.float32)
    inside = slice(margin, margin + a.size)
    view = buffer[inside].reshape(a.shape)
    view[...] = cupy.asarray(a)
    return view, buffer, inside


def _outside_touched(cupy, guards) -> bool:
    """Whether anything wrote into the memory around the arrays (what `_guarded` filled)."""
    for buffer, inside, fill in guards:
        around = cupy.concatenate([buffer[: inside.start], buffer[inside.stop :]]).get()
        if not (np.isnan(around).all() if np.isnan(fill) else (around == fill).all()):
            return True
    return False


def elementwise_update(body: str, laplacian):
    """`body`, the CUDA C of an ElementwiseKernel with UPDATE_INPUTS and UPDATE_OUTPUTS, must compute
    one cell's u_next and v_next: checked as a step with `laplacian`. Returns the kernel (None
    without a GPU)."""
    cupy = _gpu_cupy("your ElementwiseKernel")
    if cupy is None:
        return None
    from .backends.cupy_backend import scalars

    kernel = cupy.ElementwiseKernel(UPDATE_INPUTS, UPDATE_OUTPUTS, body, "student_update")

    def fused_step(u, v, p):
        u_next, v_next = cupy.full_like(u, np.nan), cupy.full_like(v, np.nan)  # unwritten cells stay NaN
        kernel(u, v, laplacian(u), laplacian(v), *scalars(p, *u.shape)[2:], u_next, v_next)  # no rows, cols
        return u_next, v_next

    with _gpu_errors_as_hints(cupy):
        step(fused_step, device_type=cupy.ndarray, to_device=cupy.asarray)
    return kernel


def trial_in_a_child(trial: str, body: str) -> None:
    """Run the student's kernel once in a separate process first (`trial`, "module:function", is
    called there with `body`): a kernel that touches memory far outside its arrays, or never ends,
    costs that process its GPU context, not the notebook's. Any failure of the child is the
    kernel's: CUDA names a wild access in several ways (an illegal address, an invalid address
    space, a launch failure...), and a kernel that does not compile is left to the notebook's
    process, which reports the compiler's lines."""
    module, function = trial.split(":")
    code = f"import sys; from {module.rsplit('.', 1)[0]} import {module.rsplit('.', 1)[1]} as m; m.{function}(sys.stdin.read())"
    try:
        child = subprocess.run([sys.executable, "-c", code], input=body, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise NotYet("your kernel did not finish within 60 s on a small input: a loop that never ends?") from None
    if child.returncode != 0:
        last = next((line.strip() for line in reversed(child.stderr.splitlines()) if line.strip()), "no message")
        raise NotYet("your kernel failed when tried in a separate process (this notebook's GPU is unharmed): it reads "
                     "or writes outside its arrays, most often at the border or with an index far too large "
                     f"({last[:160]})")


def _trial(body: str) -> None:
    """The child's side of `trial_in_a_child`: one step on a small grid, no checking."""
    import cupy

    from .backends.cupy_backend import launch_step, scalars

    try:
        kernel = cupy.RawKernel(STEP_KERNEL.replace("BODY", body), "step")
        u, v = initial_state(33, 47)
        arrays = [_guarded(cupy, a, _OUTSIDE)[0] for a in (u, v, u, v)]  # as the notebook's check: a step
        launch_step(*arrays, scalars(PARAMS, 33, 47), kernel)  # outside by one row is told there, not here
    except cupy.cuda.compiler.CompileException:
        return  # the notebook's process reports it, with the compiler's lines
    cupy.cuda.Device().synchronize()


def step_kernel(body: str):
    """`body` completes STEP_KERNEL: one thread computes cell (row, col) of a whole step. Checked on
    a random odd grid; returns `launch(u, v, u_next, v_next, params)`, which queues one step
    (None without a GPU)."""
    cupy = _gpu_cupy("your RawKernel")
    if cupy is None:
        return None
    from .backends.cupy_backend import launch_step, scalars

    trial_in_a_child("gs_course.check:_trial", body)
    kernel = cupy.RawKernel(STEP_KERNEL.replace("BODY", body), "step")

    def launch(u, v, u_next, v_next, p):
        launch_step(u, v, u_next, v_next, scalars(p, *u.shape), kernel)

    guards = []

    def to_device(a):
        view, buffer, inside = _guarded(cupy, a, _OUTSIDE)
        guards.append((buffer, inside, _OUTSIDE))
        return view

    def one_step(u, v, p):
        outputs = [_guarded(cupy, np.full(u.shape, np.nan, np.float32), np.nan) for _ in range(2)]  # unwritten: NaN
        (u_next, *_), (v_next, *_) = outputs
        launch(u, v, u_next, v_next, p)
        with _checkers_own_copies():  # the checker's look at the guards is no round trip of the student's
            if _outside_touched(cupy, guards + [(buffer, inside, np.nan) for _, buffer, inside in outputs]):
                raise NotYet("your kernel wrote outside its arrays: write only u_next[cell] and v_next[cell]")
            got = [a.get() for a in (u_next, v_next)]
        if any((np.abs(g) > 1e15).any() for g in got):  # NaN compares False: unwritten cells are not counted
            raise NotYet("your kernel reads outside its arrays at the border: cells at the border have fewer "
                         "neighbours; keep the window inside the grid (r from max(row - 1, 0) to min(row + 1, rows - 1), "
                         "the same for columns)")
        return u_next, v_next

    with _gpu_errors_as_hints(cupy):
        step(one_step, device_type=cupy.ndarray, to_device=to_device)
    return launch


#: A kernel that holds its stream until released through pinned host memory (or for `timeout_ns`):
#: work queued behind it on the stream cannot start before the checker has looked.
_HOLD_KERNEL = r"""extern "C" __global__ void hold(unsigned long long release, long long timeout_ns)
{
    const volatile int* flag = (const volatile int*) release;
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*flag == 0 && now - start < (unsigned long long) timeout_ns);
}"""

_HOLD_S = 3.0


def pinned_fetch(student) -> None:
    """`student(v, stream)` must return V in a host array of pinned (page-locked) memory, the copy
    queued on `stream`, without waiting for it. Each V given is complete before the call (the
    checker waits for its upload): the student orders nothing. Checked twice: once plainly (type,
    memory, values), once with `stream` held busy: a fetch that waits for the copy returns late; a
    copy queued elsewhere than on `stream` (the default stream) fills the array while `stream` is
    still held. Whether `stream` was still held when the array was looked at is read from an event
    queued behind the hold: where it was not (a hold that did not hold), which stream copied is not
    told, and the line says so, so that a right answer is never refused."""
    cupy = _gpu_cupy("your pinned fetch")
    if cupy is None:
        _refuse_the_placeholder(student)  # without a GPU, at least this much
        return
    import cupyx

    rng = np.random.default_rng()
    shape = _grid(rng)
    stream = cupy.cuda.Stream(non_blocking=True)

    def upload():
        # Made on the device from other values: cupy.asarray stages its host array in a block of
        # CuPy's pinned pool, which an empty_pinned of the same size gets back still holding them,
        # so a fetch that copied nothing would seem to hold V if V were uploaded as it is.
        v = cupy.asarray(rng.random(shape, dtype=np.float32)) + 1
        want = v.get()  # into pageable memory, outside the pinned pool
        cupy.cuda.get_current_stream().synchronize()  # made before the student's stream reads v
        return v, want

    v, want = upload()
    got = student(v, stream)
    cupy.cuda.Device().synchronize()
    if not isinstance(got, np.ndarray):
        raise NotYet(f"your fetch returned a {type(got).__module__}.{type(got).__name__}: return a NumPy array "
                     "in pinned memory (cupyx.empty_pinned) that the copy filled")
    attributes = cupy.cuda.runtime.pointerGetAttributes(got.ctypes.data)
    if getattr(attributes, "type", getattr(attributes, "memoryType", None)) != _CUDA_MEMORY_TYPE_HOST:
        raise NotYet("your array is in ordinary (pageable) memory: allocate it with cupyx.empty_pinned, "
                     "then copy into it (out=...)")
    compare(got, want, "your fetched V", 0.0)

    del got  # its pinned block goes back to CuPy's pool: the next fetch reuses it, allocating nothing
    v, want = upload()
    release = cupyx.zeros_pinned((1,), np.int32)
    hold = cupy.RawKernel(_HOLD_KERNEL, "hold")
    held = cupy.cuda.Event(disable_timing=True)
    with stream:
        hold((1,), (1,), (np.uint64(release.ctypes.data), np.int64(_HOLD_S * 1e9)))
        held.record(stream)  # done once the hold ends: anything queued on `stream` behind it has not run before
    try:
        started = time.perf_counter()
        got = student(v, stream)
        waited = time.perf_counter() - started > _HOLD_S / 2
        copied_while_held = False
        while not waited and isinstance(got, np.ndarray) and time.perf_counter() - started < _HOLD_S / 3:
            if got.shape == want.shape and np.array_equal(got, want) and not held.done:
                copied_while_held = True
                break
            time.sleep(0.01)
        still_held = not held.done
    finally:
        release[0] = 1
        cupy.cuda.Device().synchronize()
    if waited:
        raise NotYet("your fetch waits for the copy (blocking=True, or a synchronize): queue it on the stream with "
                     "blocking=False and return at once; whoever needs the values waits for the stream")
    if copied_while_held:
        raise NotYet("your copy ran while `stream` was busy, so it was not queued on `stream` (the default stream?): "
                     "pass stream=stream, blocking=False, so that it runs after the work queued before it")
    compare(got, want, "your fetched V (a second time, with the stream busy)", 0.0)
    if not still_held:
        ok("pinned fetch: V in page-locked memory with the right values, and your fetch returned without waiting. "
           "Not checked: which stream did the copy (the checker's hold on the stream ended too early to tell)")
        return
    ok("pinned fetch: V in page-locked memory with the right values, copied on `stream` after the work queued "
       "before it, and your fetch returned without waiting")


# JAX on several devices: the halo exchange of a grid split in bands of rows.


def _several_devices():
    """Two GPUs or more where there are; else the CPU's devices, of which the notebook's setup
    asks JAX for four (XLA_FLAGS, read once when JAX starts)."""
    import jax

    for devices in (jax.devices(), jax.devices("cpu")):
        if len(devices) >= 2:
            return devices
    raise NotYet("JAX sees one device here and an exchange needs two: run the notebook's first cell "
                 "(it sets XLA_FLAGS=--xla_force_host_platform_device_count=4) in a fresh kernel, "
                 "before anything imports jax")


def _row_name(grid: np.ndarray, row: np.ndarray, height: int) -> str:
    """Which row of the grid `row` is: 'row r (row i of band b)', 'zeros' or 'no row of the grid'."""
    if not row.any():
        return "zeros"
    same = np.flatnonzero((grid == row).all(axis=1))
    if not same.size:
        return "no row of the grid"
    r = int(same[0])
    return f"row {r} (row {r % height} of band {r // height})"


def _exchange_mistakes(grid: np.ndarray, got: dict, bands: int) -> list[str]:
    """One line per band whose row above or below is not its neighbour's border row (zeros
    beyond the grid's edges), naming the row it got instead."""
    height = grid.shape[0] // bands
    mistakes = []
    for b in range(bands):
        for side, neighbour, r in (("above", b - 1, b * height - 1), ("below", b + 1, (b + 1) * height)):
            received = got[side][b]
            if 0 <= neighbour < bands:
                if np.array_equal(received, grid[r]):
                    continue
                want = f"row {r}, the {'last' if side == 'above' else 'first'} row of band {neighbour}"
            else:
                if not received.any():
                    continue
                want = "zeros (the grid's edge)"
            mistakes.append(f"band {b}'s row {side} is {_row_name(grid, received, height)}, expected {want}")
    return mistakes


def _exchange_hint(grid: np.ndarray, got: dict, bands: int) -> str:
    """The usual cause behind the rows `_exchange_mistakes` lists, where it is a common one."""
    height = grid.shape[0] // bands
    if np.array_equal(got["above"][0], grid[height]) or np.array_equal(got["below"][-1], grid[-height - 1]):
        return ("; above and below are swapped: the row above a band is the last row of the band above it, "
                "sent down")
    if got["above"][0].any() or got["below"][-1].any():
        return ("; nothing lies beyond the grid's edges: leave the pairs that wrap around (last band to "
                "first, first to last) out of the permutations")
    if np.array_equal(got["below"][0], grid[height - 1]) or np.array_equal(got["above"][-1], grid[-height]):
        return "; a band got its own border row back: each device sends its last row down and its first row up"
    return ""


#: A collective given an axis name that the mesh does not have fails with a bare AssertionError.
_EXCHANGE_ERRORS = (
    ((AssertionError, NameError, ValueError), r"^$|axis name|unbound axis",
     "{what} names an axis the mesh does not have: the mesh's one axis is \"rows\", "
     "lax.ppermute(x, \"rows\", pairs)"),
)


def halo_exchange(student) -> None:
    """`student(band, bands)`, run by `jax.shard_map` on every device's band of rows (mesh axis
    "rows", `bands` devices), must return (the row just above its band, the row just below it),
    each of shape (1, cols): its neighbours' border rows, zeros beyond the grid's edges, sent with
    `lax.ppermute`. Checked on 2, 3 and 4 bands where there are enough devices."""
    import jax
    from jax.sharding import Mesh, PartitionSpec

    from .backends.jax_sharded import AXIS

    devices = _several_devices()
    rng = np.random.default_rng()
    cols = _grid(rng)[1]
    counts = sorted({2, min(3, len(devices)), min(4, len(devices))})
    for bands in counts:
        height = int(rng.integers(3, 9))
        grid = rng.random((bands * height, cols), dtype=np.float32)

        def each_band(band, bands=bands):
            rows = student(band, bands)
            if not isinstance(rows, (tuple, list)) or len(rows) != 2:
                raise NotYet("your exchange must return a pair (row above, row below)")
            rows = tuple(rows)  # a list is a pair too
            for side, row in zip(("above", "below"), rows):
                if row.shape != (1, band.shape[1]):
                    raise NotYet(f"your row {side} has shape {row.shape}, expected (1, {band.shape[1]}): "
                                 "one row, kept two-dimensional (band[-1:], not band[-1])")
            return rows

        mesh = Mesh(np.array(devices[:bands]), (AXIS,))
        spec = PartitionSpec(AXIS)
        program = jax.jit(jax.shard_map(each_band, mesh=mesh, in_specs=spec, out_specs=(spec, spec)))
        jaxpr = _jaxpr(jax, program, (grid,), "your exchange", _EXCHANGE_ERRORS)
        got = dict(zip(("above", "below"), (_to_numpy(rows, "your rows", None) for rows in program(grid))))
        mistakes = _exchange_mistakes(grid, got, bands)
        if mistakes:
            raise NotYet(f"with {bands} bands of {height} rows: " + "; ".join(mistakes[:4])
                         + (f"; and {len(mistakes) - 4} more" if len(mistakes) > 4 else "")
                         + _exchange_hint(grid, got, bands))
        if not any(eqn.primitive.name == "ppermute" for eqn in _equations(jaxpr.jaxpr)):
            raise NotYet("the rows are right, but not sent with lax.ppermute: each device should send "
                         "one row to each neighbour, not gather the other bands")
    ok(f"halo exchange: right on {', '.join(map(str, counts))} bands of {devices[0].platform.upper()} "
        "devices, zeros beyond the grid's edges")
