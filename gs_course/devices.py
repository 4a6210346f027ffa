"""What hardware is here: NVIDIA GPUs as the driver reports them, and free host memory.

Asks `nvidia-smi` rather than a CUDA library, so it answers even where no GPU library is
installed, and never starts a CUDA context (which would take memory on a shared GPU).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess


@dataclasses.dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    driver: str
    cuda: str  # the newest CUDA version the driver supports
    memory_total: int  # bytes
    memory_free: int  # bytes


def _nvidia_smi(*args: str) -> str | None:
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _visible(found: list[Gpu]) -> tuple[Gpu, ...]:
    """The GPUs that CUDA_VISIBLE_DEVICES leaves to this process, in its order (CUDA's device 0 is
    its first entry), as CUDA numbers them: a hub or a batch system that hands a student one GPU of
    several sets it, and the memory free then means that GPU's. Entries given by UUID keep all."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return tuple(found)
    by_index = {gpu.index: gpu for gpu in found}
    chosen = []
    for entry in (e.strip() for e in visible.split(",")):
        if not entry.lstrip("-").isdigit():
            return tuple(found) if entry else tuple(chosen)
        if int(entry) not in by_index:
            break  # CUDA stops at the first entry that names no GPU
        chosen.append(by_index[int(entry)])
    return tuple(chosen)


@functools.cache
def gpus() -> tuple[Gpu, ...]:
    """The NVIDIA GPUs the driver sees and CUDA_VISIBLE_DEVICES leaves visible (`index` is the
    driver's number, as nvidia-smi --id takes it), or () without a driver or a GPU."""
    table = _nvidia_smi(
        "--query-gpu=index,name,driver_version,memory.total,memory.free",
        "--format=csv,noheader,nounits",
    )
    if not table:
        return ()
    banner = _nvidia_smi() or ""
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", banner)
    found = []
    for line in table.strip().splitlines():
        index, name, driver, total, free = (field.strip() for field in line.split(","))
        found.append(
            Gpu(int(index), name, driver, cuda.group(1) if cuda else "?", int(total) * 2**20, int(free) * 2**20)
        )
    return _visible(found)


class GpuMemoryPeak:
    """The most GPU memory in use while a `with` block runs, above what was in use when it began
    (so that other users of a shared GPU do not count): nvidia-smi sampled every 200 ms, which
    sees every library's allocations and CUDA contexts alike. `mib` is None without a GPU."""

    def __init__(self, gpu: int = 0):
        self.gpu = gpu  # CUDA's number: the gpu-th of those CUDA_VISIBLE_DEVICES leaves
        self.mib: int | None = None
        self.start_mib: int | None = None  # in use when the block began
        self._sampler: subprocess.Popen | None = None

    def __enter__(self) -> GpuMemoryPeak:
        if len(gpus()) > self.gpu:
            self._sampler = subprocess.Popen(
                ["nvidia-smi", f"--id={gpus()[self.gpu].index}", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                 "-lms", "200"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return self

    def __exit__(self, *exc_info) -> None:
        if self._sampler is None:
            return
        self._sampler.terminate()
        output, _ = self._sampler.communicate(timeout=30)
        samples = [int(line) for line in output.split() if line.isdigit()]
        if samples:
            self.start_mib = samples[0]
            self.mib = max(samples) - samples[0]


def host_memory_available() -> int:
    """Bytes of RAM the kernel says a new program can take (MemAvailable)."""
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/meminfo has no MemAvailable line")


def gigabytes(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n < 1e11 else f"{n / 1e9:.0f} GB"


def gpu_sharing() -> str:
    """How processes of this one share a GPU: through NVIDIA's Multi-Process Service where they
    are given its pipe (CUDA_MPS_PIPE_DIRECTORY, as a hub that runs MPS sets it: their kernels then
    run side by side), else in time slices, one process's kernels at a time."""
    return "MPS" if os.environ.get("CUDA_MPS_PIPE_DIRECTORY") else "time slices"
