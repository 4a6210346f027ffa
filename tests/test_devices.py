"""Legate's default share of a GPU: bounded on a large card, a quarter of a small one."""

from gs_course import devices


def _gpu(gib: int) -> devices.Gpu:
    return devices.Gpu(0, "card", "580", "13.0", gib * 2**30, gib * 2**30)


def test_legate_takes_4000_mib_of_a_large_gpu_and_a_quarter_of_a_small_one(monkeypatch):
    monkeypatch.setattr(devices, "gpus", lambda: (_gpu(141),))
    assert devices.default_legate_config() == devices.GPU_LEGATE_CONFIG
    assert devices.GPU_LEGATE_CONFIG.endswith("--fbmem 4000")
    monkeypatch.setattr(devices, "gpus", lambda: (_gpu(4),))
    assert devices.default_legate_config() == "--gpus 1 --cpus 2 --sysmem 2000 --fbmem 1024"
    monkeypatch.setattr(devices, "gpus", lambda: ())
    assert devices.default_legate_config() == devices.CPU_LEGATE_CONFIG
