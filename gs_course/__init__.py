"""Python on GPU: the Gray-Scott course's helper package.

The reference model (`gs_course.model`), one implementation per library behind one interface
(`gs_course.backends`), HDF5 output (`gs_course.output`) and the `gs-course` command line.
"""

import os

__version__ = "0.1.0"

# A shared GPU: without this, JAX takes 75 % of the card's memory the moment it starts. Set at
# `import gs_course`, so a notebook that imports gs_course before jax is a good neighbour too.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
from .devices import default_jax_memory_fraction, gpus  # noqa: E402

if "JAX_PLATFORMS" not in os.environ and not gpus():
    # No NVIDIA driver: straight to the CPU, without JAX's warning about a missing GPU plugin.
    os.environ["JAX_PLATFORMS"] = "cpu"
# A small card: JAX may grow to the course's share of the memory free (course.py), not 75 % of it.
if gpus() and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in os.environ:
    os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = default_jax_memory_fraction()
