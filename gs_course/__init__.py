"""Python on GPU: the Gray-Scott course's helper package, in layers that import only downward.

- The engine, here at the top level, where the notebooks import it: `parameters`, `model` (the
  reference), `workload` (the course's runs), `devices`, `sizing` (grid and memory shares for the
  GPU memory free), `backends` (one implementation per library behind one interface), `runner`,
  `output` (HDF5), `distributed` (several processes), `paths`.
- `measurement`: one timer per library, result records, the benchmark, scaling, the PCIe toll.
- `lessons`: the exercises' checkers, the tutorial-only code, the views, the notebooks' tooling.
- `delivery`: doctor, the instructor's and classroom checks, the handout, Jupyter kernels,
  `gs-course run`, the documents rendered from records.
- `cli`: the `gs-course` command line, which only parses and dispatches.
"""

import faulthandler
import importlib
import os
import signal

from . import _aliases

__version__ = "0.1.0"

# Notebooks handed out before the layers import the old module paths (gs_course._aliases).
_aliases.install()

# A shared GPU: without this, JAX takes 75 % of the card's memory the moment it starts. Set at
# `import gs_course`, so a notebook that imports gs_course before jax is a good neighbour too.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# A shared machine: Legate pins its threads to the first cores it is given, so every student's
# Legate would pin to the same few cores. Unpinned, the operating system spreads them, as Legate's
# own test runner does for runs side by side (Realm then says once that its core reservations
# cannot be satisfied). Read once, when Legate starts: gs_course is imported before it.
os.environ.setdefault("REALM_SYNTHETIC_CORE_MAP", "")
# A check's child (the classroom sets GS_COURSE_STACKS): on SIGUSR1, every thread's Python stack into
# GS_COURSE_STACKS/<pid>.txt, so that a notebook stopped at its time limit says where it was.
if os.path.isdir(os.environ.get("GS_COURSE_STACKS", "")):
    try:  # a folder it cannot write to, or a system without SIGUSR1: no stacks, the course imports all the same
        _stacks = open(os.path.join(os.environ["GS_COURSE_STACKS"], f"{os.getpid()}.txt"), "w")  # noqa: SIM115 (kept open)
        faulthandler.register(signal.SIGUSR1, file=_stacks, all_threads=True)
    except (OSError, AttributeError, ValueError):
        pass
from .devices import gpus  # noqa: E402
from .sizing import default_jax_memory_fraction  # noqa: E402

if "JAX_PLATFORMS" not in os.environ and not gpus():
    # No NVIDIA driver: straight to the CPU, without JAX's warning about a missing GPU plugin.
    os.environ["JAX_PLATFORMS"] = "cpu"
# A small card: JAX may grow to the course's share of the memory free (sizing.py), not 75 % of it.
if gpus() and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in os.environ:
    os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = default_jax_memory_fraction()


def __getattr__(name):
    """`gs_course.check` and the other old module names, after a bare `import gs_course` (PEP 562)."""
    if name in _aliases.MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
