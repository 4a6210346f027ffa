"""The grid chosen from the GPU memory free, the line that says so, and the libraries' shares."""

import os
import re
import subprocess
import sys

import pytest

from gs_course.sizing import FULL, HALF, SMALL
from gs_course import devices, paths, sizing

ROOT = paths.ROOT


def test_full_size_where_it_fits_with_margin():
    chosen = sizing.choose(140 * 10**9)
    assert chosen.workload is FULL
    assert chosen.line == "140.0 GB of GPU memory free: running 1080 x 1920 (full)"


def test_a_smaller_grid_where_the_full_one_does_not_fit():
    free = sizing.free_needed(FULL) - 1
    chosen = sizing.choose(free)
    assert chosen.workload is HALF
    assert chosen.line.endswith(f"running 540 x 960 (half; 1080 x 1920 needs {sizing.free_needed(FULL) / 1e9:.1f} GB free)")


def test_the_full_grid_just_fits():
    assert sizing.choose(sizing.free_needed(FULL)).workload is FULL
    assert sizing.need(FULL) <= sizing.library_share(sizing.free_needed(FULL))


def test_too_little_memory_says_so_in_one_line():
    chosen = sizing.choose(10**9)
    assert chosen.workload is SMALL and "\n" not in chosen.line
    assert chosen.line.startswith("1.0 GB of GPU memory free: too little for the course (even 135 x 240 needs")


def test_no_gpu_runs_the_small_grid_and_the_environment_overrides(monkeypatch):
    assert sizing.choose(None) == sizing.Choice(SMALL, "no GPU: running 135 x 240 (small) on the CPU")
    monkeypatch.setattr(sizing, "gpus", lambda: ())
    monkeypatch.setenv("GS_COURSE_SIZE", "full")
    assert sizing.choice() == sizing.Choice(FULL, "GS_COURSE_SIZE=full: running 1080 x 1920 (no GPU)")
    monkeypatch.setenv("GS_COURSE_SIZE", "huge")
    with pytest.raises(ValueError, match="GS_COURSE_SIZE: no grid 'huge'"):
        sizing.size()


def _gpu(free_gib: float, total_gib: int = 141) -> devices.Gpu:
    return devices.Gpu(0, "card", "580", "13.0", total_gib * 2**30, int(free_gib * 2**30))


def test_legate_and_jax_take_the_same_share_of_what_is_free(monkeypatch):
    monkeypatch.setattr(sizing, "gpus", lambda: (_gpu(140),))
    monkeypatch.setattr(sizing, "visible_cores", lambda: 16)
    assert sizing.default_legate_config() == sizing.GPU_LEGATE_CONFIG  # a large card: the 4,000 MiB cap
    monkeypatch.setattr(sizing, "gpus", lambda: (_gpu(4),))
    share = sizing.library_share(4 * 2**30)
    assert re.search(r"--fbmem (\d+)", sizing.default_legate_config()).group(1) == str(share // 2**20)
    assert float(sizing.default_jax_memory_fraction()) == pytest.approx(share / (141 * 2**30), abs=1e-4)
    assert sizing.need(FULL) <= share  # 4 GB free still runs the full grid
    monkeypatch.setattr(sizing, "gpus", lambda: ())
    assert sizing.default_legate_config() == sizing.CPU_LEGATE_CONFIG
    assert sizing.default_jax_memory_fraction() is None


def test_a_process_kept_to_few_cores_gets_fewer_legate_workers(monkeypatch):
    monkeypatch.setattr(sizing, "gpus", lambda: (_gpu(140),))
    for cores, cpus, realm in ((1, 1, "-ll:bgwork 1"), (2, 1, "-ll:bgwork 1"), (3, 2, ""), (16, 2, "")):
        monkeypatch.setattr(sizing, "visible_cores", lambda cores=cores: cores)
        assert f"--gpus 1 --cpus {cpus} " in sizing.default_legate_config(), cores
        assert sizing.default_realm_args() == realm, cores
    assert sizing.gpu_legate_config() == sizing.GPU_LEGATE_CONFIG and sizing.realm_args(None) == ""


def test_the_cores_counted_are_those_the_process_may_run_on():
    core = sorted(os.sched_getaffinity(0))[-1]
    said = subprocess.run([sys.executable, "-c", "import os, sys; os.sched_setaffinity(0, [int(sys.argv[1])]); "
                           "from gs_course import sizing; print(sizing.visible_cores(), sizing.default_realm_args())",
                           str(core)], capture_output=True, text=True, check=True, cwd=ROOT).stdout.split(maxsplit=1)
    assert said == ["1", "-ll:bgwork 1\n"]


def test_a_kernel_keeps_realm_settings_it_was_given_and_adds_none_beside_a_sites_legate_config(monkeypatch):
    monkeypatch.setattr(sizing, "visible_cores", lambda: 1)
    for name in ("REALM_DEFAULT_ARGS", "LEGATE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    assert sizing.kernel_realm_args() == "-ll:bgwork 1"
    monkeypatch.setenv("LEGATE_CONFIG", "--cpus 2 --gpus 0")
    assert sizing.kernel_realm_args() is None
    monkeypatch.setenv("REALM_DEFAULT_ARGS", "")
    assert sizing.kernel_realm_args() == ""
    monkeypatch.setattr(sizing, "visible_cores", lambda: 16)
    monkeypatch.delenv("REALM_DEFAULT_ARGS")
    monkeypatch.delenv("LEGATE_CONFIG")
    assert sizing.kernel_realm_args() is None
