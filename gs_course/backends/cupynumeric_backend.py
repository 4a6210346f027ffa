"""cuPyNumeric: NumPy's interface run by Legate, on one or many GPUs (or CPUs) without code changes.

Three formulations:
- `slices`: NumPy code, the window sum as nine shifted slices of arrays padded with zeros, each
  step's new U and V computed as fresh arrays and assigned into the padded arrays' interiors;
- `convolve`: the window sum as one `cupynumeric.convolve` on unpadded arrays, fresh arrays;
- `task`: our own Legate task (the extension mechanism cuPyNumeric documents) that runs several
  steps on its piece of the grid plus a halo as wide as the steps: the CUDA kernel of the CuPy
  backend on a GPU, NumPy on a CPU. Legate splits the arrays between GPUs (or CPUs) and
  exchanges the halos.

Every operator on a cuPyNumeric array is a Legate task. NumPy's habit of updating views in place
(`out += ...`, `u[1:-1, 1:-1] += ...`) makes as many tasks as fresh arrays do (Legate's
--show-progress counts 44 a step either way); what each way of writing the step costs on a GPU is
in BENCHMARKS.md, from tools/gpu-host-cupynumeric-variants.py (removed since: `git show b26f6b8:tools/`), which timed each
change on its own.
"""

import ctypes
import dataclasses
import functools
import os
import re
from pathlib import Path

import numpy as np

from ..sizing import default_legate_config, kernel_realm_args

# Legate reads its resources once, at the first import: pin them (a shared GPU must not be taken
# whole, and without any setting Legate aborts on a machine with no GPU), unless the user or the
# kernel spec already chose; Realm's own options with them (few cores: one background worker), never
# beside a LEGATE_CONFIG someone else chose.
if kernel_realm_args() is not None:
    os.environ["REALM_DEFAULT_ARGS"] = kernel_realm_args()
os.environ.setdefault("LEGATE_CONFIG", default_legate_config())

# Legate carries its own HDF5 library: loaded first, it breaks h5py's (h5py then fails to import
# with "Not a datatype"). Importing h5py first keeps both working.
import h5py  # noqa: E402, F401


def load_pip_cuda_runtime() -> None:
    """pip's CUDA 12 wheels put libcudart.so.12 in site-packages/nvidia/cuda_runtime/lib, where the
    dynamic loader does not look, and the CUDA 12 cuPyNumeric wheel links it: in the course's image
    `import cupynumeric` failed with "libcudart.so.12: cannot open shared object file". Loaded first
    by its full path, it is the one Legate finds. Nothing to do where that package is absent."""
    try:
        import nvidia.cuda_runtime as runtime
    except ImportError:
        return
    for folder in runtime.__path__:
        for library in sorted(Path(folder, "lib").glob("libcudart.so.*")):
            ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)


load_pip_cuda_runtime()
import cupynumeric  # noqa: E402
from legate.core import TaskContext, TaskTarget, VariantCode, as_logical_array, bloat, broadcast, get_legate_runtime, get_machine  # noqa: E402
from legate.core.task import InputArray, OutputArray, task  # noqa: E402

from ..model import initial_state, reference_step, updated, window_counts  # noqa: E402
from ..parameters import Parameters  # noqa: E402
from .base import PaddedSlices, Probe, Simulation, positive_integer  # noqa: E402

NAME = "cupynumeric"


def _gpu_count() -> int:
    return get_machine().count(TaskTarget.GPU)


def _processors() -> int:
    """The processors Legate splits an array over: its GPUs where it has any, else its CPUs."""
    return _gpu_count() or get_machine().count(TaskTarget.CPU)


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


def to_legate(host, dtype=np.float32):
    """A cuPyNumeric array of Legate's own holding a copy of the NumPy array `host`.

    `cupynumeric.asarray(host)` (and `cupynumeric.array`, on a copy) attaches a NumPy buffer
    instead, and Legate writes every update of such an array through to that host buffer,
    waiting for each task that updates it (Legate's documentation of external allocations):
    state updated in place at every step then travels to the host at every step. `.copy()` of
    the attached array is an array Legate allocates itself (in its GPU's or CPU's memory) and
    reads the host's once; the host array attached for it is a read-only copy, which Legate never writes to.
    """
    frozen = np.array(host, dtype=dtype)
    frozen.flags.writeable = False
    return cupynumeric.asarray(frozen).copy()


