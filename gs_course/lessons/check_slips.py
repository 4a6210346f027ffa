"""The usual slips in the model's update, each as the values it gives, so that a checker whose
student's values are off the reference can name the slip instead of a distance: the reference is
recomputed with each slip applied (one term of the update changed, or its dt left out) and the one
that matches the student's values is the mistake.

The update has six terms, three for each array:
    u_next = u + dt (du L(u) - u v^2 + F (1 - u))
    v_next = v + dt (dv L(v) + u v^2 - (F + k) v)
A slip changes one of them: a sign, a parameter for another (F for k, Dv for Du, the notebook's
`params` for the `p` given), an array for the other ((1 - v) for (1 - u)), a power (u v for u v^2),
a term left out, its dt, or a factor too many (its dt twice, an extra u or v). The checkers try every slip, so a slip of the kind is named wherever it
is, not only the ones a playtest found.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from ..model import initial_state, laplacian as reference_laplacian
from ..parameters import Parameters

#: Each term: (the array it updates, how the hint names it, how it is written, its value from
#: (u, v, L(u), L(v), p)).
TERMS = {
    "u_diffusion": ("u", "U's diffusion term", "p.du * laplacian(u)", lambda u, v, lu, lv, p: p.du * lu),
    "u_reaction": ("u", "U's uvv term", "- uvv, uvv = u * v * v", lambda u, v, lu, lv, p: -u * v * v),
    "u_feed": ("u", "U's feed term", "p.feed * (1 - u)", lambda u, v, lu, lv, p: p.feed * (1 - u)),
    "v_diffusion": ("v", "V's diffusion term", "p.dv * laplacian(v)", lambda u, v, lu, lv, p: p.dv * lv),
    "v_reaction": ("v", "V's uvv term", "+ uvv, uvv = u * v * v", lambda u, v, lu, lv, p: u * v * v),
    "v_loss": ("v", "V's (p.feed + p.kill) v term", "- (p.feed + p.kill) * v",
               lambda u, v, lu, lv, p: -(p.feed + p.kill) * v),
}


@dataclasses.dataclass(frozen=True)
class Slip:
    """`term` computed by `value` instead (None: the term as it is, without its dt); `hint` names it."""

    term: str
    hint: str
    value: Callable | None = None

    @property
    def array(self) -> str:
        return TERMS[self.term][0]


_DEFAULTS = Parameters()


def _slips() -> list[Slip]:
    """Every slip the checkers try, in the order they are tried."""
    every_term = "multiply every term of the update by dt"
    slips = [
        Slip("u_reaction", "the sign of the uvv term in U's update is reversed: U loses uvv (u - uvv ...), V gains it "
             "(v + uvv ...)", lambda u, v, lu, lv, p: u * v * v),
        Slip("v_reaction", "the sign of the uvv term in V's update is reversed: V gains uvv (v + uvv ...), U loses it "
             "(u - uvv ...)", lambda u, v, lu, lv, p: -u * v * v),
        Slip("u_feed", "U's feed term uses p.kill where p.feed belongs (F and k mixed up): p.feed * (1 - u)",
             lambda u, v, lu, lv, p: p.kill * (1 - u)),
        Slip("u_feed", "U's feed term has (1 - v) where (1 - u) belongs: p.feed * (1 - u)",
             lambda u, v, lu, lv, p: p.feed * (1 - v)),
        Slip("u_feed", "the sign of U's feed term is reversed: + p.feed * (1 - u)",
             lambda u, v, lu, lv, p: -p.feed * (1 - u)),
        Slip("u_feed", "U's feed term lacks its (1 - u): p.feed * (1 - u)", lambda u, v, lu, lv, p: p.feed + 0 * u),
        Slip("v_loss", "the sign of V's loss term is reversed: - (p.feed + p.kill) v",
             lambda u, v, lu, lv, p: (p.feed + p.kill) * v),
        Slip("v_loss", "V's loss term has u where v belongs: - (p.feed + p.kill) v",
             lambda u, v, lu, lv, p: -(p.feed + p.kill) * u),
        Slip("u_diffusion", "U's diffusion uses p.dv where p.du belongs: p.du * laplacian(u)",
             lambda u, v, lu, lv, p: p.dv * lu),
        Slip("v_diffusion", "V's diffusion uses p.du where p.dv belongs: p.dv * laplacian(v)",
             lambda u, v, lu, lv, p: p.du * lv),
        Slip("u_diffusion", "U's diffusion is of V: p.du * laplacian(u)", lambda u, v, lu, lv, p: p.du * lv),
        Slip("v_diffusion", "V's diffusion is of U: p.dv * laplacian(v)", lambda u, v, lu, lv, p: p.dv * lu),
        Slip("u_diffusion", "the sign of U's diffusion term is reversed: + p.du * laplacian(u)",
             lambda u, v, lu, lv, p: -p.du * lu),
        Slip("v_diffusion", "the sign of V's diffusion term is reversed: + p.dv * laplacian(v)",
             lambda u, v, lu, lv, p: -p.dv * lv),
        Slip("u_feed", "U's feed term uses params.feed, the notebook's parameters, not the feed your function is given",
             lambda u, v, lu, lv, p: _DEFAULTS.feed * (1 - u)),
        Slip("u_feed", "brackets: p.feed * (1 - u); without them (p.feed * 1 - u) the whole of u is subtracted",
             lambda u, v, lu, lv, p: p.feed - u),
        Slip("u_feed", "brackets: p.feed * (1 - u); without them (1 - u * p.feed) p.feed multiplies u alone",
             lambda u, v, lu, lv, p: 1 - p.feed * u),
        *(Slip("v_loss", "brackets: - (p.feed + p.kill) * v; without them only p.kill multiplies v",
               lambda u, v, lu, lv, p, s=s: -p.feed + s * p.kill * v) for s in (1, -1)),
        *(Slip("u_feed", f"U's update has an extra {extra} term: du = p.du * laplacian(u) - uvv + p.feed * (1 - u) "
               "(V alone is lost at the rate F + k)", lambda u, v, lu, lv, p, rate=rate: p.feed * (1 - u) - rate(p) * u)
          for extra, rate in (("- p.kill * u", lambda p: p.kill), ("- (p.feed + p.kill) * u", lambda p: p.feed + p.kill))),
        *(Slip("u_feed", f"U's feed term is {wrong} * (1 - u): U is fed at the rate F alone, p.feed * (1 - u) (V is "
               "lost at F + k)", lambda u, v, lu, lv, p, rate=rate: rate(p) * (1 - u))
          for wrong, rate in (("(p.feed + p.kill)", lambda p: p.feed + p.kill), ("(p.feed - p.kill)", lambda p: p.feed - p.kill),
                              ("p.feed * p.kill", lambda p: p.feed * p.kill))),
        Slip("v_loss", "V's update has an extra p.feed * (1 - v) term: dv = p.dv * laplacian(v) + uvv - (p.feed + "
             "p.kill) * v (U alone is fed)", lambda u, v, lu, lv, p: p.feed * (1 - v) - (p.feed + p.kill) * v),
    ]
    for term in ("u_reaction", "v_reaction"):
        who = "U's" if term[0] == "u" else "V's"
        sign = -1 if term[0] == "u" else 1
        slips += [Slip(term, f"{who} reaction term is u v, not u v^2: uvv = u * v * v",
                       lambda u, v, lu, lv, p, s=sign: s * u * v),
                  Slip(term, f"{who} reaction term is u^2 v, not u v^2: uvv = u * v * v",
                       lambda u, v, lu, lv, p, s=sign: s * u * u * v),
                  Slip(term, f"{who} reaction term is u v^3 (v ** 3), not u v^2: uvv = u * v * v",
                       lambda u, v, lu, lv, p, s=sign: s * u * v ** 3)]
    losses = (("p.kill * v", lambda p: p.kill), ("p.feed * v", lambda p: p.feed),
              ("(p.feed + p.feed) v", lambda p: 2 * p.feed), ("(p.kill + p.kill) v", lambda p: 2 * p.kill),
              ("(p.feed - p.kill) v", lambda p: p.feed - p.kill), ("(p.kill - p.feed) v", lambda p: p.kill - p.feed),
              ("p.feed * p.kill * v", lambda p: p.feed * p.kill),
              ("(params.feed + p.kill) v, the notebook's feed", lambda p: _DEFAULTS.feed + p.kill),
              ("(p.feed + params.kill) v, the notebook's kill", lambda p: p.feed + _DEFAULTS.kill),
              ("(params.feed + params.kill) v, the notebook's parameters", lambda p: _DEFAULTS.feed + _DEFAULTS.kill))
    slips += [Slip("v_loss", f"V's loss term is {wrong} where (p.feed + p.kill) v belongs (F and k mixed up?)",
                   lambda u, v, lu, lv, p, rate=rate: -rate(p) * v) for wrong, rate in losses]
    slips += [Slip(term, f"{label} is missing from the update: {formula}", lambda u, v, lu, lv, p: 0 * u)
              for term, (_, label, formula, _) in TERMS.items()]
    slips += [Slip(term, f"dt is missing on {label} only ({formula}): {every_term}")
              for term, (_, label, formula, _) in TERMS.items()]
    # Any term may carry one factor too many: a p.dt inside it (dt twice, once there and once on the
    # rate), or one more v ((p.feed + p.kill) * v * v): every term is tried, not only the ones a playtest found.
    slips += [Slip(term, f"dt is applied twice on {label} ({formula} * p.dt in the rate, then the update's p.dt): "
                   "one p.dt, in u + p.dt * du, v + p.dt * dv",
                   lambda u, v, lu, lv, p, value=value: p.dt * value(u, v, lu, lv, p))
              for term, (_, label, formula, value) in TERMS.items()]
    slips += [Slip(term, f"{label} has an extra factor of {name} ({formula} * {name}): it is {formula}",
                   lambda u, v, lu, lv, p, value=value, i=i: (u, v)[i] * value(u, v, lu, lv, p))
              for term, (_, label, formula, value) in TERMS.items() for i, name in enumerate("uv")
              if (term, name) != ("u_feed", "u")]  # p.feed * (1 - u) * u: step_mistakes' own line names it
    return slips


SLIPS = _slips()


def _terms(u, v, p, laplacian):
    lu, lv = laplacian(u), laplacian(v)
    return {name: value(u, v, lu, lv, p) for name, (*_, value) in TERMS.items()}, lu, lv


#: The terms of each group that a step may leave without dt.
GROUPS = {"feed": ("u_feed", "v_loss"), "reaction": ("u_reaction", "v_reaction"),
          "diffusion": ("u_diffusion", "v_diffusion")}


def slipped_step(u, v, p, slip: Slip | None = None, laplacian=reference_laplacian, without_dt=()):
    """One step of the model with `slip` applied (none: the reference step), the terms of the
    groups `without_dt` (of GROUPS) left without their dt."""
    terms, lu, lv = _terms(u, v, p, laplacian)
    dts = dict.fromkeys(terms, p.dt)
    dts.update(dict.fromkeys((t for group in without_dt for t in GROUPS[group]), 1.0))
    if slip is not None:
        if slip.value is None:
            dts[slip.term] = 1.0
        else:
            terms[slip.term] = slip.value(u, v, lu, lv, p)
    return tuple(a + sum(dts[n] * t for n, t in terms.items() if TERMS[n][0] == name)
                 for name, a in (("u", u), ("v", v)))


def step_slips(u, v, p, index: int, laplacian=reference_laplacian):
    """(the array `index` of (u_next, v_next) that each slip of that array gives, its hint), lazily."""
    name = "uv"[index]
    terms, lu, lv = _terms(u, v, p, laplacian)
    right = (u, v)[index] + p.dt * sum(t for n, t in terms.items() if TERMS[n][0] == name)
    for slip in SLIPS:
        if slip.array == name:
            new = terms[slip.term] if slip.value is None else slip.value(u, v, lu, lv, p)
            yield right + (1.0 if slip.value is None else p.dt) * new - p.dt * terms[slip.term], slip.hint


def run_slips(rows: int, cols: int, steps: int, p, index: int):
    """(array `index` of (U, V) after `steps` steps with each slip, its hint), lazily: a slip in U's
    update shows in V too after a few steps, so every slip is tried on either array."""
    for slip in SLIPS:
        u, v = initial_state(rows, cols, np.float64)
        with np.errstate(all="ignore"):  # a reversed sign can blow up: it matches nothing then
            for _ in range(steps):
                u, v = slipped_step(u, v, p, slip)
        yield (u, v)[index], slip.hint


#: How each exercise's code names its two outputs, and how it writes them right.
OUTPUTS = {"return": (("the u you return", "the v you return"), "return u + p.dt * du, v + p.dt * dv"),
           "kernel": (("u_next", "v_next"), "write U's update into u_next and V's into v_next, once each"),
           "task": (("u_out", "v_out"), "np.asarray(u_out)[:] = a and np.asarray(v_out)[:] = b")}


def one_result_twice(got, want, writes: str, atol: float) -> str | None:
    """Where one output holds the other's result (and not both swapped): the hint that says which holds
    what, after how the exercise writes its outputs (OUTPUTS); else None."""
    names, right = OUTPUTS[writes]
    if any(g.shape != w.shape for g in got for w in want):
        return None  # compare tells the shape
    close = [[bool(np.allclose(g, w, rtol=0, atol=max(atol, 1e-4))) for w in want] for g in got]
    for i in (0, 1):
        j = 1 - i
        if close[i][j] and not close[j][i] and not close[i][i]:
            other = ("holds it too" if close[j][j] else "is never written" if np.isnan(got[j]).all()
                     else "holds neither result")
            return f"{names[i]} holds {'UV'[j]}'s result, which belongs in {names[j]}, and {names[j]} {other}: {right}"
    return None


def half_precision(got, want) -> str | None:
    """Where an output is near the reference but holds float16 values only (each exactly one): the hint."""
    for name, g, w in zip("uv", got, want):
        if (g.shape == w.shape and g.dtype == np.float32 and not np.allclose(g, w, rtol=0, atol=1e-5)
                and np.allclose(g, w, rtol=0, atol=1e-2) and np.array_equal(g, g.astype(np.float16))):
            return (f"your {name} holds float16 values (rounded to about 3 digits): keep the float32 result, "
                    "no astype(np.float16)")
    return None
