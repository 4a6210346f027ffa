"""The registry: a backend name in, a working `Simulation` (or a message that says why not) out.

Backend modules are imported only when asked for, so that `gs-course run --backend numpy` never
starts CUDA, JAX or Legate, and a library that is missing costs nothing until someone wants it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from types import ModuleType

from ..devices import gigabytes, gpus, host_memory_available
from ..model import check_grid
from ..parameters import Parameters
from .base import Probe, Simulation, first_line

#: Every backend, in the order the course teaches them (PyTorch, optional, for comparison).
BACKENDS = ("numpy", "jax", "cupynumeric", "cupy", "torch")
#: Fastest first (see the course benchmark): the default picks the first that runs on a GPU here.
GPU_PREFERENCE = ("cupy", "jax", "cupynumeric")
#: Without a GPU: JAX compiles the loop, NumPy is always there.
CPU_PREFERENCE = ("jax", "numpy")

_INSTALL_HINT = {
    "numpy": "pip install numpy",
    "jax": "pip install jax (add the course's cuda12 or cuda13 extra for the GPU)",
    "cupy": "pip install 'gs-course[cuda12]' (or [cuda13]) on a machine with an NVIDIA GPU",
    "cupynumeric": "pip install 'gs-course[cuda12]' (or [cuda13]), or [cpu-cupynumeric] without a GPU",
    "torch": "pip install torch (optional: the benchmark compares it)",
}
_LOAD_HINT = {
    "cupynumeric": "Legate needs libcuda.so.1, which an NVIDIA driver provides: in a container, start it "
    "with the GPU (docker run --gpus all, apptainer run --nv); without a GPU, from a clone, run through "
    "./course (./course run gs-course ...), which puts Debian's libcuda1 on LD_LIBRARY_PATH",
    "cupy": "check the NVIDIA driver and that the cupy-cuda1Nx wheel matches its CUDA version",
    "jax": "reinstall jax and jaxlib at the same version",
    "numpy": "reinstall numpy",
    "torch": "reinstall torch",
}


class BackendError(RuntimeError):
    """A backend that is unknown, missing or unusable here, or a grid it cannot hold."""


def _check_known(name: str) -> None:
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; the backends are {', '.join(BACKENDS)}{_working_here()}")


@functools.cache
def load(name: str) -> ModuleType:
    """The backend's module (imports its library: may raise ImportError or OSError)."""
    _check_known(name)
    return importlib.import_module(f"{__name__}.{name}_backend")


@functools.cache
def probe(name: str) -> Probe:
    """Whether `name` runs here, without raising: the reason and the fix when it does not."""
    _check_known(name)
    try:
        module = load(name)
    except (ImportError, OSError) as err:
        if importlib.util.find_spec(name) is None:  # each backend is named after its library
            return Probe(name, False, reason=f"not installed; to install: {_INSTALL_HINT[name]}")
        return Probe(name, False, reason=f"installed but cannot load ({first_line(err)}); {_LOAD_HINT[name]}")
    return module.probe()


def _working_here() -> str:
    working = [name for name in BACKENDS if probe(name).ok]
    return f"; working here: {', '.join(working)}" if working else ""


def default_backend() -> str:
    """The fastest backend that runs here: a GPU library where there is a GPU, else JAX or NumPy."""
    if gpus():
        for name in GPU_PREFERENCE:
            if probe(name).on_gpu:
                return name
    for name in CPU_PREFERENCE:
        if probe(name).ok:
            return name
    raise BackendError("no backend runs here: install numpy")


def require(name: str | None) -> Probe:
    """The probe of a backend that runs here (the default one for None), or a BackendError."""
    name = name or default_backend()
    found = probe(name)
    if not found.ok:
        raise BackendError(f"backend {name} cannot run here: {found.reason}{_working_here()}")
    return found


def formulation_class(name: str, formulation: str | None = None) -> type[Simulation]:
    module = load(name)
    formulation = formulation or module.DEFAULT_FORMULATION
    try:
        return module.FORMULATIONS[formulation]
    except KeyError:
        raise BackendError(
            f"backend {name} has no formulation {formulation!r}; it has {', '.join(module.FORMULATIONS)}"
        ) from None


def formulations(name: str) -> dict[str, str]:
    """The backend's formulations, each with its options and their defaults ('' for none)."""
    return {formulation: cls.describe_options() for formulation, cls in load(name).FORMULATIONS.items()}


def free_memory(name: str) -> tuple[int, str]:
    """(bytes the backend can still allocate, where): the GPU's memory, or the host's."""
    found = require(name)
    module_free = getattr(load(name), "free_memory", None)
    free = module_free() if module_free else None
    if free is not None:
        return free, found.device
    return host_memory_available(), "this machine's memory"


def check_fits(name: str, simulation: type[Simulation], rows: int, cols: int) -> None:
    """Refuse a grid that cannot fit, naming the largest grid of the same shape that does."""
    free, where = free_memory(name)
    needed = simulation.bytes_needed(rows, cols)
    if needed <= free:
        return
    scale = (free / needed) ** 0.5
    fit_rows, fit_cols = int(rows * scale), int(cols * scale)
    raise BackendError(
        f"a {rows} x {cols} grid needs about {gigabytes(needed)} with {name} ({simulation.formulation}), "
        f"but {where} has {gigabytes(free)} free; the largest grid of this shape that fits is "
        f"-r {fit_rows} -c {fit_cols}"
    )


def create(
    name: str | None, params: Parameters, rows: int, cols: int, formulation: str | None = None, **options
) -> Simulation:
    """A ready simulation of the school's initial state, after checking it runs and fits here;
    `options` are the formulation's (its `Options`: cuPyNumeric's task takes `steps_per_task`,
    say), checked before anything is allocated."""
    check_grid(rows, cols)
    name = require(name).name
    simulation = formulation_class(name, formulation)
    try:
        chosen = simulation.options(options)
    except (TypeError, ValueError) as err:
        raise BackendError(str(err)) from None
    check_fits(name, simulation, rows, cols)
    return simulation(params, rows, cols, chosen) if options else simulation(params, rows, cols)


__all__ = ["BACKENDS", "BackendError", "Probe", "Simulation", "create", "default_backend", "probe", "require"]