def _wait_for_legate() -> None:
    """Legate runs operations asynchronously: block until every task issued so far has finished.
    The blocking fence holds the clock on a GPU: 320 steps on the full grid, then the fence, then
    V fetched: the fetch added 3 to 8 ms to the fence's time (results/h200/logs/legate-wait-08f01c2.txt)."""
    get_legate_runtime().issue_execution_fence(block=True)


class CupynumericSlices(PaddedSlices):
    """Padded U and V; the window sum is one expression of nine slices, and each step's fresh
    result is assigned into the interior (`padded[1:-1, 1:-1] = ...`), never added in place."""

    backend = NAME
    xp = cupynumeric
    arrays_per_cell = 14

    def _to_device(self, host: np.ndarray):
        return to_legate(host)

    def _to_host(self, a) -> np.ndarray:
        # NumPy's view of a cuPyNumeric array maps that array into host memory: of the padded
        # state, updated in place at every step, it would keep it up to date there, hence the
        # view of a copy. And the view is copied in turn, into memory NumPy owns: the view keeps
        # Legate's mapping alive, and whichever thread drops it last unmaps it, which Legate
        # allows only on the thread that runs it (dropped by the HDF5 writer's thread, Legion
        # aborted the run: "Invalid task context passed to runtime call unmap_region").
        return np.asarray(a.copy()).copy()

    def _laplacian(self, padded):
        rows, cols = self.rows, self.cols
        shifted = [padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)]
        return sum(shifted[1:], start=shifted[0]) - self._counts * shifted[4]

    def _step(self) -> None:
        inner = (slice(1, -1), slice(1, -1))
        u_next, v_next = updated(self._u[inner], self._v[inner],
                                 self._laplacian(self._u), self._laplacian(self._v), self.params)
        self._u[inner] = u_next
        self._v[inner] = v_next

    def synchronize(self) -> None:
        _wait_for_legate()


class CupynumericConvolve(Simulation):
    """The window sum as one 3 x 3 convolution of the unpadded array ('same' size, zeros outside
    the grid), new U and V made fresh at each step."""

    backend = NAME
    formulation = "convolve"
    arrays_per_cell = 12

    def __init__(self, params: Parameters, rows: int, cols: int):
        super().__init__(params, rows, cols)
        self._window = cupynumeric.ones((3, 3), dtype=np.float32)
        self._counts = to_legate(window_counts(rows, cols))
        self.set_state(*initial_state(rows, cols))

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        self._uv = tuple(to_legate(a) for a in (u, v))

    def _laplacian(self, a):
        return cupynumeric.convolve(a, self._window, mode="same", method="direct") - self._counts * a

    def _advance(self, steps: int) -> None:
        for _ in range(steps):
            u, v = self._uv
            self._uv = updated(u, v, self._laplacian(u), self._laplacian(v), self.params)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        return tuple(np.asarray(a).copy() for a in self._uv)

    def fetch_v(self) -> np.ndarray:
        return np.asarray(self._uv[1]).copy()

    def synchronize(self) -> None:
        _wait_for_legate()


def _steps_in_piece(ctx: TaskContext, uv: InputArray, uv_out: OutputArray,
                    steps: int, du: float, dv: float, feed: float, kill: float, dt: float) -> None:
    """`steps` steps on this task's piece of `uv` (U and V stacked), which Legate gave with a halo
    of at least `steps` cells wherever the piece borders another (none at the grid's edges); the
    piece of `uv_out` it answers for is written.

    The piece's edges are treated as the grid's edges: exact at the grid's own edges; at a cut
    between pieces the error this makes moves in by one cell a step, so after `steps` steps it
    has covered the halo and not reached the cells written.
    """
    params = Parameters(du, dv, feed, kill, dt)
    into = tuple(slice(lo - in_lo, hi - in_lo + 1)
                 for lo, hi, in_lo in zip(uv_out.domain().lo[1:], uv_out.domain().hi[1:], uv.domain().lo[1:]))
    if ctx.get_variant_kind() == VariantCode.GPU:
        import cupy

        from .cuda_steps import run_steps  # CuPy: loaded only where the task runs on a GPU

        with cupy.cuda.ExternalStream(ctx.task_stream or 0):
            # The CUDA kernel indexes rows of `cols` floats: give it contiguous arrays.
            state = cupy.asarray(uv)
            u, v = cupy.ascontiguousarray(state[0]), cupy.ascontiguousarray(state[1])
            u_new, v_new = cupy.empty_like(u), cupy.empty_like(v)
            run_steps(u, v, u_new, v_new, steps, params)
            out = cupy.asarray(uv_out)
            out[0] = u_new[into]
            out[1] = v_new[into]
        return
    state = np.asarray(uv)
    u, v = state[0], state[1]
    for _ in range(steps):
        u, v = reference_step(u, v, params)
    out = np.asarray(uv_out)
    out[0] = u[into]
    out[1] = v[into]


