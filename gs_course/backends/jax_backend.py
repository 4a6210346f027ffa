"""JAX behind the course's contract: every formulation, those on one device (`jax_one_device`) and
those that shard the grid over several (`jax_sharded`), in one table read by the registry.

(`import gs_course` has already set JAX's environment for a shared GPU, or for no GPU.)
"""

from . import jax_one_device, jax_sharded
from .jax_one_device import NAME, ON_GPU, advance, advance_stacked, free_memory, probe, stacked_step, step, to_host

__all__ = ["NAME", "ON_GPU", "FORMULATIONS", "DEFAULT_FORMULATION", "FASTEST", "advance", "advance_stacked",
           "free_memory", "probe", "stacked_step", "step", "to_host"]

FORMULATIONS = {**jax_one_device.FORMULATIONS, **jax_sharded.FORMULATIONS}
DEFAULT_FORMULATION = FASTEST = jax_one_device.FASTEST
