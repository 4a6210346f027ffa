"""Answer checkers for the exercises: each tests a student's function on fresh random inputs
against the reference and says precisely what is wrong.

Every checker prints one line starting with a tick when the answer is right (`ok`), and raises
`NotYet` with a hint otherwise. The hint names the mistake where it is a common one (the start
state returned, one step too few, U for V, dt on some terms only, the border's window counts, a
wrong return shape, a slip in one term of the update: `gs_course.lessons.check_slips`), and the technique is
checked as well as the values: with JAX the function must run under `jax.jit` (the time loop and
the images one loop on the device, the pairs one `vmap`, traced before XLA compiles anything),
with cuPyNumeric no array may take a round trip through NumPy (the saving exercise's checker is
`gs_course.lessons.check_saving`). Inputs are copies: a function that changes its arguments in place is judged
on what it returns (a Legate task that writes into its inputs is refused: Legate does not promise it).

The notebooks call them through `gs_course.lessons.checkers`; their common ground (NotYet, compare, how a
function is called) is `gs_course.lessons.check_core`. The JAX batch's checker is `gs_course.lessons.jax_batch`
(imported here); the Laplacian's hints are said in the exercise's words (`laplacian_words`); a time loop's
number of steps and Legate fences are `run_mistakes`'.
"""

from __future__ import annotations

import ast
import contextlib
import itertools

import numpy as np

from .check_core import PARAMS, NotYet, _call, _changed, _close, _refuse_changed_inputs, _library, device_note, _equations, _grid, _jax, _jaxpr, _pair, _to_numpy, compare, first_in_a_loop, ok
from .check_earlier import list_from_step_told, still_wrong_earlier
from .check_slips import half_precision, one_result_twice, run_slips, step_slips
from .hints import checks
from .grid_loops import copied_in_a_loop, laplacian_grows, step_grows
from .jax_batch import batch  # noqa: F401 (the batch's checker, `checkers` takes it from here)
from .jax_mistakes import JAX_IMAGE_STEPS, steps_of_first_image
from .jax_programs import (BODY_ARGUMENTS, check_loops, images_restart, jitted_as_given, looped_program, makes_shape,
                           not_unrolled, plain_tuple, same_program, traced_program)
from .laplacian_mistakes import (INTEGER_HINT, RUNNING_SUM_HINT, intermediates as laplacian_intermediates, stencil_hint,
                                 laplacian_mistakes, one_axis_padded, pads_recorded, running_sum_probe, window_of)
from .laplacian_words import in_its_words
from .legate_check import (arrays_not_kept_whole, convolutions_run, host_arrays_sent,
                           outputs_never_written, reaches_a_task)
from .model_mistakes import (SWAPPED, another_start, ignores_its_start, partial_starts, per_array, runs_of_wrong_steps,
                             state_mistakes, states_after, step_intermediates, step_mistakes)
from .rounding import half_rounded
from .run_mistakes import fences_at_most, steps_taken
from .task_trial import bodies_tried_first
from ..model import (PARITY_ATOL, initial_state, laplacian as reference_laplacian, reference_run, reference_step,
                     window_counts)


def _pair_mistake(got: list, want, mistakes, what: str, atol: float) -> None:
    """Where both arrays are those of one common mistake (U and V swapped, the default parameters, a
    border...), that mistake; tried before each array is looked at alone, whose slips (a term of
    one array's update) would otherwise name half of it."""
    if not all(g.shape == w.shape and g.dtype == np.float32 for g, w in zip(got, want)):
        return  # compare tells the shape or dtype
    close = [bool(np.allclose(g, w, rtol=0, atol=atol)) for g, w in zip(got, want)]
    if all(close):
        return
    for pair, hint in mistakes:
        if all(bool(np.allclose(g, np.asarray(m, np.float64), rtol=0, atol=max(atol, 1e-4))) for g, m in zip(got, pair)):
            raise NotYet(f"{what} is off: {hint}")


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
            if not values.any() or np.isnan(values).all():
                raise NotYet(f"array {i} holds {'zeros' if not values.any() else 'no values'}: it was made empty "
                             f"(zeros_like, empty...), not copied from host array {i}: copy it (u from u0, v from v0)")
            for order, flipped, index in (("rows", host[::-1], "[::-1]"), ("columns", host[:, ::-1], "[:, ::-1]")):
                if np.array_equal(values, flipped):
                    raise NotYet(f"array {i} holds host array {i}'s {order} in reverse order: copy it as it is, "
                                 f"without {index}")
            raise NotYet(f"array {i} does not hold the values of host array {i}: copy that one (u from u0, v from v0); "
                         "an array left from an earlier cell holds other values")
    copied_in_a_loop(device_type.__module__.split(".")[0])
    ok(f"{len(arrays)} arrays on the device, {hosts[0].shape[0]} x {hosts[0].shape[1]} float32, the host's values")


