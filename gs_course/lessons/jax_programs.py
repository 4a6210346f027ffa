"""What the checkers of the JAX tutorial read in a student's traced program (its jaxpr) before
anything of it runs: once XLA runs or compiles a program, nothing in Python can stop it (a signal
waits for XLA to return), so a loop that never ends, or one that XLA unrolls into thousands of
operations, must be told from the program itself. Also an argument the program ignores (it is the
same program whatever the argument) and a permutation of `lax.ppermute` that names a device twice
(XLA refuses it only when it compiles, with its own traceback). The images' and batch's programs are
traced on a few images or pairs and steps, and once more with one more of each: a Python loop
grows the program (tracing unrolls it). Also read there: a scan of the images whose images do not
depend on the state it carries (each image run again from the start), a loop outside the jit the
exercise gives; and, from what a step or run returns, a list where the next exercise's loop carries
the tuple (u, v).
"""

from __future__ import annotations

import numpy as np

from .check_core import NotYet, _equations, their_errors
from .legate_check import nested_codes

#: How the hint for a loop whose body returns a list where its start is a tuple begins (`check_earlier` tells
#: where the list comes from the notebook's step).
LIST_CARRY = "the loop's body returns a list where its start is a tuple"

#: The fori_loop and scan sentences a JAX loop's body gets when it is called with other arguments than it takes,
#: or returns a carry of another structure or dtype than its start (JAX's own message is cut before the difference).
BODY_ARGUMENTS = (
    (TypeError, r"takes \d+ positional arguments? but \d+ (were|was) given|missing \d+ required positional argument",
     "{what}: a function is called with other arguments than it takes ({message}). lax.fori_loop calls its body "
     "as body(i, carry), the carry (u, v) one tuple, and the body returns the new carry; lax.scan calls it as "
     "body(carry, x) and takes back (carry, y)"),
    (TypeError, r"scan body function carry input and carry output must have the same pytree structure[\s\S]*input carry "
                r"\w+ is a <class 'tuple'> but the corresponding component of the carry output is a <class '[\w.]*Array",
     "{what}: lax.scan's body returns a pair (carry, y), here ((u, v), v): the new carry, then the image"),
    (TypeError, r"carry input and carry output must have the same pytree structure[\s\S]*input carry [^\n]*? is a "
                r"<class 'tuple'> but the corresponding component of the carry output is a <class 'list'>",
     "{what}: " + LIST_CARRY + "; a loop's body must return the same structure as its start, here a tuple (u, v): "
     "return a, b, not [a, b]"),
    (TypeError, r"carry input and carry output must have equal types[\s\S]*?has type (\w+)\[[^\]]*\] but the "
                r"corresponding output carry component has type (\w+)\[",
     "{what}: the loop's carry starts as {0} arrays and its body returns {1} ones: a loop's body must return the "
     "dtypes of its start. Keep the carry float32, the dtype of the (u, v) given: no astype to another dtype, in "
     "the start or in the body"),
    (TypeError, r"iteration over a 0-d array|cannot unpack non-iterable",
     "{what}: a number was unpacked as the pair (u, v) ({message}): lax.fori_loop calls its body as body(i, carry), "
     "the step number first, then the carry (u, v); a body written (carry, i) takes the step number for the carry"),
    (ValueError, r"scan got value with no leading axis to scan over",
     "{what}: lax.scan's third argument is xs, an array it scans over (a number is none): to run nbimage times over "
     "nothing, lax.scan(one_image, (u, v), None, length=nbimage)"),
    (TypeError, r"after \* must be an iterable, not NoneType",
     "{what}: lax.scan calls its body as body(carry, x), the carry (u, v) first, then x (None without xs)"),
)


#: Where a JAX step's or run's result is taken back as a loop's carry (`plain_tuple`).
CARRIED_BY = {
    "your step": "exercise 2's lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v)) takes it back as its carry",
    "your run": "a loop that calls run (one_image's lax.scan in exercise 3) takes it back as its carry",
}


