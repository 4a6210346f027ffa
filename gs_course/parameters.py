"""The Gray-Scott model's parameters: one validated, immutable value shared by every backend."""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings

import numpy as np

#: The 3 x 3 stencil of the school's reference model: all nine weights 1.0.
STENCIL = np.ones((3, 3))


def stencil_spectral_radius(weights: np.ndarray = STENCIL) -> float:
    """Largest |eigenvalue| of the stencil's Laplacian, sum_n w_n (u_n - u), on an unbounded grid.

    Its Fourier symbol is -sum_n w_n (1 - cos(n . theta)); the maximum over theta bounds how fast
    the shortest waves are damped, hence the largest stable explicit (forward Euler) time step.
    The all-ones stencil gives 12, reached at theta = (pi, 0).
    """
    theta = np.linspace(0.0, 2.0 * np.pi, 361)
    ty, tx = np.meshgrid(theta, theta, indexing="ij")
    symbol = np.zeros_like(ty)
    for (di, dj), w in np.ndenumerate(weights):
        symbol += w * (1.0 - np.cos((di - 1) * ty + (dj - 1) * tx))
    return float(symbol.max())


@functools.cache
def _school_stencil_radius() -> float:
    """stencil_spectral_radius() of the school's stencil, computed once: it evaluates a 361 x 361
    grid (about 30 ms), and a Parameters is built in every Legate task of the cuPyNumeric backend."""
    return stencil_spectral_radius()


def _traced(value) -> bool:
    """Whether `value` is a number that JAX is tracing (a 0-d Tracer: under jax.vmap each (feed, kill)
    pair's values, under jax.jit an argument), which has no value yet to validate. Such a Parameters
    lives only while JAX traces the function that made it; it cannot be hashed (a static argument).
    Told by its class, without importing JAX."""
    return getattr(value, "shape", None) == () and any(
        kind.__name__ == "Tracer" and kind.__module__.startswith("jax") for kind in type(value).__mro__)


class UnstableTimeStepWarning(UserWarning):
    """dt is too large for the diffusion rates: forward Euler will blow up."""


@dataclasses.dataclass(frozen=True)
class Parameters:
    """Diffusion rates, feed and kill rates and time step (the school's defaults).

    Immutable, so that a simulation cannot change under a running kernel, and hashable, so that
    a jitted function can take it as a static argument.
    """

    du: float = 0.1
    dv: float = 0.05
    feed: float = 0.014
    kill: float = 0.054
    dt: float = 1.0

    def __post_init__(self) -> None:
        traced = set()
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if _traced(value):  # its value is known only when the traced program runs: checked where it is a number
                traced.add(field.name)
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{field.name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{field.name} must be finite, got {value!r}")
            object.__setattr__(self, field.name, float(value))
        for name in ("du", "dv", "feed", "kill"):
            if name not in traced and getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if "dt" not in traced and self.dt <= 0:
            raise ValueError(f"dt must be > 0, got {self.dt}")
        if not traced.intersection(("du", "dv", "dt")) and not self.is_stable():
            warnings.warn(
                f"dt = {self.dt} is above the stable limit {self.max_stable_dt():.3g} for "
                f"du = {self.du}, dv = {self.dv}: the explicit update will diverge; lower dt",
                UnstableTimeStepWarning,
                stacklevel=3,
            )

    def max_stable_dt(self) -> float:
        """Largest dt for which forward Euler keeps the diffusion of both species stable."""
        fastest = max(self.du, self.dv)
        if fastest == 0:
            return math.inf
        return 2.0 / (fastest * _school_stencil_radius())

    def is_stable(self) -> bool:
        return self.dt <= self.max_stable_dt()

    def replace(self, **changes: float) -> Parameters:
        return dataclasses.replace(self, **changes)


#: Named (feed, kill) pairs. "spots" is the school's reference; the others are patterns students
#: can explore with the same stencil (values from the course's prototype and the Gray-Scott map).
PRESETS: dict[str, Parameters] = {
    "spots": Parameters(),
    "prototype": Parameters(feed=0.0565, kill=0.062),
    "mitosis": Parameters(feed=0.0367, kill=0.0649),
    "coral": Parameters(feed=0.0545, kill=0.062),
    "maze": Parameters(feed=0.029, kill=0.057),
}


def preset(name: str) -> Parameters:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}") from None
