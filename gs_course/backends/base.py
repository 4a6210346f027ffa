"""The contract every backend implements, and the array formulation NumPy-like libraries share.

A backend is a module with `NAME`, `probe()`, `FORMULATIONS` (name -> Simulation subclass) and
`DEFAULT_FORMULATION`. The rest of the course (command line, HDF5 output, benchmark, notebooks)
only ever talks to a `Simulation`, so a new library or a faster kernel is one class, not a fork.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
from types import ModuleType
from typing import ClassVar

import numpy as np

from ..model import initial_state, window_counts
from ..parameters import Parameters

#: (row, column) offsets of the 3 x 3 window's cells in an array padded by one cell.
WINDOW_OFFSETS = tuple((i, j) for i in range(3) for j in range(3))


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (libraries that fail to load can print pages)."""
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


@dataclasses.dataclass(frozen=True)
class Probe:
    """Whether a backend runs here: its version and device, or the reason and the fix."""

    name: str
    ok: bool
    version: str | None = None
    device: str | None = None
    on_gpu: bool = False
    reason: str | None = None
    #: formulation -> its options with their defaults ('' for none), where the backend loads
    #: (`backends.formulations`; filled in by doctor's probe in a child process)
    formulations: dict[str, str] | None = None

    def describe(self) -> str:
        if self.ok:
            return f"{self.name} {self.version} on {self.device}"
        return f"{self.name}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a formulation that has none to choose."""


def is_positive_integer(value) -> bool:
    """A whole number >= 1 (True and False are not counts)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def positive_integer(name: str, value) -> None:
    """One line for an option that must be a whole number >= 1."""
    if not is_positive_integer(value):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


class Simulation(abc.ABC):
    """U and V of one Gray-Scott run, held on the backend's device, advanced step by step.

    `advance` may return before the device is done (CuPy, JAX and cuPyNumeric queue work
    asynchronously); `fetch` and `synchronize` wait for it, so they are where timings stop.
    """

    backend: ClassVar[str]
    formulation: ClassVar[str]
    #: float32 arrays of the grid's size alive at once during a step (state and temporaries):
    #: sizes the memory check that runs before anything is allocated.
    arrays_per_cell: ClassVar[int]
    #: What a person may choose of this formulation: a frozen dataclass whose fields `create`
    #: (and `gs-course scale --option NAME=VALUE`) take by name, and whose defaults are the
    #: measured best; it refuses a bad value in one line. A formulation with options takes an
    #: instance as its constructor's fourth argument.
    Options: ClassVar[type] = NoOptions

    @classmethod
    def options(cls, given: dict) -> object:
        """`given` (option name -> value) as this formulation's Options, checked: ValueError in one
        line for a name it does not have or a value it refuses (a JSON list becomes a tuple)."""
        names = [field.name for field in dataclasses.fields(cls.Options)]
        unknown = sorted(set(given) - set(names))
        if unknown:
            offered = f"its options: {cls.describe_options()}" if names else "it has none"
            raise ValueError(f"{cls.backend}/{cls.formulation} has no option {unknown[0]!r}; {offered}")
        return dataclasses.replace(cls.default_options(), **{name: tuple(value) if isinstance(value, list) else value
                                                             for name, value in given.items()})

    @classmethod
    def default_options(cls) -> object:
        """The options a formulation runs with when none are given: its constructor's default
        (the measured best), else the Options' own defaults."""
        parameter = inspect.signature(cls.__init__).parameters.get("options")
        default = parameter.default if parameter is not None else inspect.Parameter.empty
        return default if isinstance(default, cls.Options) else cls.Options()

    @classmethod
    def describe_options(cls) -> str:
        """'name=default, ...': what doctor and the errors list."""
        default = cls.default_options()
        return ", ".join(f"{field.name}={getattr(default, field.name)!r}" for field in dataclasses.fields(cls.Options))

    def __init__(self, params: Parameters, rows: int, cols: int):
        self.params = params
        self.rows = rows
        self.cols = cols
        self.steps_done = 0

    def advance(self, steps: int) -> None:
        """Run `steps` more time steps."""
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        self._advance(steps)
        self.steps_done += steps

    @abc.abstractmethod
    def _advance(self, steps: int) -> None: ...

    @abc.abstractmethod
    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        """Host (NumPy) copies of U and V, once the device has finished."""

    def fetch_v(self) -> np.ndarray:
        """Host copy of V alone: the image the course stores."""
        return self.fetch()[1]

    def synchronize(self) -> None:
        """Wait until the device has finished every step queued so far."""

    @abc.abstractmethod
    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        """Replace U and V by host arrays of the grid's shape: how the explorer (gs_course.lessons.view)
        drops a new seed into a running pattern, or carries it over to new parameters."""

    @classmethod
    def bytes_needed(cls, rows: int, cols: int) -> int:
        return cls.arrays_per_cell * rows * cols * np.dtype(np.float32).itemsize


class PaddedSlices(Simulation):
    """The straightforward array formulation, for any NumPy-like module `xp`.

    U and V live in arrays one cell larger on each side whose border stays zero, so the window
    sum is nine shifted slices and L(a) = window sum - (in-grid cells of the window) * a. Each
    step writes the interior in place; every operator still makes a temporary array, which is
    what makes this formulation slow on a GPU (about 40 kernel launches a step). Sums are
    accumulated in place (`+=`): fewer temporaries, twice as fast with NumPy.
    """

    formulation = "slices"
    arrays_per_cell = 12
    xp: ClassVar[ModuleType]

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        u0, v0 = initial_state(rows, cols)
        self._u = self._to_device(np.pad(u0, 1))
        self._v = self._to_device(np.pad(v0, 1))
        self._counts = self._to_device(window_counts(rows, cols))

    def _laplacian(self, padded):
        """L(a) = window sum (zero outside the grid) - in-grid window cells * a, summed in place."""
        rows, cols = self.rows, self.cols
        (i, j), *others = WINDOW_OFFSETS
        out = self._copy(padded[i : i + rows, j : j + cols])
        for i, j in others:
            out += padded[i : i + rows, j : j + cols]
        out -= self._counts * padded[1:-1, 1:-1]
        return out

    def _step(self) -> None:
        p = self.params
        u, v = self._u[1:-1, 1:-1], self._v[1:-1, 1:-1]
        uvv = u * v
        uvv *= v
        du = self._laplacian(self._u)  # du = Du L(u) - u v^2 + F (1 - u)
        du *= p.du
        du -= uvv
        du += p.feed * (1 - u)
        dv = self._laplacian(self._v)  # dv = Dv L(v) + u v^2 - (F + k) v
        dv *= p.dv
        dv += uvv
        dv -= (p.feed + p.kill) * v
        u += p.dt * du  # writes the interior of the padded arrays; the border stays zero
        v += p.dt * dv

    def _advance(self, steps: int) -> None:
        for _ in range(steps):
            self._step()

    def _to_device(self, host: np.ndarray):
        return self.xp.asarray(host)

    def _copy(self, a):
        return a.copy()

    def _to_host(self, a) -> np.ndarray:
        """A NumPy copy: the state keeps changing under a view."""
        return np.asarray(a).copy()

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        return self._to_host(self._u[1:-1, 1:-1]), self._to_host(self._v[1:-1, 1:-1])

    def fetch_v(self) -> np.ndarray:
        return self._to_host(self._v[1:-1, 1:-1])

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        self._u[1:-1, 1:-1] = self._to_device(np.asarray(u, np.float32))
        self._v[1:-1, 1:-1] = self._to_device(np.asarray(v, np.float32))