@functools.cache
def steps_task(halo: int):
    """Our Legate task for at most `halo` steps: each piece of U and V (one array, split along rows
    and columns only) reaches `halo` cells beyond the matching piece of the output (`bloat`), so
    Legate may split the grid freely.

    U and V are stacked in one array: one halo to exchange and one constraint (with two arrays,
    an `align("u", "v")` beside their two `bloat`s drops the halos)."""
    grow = (0, halo, halo)
    return task(
        variants=(VariantCode.CPU, VariantCode.GPU),
        constraints=(broadcast("uv_out", (0,)), bloat("uv_out", "uv", grow, grow)),
    )(_steps_in_piece)


@dataclasses.dataclass(frozen=True)
class TaskOptions:
    #: Steps one task runs, hence its halo's width. A wider halo means fewer tasks and halo
    #: exchanges but more cells computed twice; 32 is an image of the course workload.
    steps_per_task: int = 32

    def __post_init__(self):
        positive_integer("steps_per_task", self.steps_per_task)


class CupynumericTask(Simulation):
    """U and V stacked in one cuPyNumeric array, advanced by our Legate task: one task per
    `steps_per_task` steps (at most), each piece computed with a halo that wide."""

    backend = NAME
    formulation = "task"
    arrays_per_cell = 8
    Options = TaskOptions

    def __init__(self, params: Parameters, rows: int, cols: int, options: TaskOptions = TaskOptions()):
        self.steps_per_task = options.steps_per_task
        super().__init__(params, rows, cols)
        self.set_state(*initial_state(rows, cols))

    def set_state(self, u: np.ndarray, v: np.ndarray) -> None:
        self._uv = to_legate(np.stack([u, v]))

    def _advance(self, steps: int) -> None:
        p = self.params
        run = steps_task(self.steps_per_task)
        while steps:
            now = min(steps, self.steps_per_task)
            out = cupynumeric.empty_like(self._uv)
            # Launching a task can block without letting go of Python's lock while the task before
            # it, a Python function, waits for that lock (the H200, 071d6c7: the benchmark's loop
            # hung so). The blocking fence lets it finish first: it waits with the lock released.
            _wait_for_legate()
            if _processors() > 1:
                self._prefetch_halos()
            run(self._uv, out, now, p.du, p.dv, p.feed, p.kill, p.dt)
            self._uv = out
            steps -= now

    def _prefetch_halos(self) -> None:
        """Where the grid is split in pieces: without this hint Legate builds each piece's grown
        instance bit by bit as it meets the pieces; split on 2 or 3 CPU processors, 2 to 8 % of
        runs then read a wrong halo (tests/test_cupynumeric_pieces.py); with it, none in 440 runs.

        The prefetch blocks without letting go of Python's lock, and the task before it, a Python
        function, needs that lock to finish: on the H200 the benchmark's loop of tasks hung so,
        the prefetch waiting for the task and the task for the lock (one run in two of the
        cuPyNumeric notebook). The caller's blocking fence first lets every task issued finish.
        One processor has one piece, no halo: no prefetch at all."""
        grow = (0, self.steps_per_task, self.steps_per_task)
        get_legate_runtime().prefetch_bloated_instances(as_logical_array(self._uv).data, grow, grow)

    def fetch(self) -> tuple[np.ndarray, np.ndarray]:
        both = np.asarray(self._uv)
        return both[0].copy(), both[1].copy()

    def fetch_v(self) -> np.ndarray:
        return np.asarray(self._uv[1]).copy()

    def synchronize(self) -> None:
        _wait_for_legate()


FORMULATIONS = {cls.formulation: cls for cls in (CupynumericSlices, CupynumericConvolve, CupynumericTask)}
DEFAULT_FORMULATION = FASTEST = "task"
