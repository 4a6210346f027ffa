"""The CuPy tutorial's other route to a custom kernel: the same CUDA C, compiled and launched
through NVIDIA's `cuda.core` (https://nvidia.github.io/cuda-python/cuda-core/), beside CuPy's
`RawKernel`.

`cuda.core` is the Python face of the CUDA runtime with nothing else: it compiles a source with
NVRTC (`Program`), loads the result and launches it (`LaunchConfig`, `launch`) on a stream; it
has no arrays of its own. Here it launches on CuPy's arrays and on a CuPy stream, so that both
routes run the same kernel on the same data in the same queue and one pair of CUDA events times
each: the only difference measured is who compiled and who launched.

Older releases export the API from `cuda.core.experimental`, newer ones from `cuda.core`: both
are tried (either way `launch(stream, config, kernel, *arguments)`, the signature since 0.2).
Without a GPU or without cuda.core, `unavailable()` says why in one line and imports nothing of
CUDA's.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import numpy as np

from .. import backends
from ..measurement import timer
from ..model import initial_state
from ..parameters import Parameters

#: What the route needs of cuda.core, found under either import path.
NAMES = ("Device", "Program", "ProgramOptions", "LaunchConfig", "launch")
IMPORT_PATHS = ("cuda.core", "cuda.core.experimental")
INSTALL = "pip install 'cuda-core[cu12]' (or [cu13], as CuPy's CUDA)"


def import_cuda_core() -> SimpleNamespace | None:
    """cuda.core's Device, Program, ProgramOptions, LaunchConfig and launch, from the first import
    path that has them all; None where neither does."""
    for path in IMPORT_PATHS:
        try:
            module = importlib.import_module(path)
        except ImportError:
            continue
        if all(hasattr(module, name) for name in NAMES):
            return SimpleNamespace(path=path, **{name: getattr(module, name) for name in NAMES})
    return None


def unavailable() -> str | None:
    """Why the route cannot run here, in one line; None where it can."""
    cupy = backends.probe("cupy")
    if not cupy.ok:
        return f"not run here: it needs an NVIDIA GPU with CuPy ({cupy.reason})"
    if import_cuda_core() is None:
        return f"not run here: cuda.core is not installed; to install: {INSTALL}"
    return None


def launch_configuration(rows: int, cols: int, block: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """(grid, block) of a one-thread-a-cell kernel on rows x cols: `block` threads along columns
    (x) and rows (y), and enough blocks to cover the grid, the last ones sticking out of it."""
    if len(block) != 2 or min(block) < 1:
        raise ValueError(f"block {block!r}: give two positive numbers of threads, along columns then rows")
    return (-(-cols // block[0]), -(-rows // block[1])), tuple(block)


class _OnCupyStream:
    """A CuPy stream as cuda.core's launch takes a foreign one: the `__cuda_stream__` protocol."""

    def __init__(self, stream):
        self.stream = stream

    def __cuda_stream__(self):
        return 0, self.stream.ptr


class CudaCoreKernel:
    """`source` compiled by cuda.core for this GPU; `launch(stream, u, v, u_next, v_next, params)`
    queues one step on a CuPy stream. `compile_s` is the compile's wall time (cuda.core keeps no
    cache: every process compiles again)."""

    def __init__(self, source: str, name: str, block: tuple[int, int]):
        core = import_cuda_core()
        if core is None:
            raise RuntimeError(f"cuda.core is not installed; to install: {INSTALL}")
        self.core, self.block = core, block
        device = core.Device()
        device.set_current()  # the GPU's primary context: the one CuPy uses, so its pointers are valid here
        arch = "sm_" + "".join(str(part) for part in device.compute_capability)
        stopwatch = timer.Timer().stopwatch()
        program = core.Program(source, code_type="c++", options=core.ProgramOptions(arch=arch))
        self.kernel = program.compile("cubin").get_kernel(name)
        self.compile_s = stopwatch.elapsed()

    def launch(self, stream, u, v, u_next, v_next, params: Parameters) -> None:
        from ..backends.cuda_steps import scalars  # needs CuPy, which a machine without a GPU may lack

        grid, block = launch_configuration(*u.shape, self.block)
        config = self.core.LaunchConfig(grid=grid, block=block)
        self.core.launch(_OnCupyStream(stream), config, self.kernel,
                         u.data.ptr, v.data.ptr, u_next.data.ptr, v_next.data.ptr, *scalars(params, *u.shape))


def _per_step_s(stream, one_step, steps: int, repeats: int) -> float:
    """Median GPU seconds a step of `one_step(k)` (k the step's number): `steps` launches on
    `stream`, on the device's clock (`CupyTimer`), after one warm-up run."""
    def launches():
        for k in range(steps):
            one_step(k)

    with stream:
        return timer.CupyTimer().time(launches, repeats).device_median / steps


def compare(source: str, name: str, params: Parameters, rows: int, cols: int, steps: int = 32,
            repeats: int = 10) -> dict:
    """The kernel `name` of `source` compiled and launched by CuPy's RawKernel and by cuda.core, on
    the school's initial state: each one's compile time, GPU time a step (CUDA events around
    `steps` launches, median of `repeats`), and the largest difference between their V after
    `steps` steps."""
    import cupy

    from ..backends.cuda_steps import BLOCK, launch_step, scalars

    stream = cupy.cuda.Stream(non_blocking=False)
    with stream:
        stopwatch = timer.Timer().stopwatch()
        raw = cupy.RawKernel(source, name)
        raw.compile()  # CuPy compiles on first use, and keeps the result in its cache on disk
        raw_compile_s = stopwatch.elapsed()
        core = CudaCoreKernel(source, name, BLOCK)
        state = [cupy.asarray(a) for a in initial_state(rows, cols)]
        step_scalars = scalars(params, rows, cols)
        routes = {
            "cupy": lambda u, v, u_next, v_next: launch_step(u, v, u_next, v_next, step_scalars, raw, BLOCK),
            "cuda.core": lambda u, v, u_next, v_next: core.launch(stream, u, v, u_next, v_next, params),
        }
        found = {}
        for route, launch in routes.items():
            pairs = [[a.copy() for a in state], [cupy.empty_like(a) for a in state]]
            for k in range(steps):  # the result first, from the initial state
                launch(*pairs[k % 2], *pairs[1 - k % 2])
            v_after = pairs[steps % 2][1].get()
            seconds = _per_step_s(stream, lambda k: launch(*pairs[k % 2], *pairs[1 - k % 2]), steps, repeats)
            found[route] = (seconds, v_after)
    return {
        "cuda_core_path": core.core.path,
        "compile_s": {"cupy": raw_compile_s, "cuda.core": core.compile_s},
        "step_s": {route: seconds for route, (seconds, _) in found.items()},
        "max_difference": float(np.abs(found["cupy"][1] - found["cuda.core"][1]).max()),
    }


def report(result: dict) -> str:
    """`compare`'s result as lines of text."""
    lines = [f"cuda.core imported from {result['cuda_core_path']}"]
    for route in ("cupy", "cuda.core"):
        label = "CuPy's RawKernel" if route == "cupy" else "cuda.core"
        lines.append(f"{label:>17}: compiled in {result['compile_s'][route] * 1e3:8.1f} ms, "
                     f"{result['step_s'][route] * 1e6:7.2f} us a step on the GPU's clock")
    lines.append(f"largest difference between their V: {result['max_difference']:.1e}")
    return "\n".join(lines)
