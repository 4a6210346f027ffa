"""The time loops and steps the checkers recognise as a mistake, each as the values it gives (float64,
like the reference) with the one line that names it: a step that returns its input, U and V
swapped, dt on some terms only, a loop one step short, a loop that drops V from its carry or
ignores the u, v it is given. The checkers of `check_model` try them in turn when a student's
values are off, so that the hint names the mistake instead of a distance.
"""

from __future__ import annotations

import itertools

import numpy as np

from .check_core import PARAMS
from .check_slips import GROUPS, TERMS, slipped_step
from .laplacian_mistakes import BORDER_MISTAKES, STENCIL_MISTAKES
from ..model import PARITY_ATOL, initial_state, laplacian as reference_laplacian, reference_run, reference_step
from ..parameters import Parameters


#: What "U and V are swapped" asks for, after how the student's answer hands its arrays over.
SWAPPED = {
    "return": "U and V are swapped: return u_next, v_next in that order",
    "kernel": ("U and V are swapped: your kernel writes U's update into v_next and V's into u_next; u_next gets "
               "u + dt * (...), v_next gets v + dt * (...)"),
    "task": ("U and V are swapped: your task writes U's result into v_out and V's into u_out (or run_task returns "
             "them the other way round); np.asarray(u_out)[:] gets the new U, and run_task returns u_out, v_out"),
}


#: What "it is the state you were given" asks for, likewise.
UNCHANGED = {
    "return": "it is the state you were given: return the updated arrays (return u + ..., v + ...)",
    "kernel": ("it is the state you were given: your kernel adds nothing to it, u_next = u + dt * (...), v_next = "
               "v + dt * (...) (an integer division? In C, 1 / 2 is 0: write 0.5f)"),
}


def step_mistakes(u, v, p, writes: str = "return"):
    """(u_next, v_next) of the common wrong steps, and what each is."""
    right = reference_step(u, v, p)
    every_term = "multiply every term of the update by dt"
    yield (u, v), UNCHANGED[writes]
    yield (((right[0] - u) / p.dt, (right[1] - v) / p.dt),
           "it is the rates du and dv: return the new state, u + p.dt * du, v + p.dt * dv")
    yield (right[0] - u, right[1] - v), "it is one step's change, p.dt * du: add it to the state, u + p.dt * du"
    yield right[::-1], SWAPPED[writes]
    yield ((right[0], v + p.dt * (p.dv * reference_laplacian(v) + right[0] * v * v - (p.feed + p.kill) * v)),
           "V's update uses the new u (u reassigned before V's line): compute both updates from the u and v given")
    yield reference_step(u, v, p.replace(dt=1.0)), f"it is what a step without dt gives: {every_term}"
    groups = tuple(GROUPS)
    for with_dt in itertools.chain(itertools.combinations(groups, 1), itertools.combinations(groups, 2)):
        yield (slipped_step(u, v, p, without_dt=[g for g in groups if g not in with_dt]),
               f"it is what dt on the {' and '.join(with_dt)} terms only gives (none on the "
               f"{' and '.join(g for g in groups if g not in with_dt)}): {every_term}")
    yield reference_step(u, v, p.replace(du=p.dv, dv=p.du)), "Du and Dv are swapped: U diffuses with p.du, V with p.dv"
    yield reference_step(u, v, Parameters()), DEFAULT_PARAMETERS
    for wrong, hint in BORDER_MISTAKES:
        yield slipped_step(u, v, p, laplacian=wrong), f"only the border is wrong: {hint}"
    for wrong, hint in STENCIL_MISTAKES:
        yield slipped_step(u, v, p, laplacian=wrong), hint
    lv = reference_laplacian(v)
    yield ((right[0], v + p.dt * (p.dv * lv + right[0] * v * v - (p.feed + p.kill) * v)),
           "V's update uses the new U: compute both updates from the u and v given (uvv = u * v * v once, before u "
           "changes)")
    rates = ((right[0] - u) / p.dt, (right[1] - v) / p.dt)
    yield (u + p.dt * rates[1], v + p.dt * rates[0]), "du and dv are swapped: u + p.dt * du, v + p.dt * dv"
    yield (right[0], v + p.dt * rates[0]), "V's update adds du: v + p.dt * dv"
    yield (right[0] - p.dt * p.feed * (1 - u) ** 2, right[1]), "U's feed term is p.feed * (1 - u), not times u"
    yield (u + p.dt * rates[1], right[1]), "U's update adds dv: u + p.dt * du"
    for times, what in ((0.5, "half a dt"), (2, "two dt"), (p.dt, "dt twice (p.dt * p.dt), one p.dt belongs")):
        yield reference_step(u, v, p.replace(dt=p.dt * times)), f"the step is {what}: u + p.dt * du, v + p.dt * dv"