def plain_tuple(got, what: str) -> None:
    """A JAX step or time loop must return the plain tuple (u, v), however built (a, b; tuple(...)):
    the notebook's next loops take its result back as their carry, whose structure must stay the
    tuple it starts as (JAX compares pytree types: a list, or a namedtuple, is another structure).
    Its values alone would be right, and the next exercise fail on it."""
    if type(got) is tuple:
        return
    kind = "a list [u_next, v_next]" if isinstance(got, list) else f"a {type(got).__name__}, not a plain tuple"
    raise NotYet(f"{what} returns {kind}: return the tuple (u_next, v_next), return a, b: {CARRIED_BY[what]}, and "
                 "lax.fori_loop's carry must keep one structure, the tuple (u, v) it starts as")


#: What a Python loop over the steps, images or pairs is, and what to use instead.
PYTHON_LOOP = "a Python loop, which jit unrolls (XLA would take minutes to compile it at the course's size). Use {instead}"

#: The errors of the batch's common mistakes with the notebook's Parameters, which takes numbers or
#: vmap's traced scalars: a NumPy number is a pair taken in Python (a loop over zip(feeds, kills), where
#: jit would not even run it); a traced array of the pairs is an argument vmap did not map (in_axes
#: None), so the pair holds them all; vmap's tracers in a jitted function's static p (the notebook's
#: run, static_argnums=(2, 3)) cannot be hashed, since a static value must be known when jit compiles.
PAIR_ERRORS = (
    (TypeError, r"(?:feed|kill) must be a number, got np\.\w+\(",
     "{what} takes the pairs one by one in Python (a loop over zip(feeds, kills) or feeds[i], one call of one_pair "
     "for each): " + PYTHON_LOOP.format(instead="one pair's run, jax.vmap(one_pair), which runs every pair at once")),
    ((TypeError, ValueError), r"(feed|kill) must be a number, got \w*Tracer\(\w+\[(\d+)\]",
     "{what}: one_pair's {0} is the whole array of {0}s (shape ({1},)), not one pair's: jax.vmap with in_axes None for "
     "the {0}s hands every pair all of them. Map both along axis 0: in_axes=(0, 0), or leave in_axes out"),
    (ValueError, r"Non-hashable static arguments[\s\S]*Parameters\(.*Tracer",
     "{what} calls a jitted function whose p is a static argument (the notebook's run, static_argnums=(2, 3)) with "
     "one_pair's Parameters: under jax.vmap feed and kill are traced values, which cannot be static. Loop inside "
     "one_pair, lax.fori_loop(0, steps, lambda _, uv: step(*uv, Parameters(...)), (u0, v0)) (or give run feed and "
     "kill as traced arguments)"),
)


def traced_program(jax, function, args, what: str, hints=()):
    """The jaxpr of `function`, traced before anything compiles; None where NumPy meets a traced
    array (the call that follows tells where: a result sent back to the host, or NumPy under jit)."""
    with their_errors(what, hints, "jax"):
        try:
            return jax.make_jaxpr(function)(*args)
        except jax.errors.TracerArrayConversionError:
            return None


def makes_shape(eqn, shape: tuple) -> bool:
    """Whether an equation outputs an array of that shape. Read from the outputs' types, not from
    the equation's params, whose names change between JAX versions (scan's num_carry, present in
    0.10, is gone in 0.11): a scan whose outputs include the images stacked is the scan over them."""
    return any(getattr(getattr(var, "aval", None), "shape", None) == shape for var in eqn.outvars)


