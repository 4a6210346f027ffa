"""The notebooks' one name for the course's answer checkers: each tests a student's function on
fresh random inputs against the reference and says precisely what is wrong, in one line (a tick
`ok` when right, `NotYet` with the hint otherwise), checking the technique the exercise teaches as
well as the values.

The model's exercises are `gs_course.lessons.check_model`'s (the saving one `check_saving`'s), CuPy's kernels and copies
`gs_course.lessons.cupy_check`'s, the halo exchange `gs_course.lessons.halo_check`'s, their common ground (NotYet,
compare, how a student's function is called) `gs_course.lessons.check_core`'s. In IPython (Jupyter) a
`NotYet` shows as its hint alone, without a traceback; the cell still fails, so `Run all` and nbval
stop there.
"""

from __future__ import annotations

from .check_core import PARAMS, NotYet, _equations, compare, ok
from .kernel_runs import trial_in_a_child
from .check_model import batch, images, laplacian, on_device, step, time_loop
from .check_saving import saved_images
from .cupy_check import STEP_KERNEL, UPDATE_INPUTS, UPDATE_OUTPUTS, elementwise_update, pinned_fetch, step_kernel
from .halo_check import halo_exchange

__all__ = ["PARAMS", "STEP_KERNEL", "UPDATE_INPUTS", "UPDATE_OUTPUTS", "NotYet", "_equations", "batch", "compare",
           "elementwise_update", "halo_exchange", "images", "laplacian", "ok", "on_device", "pinned_fetch",
           "saved_images", "step", "step_kernel", "time_loop", "trial_in_a_child"]
