"""The peak of GPU memory a run takes (Legate's and JAX's shares: test_course.py)."""

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