def _slice(jaxpr, outvars) -> tuple[list, set]:
    """The equations of `jaxpr` that `outvars` are computed from, in order, and the inputs they read
    (literals, which have a `val`, are no inputs: a constant condition, lambda c: True, reads none)."""
    wanted, kept = {v for v in outvars if not hasattr(v, "val")}, []
    for eqn in reversed(jaxpr.eqns):
        if any(out in wanted for out in eqn.outvars):
            kept.append(eqn)
            wanted.update(v for v in eqn.invars if not hasattr(v, "val"))
    return kept[::-1], wanted.intersection(jaxpr.invars)


RESTARTS = ("your images do not continue from the scan's carry: each image starts again from (u, v), about nbimage / 2 "
            "times the work. Run one_image's nbextrastep steps from its carry uv and return ((u, v), v)")


def images_restart(scans, grid: tuple) -> str | None:
    """`RESTARTS` where a scan that stacks the images (`scans`, equations) makes each from something
    other than the grids it carries (the initial state closed over, a count of steps carried instead,
    lax.map's scan without a carry): the values are right, the work grows as nbimage squared. The carried
    grids are any carry whose shape ends in the grid (u and v apart, or stacked as one (2, rows, cols)); a
    scan that carries none of them but a counter is not told (lax.map's has no carry at all). Read from
    the scan's num_consts and num_carry: where JAX names them otherwise (0.11 drops num_carry), not told."""
    for eqn in scans:
        body, consts, carried = (eqn.params.get(key) for key in ("jaxpr", "num_consts", "num_carry"))
        if body is None or consts is None or carried is None:
            continue
        body = getattr(body, "jaxpr", body)
        carry = [var for var in body.invars[consts : consts + carried]
                 if tuple(getattr(var.aval, "shape", ()))[-len(grid):] == grid]
        if carried and not carry:
            continue  # a carry of something else than the grids: not read here
        images = [var for var in body.outvars[carried:] if getattr(getattr(var, "aval", None), "shape", None) == grid]
        if images and not set(carry) & _slice(body, images)[1]:
            return RESTARTS
    return None


def _loop_parts(eqn):
    """A while equation's condition and body jaxprs, and the carry among each one's inputs."""
    body, cond = eqn.params["body_jaxpr"].jaxpr, eqn.params["cond_jaxpr"].jaxpr
    return cond, cond.invars[eqn.params["cond_nconsts"]:], body, body.invars[eqn.params["body_nconsts"]:]


def endless_loop(program) -> str | None:
    """The hint for a `lax.while_loop` whose condition reads only what its body returns unchanged
    (a counter never incremented: the loop never ends, or never runs); else None."""
    for eqn in _equations(program.jaxpr):
        if eqn.primitive.name != "while":
            continue
        cond, cond_carry, body, carry_in = _loop_parts(eqn)
        changed = {i for i, (before, after) in enumerate(zip(carry_in, body.outvars)) if before is not after}
        read = [i for i, var in enumerate(cond_carry) if var in _slice(cond, cond.outvars)[1]]
        if not changed.intersection(read):
            which = ", ".join(f"c[{i}]" for i in read) or "nothing of the carry"
            return (f"your loop never ends: lax.while_loop's condition reads {which}, which its body returns "
                    "unchanged. Increment the counter in the body, lambda c: (c[0] + 1, ...), or use "
                    "lax.fori_loop(0, steps, body, (u, v))")
    return None


#: Rounds of a while loop's counter played before it is called endless: the checkers run 22 steps at most.
ROUNDS_PLAYED = 20_000


def _value(var, values: dict):
    """A variable's value in `values`, a literal's its own."""
    return var.val if hasattr(var, "val") else values[var]


def _evaluate(eqns, values: dict) -> dict:
    """`values` (variable -> value) with what `eqns` compute from them, each primitive run as it is."""
    for eqn in eqns:
        out = eqn.primitive.bind(*(_value(v, values) for v in eqn.invars), **eqn.params)
        values.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return values


