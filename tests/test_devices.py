"""The GPUs CUDA lets the course see, and the peak of GPU memory a run takes (Legate's and JAX's
shares: test_sizing.py)."""

import os
import time

from gs_course import devices


def _gpu(gib: int) -> devices.Gpu:
    return devices.Gpu(0, "card", "580", "13.0", gib * 2**30, gib * 2**30)


def test_gpu_memory_peak_counts_above_what_was_in_use_at_the_start(monkeypatch, tmp_path):
    """Through a stand-in nvidia-smi that reports 1000, 3000 then 2500 MiB used."""
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nprintf '1000\\n3000\\n2500\\n'\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(devices, "gpus", lambda: (_gpu(141),))
    with devices.GpuMemoryPeak() as peak:
        time.sleep(0.5)
    assert peak.mib == 2000 and peak.start_mib == 1000


def test_gpu_memory_peak_is_none_without_a_gpu(monkeypatch):
    monkeypatch.setattr(devices, "gpus", lambda: ())
    with devices.GpuMemoryPeak() as peak:
        pass
    assert peak.mib is None


def _four_gpus_seen_by(monkeypatch, tmp_path, visible):
    """A stand-in nvidia-smi with four GPUs (GPU i has i GiB free), and CUDA_VISIBLE_DEVICES."""
    fake = tmp_path / "nvidia-smi"
    rows = "".join(f"{i}, NVIDIA H200, 580.159.04, 143771, {i * 1024}\\n" for i in range(4))
    fake.write_text(f"#!/bin/sh\nif [ $# -eq 0 ]; then echo 'CUDA Version: 13.0'; else printf '{rows}'; fi\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    devices.gpus.cache_clear()
    try:
        return [(gpu.index, gpu.memory_free // 2**30) for gpu in devices.gpus()]
    finally:
        devices.gpus.cache_clear()


def test_the_gpus_are_those_cuda_visible_devices_leaves_in_its_order(monkeypatch, tmp_path):
    """A hub that hands a student GPU 2 of four: the free memory the course plans with is GPU 2's."""
    assert _four_gpus_seen_by(monkeypatch, tmp_path, None) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert _four_gpus_seen_by(monkeypatch, tmp_path, "2") == [(2, 2)]
    assert _four_gpus_seen_by(monkeypatch, tmp_path, "3,1") == [(3, 3), (1, 1)]
    assert _four_gpus_seen_by(monkeypatch, tmp_path, "1,7,2") == [(1, 1)], "CUDA stops at a GPU that is not there"
    assert _four_gpus_seen_by(monkeypatch, tmp_path, "") == []
    assert _four_gpus_seen_by(monkeypatch, tmp_path, "-1") == []
    assert len(_four_gpus_seen_by(monkeypatch, tmp_path, "GPU-8c1f2d3e")) == 4, "UUIDs: all kept"


def test_gpu_memory_peak_samples_the_visible_gpu(monkeypatch, tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\necho \"$1\" > {tmp_path}/asked\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(devices, "gpus", lambda: (devices.Gpu(3, "card", "580", "13.0", 2**30, 2**30),))
    with devices.GpuMemoryPeak():
        time.sleep(0.5)
    assert (tmp_path / "asked").read_text().strip() == "--id=3"


def test_a_gpu_is_shared_through_mps_only_where_its_pipe_is_given(monkeypatch):
    monkeypatch.delenv("CUDA_MPS_PIPE_DIRECTORY", raising=False)
    assert devices.gpu_sharing() == "time slices"
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", "/tmp/mps-pipe")
    assert devices.gpu_sharing() == "MPS"
