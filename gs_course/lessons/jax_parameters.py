"""The Parameters a student's batch builds for each pair, read as they are built, and what is wrong
with them: a field left to Parameters' default, given another number (dt=1.0 written out), or fields given
positionally in another order.

Why read them rather than the values: a Parameters built without dt runs at the default dt = 1, whose
values are exactly those of a step that multiplies nothing by dt (the checker runs at dt = 0.7), so the
values would name a mistake the student's step does not have; fields out of order (du and dv given the
pair's feed and kill) give values no single mistake explains. While the batch runs, Parameters' __init__
records each instance one of whose fields is traced (vmap's feed and kill: the checker's own Parameters
hold numbers only), as which field holds a traced value and which number, and which fields the call gave.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

from ..parameters import Parameters, _traced

#: What a field holding one of JAX's traced values (a pair's feed or kill under jax.vmap) is recorded as.
TRACED = "traced"

#: The fields in Parameters' order (the order positional arguments fill), and those a pair's own values go to.
ORDER = tuple(field.name for field in dataclasses.fields(Parameters))
_THE_PAIRS = ("feed", "kill")

#: The fix every hint here ends with.
_INSTEAD = "use params.replace(feed=feed, kill=kill)"

#: The key of a recorded Parameters' dict that holds the fields its call gave (positionally or by keyword).
GIVEN = "given"


@contextlib.contextmanager
def parameters_built():
    """Yields a list that gets, while inside, each Parameters built with a traced field, as a dict
    field -> number or TRACED, and GIVEN -> the fields its call named (each such dict once: the batch is
    traced several times). Read from Parameters' __init__, which sees which fields were given."""
    built: list[dict] = []
    original = Parameters.__init__

    def recorded(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        fields = {name: TRACED if _traced(getattr(self, name)) else getattr(self, name) for name in ORDER}
        if TRACED in fields.values():
            fields[GIVEN] = frozenset(ORDER[: len(args)]) | frozenset(kwargs)
            if fields not in built:
                built.append(fields)

    Parameters.__init__ = recorded
    try:
        yield built
    finally:
        Parameters.__init__ = original


def _same(a, b) -> bool:
    return a is not TRACED and math.isclose(a, b, rel_tol=1e-6, abs_tol=0.0)


#: What `_holds` says of a field left out, and of one given a number that is no field's of the notebook's params.
LEFT_OUT, ANOTHER_VALUE = "left out", "another value"


def _holds(name: str, value, base: Parameters, given: frozenset) -> str | None:
    """What field `name` holds where it is not what it should (the pair's own for feed and kill, the
    notebook's params for the others), else None: LEFT_OUT (Parameters' default), ANOTHER_VALUE (a number
    given, dt=1.0 written out), or what it was given out of order. A feed or kill of the notebook's params
    is left to the values (batch_mistakes names the setup's feed or kill)."""
    if name in _THE_PAIRS:
        if value is TRACED or _same(value, getattr(base, name)):
            return None
    elif _same(value, getattr(base, name)):
        return None
    if value is TRACED:
        return "the pair's feed or kill"
    other = next((o for o in ORDER if o != name and _same(value, getattr(base, o))), None)
    if other is not None:
        return f"params.{other}'s value {value:g}"
    return ANOTHER_VALUE if name in given else LEFT_OUT


def parameters_mistake(built: list[dict], base: Parameters) -> str | None:
    """The hint for the first Parameters in `built` (`parameters_built`) with a field left to its default,
    given another number, or out of order, `base` the notebook's params as the checker runs them; else None."""
    for fields in built:
        given = fields.get(GIVEN, frozenset(ORDER))
        wrong = {name: held for name in ORDER if (held := _holds(name, fields[name], base, given))}
        if not wrong:
            continue
        if set(wrong.values()) <= {LEFT_OUT, ANOTHER_VALUE}:
            said = [f"leaves {name} out (Parameters' default {getattr(Parameters(), name):g})" if held == LEFT_OUT
                    else f"gives {name} = {fields[name]:g}" for name, held in wrong.items()]
            notebook = ", ".join(f"params.{name} = {getattr(base, name):g}" for name in wrong)
            passed = ", ".join(f"{name}=params.{name}" for name in wrong)
            return (f"your pair's Parameters(...) {' and '.join(said)}, not the notebook's {notebook}: pass {passed}, "
                    f"or {_INSTEAD}")
        held = ", ".join(f"{name} = {what}" for name, what in wrong.items() if what not in (LEFT_OUT, ANOTHER_VALUE))
        return (f"your pair's Parameters(...) gets its fields in another order ({held}): it takes "
                f"{', '.join(ORDER)} in that order; {_INSTEAD}")
    return None
