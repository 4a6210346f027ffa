"""The checkers' common ground: the hint (`NotYet`) and the tick (`ok`, both `hints`'), the comparison that
names a mistake (`compare`), how a student's function is called (host round trips watched,
`empty` outputs NaN, common errors told as one line), JAX's traced programs, and what the GPU
checkers share (the trial of a kernel in a child process, CUDA's errors as hints).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import linecache
import re
import sys
import textwrap
import threading

import numpy as np

from .counts_watch import counts_made_again
from .hints import NotYet, ok
from .legate_check import library_calls_in_tasks
from .notebooks import YOUR_TURN_MESSAGE
from ..parameters import Parameters
from ..measurement.compiled import equations as _equations  # noqa: F401 (the checkers walk programs with it)

#: Odd, non-square, different each time: a right answer cannot depend on the grid.
PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)


def device_note(student, device_type: type | None) -> str:
    """What a tick adds where no device array type is given for a student's function (the CuPy notebook
    without a GPU, NumPy in CuPy's place): that its arrays stay on the device is not checked. The
    checkers' own functions (a kernel run on the CPU) are not the student's round trips."""
    if device_type is not None or getattr(student, "__module__", "").split(".")[0] == "gs_course":
        return ""
    return " (kept on the device: not checked here, NumPy stands in for CuPy without a GPU)"


def _grid(rng) -> tuple[int, int]:
    """An odd grid of a random shape, never square: on a square grid rows for cols (a transposed
    slice or stride) gives the right values."""
    rows = int(rng.integers(17, 40)) * 2 + 1
    cols = int(rng.integers(20, 44)) * 2 + 1
    return rows, cols + 2 if cols == rows else cols


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


#: Beyond this, a concentration (which stays within [0, 1]) has grown without bound.
UNBOUNDED = 1e3


def compare(got: np.ndarray, want: np.ndarray, what: str, atol: float, mistakes=(), written_by: str = "",
            nan_is_unwritten: bool = True) -> None:
    """`got` must have `want`'s shape, dtype float32 and values to `atol`. `mistakes`: (value a
    common mistake gives, what it is), tried in order when the values are off, so that the hint
    names the mistake instead of a distance, where `got` is nearer it than the reference (one the
    reference itself gives, a mistake in the other array, names nothing). `written_by`: how the exercise's outputs are
    written, told where they hold zeros only. `nan_is_unwritten`: NaN marks cells never written
    (`_unwritten_as_nan`); False where nothing was filled with NaN (JAX's fresh arrays), so that
    NaN can only come from a run that overflowed."""
    if got.shape != want.shape:
        raise NotYet(f"{what} has shape {got.shape}, expected {want.shape}")
    if got.dtype != np.float32:
        raise NotYet(f"{what} has dtype {got.dtype}, expected float32 (the course computes in float32)")
    wrong = ~np.isclose(got, want, rtol=0, atol=atol)
    if not wrong.any():
        return
    unwritten = np.isnan(got) & ~np.isnan(want)
    finite = np.nan_to_num(got, nan=0.0, posinf=0.0, neginf=0.0)
    if np.isinf(got).any() or (np.abs(finite) > UNBOUNDED).any() or (unwritten.any() and not nan_is_unwritten):
        raise NotYet(f"{what} grew without bound (values far outside [0, 1], NaN where they overflowed): the update "
                     "is unstable, a term with the wrong sign or field, or a factor too large (dt or a coefficient "
                     "applied twice, a step much longer than dt)")
    if unwritten.all():
        raise NotYet(f"{what} was never written: it still holds what its array held before")
    if not got.any() and want.any():  # a task's output is handed over fresh: zeros, whatever was in it
        raise NotYet(f"{what} holds zeros only: it was never written (an array from empty_like or zeros that "
                     f"nothing filled{written_by})" if nan_is_unwritten else
                     f"{what} holds zeros only: a run started without V (v = 0, where nothing ever reacts), or "
                     "zeros returned (zeros_like, a product with 0) in place of the state the steps computed")
    off = np.abs(got - want).max()
    for value, mistake in mistakes:
        value = np.asarray(value, np.float64)
        if (_close(got, value, max(atol, 1e-4)) and not _close(want.astype(np.float64), value, atol)
                and np.abs(got - value).max() < off):  # nearer the mistake than the reference
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
    elif edges := _edges_only(wrong):
        detail += (f"; only the first and last {edges} are off: there a neighbour outside the grid is read from "
                   f"elsewhere (the other side of the grid, a roll, or the {'row' if edges == 'columns' else 'grid'} "
                   f"before or after, a flat index: cell - 1, cell + 1 wrap) where it must be left out: bound the "
                   f"{edges[:-1]} too")
    elif lines := _whole_lines(wrong):
        detail += (f"; every cell of {lines} is off, and no other: a slice (or a loop's or a kernel's bound) that "
                   "stops short of the grid's end or starts past its beginning? Each of the nine slices covers the "
                   "whole grid, padded[i : i + rows, j : j + cols], added into all of it")
    raise NotYet(detail)


def _whole_lines(wrong: np.ndarray) -> str:
    """The grid's first or last rows or columns (up to 3 a side) that hold all the wrong cells, each
    (nearly) all wrong, named ("the last row", "the first 2 rows and the last column"), else ""."""
    named, covered = [], np.zeros(wrong.shape, bool)
    for axis, noun in ((0, "row"), (1, "column")):
        share = wrong.mean(axis=1 - axis)  # of each row (axis 0) or column wrong
        for side, order in (("first", share), ("last", share[::-1])):
            count = next((i for i, part in enumerate(order[:3]) if part < 0.9), min(3, len(order)))
            if count:
                named.append(f"the {side} {noun}" if count == 1 else f"the {side} {count} {noun}s")
                index = slice(None, count) if side == "first" else slice(-count, None)
                covered[(index, slice(None)) if axis == 0 else (slice(None), index)] = True
    if not named or wrong[~covered].any():
        return ""
    return ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + named[-1]


def _edges_only(wrong: np.ndarray) -> str:
    """"columns" where the wrong cells lie in the first and last columns only (and are most of them), "rows"
    likewise, else "": the neighbours beyond one pair of sides taken from elsewhere."""
    for name, first_last in (("columns", (slice(None), [0, -1])), ("rows", ([0, -1], slice(None)))):
        edges = np.zeros(wrong.shape, bool)
        edges[first_last] = True
        if not wrong[~edges].any() and wrong[edges].mean() > 0.5:
            return name
    return ""


# How the functions are called: copies in, the returned shape checked before anything else.

def _pair(got, what: str):
    """(u, v) from what a step or a time loop returned, or the hint for what it returned instead."""
    if isinstance(got, (tuple, list)) and len(got) == 2:
        if isinstance(got[0], (tuple, list)) and len(got[0]) == 2:
            raise NotYet(f"{what} returned a pair whose first item is a pair, as lax.scan's (carry, ys): return the "
                         "carry, (u, v), _ = lax.scan(...)")
        return got
    if got is None:
        raise NotYet(f"{what} returned None: it must return a pair, end it with return u, v")
    shape = getattr(got, "shape", None)
    if shape is not None and len(shape) == 3 and shape[0] == 2:
        raise NotYet(f"{what} returned one array of shape {tuple(shape)}: it must return a pair, return u, v "
                     "(two arrays, not stacked)")
    kind = f"{type(got).__name__} of {len(got)}" if isinstance(got, (tuple, list)) else type(got).__name__
    raise NotYet(f"{what} returned {'an' if kind[0].lower() in 'aeiou' else 'a'} {kind}: it must return a pair, return u, v")


def first_in_a_loop(function, matches) -> ast.AST | None:
    """The first node of `function`'s code, as written, inside one of its loops that `matches`, else
    None (None too where its code cannot be read): where two mistakes give the same values (a
    return inside the loop, each step from the start: one step's state), the code tells them apart."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(function))))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    for loop in (node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While, ast.AsyncFor))):
        found = next((node for node in ast.walk(loop) if matches(node)), None)
        if found is not None:
            return found
    return None


def _changed(passed, originals) -> bool:
    """Whether the function changed the arrays it was given (in place). A JAX array it was given
    and donated (jit's donate_argnums) is gone, not changed: JAX never writes into an array."""
    return any(not (hasattr(p, "is_deleted") and p.is_deleted())
               and not np.array_equal(_to_numpy(p, "", None), o, equal_nan=True) for p, o in zip(passed, originals))


def _refuse_changed_inputs(changed: bool, what: str) -> None:
    """Right values from a function that changed its inputs in place (u += ...) are still refused:
    the caller's u and v change with them, and the notebook's later cells start from those."""
    if changed:
        raise NotYet(f"your {what} gives the right values but changes its inputs in place (u += ...): the caller's u "
                     "and v change too, and the cells after this one would start from them. Compute new arrays: "
                     + ("return u + p.dt * du, v + p.dt * dv" if what == "step" else "u, v = step(u, v, p)"))


def _jax(device_type):
    """JAX where the exercise is JAX's (its functions are then traced as jax.jit would), else None."""
    if device_type is not None and device_type.__module__.split(".")[0] == "jax":
        import jax

        return jax
    return None


def _jaxpr(jax, function, args, what: str, hints=()):
    """The program jax.jit makes of `function`, or the hint for why it cannot make one."""
    with their_errors(what, hints, "jax"):
        return jax.make_jaxpr(function)(*args)


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


#: A device array's conversions to a Python value (or its text), each a copy to the host that waits
#: for the device: float(v.sum()), v.max().item(), print(v[0, 0]), f"{v.mean()}", if v.any(): ...
_TO_PYTHON = ("__float__", "__int__", "__bool__", "__index__", "__complex__", "item", "tolist", "__repr__", "__str__",
              "__format__")

#: The libraries whose own code converts arrays for bookkeeping (not a round trip of the student's).
_LIBRARIES = {"cupy", "cupyx", "cupynumeric", "legate", "numpy", "jax", "jaxlib", "gs_course"}


def notebook_of(student) -> dict | None:
    """The globals of the notebook that defined `student`: those of the Python function under its wrappers
    (a decorator's __wrapped__, jax.jit's, a functools.partial's func), whose own globals are their
    modules'; None for a callable without them."""
    for _ in range(16):
        try:
            inner = student.func if isinstance(student, functools.partial) else inspect.unwrap(student)
        except ValueError:  # a cycle of __wrapped__
            break
        if inner is student:
            break
        student = inner
    return getattr(student, "__globals__", None)


@contextlib.contextmanager
def names_replaced(student, replacement):
    """The names of `student`'s notebook for which `replacement(name, value)` gives a value (not None)
    bound to it while the block runs, then restored. The names are module-wide: not thread-safe, a
    thread of the notebook running meanwhile sees the replacements too."""
    names = notebook_of(student) or {}
    kept, new = {}, {}
    for name, value in list(names.items()):
        if (other := replacement(name, value)) is not None:
            kept[name], new[name] = value, other
    names.update(new)
    try:
        yield
    finally:
        names.update(kept)


def _of_a_library(frame) -> bool:
    """A frame of the course's libraries, or of any installed package (h5py's, ...): never the student's cell."""
    installed = any(part in frame.f_code.co_filename for part in ("site-packages", "dist-packages"))
    return installed or _a_librarys(frame.f_globals)


def _a_librarys(namespace: dict) -> bool:
    """Whether `namespace` is the globals of one of the course's libraries (gs_course's own included), not a notebook's."""
    return str(namespace.get("__name__", "")).split(".")[0] in _LIBRARIES


@contextlib.contextmanager
def _watched(device_type, names, count):
    """`device_type`'s methods `names` replaced, while inside, by ones that call `count(self, name,
    caller)` first (caller: the frame that called the method). Afterwards those the type defines itself are put back, the inherited ones removed again
    (CuPy's get is its base class's: the base's then shows again)."""
    own = {name for name in names if name in vars(device_type)}
    patched = {}
    for name in names:
        original = getattr(device_type, name, None)
        if original is None:
            continue

        def watched(self, *args, _original=original, _name=name, **kwargs):
            count(self, _name, sys._getframe(1))
            return _original(self, *args, **kwargs)

        try:
            setattr(device_type, name, watched)
        except TypeError:  # a type that cannot be changed: not watched
            continue
        patched[name] = original
    try:
        yield
    finally:
        for name, original in patched.items():
            if name in own:
                setattr(device_type, name, original)
            else:
                delattr(device_type, name)


@contextlib.contextmanager
def _no_host_round_trip(device_type, what: str):
    """A copy of a device array to the host, while the student runs: cuPyNumeric converts silently
    (np.asarray, a NumPy function it does not take over), so its `__array__` is watched; CuPy
    refuses an implicit conversion but copies when asked (`a.get()`, `cupy.asnumpy`), so its `get`
    is watched; and with both, a value brought to Python by the student's own code (float(),
    .item(), print), which waits for the device each time. JAX is traced instead (`_jaxpr`)."""
    library = _library(device_type)
    name = {"cupy": "get"}.get(library, "__array__")
    if library in (None, "jax") or getattr(device_type, name, None) is None:
        yield
        return
    arrays = []

    def count(self, method, caller):
        if method == name:
            if getattr(self, "size", 0) >= _BOOKKEEPING_CELLS and not getattr(_CHECKER, "copies", False):
                arrays.append(self.shape)
        elif not _of_a_library(caller) and not getattr(_CHECKER, "copies", False):  # stopped at the first
            raise NotYet(f"{what} brings a value of the device's arrays to the host (float(), .item(), print or an if "
                         f"on an array): each waits for the device to finish, a round trip through the host. "
                         "Keep the loop on the device and look at the values after it")

    with _watched(device_type, (name, *_TO_PYTHON), count):
        yield
    if arrays:
        how = ("a.get() or cupy.asnumpy, then cupy.asarray back" if library == "cupy" else
               f"np.asarray, or a NumPy function that {library} does not take over, and back")
        raise NotYet(f"{what} copies arrays to the host ({len(arrays)} times: {how}), each a round trip through "
                     f"the host. Use the library's own functions ({'xp' if library == 'cupy' else 'cnp'}"
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


_SLICE_OFF = ("{what} combines arrays of different shapes ({shapes}): a slice one row or column off? each of the nine "
              "slices of the padded array is rows x cols, padded[i : i + rows, j : j + cols]")
#: Grids too far apart for a slice's row or column: an array made for the notebook's grid (size.rows...).
_OTHER_GRID = ("{what} combines arrays of shapes {shapes}, too far apart for a slice a row or column off: one was made "
               "for another grid (the notebook's size.rows, size.cols, or a shape of its own) where the argument's was "
               "meant. Make each array from the argument's shape: rows, cols = a.shape")


def _far_apart(message: str) -> bool:
    """Whether the 2-D shapes an error names differ by more than 2 along an axis (a slice is off by 1 or 2)."""
    shapes = {(int(r), int(c)) for r, c in re.findall(r"\((\d+),\s*(\d+)\)", message)}
    return any(abs(a - b) > 2 for one in shapes for other in shapes for a, b in zip(one, other))


#: Errors that common mistakes raise inside the student's function, and the line each gets:
#: (exception types, pattern of the message, hint; {what} is the function, {shapes} the shapes
#: the message names, {message} its first line), and the libraries whose notebooks it is for
#: (None: every one; a hint about JAX's arrays means nothing to a CuPy answer).
_KNOWN_ERRORS = (
    (TypeError, "Implicit conversion to a NumPy array is not allowed",
     "{what} gives a CuPy array to NumPy (np.asarray, or a NumPy function that CuPy does not take over): use "
     "cupy's functions (xp.pad...), which keep it on the GPU", None),
    (TypeError, r"Unsupported type <class 'numpy\.ndarray'>",
     "{what} mixes a NumPy array (on the host) with CuPy's (on the GPU): make it a CuPy array first "
     "(xp.asarray) or compute it with xp's functions", None),
    (AttributeError, r"'Parameters' object has no attribute",
     "{what}: {message}: the parameters are p.du, p.dv, p.feed, p.kill and p.dt (Du, Dv, F, k and dt)", None),
    ((TypeError, ValueError), r"(?:[Ii]ncompatible shapes|broadcast).*\((\d+),\s*(\d+)\).*\(\2,\s*\1\)",
     "{what} combines arrays of shapes {shapes}, one the other transposed: rows and cols swapped (an array's .T, "
     "or (cols, rows) where a.shape is (rows, cols))", None),
    ((TypeError, ValueError), r"(?:[Ii]ncompatible shapes|broadcast).*\(\d,\s*\d\)",
     "{what} combines the grid with an array of the window's size ({shapes}): the grid comes first, "
     "cnp.convolve(a, window, mode=\"same\"), whose result is of the grid's shape", ("cupynumeric",)),
    ((TypeError, ValueError), r"(?:[Ii]ncompatible shapes|broadcast).*\(3,\s*3\)",
     "{what} combines the grid with an array of the window's size ({shapes}): a sum over the grid's axes? "
     "sliding_window_view puts the window's axes last: .sum(axis=(2, 3))", ("cupy", "numpy", None)),
    ((TypeError, ValueError), r"[Ii]ncompatible shapes for broadcasting|could not be broadcast|cannot be broadcast|"
                              r"operands could not be", _SLICE_OFF, None),
    (TypeError, r"(\w+)\(\) (?:takes \d+ positional arguments? but \d+ (?:were|was) given|missing \d+ required positional arguments?)",
     "{what} calls {0}() with other arguments than {0} takes ({message}): call it as it is defined", None),
    (TypeError, r"takes \d+ positional arguments? but \d+ (were|was) given|missing \d+ required positional argument",
     "{what}: a function is called with other arguments than it takes ({message}): call each as it is defined", None),
    (TypeError, r"carry input and carry output must have the same|body_fun output and input must have identical",
     "{what}: the loop's carry must come out of the body as it went in, a tuple (u, v) both ways (the start "
     "value too: not a list on one side, not one array), of the same shapes and dtypes", None),
    (TypeError, r"JAX arrays are immutable|does not support item assignment",
     "{what} changes a JAX array in place (a[...] = ...): JAX arrays are immutable. Make a new one: "
     "a.at[...].set(values), or jnp.pad for a border", ("jax",)),
    ((TypeError, AttributeError), r"PhysicalArray' object does not support item assignment",
     "{what} writes into a task's array itself: an OutputArray is written through its NumPy view, "
     "np.asarray(u_out)[:] = a", ("cupynumeric",)),
    (AttributeError, r"PhysicalArray' object has no attribute",
     "{what} computes with a task's arrays themselves ({message}): inside a task they are Legate's, wrap them "
     "in NumPy first, a, b = np.asarray(u), np.asarray(v)", ("cupynumeric",)),
    ((TypeError, ValueError), r"must be (a number|an integer), got \w*Tracer",
     "{what} gives a traced value (under jax.jit or jax.vmap each argument is an array being traced, not a "
     "number) to a function that checks for a plain number ({message}): compute with the arrays themselves "
     "(feed * (1 - u)), or leave that function outside the traced code", None),
    ((TypeError, ValueError), r"is not a valid JAX type|Cannot interpret value of type .*Parameters|"
                              r"as an abstract array\. The problematic value is of type .*Parameters",
     "{what}: jax.jit traces its arguments as arrays, and the parameters are not an array: mark them "
     "static (jax.jit(f, static_argnames=\"p\"), or static_argnums) or let the function read them from outside", None),
    (NotImplementedError, r"Only support mode='same'",
     "{what}: cnp.convolve computes mode='same' only (the result the grid's size): cnp.convolve(a, window, "
     "mode='same')", None),
    (RuntimeError, r"Arrays should have the same dimensions",
     "{what}: cnp.convolve takes a window of as many dimensions as the grid: the 3 x 3 window, "
     "cnp.ones((3, 3), dtype=np.float32)", None),
)


def _shapes(message: str) -> str:
    shapes = re.findall(r"\(\d+(?:,\s*\d+)*,?\)", message)
    return " and ".join(dict.fromkeys(s.replace(" ", "") for s in shapes)) or "see the error"


def _in_their_code(err: Exception) -> str | None:
    """Where in the student's own code (the last frame of the traceback that is not a library's or
    Python's) `err` was raised or called what raised it, as "line N of your cell, in f: source"."""
    frame = None
    tb = err.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "").split(".")[0]
        if not _of_a_library(tb.tb_frame) and module not in sys.stdlib_module_names:
            frame = tb
        tb = tb.tb_next
    if frame is None:
        return None
    code = frame.tb_frame.f_code
    source = linecache.getline(code.co_filename, frame.tb_lineno, frame.tb_frame.f_globals).strip()
    return f"line {frame.tb_lineno} of your cell, in {code.co_name}" + (f": {source[:120]}" if source else "")


@contextlib.contextmanager
def their_errors(what: str, hints=(), library: str | None = None):
    """An error raised in the student's function by a common mistake becomes that mistake's line,
    shown alone: `hints` (the exercise's own, tried first) then the `_KNOWN_ERRORS` of `library`
    (the notebook's: "jax", "cupy", "cupynumeric", None for any), each (exception types, pattern of
    the message, hint: a str, or a function of the message for a hint read from more than it). JAX's errors of a function that needs values under jit are told as such.
    Any other error raised in (or through) the student's own code is one line that names it and
    where in their code; an error of the checker's own shows as it is."""
    try:
        yield
    except NotYet:
        raise
    except Exception as err:  # noqa: BLE001 (re-raised unless it is the student's)
        jax = sys.modules.get("jax")
        if jax is not None and library == "jax":
            _jax_error_as_hint(jax, err, what)
        message = str(err)
        first = message.strip().splitlines()[0] if message.strip() else type(err).__name__
        known = [(kind, pattern, hint) for kind, pattern, hint, libraries in _KNOWN_ERRORS
                 if libraries is None or library in libraries]
        for kind, pattern, hint in (*hints, *known):  # a hint's {0}, {1}...: the pattern's groups
            if isinstance(err, kind) and (found := re.search(pattern, message)):
                hint = _OTHER_GRID if hint is _SLICE_OFF and _far_apart(message) else hint
                raise NotYet(hint(message) if callable(hint) else hint.format(
                    *found.groups(), what=what, shapes=_shapes(message), message=first[:200])) from None
        where = _in_their_code(err)
        if where is None or YOUR_TURN_MESSAGE in message:
            raise
        raise NotYet(f"{what} raised {type(err).__name__}: {first[:200]} ({where})") from None


def _jax_error_as_hint(jax, err: Exception, what: str) -> None:
    errors = jax.errors
    if isinstance(err, errors.TracerArrayConversionError):
        raise NotYet(f"{what} does not run under jax.jit: it hands a JAX array to NumPy (np.pad, np.roll, "
                     "np.asarray...), which needs its values on the host. Use jnp's functions") from None
    if isinstance(err, (errors.ConcretizationTypeError, errors.TracerBoolConversionError,
                        errors.TracerIntegerConversionError)):
        where = _in_their_code(err)  # the function it calls may be the one (an earlier exercise's step)
        raise NotYet(f"{what} does not run under jax.jit: it needs an array's value in Python (if, float(), "
                     "int(), a loop bound from an array). Use jnp.where, lax.fori_loop, lax.cond"
                     + (f" ({where})" if where else "")) from None


@contextlib.contextmanager
def _no_loop_over_cells(student, cells: int | None, what: str, lines=None):
    """A function that runs more lines of Python than an eighth of the grid's `cells` (lines of the
    student's notebook, whose globals are the student's function's: not the libraries') loops over
    the cells, the technique the array exercises replace: stopped there, with its hint. None: not
    watched. `lines` (a Counter): each line run counted there, by (code, line number), for
    `grid_loops` (a loop over the rows stays under the limit, but grows with them)."""
    notebook = getattr(student, "__globals__", None)
    if cells is None or notebook is None:
        yield
        return
    limit, ran = cells // 8, [0]

    def line(frame):
        ran[0] += 1
        if lines is not None:
            lines[frame.f_code, frame.f_lineno] += 1
        if ran[0] > limit:
            raise NotYet(f"{what} runs a Python loop over the grid's cells or rows (more than {limit} lines of "
                         f"Python for a grid of {cells} cells): on a GPU each cell's access is a copy and a launch of its own. "
                         "Compute whole arrays at once: array slicing, the nine slices of the padded array "
                         "padded[i : i + rows, j : j + cols]")

    with notebook_lines(notebook, line):
        yield


@contextlib.contextmanager
def notebook_lines(notebook: dict, each):
    """`each(frame)` for every line of Python run in the notebook's own code (the frames whose globals are
    `notebook`, not a library's) while the block runs; what traced before is restored after."""
    def line(frame, event, arg):
        if event == "line":
            each(frame)
        return line

    before = sys.gettrace()
    sys.settrace(lambda frame, event, arg: line if frame.f_globals is notebook else None)
    try:
        yield
    finally:
        sys.settrace(before)


def _call(student, args, device_type, what: str, hints=(), cells: int | None = None, lines=None):
    """student(*args) (its signature read before, by the checker's `checks`): host round trips watched,
    `empty` outputs NaN, common errors told as hints, and, given the grid's `cells`, a Python loop over them
    refused (and the lines run counted in `lines`, a Counter, where given)."""
    if _library(device_type) == "cupynumeric":
        hint = library_calls_in_tasks(student)
        if hint:
            raise NotYet(hint)
    # a Laplacian's input kept, to tell that it changed it before its values are read (a stencil's hint would not be it)
    kept = _to_numpy(args[0], "", None).copy() if what == "your Laplacian" and _jax(device_type) is None else None
    counts = counts_made_again(student, what) if what == "your Laplacian" and _library(device_type) in (None, "cupy") \
        else contextlib.nullcontext()  # CuPy's counts made once a grid shape (cuPyNumeric's copies watched by its checker)
    with counts, _no_host_round_trip(device_type, what), _unwritten_as_nan(device_type), \
            their_errors(what, hints, _library(device_type)), _no_loop_over_cells(student, cells, what, lines):
        result = student(*args)
    if kept is not None and _changed(args[:1], (kept,)):
        raise NotYet(LAPLACIAN_CHANGED)
    return result


LAPLACIAN_CHANGED = "your Laplacian changed its input: a Laplacian only reads its array (a -= ... writes into the caller's a)"
