"""What a student sees of a check: the hint (`NotYet`), shown alone, and the tick (`ok`); the
exercise's placeholder left in place, shown as one line too; a function that cannot be called as
the exercise calls it, named from its signature before any call (`takes`).

In IPython (Jupyter) a `NotYet`, and the placeholder's NotImplementedError, show as one line
without the traceback through the checkers; the cell still fails, so `Run all` and nbval stop there.
"""

from __future__ import annotations

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
    frame of the notebook's own code: a function of the student's, or the cell itself), what to do."""
    frame, line = None, None
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "__main__":  # the notebook's namespace
            frame, line = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    name = frame.f_code.co_name if frame is not None else None
    where = ("in this cell" if name is None else f"in your cell (line {line})" if name == "<module>"
             else f"in your {name} (line {line} of your cell)")
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
        shell._showtraceback(etype, value, lines)  # IPython ignores what a handler returns here
        return lines

    shell.set_custom_exc((*others, NotYet, NotImplementedError), show)


_show_hints_alone()


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
    own = ", ".join(str(parameter) for parameter in signature.parameters.values())
    yours = f"your {name if named == '<lambda>' else named} takes ({own})"
    try:
        signature.bind(*args)
    except TypeError:
        raise NotYet(f"{yours}: the exercise calls it as {call}, {len(args)} argument{'s' if len(args) != 1 else ''}"
                     ) from None
    wanted = [part.strip() for part in call.split("(", 1)[1].rstrip(")").split(",")]
    given = [p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(given) >= len(wanted) and given[:len(wanted)] != wanted and sorted(given[:len(wanted)]) == sorted(wanted):
        raise NotYet(f"{yours}: the exercise calls it as {call}, in that order")