def _truncates(student, a: np.ndarray, device_type, to_device) -> bool:
    """Whether `student` computes with integers: on a grid of values 0 to 4 (where truncated
    values are not all 0), its Laplacian is that of the grid truncated, or the window sum's."""
    grid = (a * 4).astype(np.float32)
    got = _to_numpy(_call(student, (to_device(grid.copy()),), device_type, "your Laplacian"), "your Laplacian",
                    device_type)
    whole = np.trunc(grid.astype(np.float64))
    return any(_close(got.astype(np.float64), wrong, 1e-3) for wrong in
               (reference_laplacian(whole), window_of(whole, "constant") - window_counts(*grid.shape) * grid))


def _rounds_a_running_sum(student, a: np.ndarray, device_type, to_device) -> bool:
    """Whether `student`, off the reference by rounding only, sums a float32 running sum: on
    running_sum_probe's grid it loses whole units away from the corner."""
    grid, away = running_sum_probe(a.shape)
    got = _to_numpy(_call(student, (to_device(grid.copy()),), device_type, "your Laplacian"), "your Laplacian",
                    device_type)
    return bool(np.abs(got[away] - reference_laplacian(grid.astype(np.float64))[away]).max() >= 1)


#: The nine slices stacked, (9, rows, cols), summed over a slice's axis: (9, cols) or (9, rows) meets the grid.
_STACK_SUMMED = (((TypeError, ValueError), r"(?:[Ii]ncompatible shapes|broadcast).*\(9,\s*\d+\)",
                  "{what} combines arrays of shapes {shapes}: the stack of the nine slices summed over a slice's axis. "
                  "They are stacked on axis 0, (9, rows, cols): .sum(axis=0)"),)


@in_its_words
@checks("laplacian(a)")
def laplacian(student, device_type: type | None = None, to_device=lambda a: a, uses: str | None = None) -> None:
    """`student(a)` must return L(a): sum over the 3 x 3 window of (a[n] - a), neighbours outside
    the grid left out. `uses="convolve"`: the exercise is the Laplacian as a convolution, which
    the student's function must run (watched in cuPyNumeric while it runs, however it is spelt)."""
    rng = np.random.default_rng()
    jax = _jax(device_type)
    for _ in range(3):
        a = rng.random(_grid(rng), dtype=np.float32)
        want = reference_laplacian(a.astype(np.float64))
        passed = to_device(a.copy())
        with pads_recorded(_library(device_type)) as widths:
            try:
                got = _to_numpy(_call(student, (passed,), device_type, "your Laplacian", _STACK_SUMMED, a.size),
                                "your Laplacian", device_type)
            except NotYet:
                if padded := one_axis_padded(widths):
                    raise NotYet(padded) from None
                raise
        try:
            compare(got, want.astype(np.float32), "your Laplacian", 1e-5, laplacian_mistakes(a.astype(np.float64)))
        except NotYet as off:
            if "off the reference" in str(off) and (padded := one_axis_padded(widths)):  # no named mistake matched
                raise NotYet(padded) from None
            truncates = running_sum = False
            with contextlib.suppress(NotYet):  # a second call that fails says nothing of integers or rounding
                truncates = _truncates(student, a, device_type, to_device)
                running_sum = ("off the reference" in str(off) and np.abs(got - want).max() < 1e-2
                               and _rounds_a_running_sum(student, a, device_type, to_device))
            if truncates or running_sum:
                raise NotYet(f"your Laplacian is off: {INTEGER_HINT if truncates else RUNNING_SUM_HINT}") from None
            rounded = "off the reference" in str(off) and half_rounded(got, want, laplacian_intermediates(a.astype(np.float64)))
            if rounded:
                raise NotYet(f"your Laplacian is off: {rounded}") from None
            stencil = None
            with contextlib.suppress(NotYet):  # a call that fails on a single 1 says nothing of the stencil
                stencil = "off the reference" in str(off) and stencil_hint(lambda g: _to_numpy(_call(
                    student, (to_device(g),), device_type, "your Laplacian"), "", device_type).astype(np.float64), a, got)
            if stencil:
                raise NotYet(stencil) from None
            raise
    if jax is None:  # a line run once more a row (or column): a Python loop over them, however short its body
        laplacian_grows(student, device_type, to_device, a.shape, _STACK_SUMMED, uses or "laplacian")
    else:  # a program that grows with the rows is a Python loop over them, traced row by row
        grids = [to_device(np.zeros((rows, a.shape[1]), np.float32)) for rows in (a.shape[0], a.shape[0] + 1)]
        not_unrolled(*(_jaxpr(jax, student, (grid,), "your Laplacian") for grid in grids), "grid's rows",
                     "whole arrays at once: the nine slices of the padded array, padded[i : i + rows, j : j + cols]")
    convolved = convolutions_run(lambda: student(to_device(a.copy()))) if uses == "convolve" else True
    if convolved == 0:
        raise NotYet("your function never calls cnp.convolve: the exercise is the Laplacian as one convolution, "
                     "cnp.convolve(a, window, mode=\"same\") - counts * a")
    if convolved is None:
        print("- laplacian: that it convolves is not checked here (this cuPyNumeric's convolution cannot be watched)")
    if _library(device_type) == "cupynumeric":  # the same grid again: a cache has what it needs
        again = to_device(a.copy())
        sent = host_arrays_sent(lambda: student(again))
        if sent:
            raise NotYet(f"your Laplacian copies {len(sent)} NumPy array(s) of {sent[0]} to the device at every call "
                         "(model.window_counts(...) mixed into cnp's arithmetic?): make it a cnp array once and reuse "
                         "it (a functools.cache'd function, as window_counts, or a name set outside)")
    ok("laplacian: right on three random odd, non-square grids, border included"
       + (", runs under jax.jit" if jax else "") + device_note(student, device_type))


