"""CuPy: NumPy's interface on an NVIDIA GPU, plus hand-written CUDA kernels (later formulations)."""

import cupy

from .base import PaddedSlices, Probe

NAME = "cupy"


def probe() -> Probe:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count == 0:
            raise RuntimeError("no CUDA device")
        float(cupy.arange(4, dtype=cupy.float32).sum())  # compiles and runs a kernel
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as err:  # CUDA reports a missing driver or device with many exception types
        return Probe(NAME, False, cupy.__version__, reason=f"no usable NVIDIA GPU ({_first_line(err)})")
    return Probe(NAME, True, cupy.__version__, name, on_gpu=True)


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def free_memory() -> int:
    return cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()


class CupySlices(PaddedSlices):
    backend = NAME
    xp = cupy

    def _to_host(self, a):
        return cupy.asnumpy(a)

    def synchronize(self) -> None:
        cupy.cuda.get_current_stream().synchronize()


FORMULATIONS = {"slices": CupySlices}
DEFAULT_FORMULATION = "slices"