def _control(eqn):
    """A while loop's control, the carry its condition depends on (through its body too), where it
    is scalars set by literals (a counter from 0, a bound known when traced): (the condition's
    equations, its carry inputs, its output; the body's equations, its carry inputs, outputs; their
    values at the start). None where they are not known before the program runs (a bound passed as
    an argument, a constant computed outside the loop)."""
    cond, cond_carry, body, body_carry = _loop_parts(eqn)
    cond_eqns, cond_reads = _slice(cond, cond.outvars)
    if not cond_reads <= set(cond_carry):
        return None
    positions = {cond_carry.index(v) for v in cond_reads}
    while True:
        body_eqns, body_reads = _slice(body, [body.outvars[p] for p in positions])
        if not body_reads <= set(body_carry):
            return None
        more = {body_carry.index(v) for v in body_reads}
        if more <= positions:
            break
        positions |= more
    positions = sorted(positions)
    start = [eqn.invars[len(eqn.invars) - len(body_carry) + p] for p in positions]
    if not all(hasattr(v, "val") and getattr(v.aval, "shape", None) == () for v in start):
        return None
    return (cond_eqns, [cond_carry[p] for p in positions], cond.outvars[0],
            body_eqns, [body_carry[p] for p in positions], [body.outvars[p] for p in positions], [v.val for v in start])


def endless_count(program) -> str | None:
    """The hint for a `lax.while_loop` whose counter moves but whose condition never turns false
    (a counter that steps past its bound, or away from it): the loop's control, scalars known when
    traced, played on the CPU for ROUNDS_PLAYED rounds. Loops whose bound is an argument are left
    alone (their values are not known before the program runs)."""
    import jax

    for eqn in _equations(program.jaxpr):
        if eqn.primitive.name != "while" or (control := _control(eqn)) is None:
            continue
        cond_eqns, cond_in, cond_out, body_eqns, body_in, body_out, carry = control
        try:  # what cannot be played here (a primitive that does not run alone, no CPU device) is not told
            with jax.default_device(jax.devices("cpu")[0]), jax.ensure_compile_time_eval():
                for _ in range(ROUNDS_PLAYED):
                    if not bool(_value(cond_out, _evaluate(cond_eqns, dict(zip(cond_in, carry))))):
                        break
                    values = _evaluate(body_eqns, dict(zip(body_in, carry)))
                    carry = [_value(out, values) for out in body_out]
                else:
                    counter = ", ".join(str(np.asarray(c).item()) for c in carry)
                    return (f"your loop never ends: after {ROUNDS_PLAYED:,} rounds lax.while_loop's condition still holds "
                            f"(its counter is now {counter}). The counter must reach the bound: from 0, c[0] + 1 each "
                            "round, while c[0] < steps (or use lax.fori_loop(0, steps, body, (u, v)))")
        except Exception:  # noqa: BLE001 (not told, the program runs as written)
            continue
    return None


def unrolled_loop(program, what: str) -> str | None:
    """The hint for a loop that XLA would unroll whole (lax.fori_loop or lax.scan with unroll=True,
    or an unroll as large as its length): each step's operations copied once per step, which XLA
    takes minutes to compile at the course's size. Loops of one or two steps are left alone."""
    for eqn in _equations(program.jaxpr):
        if eqn.primitive.name != "scan":
            continue
        length, unroll = eqn.params["length"], eqn.params.get("unroll", 1)
        if length >= 3 and (unroll is True or unroll >= length):
            operations = length * len(list(_equations(eqn.params["jaxpr"].jaxpr)))
            verb = "unroll" if what.endswith("s") else "unrolls"  # your images unroll, your time loop unrolls
            return (f"{what} {verb} into {operations} operations: unroll=True copies the loop's body once per step "
                    f"({length} times), which XLA would take minutes to compile. Leave unroll out, "
                    "lax.fori_loop(0, steps, body, (u, v)), so that one loop runs on the device")
    return None