#: The parameters a function uses when it reads the notebook's `params` (the course's defaults)
#: instead of the `p` it is given.
DEFAULT_PARAMETERS = ("it is what the course's default parameters give: use the parameters your function is "
                       "given (p), not the notebook's params")


def state_mistakes(rows, cols, steps, task: bool = False, returns_in_the_loop: bool = False):
    """(u, v) of a time loop that runs one step too few or too many, returns the start state, starts
    from U and V swapped or uses the default parameters; `task`: the loop is a Legate task's (its hints name a task's code);
    `returns_in_the_loop`: the student's code returns inside its loop (one step's state is then its first turn's)."""
    yield reference_run(rows, cols, 0, PARAMS), "it is the start state: run the steps and return their result"
    yield reference_run(rows, cols, steps, Parameters()), DEFAULT_PARAMETERS
    yield _run_from_new_u(rows, cols, steps), ("V is updated from the new U: compute both from the same state, "
                                                "u, v = step(u, v, p) in one assignment")
    each = "a, b = ... in the task's loop" if task else "u, v = step(u, v, p) in the loop"
    yield reference_run(rows, cols, 1, PARAMS), (
        "it is the state after one step: your return is inside the loop, so the function returns at its first turn: "
        "return u, v after the loop, one indentation level out" if returns_in_the_loop else
        f"it is the state after one step: start each step from the one before, {each}")
    yield _run_from(*initial_state(rows, cols, np.float64)[::-1], steps), ("it is the run from U and V swapped: the "
                                                                           "loop starts from (u, v), in that order")
    yield reference_run(rows, cols, steps - 1, PARAMS), "it is the state one step too early: run all the steps"
    yield reference_run(rows, cols, steps + 1, PARAMS), "it is the state one step too late: run exactly `steps` steps"
    yield reference_run(rows, cols, 2 * steps, PARAMS), "it is the state after 2 x steps steps: one step each time round the loop"
    call = "model.reference_step(a, b, p)" if task else "step(u, v, p)"
    yield _run_otherwise(rows, cols, steps, swapped=True), f"each step is called with u and v swapped: it takes (u, v, p), {call}"
    yield (_run_otherwise(rows, cols, steps, hands_back_swapped=True),
           f"each step's result is handed back swapped, (v, u): the loop's body returns {call} as it is, (u, v)")
    yield (reference_run(rows, cols, steps, PARAMS.replace(feed=PARAMS.kill, kill=PARAMS.feed)),
           "F and k are swapped: " + ("Parameters(du, dv, feed, kill, dt), in that order" if task else "p.feed and p.kill"))
    # V left out of the loop's carry: it stays as given, U steps with it (U left out, V grows without bound)
    yield (_run_otherwise(rows, cols, steps, kept=1), "V never changes: each step's new v is dropped, only u is carried "
           f"from step to step (and v returned as given): carry both, {each}")
    if task:
        yield (_run_otherwise(rows, cols, steps, start=np.zeros((2, rows, cols))),
               "the loop starts from u_out and v_out, which hold nothing yet: start from the inputs, "
               "a, b = np.asarray(u), np.asarray(v)")


def _run_otherwise(rows: int, cols: int, steps: int, swapped: bool = False, start=None, hands_back_swapped=False,
                   kept: int | None = None):
    """(u, v) after `steps` steps of a loop that calls the step with its arrays swapped (step(v, u, p)),
    that starts from `start` (u, v) instead of the initial state, whose body hands each step's
    result back as (v, u), or that keeps array `kept` (0: u, 1: v) as it started, out of its carry."""
    u, v = initial_state(rows, cols, np.float64) if start is None else start
    for _ in range(steps):
        new = reference_step(*((v, u) if swapped else (u, v)), PARAMS)[::-1 if hands_back_swapped else 1]
        u, v = (a if i == kept else b for i, (a, b) in enumerate(zip((u, v), new)))
    return u, v


def _run_from(u, v, steps: int):
    """(u, v) after `steps` steps of the checker's parameters from the state given."""
    for _ in range(steps):
        u, v = reference_step(u, v, PARAMS)
    return u, v


def _run_from_new_u(rows: int, cols: int, steps: int):
    """(u, v) of a loop that computes V's step from U's new value (u = step(u, v)[0]; v = step(u, v)[1])."""
    u, v = initial_state(rows, cols, np.float64)
    for _ in range(steps):
        u = reference_step(u, v, PARAMS)[0]
        v = reference_step(u, v, PARAMS)[1]
    return u, v


def per_array(mistakes, index: int):
    """(array `index`, hint) of each (pair, hint): `compare` looks at one array at a time."""
    return [(pair[index], hint) for pair, hint in mistakes]


