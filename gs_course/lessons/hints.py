"""What a student sees of a check: the hint (`NotYet`), shown alone, and the tick (`ok`); the
exercise's placeholder left in place, shown as one line too; a function that cannot be called as
the exercise calls it, named from its signature before any call (`takes`, by the checker's
decorator `checks`).

In IPython (Jupyter) a `NotYet`, and the placeholder's NotImplementedError, show as one line
without the traceback through the checkers; the cell still fails, so `Run all` and nbval stop there.
"""

from __future__ import annotations

import functools
import inspect
import sys

from .notebooks import YOUR_TURN_MESSAGE


class NotYet(AssertionError):
    """The answer is not right yet; the message says why."""


def ok(message: str) -> None:
    """The line a right answer gets."""
    print(f"\N{CHECK MARK} {message}")


def placeholder_line(tb) -> str:
    """The line for the placeholder's NotImplementedError raised through `tb`: where it still is (the last
    frame of the notebook's own code: a function of the student's, maybe defined in an earlier cell, or
    the cell itself), what to do."""
    frame, line = None, None
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "__main__":  # the notebook's namespace
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    name = frame.f_code.co_name if frame is not None else None
    where = ("in this cell" if name is None else f"in this cell (line {line})" if name == "<module>"
             else f"in your {name} (line {line} of the cell that defines it)")
    return f"\N{BALLOT X} not written yet: the placeholder, raise NotImplementedError(...), is still {where}. {YOUR_TURN_MESSAGE}"


def _show_hints_alone() -> None:
    """In an IPython kernel, a NotYet shows as one line, the hint, and so does the placeholder's
    NotImplementedError; any other NotImplementedError as IPython shows it (the cell still fails)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or NotYet in shell.custom_exceptions:
        return
    others, their_handler = shell.custom_exceptions, shell.CustomTB  # IPython keeps one handler: share it

    def show(shell, etype, value, tb, tb_offset=None):
        if issubclass(etype, NotYet):
            lines = [f"\N{BALLOT X} {value}"]
        elif issubclass(etype, NotImplementedError) and YOUR_TURN_MESSAGE in str(value):
            lines = [placeholder_line(tb)]
        elif issubclass(etype, others):
            return their_handler(etype, value, tb, tb_offset)
        else:
            lines = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        # what IPython keeps of an error it shows itself, for %debug and %tb (its custom path keeps none)
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
        if sys.version_info >= (3, 12):
            sys.last_exc = value
        shell._showtraceback(etype, value, lines)  # IPython ignores what a handler returns here
        return lines

    shell.set_custom_exc((*others, NotYet, NotImplementedError), show)


_show_hints_alone()


def _shown(signature: inspect.Signature) -> str:
    """The signature as Python writes it (its / and * kept), a long default (an array's) elided."""
    class Elided:
        def __repr__(self):
            return "..."

    parameters = [p.replace(default=Elided()) if p.default is not p.empty and len(repr(p.default)) > 24 else p
                  for p in signature.parameters.values()]
    return str(signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty))


def takes(student, args: tuple, call: str) -> None:
    """The one line for a student's function that cannot be called as the exercise calls it, `call`
    ("step(u, v, p)", `args` its values): not a function, of other parameters, or of the same names in
    another order (its own are named); read from its signature, before any call."""
    name = call.split("(", 1)[0]
    if not callable(student):
        kind = type(student).__name__
        raise NotYet(f"your {name} is {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not a function: give the function itself, "
                     f"without calling it (def {call}: ...)")
    try:
        signature = inspect.signature(student)
    except (TypeError, ValueError):  # a builtin's, say: its call tells
        return
    named = getattr(student, "__name__", name)
    yours = f"your {name if named == '<lambda>' else named} takes {_shown(signature)}"
    try:
        signature.bind(*args)
    except TypeError:
        raise NotYet(f"{yours}: the exercise calls it as {call}, {len(args)} argument{'s' if len(args) != 1 else ''}"
                     ) from None
    wanted = _parameters(call)
    given = [p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(given) >= len(wanted) and given[:len(wanted)] != wanted and sorted(given[:len(wanted)]) == sorted(wanted):
        raise NotYet(f"{yours}: the exercise calls it as {call}, in that order")


def _parameters(call: str) -> list[str]:
    """The parameters' names of a call as the notebook writes it, "step(u, v, p)": ["u", "v", "p"]."""
    return [part.strip() for part in call.split("(", 1)[1].rstrip(")").split(",")]


def checks(call: str):
    """The decorator of a checker of the student function the notebook calls as `call` ("step(u, v, p)"):
    the student's function read from its signature first (`takes`), under its own name where it has one
    (laplacian_convolve(a), run_task(u, v, p, steps): the notebook calls that), before the checker runs
    it, traces it or hands it to a thread, whose errors would name something else."""
    arity = len(_parameters(call))

    def decorate(checker):
        @functools.wraps(checker)
        def checked(student, *args, **kwargs):
            named = getattr(student, "__name__", "")
            takes(student, (None,) * arity, named + call[call.index("("):] if named.isidentifier() else call)
            return checker(student, *args, **kwargs)
        return checked
    return decorate
