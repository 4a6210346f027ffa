"""A ReductionKernel's map_expr, reduce_expr or identity written as C statements, named before compiling.

CuPy pastes each of the three inside its own code (map_expr and reduce_expr into expressions of the
kernel it generates), so a ';', a return, a declaration or an if ... else reaches the compiler as an error
about CuPy's code ("expected ')' before ';'", "expected primary-expression before 'if'") that names no
mistake of the student's. Where the statement is an expression and one trailing ';' (or a return around
it), the hint gives that expression back; where it is more (a declaration, then an expression), an
expression cut from it would not compile, so the hint asks for one expression and shows one.
"""

from __future__ import annotations

import re

#: How each of the three is written as one expression, and one such expression (the exercise's own forms).
_ONE_EXPRESSION = {
    "map_expr": ("as a conditional expression on v directly", "v > threshold ? v : 0"),
    "reduce_expr": ("on a and b directly", "a + b"),
    "identity": ("as a constant", "0"),
}


def statement_hint(text: str, what: str) -> str | None:
    """The line for `text`, the ReductionKernel's `what` ("map_expr", "reduce_expr" or "identity"), where it
    is written as statements: a ';' or return in it, or an if ... else; None where it has neither. A
    map_expr's if ... else is left to the checker's own line on C's conditional (Python's form is the
    usual one there), so None for it too."""
    if re.search(r"\b(if|else)\b", text):
        if what == "map_expr":
            return None
        example = ", as in a > b ? a : b, or max(a, b)" if what == "reduce_expr" else ""
        return (f"{what} is one C expression, which CuPy puts inside its own code: no if ... else in it (a C statement, "
                f"or Python's conditional); C's conditional expression is condition ? value : other{example}")
    returned = re.match(r"\s*return\b", text)
    if ";" not in text and not returned:
        return None
    bare = " ".join(re.sub(r"[\s;]+$", "", text[returned.end() if returned else 0:]).split())
    if ";" not in bare and not re.search(r"\breturn\b", bare):
        return (f"{what} is a C expression, which CuPy puts inside its own code, not a statement: no ';' "
                f"{'or return ' if returned else ''}in it, {what} = '{bare}'")
    how, example = _ONE_EXPRESSION[what]
    return (f"{what} must be one C expression, which CuPy puts inside its own code: no declarations or statements "
            f"separated by ';'. Write it {how}, as in {what} = '{example}'")