def runs_of_wrong_steps(rows: int, cols: int, steps: int, p, index: int):
    """(array `index` after `steps` steps of each common wrong step of `step_mistakes`, its hint), lazily:
    a loop or a batch whose own step is wrong (Du and Dv swapped, V's update adding du...)."""
    start = initial_state(rows, cols, np.float64)
    for k, (_, hint) in enumerate(step_mistakes(*start, p)):
        u, v = start
        with np.errstate(all="ignore"):  # one that blows up matches nothing
            for _ in range(steps):
                u, v = next(itertools.islice(step_mistakes(u, v, p), k, None))[0]
        yield (u, v)[index], hint


# A function given u, v must start from them: one that starts from a state of its own (model.initial_state, ones
# and zeros) is right from the initial state, the checkers' first start. Run from another start too, it gives
# the same as from the first (or not the reference's from that start, where it ignores one of the two).

def another_start(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The initial state blended with noise (float32, within [0, 1]): a start that differs from the
    initial state everywhere, so that runs from the two differ everywhere."""
    rng = np.random.default_rng(7)
    return tuple((0.8 * a + 0.2 * rng.random(a.shape)).astype(np.float32) for a in initial_state(rows, cols))


def states_after(start, counts) -> list:
    """The (u, v) of the checker's parameters after each of `counts` (ascending) steps from `start`."""
    (u, v), done, states = (a.astype(np.float64) for a in start), 0, []
    for count in counts:
        u, v = _run_from(u, v, count - done)
        done = count
        states.append((u, v))
    return states


def ignores_its_start(first, second, from_initial: bool, what: str, how: str) -> str | None:
    """Where the results of a function run from the initial state (`first`, its arrays) and from
    `another_start` (`second`) are alike, the hint that it ignores the u, v it is given (`how`: what
    starts from them); `from_initial`: its first result is the initial state's run. Else None; also
    where the results are zeros or NaN only, alike from any start (`compare` names those)."""
    if not any(np.isfinite(f).all() and f.any() for f in first):
        return None  # zeros or NaN only (never written, or returned so): compare tells them
    if not all(f.shape == s.shape and bool(np.allclose(f, s, rtol=0, atol=PARITY_ATOL)) for f, s in zip(first, second)):
        return None
    start = ("it starts from the initial state (model.initial_state) whatever they are" if from_initial else
             "it gives the same result whatever they are: it starts from a state of its own")
    return f"{what} ignores the u, v it is given: {start}. Start from the u, v given: {how}"


def partial_starts(start, rows: int, cols: int):
    """((u, v) a run starts from when it takes one of the arrays of `start` and the initial state's
    other, its hint), for a run that is right from the initial state and off from `start`."""
    initial = initial_state(rows, cols, np.float64)
    for ignored in (1, 0):
        mixed = tuple(initial[i] if i == ignored else start[i].astype(np.float64) for i in (0, 1))
        yield mixed, (f"it ignores the {'uv'[ignored]} it is given: it starts from the initial state's "
                      f"{'UV'[ignored]} (model.initial_state), right only when it is given that state")


def step_intermediates(u, v, p, index: int):
    """(value, factor, what) of the intermediates of array `index`'s update a student may round to a
    half precision on the way (`gs_course.lessons.rounding`): each term (uvv...), the Laplacian, the rate,
    and the inputs u and v as operands of one term alone (u.astype(...) * v * v), or of the update."""
    name, lu, lv = "uv"[index], reference_laplacian(u), reference_laplacian(v)
    terms = [(value, label, formula) for array, label, formula, value in TERMS.values() if array == name]
    for value, label, formula in terms:
        yield value(u, v, lu, lv, p), p.dt, f"{label} ({formula})"
    yield (lu, lv)[index], p.dt * (p.du, p.dv)[index], f"laplacian({name})"
    yield sum(value(u, v, lu, lv, p) for value, _, _ in terms), p.dt, f"d{name}, the rate"
    yield (u, v)[index], 1.0, f"{name} in {name} + p.dt * d{name}"
    for value, label, formula in terms:
        slopes = {"u": _slope(lambda x: value(x, v, lu, lv, p), u), "v": _slope(lambda x: value(u, x, lu, lv, p), v)}
        for operand, slope in slopes.items():
            if np.abs(slope).max() > 0:
                yield {"u": u, "v": v}[operand], p.dt * slope, f"{operand} in {label} ({formula})"


def _slope(term, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """d term / d x, cell by cell: central differences, exact for the terms' polynomials of degree 3 or less
    up to h^2 (the rounding's first order is all the check needs)."""
    return (term(x + h) - term(x - h)) / (2 * h)