@checks("step(u, v, p)")
def step(student, device_type: type | None = None, to_device=lambda a: a, writes: str = "return") -> None:
    """`student(u, v, params)` must return (u, v) after one step of the model, dt on every term.
    `writes`: how the student's code hands the new arrays over ("return", or "kernel": it writes
    u_next and v_next), which the hint for U and V swapped names."""
    rng = np.random.default_rng()
    rows, cols = _grid(rng)
    u, v = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    u64, v64 = u.astype(np.float64), v.astype(np.float64)
    want = reference_step(u64, v64, PARAMS)
    passed = (to_device(u.copy()), to_device(v.copy()))
    with fences_at_most(student, 0, "your step", 1):
        got = _pair(_call(student, (*passed, PARAMS), device_type, "your step", cells=u.size), "your step")
    changed = _changed(passed, (u, v))
    jax = _jax(device_type)
    if jax is not None:  # before the values: a Python if on an array's value changes them, and cannot run under jit
        plain_tuple(got, "your step")
        _jaxpr(jax, lambda a, b: student(a, b, PARAMS), (to_device(u), to_device(v)), "your step")
    mistakes = list(step_mistakes(u64, v64, PARAMS, writes))
    arrays = [_to_numpy(g, f"your {name}_next", device_type) for name, g in zip("uv", got)]
    twice = one_result_twice(arrays, want, writes, 1e-5)
    if twice:
        raise NotYet(f"your step is off: {twice}")
    for index, (name, g, w) in enumerate(zip("uv", arrays, want)):
        try:
            if index == 0:
                _pair_mistake(arrays, want, mistakes, "your step", 1e-5)
            compare(g, w.astype(np.float32), f"your {name}_next", 1e-5,
                    itertools.chain(step_slips(u64, v64, PARAMS, index), per_array(mistakes, index)))
        except NotYet as err:
            earlier = still_wrong_earlier(student, _library(device_type), to_device, "your step")
            if earlier:
                raise NotYet(earlier) from None
            rounded = "off the reference" in str(err) and half_rounded(g, w, step_intermediates(u64, v64, PARAMS, index))
            if rounded:
                raise NotYet(f"your {name}_next is off: {rounded}") from None
            if changed:
                raise NotYet(f"{err}. Your step changed its inputs: compute both updates from the arrays as "
                             "given, then change them (or return new arrays)") from None
            raise
    _refuse_changed_inputs(changed, "step")
    if jax is None:
        step_grows(student, device_type, to_device, u.shape, PARAMS)
    ok(f"step: right with dt = {PARAMS.dt}, F = {PARAMS.feed}, k = {PARAMS.kill}" + device_note(student, device_type))


