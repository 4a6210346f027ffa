"""PyTorch: the deep-learning library's tensors run the same NumPy-style code (the original
course timed it too). Optional: used where `torch` is installed, on its GPU if it has one."""

import numpy as np
import torch

from .base import PaddedSlices, Probe

NAME = "torch"
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def probe() -> Probe:
    if DEVICE.type == "cuda":
        return Probe(NAME, True, torch.__version__, torch.cuda.get_device_name(0), on_gpu=True)
    return Probe(NAME, True, torch.__version__, "CPU")


def free_memory() -> int | None:
    return torch.cuda.mem_get_info()[0] if DEVICE.type == "cuda" else None


class TorchSlices(PaddedSlices):
    """The padded-slices formulation, written once for NumPy-like modules, on torch tensors."""

    backend = NAME

    def _to_device(self, host: np.ndarray):
        return torch.as_tensor(host, device=DEVICE)

    def _copy(self, a):
        return a.clone()

    def _to_host(self, a) -> np.ndarray:
        return a.cpu().numpy().copy()

    def synchronize(self) -> None:
        if DEVICE.type == "cuda":
            torch.cuda.synchronize()


FORMULATIONS = {"slices": TorchSlices}
DEFAULT_FORMULATION = FASTEST = "slices"
