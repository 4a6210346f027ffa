"""The checker of the JAX tutorial's batch exercise: V after `steps` steps for each (feed, kill) pair,
every pair at once in one jax.vmap, traced before XLA compiles anything: a tutorial's own checker,
apart from the model's (`check_model`). The pairs' own Parameters, which one_pair may build
from vmap's traced feed and kill, are read as they are built (`jax_parameters`): a field left to its
default or given in another order is named, where the values alone would look like another mistake
(dt left out runs at dt = 1, the values of a step without dt).
"""

from __future__ import annotations

import contextlib
import inspect
import itertools

import numpy as np

from .check_core import NotYet, _call, _equations, _jax, _to_numpy, compare, names_replaced, notebook_of, ok
from .check_slips import GROUPS, run_slips, slipped_step
from .hints import checks
from .jax_mistakes import batch_mistakes
from .jax_parameters import parameters_built, parameters_mistake
from .jax_programs import (BODY_ARGUMENTS, PAIR_ERRORS, PMAP, jitted_as_given, looped_program, makes_shape, names_pmap,
                           over_devices, traced_program)
from .model_mistakes import runs_of_wrong_steps
from ..model import PARITY_ATOL, initial_state, reference_run, reference_step
from ..parameters import Parameters


#: in_axes=(0, None) maps the feeds but hands every pair all the kills: an array where a number was meant; a
#: loop's body called with other arguments than it takes; the pairs' mistakes with Parameters (PAIR_ERRORS).
_BATCH_ERRORS = (
    ((TypeError, ValueError), r"[Ii]ncompatible shapes for broadcasting",
     "{what} combines arrays of shapes {shapes}: one of F and k is a whole array where one number was meant. "
     "jax.vmap maps every argument along axis 0 unless in_axes says otherwise: in_axes=0 (or left out) for both"),
    (ValueError, r"vmap was requested to map its argument along axis (-?\d+), which implies that its rank",
     "{what} maps feeds or kills along axis {0} (in_axes), an axis they do not have: both are 1-D, one value per pair, "
     "so axis 0, the pairs', is their only one. Map both along axis 0: in_axes=(0, 0), or leave in_axes out"),
    *BODY_ARGUMENTS, *PAIR_ERRORS,
)


@checks("batch(feeds, kills, rows, cols, steps)")
def batch(student, device_type: type | None = None) -> None:
    """`student(feeds, kills, rows, cols, steps)` must return V after `steps` steps for each
    (feed, kill) pair: shape (pairs, rows, cols). With JAX, the pairs must be one vmap, not a
    Python loop: the program must not grow with the number of pairs."""
    with _notebook_params_at(student, dt=0.7) as base, parameters_built() as built:
        _batch(student, device_type, base, built)


@contextlib.contextmanager
def _notebook_params_at(student, **changed):
    """The notebook's `params` (which the batch exercise's functions read from outside) with
    `changed` while the checker runs: at the school's dt = 1 a step that leaves dt out is right
    by luck. Yields the parameters the reference must use."""
    theirs = (notebook_of(student) or {}).get("params")  # a batch jitted whole: its Python function's
    if not isinstance(theirs, Parameters):
        yield Parameters()
        return
    ours = theirs.replace(**changed)
    with names_replaced(student, lambda name, value: ours if name == "params" and value is theirs else None):
        yield ours


def _combinations(shape: tuple, pairs: int, rows: int, cols: int) -> bool:
    """Whether a batch of that shape holds every (F, k) combination of the pairs' values (N x N runs)."""
    return tuple(shape) in ((pairs, pairs, rows, cols), (pairs * pairs, rows, cols))


_SAME_PAIRS = ("your batch ignores each pair's feed and kill: every pair's run is the same (the notebook's params.feed "
               "and params.kill in one_pair?). Inside one_pair use the feed and kill jax.vmap hands it, the pair's own")

_COMBINATIONS = ("your batch runs every (F, k) combination, N x N runs for N pairs, not the N pairs (feeds[i], "
                 "kills[i]), one run each: map both arrays together, one jax.vmap(one_pair) with in_axes=0 for both")


def _run_without_dt(rows: int, cols: int, steps: int, p: Parameters) -> np.ndarray:
    """V after `steps` steps of a step that multiplies no term by dt."""
    u, v = initial_state(rows, cols, np.float64)
    for _ in range(steps):
        u, v = slipped_step(u, v, p, without_dt=tuple(GROUPS))
    return v


def _run_from_swapped(rows: int, cols: int, steps: int, p: Parameters) -> np.ndarray:
    """V after `steps` steps started from (V, U) of the school's initial state, the two swapped."""
    u0, v0 = initial_state(rows, cols, np.float64)
    u, v = v0, u0
    for _ in range(steps):
        u, v = reference_step(u, v, p)
    return v


def _jit_alone_fails(jax, student, feeds, kills, rows: int, cols: int) -> bool:
    """Whether `student` is jitted and fails as such where its Python function traces: the jit is the mistake."""
    plain = inspect.unwrap(student)
    if plain is student:
        return False
    try:
        traced_program(jax, lambda: plain(feeds[:2], kills[:2], rows, cols, 2), (), "your batch")
    except NotYet:
        return False
    return True