@checks("run(u, v, p, steps)")
def time_loop(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params, steps)` must return (u, v) after `steps` steps. With JAX, the loop
    must be one loop on the device (fori_loop or scan), not a Python loop traced step by step."""
    rows, cols = _grid(np.random.default_rng())
    steps = 21  # odd: a loop of steps // 2 double steps, or one short, ends elsewhere; few: a classroom shares the cores
    u0, v0 = initial_state(rows, cols)
    jax = _jax(device_type)
    if jax is not None:  # traced first: XLA would take minutes to compile a Python loop's thousands of steps
        with list_from_step_told(student, to_device):
            program = _jaxpr(jax, lambda u, v: student(u, v, PARAMS, steps), (to_device(u0), to_device(v0)),
                             "your time loop", BODY_ARGUMENTS)
        check_loops(program, "your time loop")
        operations = len(list(_equations(program.jaxpr)))
        looped = any(e.primitive.name in ("while", "scan") for e in _equations(program.jaxpr))
        if not looped and operations > steps:  # more operations than steps: the steps are unrolled
            raise NotYet(f"your time loop unrolls into {operations} operations: it is a Python loop traced step by "
                         "step. Use lax.fori_loop so that one loop runs on the device (XLA would take minutes to "
                         "compile the unrolled steps)")
        # A loop of a fixed length runs long before its values say so; a program without a loop is quick to
        # run, and its values name its mistake (the start state returned, None...).
        if looped and same_program(program, _jaxpr(jax, lambda u, v: student(u, v, PARAMS, steps + 1),
                                                   (to_device(u0), to_device(v0)), "your time loop")):
            raise NotYet(f"your time loop is the same program for {steps} and {steps + 1} steps: it ignores its "
                         "argument steps. Loop steps times, lax.fori_loop(0, steps, ...)")
    passed = (to_device(u0.copy()), to_device(v0.copy()))
    # bodies first: a task's error would stop the process without may_throw_exception; one fence, after the loop, allowed
    with bodies_tried_first(student), fences_at_most(student, 1, "your time loop", steps):
        got = _pair(_call(student, (*passed, PARAMS, steps), device_type, "your time loop",
                          BODY_ARGUMENTS if jax else ()), "your time loop")
    if jax is not None:
        plain_tuple(got, "your run")
    changed, task = _changed(passed, (u0, v0)), reaches_a_task(student)
    if task and not changed:  # a task's writes into its inputs show in arrays of Legate's own only (not NumPy's memory)
        owned = tuple(to_device(a.copy()).copy() for a in (u0, v0))
        _call(student, (*owned, PARAMS, 2), device_type, "your time loop")
        changed = _changed(owned, (u0, v0))
    loose = task and arrays_not_kept_whole(student)
    if loose:
        raise NotYet(loose)
    if task and changed:
        raise NotYet("your task writes into its inputs (an InputArray is read only: Legate does not send what is "
                     "written there back to the caller's array, here it changed it): write the results into the "
                     "outputs only, np.asarray(u_out)[:] = a, and compute into new arrays (a, b = "
                     "model.reference_step(a, b, p))")
    want = reference_run(rows, cols, steps, PARAMS)
    arrays = [_to_numpy(g, f"your {name}", device_type) for name, g in zip("uv", got)]
    start = another_start(rows, cols)
    again = _pair(_call(student, (*(to_device(a.copy()) for a in start), PARAMS, steps), device_type, "your time loop",
                        BODY_ARGUMENTS if jax else ()), "your time loop")
    others = [_to_numpy(g, f"your {name}", device_type) for name, g in zip("uv", again)]
    ignores = ignores_its_start(arrays, others, all(_close(g, w, PARITY_ATOL) for g, w in zip(arrays, want)),
                                "your time loop", "a, b = np.asarray(u), np.asarray(v) in the task" if task else
                                "lax.fori_loop(0, steps, body, (u, v))" if jax else "the loop's first step is step(u, v, p)")
    if ignores:  # or the step it calls ignores its own: that step is the one to mend
        raise NotYet(still_wrong_earlier(student, _library(device_type), to_device, "your time loop") or ignores)
    twice = one_result_twice(arrays, want, "task" if task else "return", PARITY_ATOL) or half_precision(arrays, want)
    if twice:
        raise NotYet(f"your time loop is off: {twice}")
    returns = not task and first_in_a_loop(student, lambda node: isinstance(node, ast.Return)) is not None
    mistakes = list(state_mistakes(rows, cols, steps, task, returns_in_the_loop=returns))
    mistakes.append((want[::-1], SWAPPED["task"] if task else
                     "U and V are swapped: return u, v in that order"))
    try:
        for index, (name, g, w) in enumerate(zip("uv", arrays, want)):
            compare(g, w.astype(np.float32),
                    f"your {name} after {steps} steps", PARITY_ATOL,
                    itertools.chain(per_array(mistakes, index), runs_of_wrong_steps(rows, cols, steps, PARAMS, index),
                                    run_slips(rows, cols, steps, PARAMS, index)),
                    "; a task writes its outputs through np.asarray(u_out)[:] = ..." if task else "",
                    nan_is_unwritten=jax is None)  # JAX's arrays are fresh: NaN is an overflow
    except NotYet as off:
        earlier = (task and outputs_never_written(student)
                   or still_wrong_earlier(student, _library(device_type), to_device, "your time loop"))
        taken = earlier or "off the reference" in str(off) and steps_taken(
            arrays, student, steps, PARAMS, PARITY_ATOL, "lax.fori_loop(0, steps, ...)" if jax else "for _ in range(steps)")
        if taken:
            raise NotYet(taken) from None
        raise
    (right,), partial = states_after(start, [steps]), [(states_after(s, [steps])[0], hint)
                                                        for s, hint in partial_starts(start, rows, cols)]
    for index, (name, g) in enumerate(zip("uv", others)):
        compare(g, right[index].astype(np.float32), f"your {name} after {steps} steps from a start other than the "
                "initial state", PARITY_ATOL, per_array(partial, index))
    _refuse_changed_inputs(changed, "time loop")
    if jax is None and not task:
        step_grows(student, device_type, to_device, (rows, cols), PARAMS, steps)
    ok(f"time loop: right after {steps} steps" + (", one loop on the device" if jax else "")
       + device_note(student, device_type))


def _images_array(got, what: str, device_type):
    if isinstance(got, tuple) and len(got) == 2 and len(getattr(got[1], "shape", ())) == 3:
        if getattr(got[0], "shape", None) == got[1].shape:  # two stacks alike: each image the body emitted was a pair
            raise NotYet(f"{what} are two stacks of images: your scan's body emits a pair at each image (both "
                         "arrays, (v, u) or (u, v)), and lax.scan stacks each: emit V alone, return (u, v), v")
        raise NotYet(f"{what} are a pair: lax.scan returns (carry, stacked); return the stacked images only")
    if got is None:
        raise NotYet(f"{what} are None: end the function with return and the images")
    return _to_numpy(got, what, device_type)


@checks("images(u, v, p, nbimage, nbextrastep)")
def images(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params, nbimage, nbextrastep)` must return the V images, shape
    (nbimage, rows, cols), image i after (i + 1) x nbextrastep steps. With JAX, one lax.scan over
    the images must make them."""
    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 5, 7
    u0, v0 = initial_state(rows, cols)
    args = (PARAMS, nbimage, nbextrastep)
    jax = _jax(device_type)

    def program(images, steps):  # traced first, on few images and steps: XLA would take minutes to compile a loop
        return traced_program(jax, lambda u, v: student(u, v, PARAMS, images, steps), (to_device(u0), to_device(v0)),
                              "your images", BODY_ARGUMENTS)

    with list_from_step_told(student, to_device):
        few = looped_program(program, "images", ("images", "lax.scan over the images, one_image returning ((u, v), v)"),
                             ("steps of an image", "lax.fori_loop for the nbextrastep steps of one image"),
                             ("nbextrastep", " an image", ", not the notebook's size.steps_per_image")) if jax else None
    if few is not None:
        if any(tuple(out.shape) == (2, 2, rows, cols) for out in few.out_avals):
            raise NotYet(_V_ONLY.format(shape=f"(nbimage, 2, {rows}, {cols})"))
        scans = [e for e in _equations(few.jaxpr) if e.primitive.name == "scan"]
        for emitted, hint in (((cols, rows), "V transposed (cols x rows): emit v as it is"),
                              ((1, rows, cols), "of shape (1, rows, cols), an axis more: emit v itself")):
            if any(makes_shape(e, (n, *emitted)) for e in scans for n in (1, 2, 3)):
                raise NotYet(f"each image your scan emits is {hint}, ((u, v), v): lax.scan stacks them")
        stacking = [e for e in scans if any(makes_shape(e, (n, rows, cols)) for n in (1, 2, 3))]
        if not stacking:  # 2 images stacked, or one less or more (the values say what)
            raise NotYet("your images are not made by one lax.scan over the images: scan one_image, which returns "
                         "((u, v), v), then return the stacked images")
        restarts = images_restart(stacking, (rows, cols))
        if restarts:
            raise NotYet(restarts)
    start = another_start(rows, cols)
    got, others = (_images_array(_call(student, (to_device(u.copy()), to_device(v.copy()), *args), device_type,
                                       "your images", BODY_ARGUMENTS if jax else ()), "your images", device_type)
                   for u, v in ((u0, v0), start))
    counts = [(i + 1) * nbextrastep for i in range(nbimage)]
    want = np.stack([v for _, v in states_after((u0, v0), counts)])
    ignores = ignores_its_start([got], [others], _close(got, want, PARITY_ATOL), "your run of the images",
                                "the scan's carry starts as (u, v)")
    if ignores:
        raise NotYet(still_wrong_earlier(student, _library(device_type), to_device, "your images function") or ignores)
    try:
        _compare_images(got, rows, cols, nbimage, nbextrastep, nan_is_unwritten=not jax)
    except NotYet:  # the step or run of an earlier exercise it calls may be the one wrong
        earlier = still_wrong_earlier(student, _library(device_type), to_device, "your images function")
        if earlier:
            raise NotYet(earlier) from None
        raise
    partial = [([v for _, v in states_after(s, counts)], hint) for s, hint in partial_starts(start, rows, cols)]
    for i, (_, v) in enumerate(states_after(start, counts)):
        compare(others[i], v.astype(np.float32), f"image {i} from a start other than the initial state", PARITY_ATOL,
                [(images[i], hint) for images, hint in partial], nan_is_unwritten=not jax)
    jitted_as_given(few, "your images")  # its values right: the given jit is the mistake left
    ok(f"images: {nbimage} images, each after (i + 1) x {nbextrastep} steps" + (", one scan" if jax else ""))


_V_ONLY = ("your images have shape {shape}: each image holds U and V stacked. Store V only, one_image returning "
           "((u, v), v)")

_INITIAL_IMAGE = ("the first image is V after the first nbextrastep steps (the initial state is not an image; store V "
                  "after each image's steps)")


def _compare_images(got: np.ndarray, rows: int, cols: int, nbimage: int, nbextrastep: int,
                    nan_is_unwritten: bool = True, advance: str = JAX_IMAGE_STEPS) -> None:
    if got.shape == (nbimage + 1, rows, cols) and np.allclose(got[0], initial_state(rows, cols)[1]):
        raise NotYet(f"your images have shape {got.shape}, one too many: image 0 is the initial V, but {_INITIAL_IMAGE}")
    if got.shape == (nbimage, 2, rows, cols):
        raise NotYet(_V_ONLY.format(shape=got.shape))
    if got.shape != (nbimage, rows, cols):
        raise NotYet(f"your images have shape {got.shape}, expected (nbimage, rows, cols) = {(nbimage, rows, cols)}")
    if not np.allclose(got[0], reference_run(rows, cols, nbextrastep, PARAMS)[1], rtol=0, atol=PARITY_ATOL):
        other = steps_of_first_image(got[0], rows, cols, PARAMS, nbextrastep, PARITY_ATOL, advance)
        if other:
            raise NotYet(other)
    for i in range(nbimage):
        steps = (i + 1) * nbextrastep
        u, v = reference_run(rows, cols, steps, PARAMS)
        earlier = f"it is V after {i} x nbextrastep steps" + (f", the initial V: {_INITIAL_IMAGE}" if i == 0 else
                                                              ": image i holds V after (i + 1) x nbextrastep steps")
        mistakes = [(reference_run(rows, cols, i * nbextrastep, PARAMS)[1], earlier),
                    (u, "it is U: store V")]
        mistakes += per_array(state_mistakes(rows, cols, steps), 1)
        compare(got[i], v.astype(np.float32), f"image {i}", PARITY_ATOL, mistakes,
                nan_is_unwritten=nan_is_unwritten)
