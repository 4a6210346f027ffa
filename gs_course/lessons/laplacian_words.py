"""The Laplacian checker's hints in the words of the exercise the student is doing: its library (jnp in
the JAX notebook, xp in CuPy's, cnp in cuPyNumeric's) and its technique (nine slices of the padded grid,
or cuPyNumeric's one convolution).

Why: the hints of `laplacian_mistakes` are shared by every notebook, and some speak one exercise's
words ("convolve with the whole 3 x 3 window, cnp.ones((3, 3))"), which in the JAX notebook, where the
student summed nine slices, sends them to another library and another technique. The checker's line
is rewritten on its way out (`in_its_words`), whichever of its hints it is.
"""

from __future__ import annotations

import functools
import re
import types

from .check_core import NotYet, _library, notebook_of

_NINE_SLICES = "padded[i : i + rows, j : j + cols] for i and j in range(3)"

#: (a phrase that speaks of a convolution, the same advice for the nine slices of the padded grid).
_AS_SLICES = (
    (r"\(window\[:2\]\?\)", "(offsets range(2) for the rows)"),
    (r"convolve with the whole 3 x 3 window, cnp\.ones\(\(3, 3\)\)",
     f"sum the nine slices of the grid padded by 1, {_NINE_SLICES}"),
    (r" \(cnp\.ones\(\(3, 3\)\) for a convolution\)", ""),
    (r"\(cnp\.ones\(\(3, 3\)\), offsets range\(3\)\)", "(offsets range(3) both ways)"),
    (r", a window of ones\(\(3, 3\)\)", ": add the nine slices as they are, each once"),
)

#: (a phrase that speaks of slices, the same advice for cuPyNumeric's convolution).
_AS_A_CONVOLUTION = (
    (r"its nine slices of the array padded by 1 are padded\[i : i \+ rows, j : j \+ cols\], i and j in range\(3\)",
     'cnp.convolve(a, window, mode="same") centres the 3 x 3 window on each cell: convolve the grid itself, not a '
     "padded or shifted copy"),
)

#: Each library's array module, whose name in the student's notebook the hints use.
_MODULES = {"jax": "jax.numpy", "cupy": "cupy", "cupynumeric": "cupynumeric"}


#: The name each notebook imports its library's array module as, where the student's function does not say.
_NOTEBOOK_NAMES = {"jax": "jnp", "cupy": "xp", "cupynumeric": "cnp"}


def _alias(student, library: str | None) -> str:
    """The name the student's notebook gives its library's array module (xp where the CuPy notebook has
    it, NumPy standing in without a GPU), else the notebook's own name for it (jnp for JAX), else the module's."""
    module = _MODULES.get(library, "numpy")
    scope = notebook_of(student) or {}
    names = [name for name, value in scope.items() if isinstance(value, types.ModuleType) and value.__name__ == module]
    if names:
        return "xp" if "xp" in names else names[0]
    return _NOTEBOOK_NAMES.get(library, module.rsplit(".", 1)[-1])


def spoken(hint: str, student, library: str | None, uses: str | None) -> str:
    """`hint` with its technique's phrases (`uses="convolve"`: a convolution; else the nine slices) and
    its library's name (cnp. becomes the notebook's jnp., xp....)."""
    for phrase, said in _AS_A_CONVOLUTION if uses == "convolve" else _AS_SLICES:
        hint = re.sub(phrase, lambda _: said, hint)
    alias = _alias(student, library)
    return re.sub(r"\bcnp\.", f"{alias}.", hint) if alias != "cnp" else hint


def in_its_words(checker):
    """The Laplacian's checker whose hint (NotYet's line) is `spoken` in the exercise's words."""
    @functools.wraps(checker)
    def checked(student, device_type: type | None = None, to_device=lambda a: a, uses: str | None = None) -> None:
        try:
            checker(student, device_type, to_device, uses)
        except NotYet as err:
            said = spoken(str(err), student, _library(device_type), uses)
            if said == str(err):
                raise
            raise NotYet(said) from None
    return checked