def _batch(student, device_type, base: Parameters, built: list) -> None:
    feeds = np.array([0.022, 0.03, 0.046], np.float32)
    kills = np.array([0.051, 0.06, 0.063], np.float32)
    rows, cols, steps = 33, 41, 60
    jax = _jax(device_type)
    if jax is not None and names_pmap(student):
        raise NotYet(PMAP)

    def program(pairs, steps):  # traced first, on few pairs and steps: XLA would take minutes to compile a loop
        return traced_program(jax, lambda: student(feeds[:pairs], kills[:pairs], rows, cols, steps), (), "your batch",
                       _BATCH_ERRORS)

    try:
        few = looped_program(program, "batch", ("pairs", "one pair's run, jax.vmap(one_pair)"),
                              ("steps", "lax.fori_loop for one pair's steps"), ("steps", " for each pair", "")) \
            if jax is not None else None
    except NotYet:
        if jax is not None and _jit_alone_fails(jax, student, feeds, kills, rows, cols):
            raise NotYet("your batch is jitted whole: jax.jit traces every argument, rows, cols and steps too, which "
                         "the grids' shapes and the loop's length need as numbers. Jit the vmapped one_pair only, "
                         "jax.jit(jax.vmap(one_pair)), or mark them static (static_argnums=(2, 3, 4))") from None
        raise
    if few is not None:
        if any(_combinations(out.shape, 2, rows, cols) for out in few.out_avals):
            raise NotYet(_COMBINATIONS)
        if not any(e.primitive.name in ("mul", "add", "sub") and makes_shape(e, (2, rows, cols))
                   for e in _equations(few.jaxpr)):
            if any(_combinations(out.aval.shape, 2, rows, cols) for e in _equations(few.jaxpr) for out in e.outvars
                   if hasattr(out, "aval")):  # every combination computed, then some of them kept
                raise NotYet(_COMBINATIONS)
            if any(makes_shape(e, (2, cols, rows)) for e in _equations(few.jaxpr)):
                raise NotYet(f"your grids are {cols} x {rows}, rows and cols swapped: each pair's grid is rows x cols, "
                             "model.initial_state(rows, cols)")
            grids = {tuple(out.aval.shape[1:]) for e in _equations(few.jaxpr) if e.primitive.name in ("mul", "add", "sub")
                     for out in e.outvars if len(getattr(getattr(out, "aval", None), "shape", ())) == 3
                     and out.aval.shape[0] == 2}
            if grids and (rows, cols) not in grids:  # the pairs mapped over grids of another size: the notebook's u, v
                raise NotYet(f"your runs start from grids of {' x '.join(map(str, max(grids)))}, not rows x cols = "
                             f"{rows} x {cols}: start each pair from u0, v0 = model.initial_state(rows, cols), not "
                             "the notebook's u, v")
            alike = _to_numpy(_call(student, (feeds[:2], kills[:2], rows, cols, 2), device_type, "your batch",
                                    _BATCH_ERRORS), "your batch", device_type)
            if alike.shape == (2, rows, cols) and np.array_equal(alike[0], alike[1]):  # nothing of a pair's own
                raise NotYet(_SAME_PAIRS)
            raise NotYet(over_devices(few) or
                         "your batch runs one pair after another (lax.map, or a loop on the device), its steps on one "
                         "grid at a time: jax.vmap(one_pair) runs every pair at once, each operation on the whole batch")
    got = _to_numpy(_call(student, (feeds, kills, rows, cols, steps), device_type, "your batch", _BATCH_ERRORS),
                    "your batch", device_type)
    if _combinations(got.shape, len(feeds), rows, cols):
        raise NotYet(_COMBINATIONS)
    if got.shape != (len(feeds), rows, cols):
        raise NotYet(f"your batch has shape {got.shape}, expected (pairs, rows, cols) = {(len(feeds), rows, cols)}")
    for i, (f, k) in enumerate(zip(feeds, kills)):
        if not got[i].any():  # JAX's arrays are always written: V was 0 from the start
            raise NotYet(f"pattern {i} holds V = 0 everywhere: the run starts without V (u = 1, v = 0, or zeros), where "
                         "nothing ever reacts. Start each pair from the initial state, u0, v0 = "
                         "model.initial_state(rows, cols)")
        p = base.replace(feed=float(f), kill=float(k))
        u, v = reference_run(rows, cols, steps, p)
        if not np.allclose(got[i], v, rtol=0, atol=PARITY_ATOL):  # a Parameters misbuilt is then the mistake itself
            misbuilt = parameters_mistake(built, base)
            if misbuilt:
                raise NotYet(misbuilt)
        _, swapped = reference_run(rows, cols, steps, base.replace(feed=float(k), kill=float(f)))
        compare(got[i], v.astype(np.float32), f"pattern {i} (F = {f:.3f}, k = {k:.3f})", PARITY_ATOL,
                itertools.chain([(swapped, "F and k are swapped"), (u, "it is U: return V, the second array of the pair"),
                                 (_run_without_dt(rows, cols, steps, p), "no term is multiplied by dt: the step is "
                                  "u + dt * du, v + dt * dv (the checker runs at dt = 0.7)"),
                                 (reference_run(rows, cols, steps, base.replace(feed=0.0, kill=0.0))[1],
                                  "F and k are 0 in your run: an integer dtype (int32?) truncates them, keep feeds and "
                                  "kills float"),
                                 (_run_from_swapped(rows, cols, steps, p), "your run starts from (v0, u0), U and V "
                                  "swapped: the carry is (u, v), from (u0, v0)")],
                                run_slips(rows, cols, steps, p, 1), batch_mistakes(rows, cols, steps, base, feeds, kills, i),
                                runs_of_wrong_steps(rows, cols, steps, p, 1)),
                nan_is_unwritten=False)  # vmap's arrays are fresh: NaN is an overflow
    jitted_as_given(few, "your batch")  # its values right: the jit asked for is the mistake left
    ok(f"batch: {len(feeds)} (F, k) pairs in one call, each right" + (", one vmap" if jax else ""))
