"""NumPy on the CPU: the baseline every GPU library is compared with."""

import numpy as np

from .base import PaddedSlices, Probe

NAME = "numpy"


def probe() -> Probe:
    return Probe(NAME, True, np.__version__, "CPU")


class NumpySlices(PaddedSlices):
    backend = NAME
    xp = np


FORMULATIONS = {"slices": NumpySlices}
DEFAULT_FORMULATION = FASTEST = "slices"