def check_loops(program, what: str) -> None:
    """A program that would not end, or take minutes to compile, refused before it runs; then one whose
    loop runs outside any jit, where the exercise gives or asks for the jit (`JITTED`)."""
    hint = endless_loop(program) or endless_count(program) or unrolled_loop(program, what)
    if hint:
        raise NotYet(hint)
    if what not in JITTED_AFTER_VALUES:
        jitted_as_given(program, what)


#: Where the exercise's function is jitted (given as a decorator, or asked for in so many words), what its
#: loop outside any jit is told: JAX then dispatches the program's operations one by one from Python.
JITTED = {
    "your time loop": "your run is not jitted: the given line @partial(jax.jit, static_argnums=(2, 3)) "
                      "above def run is gone. Put it back, so that run is one compiled program (p and steps static)",
    "your images": "your images are not jitted: the given line @partial(jax.jit, static_argnums=(2, 3, 4)) above def "
                   "images is gone. Put it back, so that images is one compiled program (p, nbimage and nbextrastep "
                   "static)",
    "your batch": "your batch is not jitted: the exercise returns jax.jit(jax.vmap(one_pair))(feeds, kills), the vmapped "
                  "function jitted, one compiled program for every pair. Without jax.jit, JAX runs it operation by "
                  "operation from Python",
}

#: Where the jit is looked at once the values are right (the mistake left): the images and batch, whose
#: tests and students meet their values' hints first; the time loop's is refused before it runs.
JITTED_AFTER_VALUES = ("your images", "your batch")


def jitted_as_given(program, what: str) -> None:
    """`JITTED[what]` where a loop of the traced `program` runs outside any jit (the given decorator
    deleted, or the jax.jit asked for left out)."""
    if what in JITTED and program is not None and loop_outside_jit(program.jaxpr):
        raise NotYet(JITTED[what])


#: The primitives that hold a jitted function's program (its name in JAX 0.7 and after, then before).
_JIT_PRIMITIVES = ("jit", "pjit")


def loop_outside_jit(jaxpr) -> bool:
    """Whether a loop (while, scan) of the program runs outside any jitted function: what jax.jit or its
    decorator holds is one equation whose program is compiled whole (vmap of a jitted function too)."""
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in _JIT_PRIMITIVES:
            continue
        if name in ("while", "scan"):
            return True
        for inner in _sub_jaxprs(eqn.params):
            if loop_outside_jit(inner):
                return True
    return False


def _sub_jaxprs(params: dict):
    """The programs an equation's parameters hold (cond's branches, remat's, custom_jvp's...)."""
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", item)
            if hasattr(inner, "eqns"):
                yield inner


PMAP = ("jax.pmap maps over devices, one pair a device (and as many devices as pairs): the exercise is "
        "jax.vmap(one_pair), every pair at once on one device, each operation on the whole batch")


def names_pmap(function) -> bool:
    """Whether `function`, or a function defined in it, names pmap (jax.pmap, or pmap imported): read
    before tracing, whose error depends on how many devices there are (none for as many as pairs)."""
    return any("pmap" in code.co_names for code in nested_codes(function))


def over_devices(program) -> str | None:
    """The hint for a batch mapped by jax.pmap (traced as a shard_map over pmap's own mesh axis): one
    pair a device, where the exercise runs every pair at once on one device."""
    if any(eqn.primitive.name in ("xla_pmap", "pmap") or "_internal_pmap_axis_name" in str(eqn.params.get("mesh", ""))
           for eqn in _equations(program.jaxpr)):
        return PMAP
    return None


def same_program(one, other) -> bool:
    """Whether two traced programs are the same (the text of their jaxprs, literals included): a
    function whose program does not change with an argument ignores it."""
    return str(one) == str(other)


#: Operations a program may gain with one more image, step or pair without unrolling anything.
_A_FEW = 8


