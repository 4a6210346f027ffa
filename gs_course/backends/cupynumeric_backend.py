"""cuPyNumeric: NumPy's interface run by Legate, on one or many GPUs (or CPUs) without code changes."""

import os
import re

from ..devices import default_legate_config

# Legate reads its resources once, at the first import: pin them (a shared GPU must not be taken
# whole, and without any setting Legate aborts on a machine with no GPU), unless the user or the
# kernel spec already chose.
os.environ.setdefault("LEGATE_CONFIG", default_legate_config())

import cupynumeric  # noqa: E402
from legate.core import TaskTarget, get_machine  # noqa: E402

from .base import PaddedSlices, Probe  # noqa: E402

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


class CupynumericSlices(PaddedSlices):
    backend = NAME
    xp = cupynumeric


FORMULATIONS = {"slices": CupynumericSlices}
DEFAULT_FORMULATION = "slices"
