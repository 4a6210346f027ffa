"""cuPyNumeric: NumPy's interface run by Legate, on one or many GPUs (or CPUs) without code changes.

Three formulations:
- `slices`: the NumPy code unchanged; every operator is a Legate task (~40 a step, ~0.2 ms each);
- `convolve`: the window sum as one `cupynumeric.convolve`: fewer, larger tasks;
- `task`: our own Legate task (the extension mechanism cuPyNumeric documents) that runs a whole
  image's steps in one go: the CUDA kernel of the CuPy backend on a GPU, NumPy on a CPU.
"""

import os
import re

import numpy as np

from ..devices import default_legate_config

# Legate reads its resources once, at the first import: pin them (a shared GPU must not be taken
# whole, and without any setting Legate aborts on a machine with no GPU), unless the user or the
# kernel spec already chose.
os.environ.setdefault("LEGATE_CONFIG", default_legate_config())

# Legate carries its own HDF5 library: loaded first, it breaks h5py's (h5py then fails to import
# with "Not a datatype"). Importing h5py first keeps both working.
import h5py  # noqa: E402, F401

import cupynumeric  # noqa: E402
from legate.core import TaskContext, TaskTarget, VariantCode, broadcast, get_legate_runtime, get_machine  # noqa: E402
from legate.core.task import InputArray, OutputArray, task  # noqa: E402

from ..model import initial_state, reference_step  # noqa: E402
from ..parameters import Parameters  # noqa: E402
from .base import PaddedSlices, Probe, Simulation  # noqa: E402

NAME = "cupynumeric"


def _gpu_count() -> int:
    return get_machine().count(TaskTarget.GPU)


def probe() -> Probe:
    version = cupynumeric.__version__
    if _gpu_count():
        return Probe(NAME, True, version, f"{_gpu_count()} GPU(s) through Legate", on_gpu=True)
    return Probe(NAME, True, version, "CPU through Legate")


def free_memory() -> int | None:
    """The memory Legate was given (--fbmem on a GPU, --sysmem on the CPU), in bytes."""
    option = "--fbmem" if _gpu_count() else "--sysmem"
    found = re.search(rf"{option}[ =](\d+)", os.environ.get("LEGATE_CONFIG", ""))
    return int(found.group(1)) * 2**20 if found else None


def _wait_for_legate() -> None:
    """Legate runs operations asynchronously: block until every one issued so far has finished."""
    get_legate_runtime().issue_execution_fence(block=True)


class CupynumericSlices(PaddedSlices):
    backend = NAME
    xp = cupynumeric

    def synchronize(self) -> None:
        _wait_for_legate()


class CupynumericConvolve(CupynumericSlices):
    """The window sum as one 3 x 3 convolution ('same' size, zeros outside the grid)."""

    formulation = "convolve"
    _window = None

    def _laplacian(self, padded):
        if self._window is None:
            self._window = cupynumeric.ones((3, 3), dtype=np.float32)
        center = padded[1:-1, 1:-1]
        window_sum = cupynumeric.convolve(center, self._window, mode="same", method="direct")
        return window_sum - self._counts * center


@task(
    variants=(VariantCode.CPU, VariantCode.GPU),
    # The stencil needs whole arrays: Legate must not split them between processors.
    constraints=(broadcast("u"), broadcast("v"), broadcast("u_out"), broadcast("v_out")),
)
def gray_scott_steps(
    ctx: TaskContext, u: InputArray, v: InputArray, u_out: OutputArray, v_out: OutputArray,
    steps: int, du: float, dv: float, feed: float, kill: float, dt: float,
) -> None:
    """`steps` steps from (u, v) into (u_out, v_out), inside one Legate task."""
    params = Parameters(du, dv, feed, kill, dt)
    if ctx.get_variant_kind() == VariantCode.GPU:
        import cupy

        from .cupy_backend import run_steps

        with cupy.cuda.ExternalStream(ctx.task_stream or 0):
            run_steps(cupy.asarray(u), cupy.asarray(v), cupy.asarray(u_out), cupy.asarray(v_out), steps, params)
        return
    state = np.asarray(u), np.asarray(v)
    for _ in range(steps):
        state = reference_step(*state, params)
    np.asarray(u_out)[:], np.asarray(v_out)[:] = state


class CupynumericTask(Simulation):
    """cuPyNumeric arrays advanced by our Legate task: one task per `advance`, not per operator."""

    backend = NAME
    formulation = "task"
    arrays_per_cell = 6

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        u0, v0 = initial_state(rows, cols)
        self._pairs = [(cupynumeric.asarray(u0), cupynumeric.asarray(v0)),
                       (cupynumeric.empty_like(u0), cupynumeric.empty_like(v0))]

    def _advance(self, steps: int) -> None:
        if steps:
            p = self.params
            gray_scott_steps(*self._pairs[0], *self._pairs[1], steps, p.du, p.dv, p.feed, p.kill, p.dt)
            self._pairs.reverse()

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        return tuple(np.asarray(a).copy() for a in self._pairs[0])

    def fetch_v(self) -> np.ndarray:
        return np.asarray(self._pairs[0][1]).copy()

    def synchronize(self) -> None:
        _wait_for_legate()


FORMULATIONS = {cls.formulation: cls for cls in (CupynumericSlices, CupynumericConvolve, CupynumericTask)}
DEFAULT_FORMULATION = FASTEST = "task"
