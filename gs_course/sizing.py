"""Course-wide settings: how big the runs are, and how much GPU memory each library may take,
both decided from the memory free on the GPU when the course starts.

The grids are `workload.GRIDS` (full, half, quarter, small). On a GPU the notebooks, `gs-course run`
and `gs-course bench` take the largest grid whose need fits in the libraries' share of the free
memory; without a GPU, the small grid. `GS_COURSE_SIZE` names a grid and overrides the choice (the
instructor check forces full).

The budget: of the memory free, the course plans on `USABLE` (the rest absorbs other users of a
shared card and the allocators' fragmentation); from that, `PROCESS_BYTES` go to the CUDA context
and the libraries' handles; half of what remains is one library's share (a notebook can have two
libraries on the device: the benchmark measures copies with CuPy beside the library it teaches).
Legate's `--fbmem` (which Legate reserves whole at start) and JAX's memory fraction are that share,
so a card with 4 GB free is never asked for more than it has.
"""

from __future__ import annotations

import dataclasses
import os

from .devices import gpus
from .workload import FULL, GRIDS, HALF, QUARTER, SMALL, Workload, grid

__all__ = ["FULL", "HALF", "QUARTER", "SMALL", "GRIDS", "Workload", "Choice", "choose", "choice", "size",
           "library_share", "legate_fbmem_mib", "jax_memory_fraction", "default_legate_config",
           "default_jax_memory_fraction", "gpu_legate_config", "GPU_LEGATE_CONFIG", "CPU_LEGATE_CONFIG",
           "realm_args", "default_realm_args", "kernel_realm_args"]

#: The share of the free GPU memory the course plans on.
USABLE = 0.75
#: A CUDA context with a library's handles and memory pools, before any array.
PROCESS_BYTES = 10**9
#: Float32 grids a notebook keeps on the device at once at most: U and V, a formulation's
#: temporaries, the images a section keeps to show.
GRID_COPIES = 64
#: Legate's share is capped where the course's largest run has room to spare: a large card stays
#: shared with the other students.
LEGATE_MAX_MIB = 4000
#: Legate needs some device memory to start at all.
LEGATE_MIN_MIB = 256


def library_share(free_bytes: int) -> int:
    """Bytes one library may take when `free_bytes` of the GPU are free (0 when too little is)."""
    return max(0, int((free_bytes * USABLE - PROCESS_BYTES) / 2))


def need(workload: Workload) -> int:
    """Bytes of a library's share the workload's grids take."""
    return GRID_COPIES * workload.frame_bytes


def free_needed(workload: Workload) -> int:
    """The free GPU memory at which `workload` just fits."""
    return int((2 * need(workload) + PROCESS_BYTES) / USABLE) + 1


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


@dataclasses.dataclass(frozen=True)
class Choice:
    """The grid chosen, and the one line that says why."""

    workload: Workload
    line: str


def choose(free_bytes: int | None, override: str = "") -> Choice:
    """The grid for a GPU with `free_bytes` free (None: no GPU); `override` names one instead."""
    on_gpu = f"{_gb(free_bytes)} of GPU memory free" if free_bytes is not None else "no GPU"
    if override:
        chosen = grid(override)
        return Choice(chosen, f"GS_COURSE_SIZE={override}: running {chosen.grid} ({on_gpu})")
    if free_bytes is None:
        return Choice(SMALL, f"no GPU: running {SMALL.grid} ({SMALL.name}) on the CPU")
    share = library_share(free_bytes)
    for workload in GRIDS:
        if need(workload) <= share:
            if workload is FULL:
                return Choice(workload, f"{on_gpu}: running {workload.grid} ({workload.name})")
            return Choice(workload, f"{on_gpu}: running {workload.grid} ({workload.name}; "
                                    f"{FULL.grid} needs {_gb(free_needed(FULL))} free)")
    return Choice(SMALL, f"{on_gpu}: too little for the course (even {SMALL.grid} needs "
                         f"{_gb(free_needed(SMALL))} free); running {SMALL.grid} anyway: free the GPU "
                         "(nvidia-smi shows who holds it) or run on the CPU")


def free_memory() -> int | None:
    """Bytes free on GPU 0 as the driver reported them when gs_course first asked (`devices.gpus`
    keeps its answer: a notebook's grid must not change from one cell to the next, and its own
    arrays would count against it), None without a GPU."""
    found = gpus()
    return found[0].memory_free if found else None


def choice() -> Choice:
    """The grid for this machine (GS_COURSE_SIZE, else the GPU's free memory)."""
    override = os.environ.get("GS_COURSE_SIZE", "").strip().lower()
    if override:
        try:
            grid(override)
        except ValueError as err:
            raise ValueError(f"GS_COURSE_SIZE: {err}") from None
    return choose(free_memory(), override)


def size() -> Workload:
    """The grid the notebooks run here: `choice().workload`."""
    return choice().workload


