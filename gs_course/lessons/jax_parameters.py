"""The Parameters a student's batch builds for each pair, read as they are built, and what is wrong
with them: a field left to Parameters' default, or fields given positionally in another order.

Why read them rather than the values: a Parameters built without dt runs at the default dt = 1, whose
values are exactly those of a step that multiplies nothing by dt (the checker runs at dt = 0.7), so the
values would name a mistake the student's step does not have; fields out of order (du and dv given the
pair's feed and kill) give values no single mistake explains. While the batch runs, Parameters records
each instance one of whose fields is traced (vmap's feed and kill: the checker's own Parameters hold
numbers only), as which field holds a traced value and which number.
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

_BY_KEYWORD = ("give every field by keyword, Parameters(du=params.du, dv=params.dv, feed=feed, kill=kill, dt=params.dt), "
               "or params.replace(feed=feed, kill=kill)")


@contextlib.contextmanager
def parameters_built():
    """Yields a list that gets, while inside, each Parameters built with a traced field, as a dict
    field -> number or TRACED (each such dict once: the batch is traced several times)."""
    built: list[dict] = []
    original = Parameters.__post_init__

    def recorded(self) -> None:
        original(self)
        fields = {name: TRACED if _traced(getattr(self, name)) else getattr(self, name) for name in ORDER}
        if TRACED in fields.values() and fields not in built:
            built.append(fields)

    Parameters.__post_init__ = recorded
    try:
        yield built
    finally:
        Parameters.__post_init__ = original


def _same(a, b) -> bool:
    return a is not TRACED and math.isclose(a, b, rel_tol=1e-6, abs_tol=0.0)


def _holds(name: str, value, base: Parameters) -> str | None:
    """What field `name` holds where it is not what it should (the pair's own for feed and kill, the
    notebook's params for the others), else None. A feed or kill of the notebook's params is left to the
    values (batch_mistakes names the setup's feed or kill)."""
    if name in _THE_PAIRS:
        if value is TRACED or _same(value, getattr(base, name)):
            return None
    elif _same(value, getattr(base, name)):
        return None
    if value is TRACED:
        return "the pair's feed or kill (a traced value)"
    other = next((o for o in ORDER if o != name and _same(value, getattr(base, o))), None)
    if other is not None:
        return f"params.{other}'s value {value:g}"
    if _same(value, getattr(Parameters(), name)):
        return f"Parameters' default {value:g}"
    return f"{value:g}"


def parameters_mistake(built: list[dict], base: Parameters) -> str | None:
    """The hint for the first Parameters in `built` (`parameters_built`) with a field left to its default
    or out of order, `base` the notebook's params as the checker runs them; else None."""
    for fields in built:
        wrong = {name: held for name in ORDER if (held := _holds(name, fields[name], base))}
        if not wrong:
            continue
        if all(held.startswith("Parameters' default") for held in wrong.values()):
            left = " and ".join(wrong)
            values = ", ".join(f"{name} = {getattr(Parameters(), name):g}" for name in wrong)
            notebook = ", ".join(f"params.{name} = {getattr(base, name):g}" for name in wrong)
            return (f"your pair's Parameters(...) leaves {left} out, so it takes Parameters' default {values}, not the "
                    f"notebook's {notebook} (the checker's): {_BY_KEYWORD}")
        held = ", ".join(f"{name} = {what}" for name, what in wrong.items())
        return (f"your pair's Parameters(...) gets its fields in another order: {held}. Parameters takes "
                f"{', '.join(ORDER)} in that order: {_BY_KEYWORD}")
    return None