def not_unrolled(few, more, what: str, instead: str) -> None:
    """A program (a jaxpr) that grows when it runs more `what`: a Python loop, which tracing unrolls
    (each step or pair adds dozens of operations; a slice of the result adds one)."""
    sizes = [len(list(_equations(program.jaxpr))) for program in (few, more)]
    if sizes[1] - sizes[0] > _A_FEW:
        raise NotYet(f"your program grows with the {what} ({sizes[0]} operations, {sizes[1]} with one more): "
                     + PYTHON_LOOP.format(instead=instead))


def looped_program(program, what: str, more: tuple, longer: tuple, argument: tuple):
    """`program(2, 2)` (two images or pairs, two steps each), where it ends, compiles in seconds, does not
    grow with the images or pairs (`more`: what they are, the technique instead) or the steps (`longer`)
    and depends on its steps' `argument` (its name, what the steps are of, what it is not); else the hint."""
    few = program(2, 2)
    if few is None:
        return None
    wider, deeper = program(3, 2), program(2, 3)
    for each in (few, wider, deeper):
        check_loops(each, f"your {what}")
    not_unrolled(few, wider, *more)
    not_unrolled(few, deeper, *longer)
    name, of, instead = argument
    if same_program(few, deeper):
        raise NotYet(f"the program of your {what} is the same for 2 and 3 steps{of}: it ignores the argument {name}: "
                     f"run {name} steps{of}, lax.fori_loop(0, {name}, ...){instead}")
    return few


_PAIRS = "the pairs are (i, i + 1) down and (i + 1, i) up, for i in range(bands - 1)"


def permutation_mistake(program, bands: int) -> str | None:
    """The hint for a `lax.ppermute` whose pairs name a device that is not one of the `bands` (XLA
    fails on it with a bare IndexError; JAX takes -1 for the last, which wraps around the grid), or
    a device twice as a source or as a destination."""
    for eqn in _equations(program.jaxpr):
        if eqn.primitive.name != "ppermute":
            continue
        perm = [tuple(pair) for pair in eqn.params["perm"]]
        devices = sorted({d for pair in perm for d in pair})
        if not devices:
            continue  # sends nothing: told with the values (pairs_left_out)
        if devices[0] < 0:
            return (f"your pairs {perm} name device {devices[0]}, which JAX takes for the last band (around the grid's "
                    f"edge): there is no band above band 0, so {_PAIRS}")
        if devices[-1] >= bands:
            return (f"your pairs {perm} name device {devices[-1]}, but the {bands} bands are devices 0 to {bands - 1}: "
                    f"there is no band {devices[-1]}, so {_PAIRS}")
        for index, role in ((0, "source"), (1, "destination")):
            devices = [pair[index] for pair in perm]
            twice = sorted({d for d in devices if devices.count(d) > 1})
            if twice:
                return (f"your pairs {perm} name device {twice[0]} twice as a {role}: in lax.ppermute each device may "
                        "appear once as a source and once as a destination (a pair too many?)")
    return None


def pairs_left_out(program, bands: int) -> str | None:
    """For an exchange whose rows are wrong: the hint where its `lax.ppermute`s, all of them
    together, send nothing, or send down (or up) between some neighbours only (a list of pairs one
    short, range(bands - 2)); else None. Several ppermutes may share the pairs between them."""
    sent = {tuple(pair) for eqn in _equations(program.jaxpr) if eqn.primitive.name == "ppermute"
            for pair in eqn.params["perm"]}
    if not sent and any(eqn.primitive.name == "ppermute" for eqn in _equations(program.jaxpr)):
        return (f"your pairs are empty (perm=[]): no band sends a row (range(bands - 2), one pair short?); with "
                f"{bands} bands {_PAIRS}")
    for way in ({(i, i + 1) for i in range(bands - 1)}, {(i + 1, i) for i in range(bands - 1)}):
        if sent & way and not way <= sent:
            return (f"your pairs {sorted(sent)} leave out {sorted(way - sent)}: those bands get no row from their "
                    f"neighbour (range(bands - 2), one pair short?), and {_PAIRS}")
    return None