def legate_fbmem_mib(free_bytes: int) -> int:
    """Legate's `--fbmem` for a GPU with `free_bytes` free: one library's share, within bounds."""
    return max(LEGATE_MIN_MIB, min(LEGATE_MAX_MIB, library_share(free_bytes) // 2**20))


def jax_memory_fraction(free_bytes: int, total_bytes: int) -> str:
    """XLA_PYTHON_CLIENT_MEM_FRACTION for one library's share (JAX counts it against the card's
    total, not what is free)."""
    return f"{max(library_share(free_bytes), 2**28) / total_bytes:.4f}"


#: Legate's threads are left unpinned (gs_course/__init__.py), and Realm then logs, ahead of a
#: notebook's first output, that its cores' reservations cannot be satisfied: its `threads` logger
#: keeps to errors.
QUIET_THREADS = "threads=error"


#: One thread for Legate's runtime work (its default is two): a notebook issues one small task after
#: another, and a second runtime thread adds hand-offs between threads rather than speed, CPU time
#: that the other students of a shared machine want.
RUNTIME_THREADS = "--utility 1"


#: A process kept to this many cores or fewer (a hub's cpuset of one or two) is "few cores": Legate
#: then runs one CPU worker (`--cpus 1`) and one background worker (Realm's `-ll:bgwork 1`, which
#: also polls the GPU), where its defaults run two of each. On one or two cores they take turns with
#: the Python thread that issues the notebook's tasks. Of the two, the CPU worker is the one a
#: measurement tells apart (results/h200/cupynumeric-one-core-*.json); the background worker follows
#: the same reasoning, unmeasured alone. The cores counted are those the process may run on (its
#: affinity), which a CPU quota alone does not change.
FEW_CORES = 2


def _few(cores: int | None) -> bool:
    return cores is not None and cores <= FEW_CORES


def visible_cores() -> int:
    """The cores this process may run on (its affinity: a hub's cpuset, or the classroom's pinning)."""
    return len(os.sched_getaffinity(0))


def gpu_legate_config(fbmem_mib: int = 4000, cores: int | None = None) -> str:
    """Legate's share of a GPU machine: one GPU and `fbmem_mib` MiB of its memory, never the whole
    card; one CPU worker for a process of few `cores` (`FEW_CORES`), two otherwise."""
    return (f"--gpus 1 --cpus {1 if _few(cores) else 2} {RUNTIME_THREADS} --sysmem 2000 --fbmem {fbmem_mib} "
            f"--logging {QUIET_THREADS}")


def realm_args(cores: int | None) -> str:
    """REALM_DEFAULT_ARGS for a process of `cores` cores (None: not known): Realm's options that
    Legate's LEGATE_CONFIG does not take; one background worker for few cores, else none."""
    return "-ll:bgwork 1" if _few(cores) else ""


#: A large card's share (the 4,000 MiB cap of `legate_fbmem_mib`).
GPU_LEGATE_CONFIG = gpu_legate_config()
#: Without a GPU. Legate's CUDA module still starts where a libcuda is loadable (the stand-in of
#: a machine without a driver) and logs two lines, `cuInit(0) returned 100` and "not able to discover
#: the CUDA resources", ahead of every output: its `gpu` logger has nothing else to say on the CPU.
CPU_LEGATE_CONFIG = f"--cpus 1 --gpus 0 {RUNTIME_THREADS} --sysmem 2000 --logging gpu=none,{QUIET_THREADS}"


def default_legate_config() -> str:
    """Legate's resources when LEGATE_CONFIG is unset: one library's share of the GPU memory free
    now (`legate_fbmem_mib`: Legate reserves its share whole at start, so a fixed 4,000 MiB
    would fill a 4 GB card) and workers for the cores this process may use, or the CPU without a GPU."""
    found = gpus()
    if not found:
        return CPU_LEGATE_CONFIG
    return gpu_legate_config(legate_fbmem_mib(found[0].memory_free), visible_cores())


def default_realm_args() -> str:
    """REALM_DEFAULT_ARGS when unset: `realm_args` for the cores this process may use."""
    return realm_args(visible_cores())


def kernel_realm_args() -> str | None:
    """The REALM_DEFAULT_ARGS a course kernel starts Legate with here: the one set (empty included),
    else `default_realm_args()` beside the course's own LEGATE_CONFIG (unset); None where there is
    none: the course never adds a Realm option beside a LEGATE_CONFIG someone else chose."""
    if "REALM_DEFAULT_ARGS" in os.environ:
        return os.environ["REALM_DEFAULT_ARGS"]
    return None if "LEGATE_CONFIG" in os.environ else default_realm_args() or None


def default_jax_memory_fraction() -> str | None:
    """XLA_PYTHON_CLIENT_MEM_FRACTION when unset: one library's share of the GPU memory free now
    (`jax_memory_fraction`); None without a GPU."""
    found = gpus()
    return jax_memory_fraction(found[0].memory_free, found[0].memory_total) if found else None
