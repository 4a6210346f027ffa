"""An intermediate rounded to a half precision (float16, or JAX's bfloat16) on the way to a float32
result: `a.astype(np.float16)` before the pad, `(u * v * v).astype(np.float16)`, or an operand of one
operation, `counts * a.astype(np.float16)`. The result is
off the reference by that rounding alone, too little for a named mistake and too much for float32.
Undoing the exact operations that follow the intermediate recovers it from the student's values;
where it lies on the half precision's grid of values in every cell (to float32's rounding), it was
rounded there, which a wrong formula's values never are, cell after cell."""

from __future__ import annotations

import numpy as np

#: (name, mantissa bits, how it is cast), the coarser first: a bfloat16 value is most often a float16 one too.
PRECISIONS = (("bfloat16", 7, "astype(jnp.bfloat16)"), ("float16", 10, "astype(np.float16)"))

#: TF32 keeps float16's 10 bits: a GPU rounds to it in JAX's float32 convolutions and matrix products by default.
TF32 = (" (or, with no such cast, TF32: a JAX convolution or matrix product on a GPU rounds to it unless "
        "precision=lax.Precision.HIGHEST)")

#: Cells where the precision's spacing is this many times float32's rounding are the ones that tell.
_TELLING, _ENOUGH_CELLS = 16, 20


def _round(x: np.ndarray, bits: int) -> np.ndarray:
    """`x` rounded to `bits` mantissa bits, to nearest (float16's subnormals and range aside: the
    checkers' values lie well inside it)."""
    mantissa, exponent = np.frexp(x)
    return np.ldexp(np.round(mantissa * 2.0 ** (bits + 1)), exponent - bits - 1)


def _spacing(x: np.ndarray, bits: int) -> np.ndarray:
    return np.ldexp(1.0, np.frexp(np.abs(x))[1] - bits - 1)


def half_rounded(got: np.ndarray, want: np.ndarray, intermediates) -> str | None:
    """The hint where `got` (float32) is `want` (the reference, float64) with one of `intermediates`
    rounded to a half precision, else None. Each intermediate: (its reference value, float64; the
    factor it enters the result with, got = want + factor * (rounded - value); what it is). The
    factor is a number for a value the result adds, or an array for an operand of a product, each
    cell's other factor (counts in counts * a): where it is about 0 the cell tells nothing of the
    operand, and must be right as it is."""
    if got.shape != want.shape or got.dtype != np.float32:
        return None
    error = got.astype(np.float64) - want
    intermediates = list(intermediates)
    for value, factor, what in intermediates:
        factor = np.broadcast_to(np.asarray(factor, np.float64), value.shape)
        weight = np.abs(factor)
        noise = 8 * np.finfo(np.float32).eps * max(float(np.abs(want).max()), float(np.abs(factor * value).max()), 1.0)
        if np.abs(error).max() <= noise:
            continue
        for name, bits, cast in PRECISIONS:
            # The most the rounding can move each cell: where that shows above float32's rounding, the
            # cell carries the intermediate; elsewhere the error must stay within it (a cell whose
            # factor is small still carries a little of the rounding, and a wrong formula more).
            moved = weight * _spacing(value, bits)
            carries = moved > noise
            if not carries.any() or (np.abs(error[~carries]) > noise + moved[~carries]).any():
                continue
            recovered = value[carries] + error[carries] / factor[carries]
            tolerance = noise / weight[carries]
            telling = _spacing(value[carries], bits) > _TELLING * tolerance
            if (telling.sum() >= _ENOUGH_CELLS and np.abs(error[carries][telling]).max() > noise
                    and bool((np.abs(recovered - _round(recovered, bits)) <= tolerance).all())):
                digits = round((bits + 1) * np.log10(2))
                return (f"{what} is rounded to {name} (about {digits} digits): keep every value float32, no .{cast} "
                        "on the way" + (TF32 if name == "float16" else ""))
    return _several_rounded(error, want, intermediates)


def _several_rounded(error: np.ndarray, want: np.ndarray, intermediates: list) -> str | None:
    """The hint where several intermediates were rounded to float16 at once (u and v cast before the
    reaction, uvv and the feed computed in float16): the error is then no one intermediate's, but in
    every cell within what their roundings together can move it, above float32's rounding in many, and
    of either sign as often (a small slip in a formula, 1.001 - u, moves every cell one way)."""
    noise = 8 * np.finfo(np.float32).eps * max(float(np.abs(want).max()), 1.0)
    _, bits, cast = PRECISIONS[-1]  # bfloat16 moves a value 8 times as far: a wrong formula fits it more often
    moved = sum(np.abs(np.broadcast_to(np.asarray(factor, np.float64), value.shape)) * _spacing(value, bits)
                for value, factor, _ in intermediates)
    shown = error[np.abs(error) > noise]
    if (shown.size >= _ENOUGH_CELLS and bool((np.abs(error) <= noise + moved).all()) and np.abs(error).max() > 4 * noise
            and 0.2 < (shown > 0).mean() < 0.8):  # rounding goes either way; a slip in a formula mostly one way
        return f"values are rounded to float16 on the way (about 3 digits): keep every value float32, no .{cast}{TF32}"
    return None


def rounded_to(got: np.ndarray, want: np.ndarray) -> str | None:
    """The half precision (its name) that `got` is `want` rounded to, value for value, where it is
    not `want` itself, else None: values sent or stored through a half precision and cast back (a
    halo row sent as bfloat16), which a comparison with `want` would only call another row."""
    if got.shape != want.shape or np.array_equal(got, want):
        return None
    return next((name for name, bits, _ in PRECISIONS
                 if np.array_equal(got.astype(np.float64), _round(want.astype(np.float64), bits))), None)
