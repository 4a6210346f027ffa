"""Python on GPU: the Gray-Scott course's helper package.

The reference model (`gs_course.model`), one implementation per library behind one interface
(`gs_course.backends`), HDF5 output (`gs_course.output`) and the `gs-course` command line.
"""

import os

__version__ = "0.1.0"

# A shared GPU: without this, JAX takes 75 % of the card's memory the moment it starts. Set at
# `import gs_course`, so a notebook that imports gs_course before jax is a good neighbour too.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
if "JAX_PLATFORMS" not in os.environ:
    from .devices import gpus

    if not gpus():
        # No NVIDIA driver: straight to the CPU, without JAX's warning about a missing GPU plugin.
        os.environ["JAX_PLATFORMS"] = "cpu"
