"""`gs-course scale` without a GPU: the devices are CPU processors (Legate) or XLA host devices (JAX)."""

import os
import subprocess
import sys

import pytest

from gs_course import backends, cli
from gs_course.measurement import scale
from gs_course import devices
from gs_course.measurement import records

needs_legate = pytest.mark.skipif(not backends.probe("cupynumeric").ok, reason="cupynumeric not available")


def _child_sees(backend: str, devices: int, code: str) -> str:
    env = {**os.environ, **scale.device_env(backend, devices, on_gpu=False)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@needs_legate
def test_legate_gets_as_many_cpu_processors_as_devices_asked():
    code = ("from gs_course.backends import load; load('cupynumeric'); "
            "from legate.core import TaskTarget, get_machine; print(get_machine().count(TaskTarget.CPU))")
    assert _child_sees("cupynumeric", 3, code) == "3"


@pytest.mark.skipif(not backends.probe("jax").ok, reason="jax not available")
def test_jax_gets_as_many_host_devices_as_devices_asked():
    assert _child_sees("jax", 3, "import jax; print(jax.device_count())") == "3"


def test_gpu_settings_name_the_gpus_and_legate_takes_them(monkeypatch):
    from gs_course.devices import Gpu

    two = tuple(Gpu(i, "NVIDIA H200", "580", "13.0", 140 * 2**30, 100 * 2**30) for i in range(2))
    monkeypatch.setattr(scale, "gpus", lambda: two)
    env = scale.device_env("cupynumeric", 2, on_gpu=True)
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert env["LEGATE_CONFIG"].startswith("--gpus 2 ") and "--fbmem 40000" in env["LEGATE_CONFIG"]
    with pytest.raises(scale.ScaleError, match="3 GPUs asked for, 2 here"):
        scale.device_env("cupynumeric", 3, on_gpu=True)


def test_a_backend_without_device_settings_runs_on_one_device_only():
    assert scale.device_env("numpy", 1, on_gpu=False) == {}
    with pytest.raises(scale.ScaleError, match="backend numpy has no setting for several devices"):
        scale.device_env("numpy", 2, on_gpu=False)


def test_ratios_are_speed_up_for_strong_and_efficiency_for_weak():
    def point(mode, n, s):
        return {"mode": mode, "devices": n, "step_s": s}
    result = {"points": [point("strong", 1, 4.0), point("strong", 2, 2.5), point("weak", 1, 4.0), point("weak", 2, 5.0)]}
    ratios = {(p["mode"], p["devices"]): (p["ratio"], p["of_ideal"]) for p in scale.speedups(result)}
    assert ratios[("strong", 2)] == (1.6, 0.8)
    assert ratios[("weak", 2)] == (0.8, 0.8)
    assert ratios[("strong", 1)] == (1.0, 1.0)


@needs_legate
@pytest.mark.skipif(len(devices.gpus()) == 1, reason="one GPU visible: the two-GPU points need two (or none: CPUs)")
def test_scale_command_measures_every_point_and_writes_its_files(tmp_path, capsys):
    code = cli.main(["scale", "--backend", "cupynumeric", "--formulation", "task", "--devices", "1", "2",
                     "-r", "40", "-c", "24", "--steps", "2", "--repeats", "2", "--option", "steps_per_task=1",
                     "--out", str(tmp_path)])
    assert code == 0
    record = records.load(tmp_path / "scale-cupynumeric-task.json", scale.KIND)
    points = {(p["mode"], p["devices"]): p for p in record["points"]}
    assert set(points) == {("strong", 1), ("strong", 2), ("weak", 1), ("weak", 2)}
    assert points[("weak", 2)]["rows"] == 80 and points[("strong", 2)]["rows"] == 40
    assert all(p["step_s"] > 0 and p["timing"]["repeats"] == 2 and p["options"] == {"steps_per_task": 1}
               for p in points.values())
    assert "CPU through Legate" in points[("strong", 2)]["device"]
    assert (tmp_path / "scale-cupynumeric-task.png").stat().st_size > 0
    table = (tmp_path / "scale-cupynumeric-task.md").read_text()
    assert "| weak | 2 | 80 x 24 |" in table and "gs-course scale" in table
    assert "| strong | 2 | 40 x 24 |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--devices", "0"], "device counts must be >= 1, got [0]"),
    (["--option", "steps_per_task"], "--option wants NAME=VALUE, got 'steps_per_task'"),
    (["--backend", "numpy"], "scale runs cupynumeric, jax, not 'numpy'"),
    (["--steps", "0"], "--steps must be at least 1, got 0"),
])
def test_bad_input_is_one_line(argv, message, capsys, tmp_path, monkeypatch):
    """Told before the backend loads: cuPyNumeric, the default, need not be installed."""
    monkeypatch.setattr(backends, "load", lambda name: pytest.fail(f"{name} loaded before the input was checked"))
    assert cli.main(["scale", "--out", str(tmp_path), *argv]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err == f"gs-course: error: {message}\n"


def test_a_backend_not_installed_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(backends, "probe", lambda name: backends.Probe(name, False, reason="not installed"))
    assert cli.main(["scale", "--out", str(tmp_path), "--devices", "1"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "backend cupynumeric cannot run here: not installed" in err[0]


@needs_legate
def test_a_point_that_fails_says_why_in_one_line(capsys, tmp_path):
    code = cli.main(["scale", "--formulation", "task", "--devices", "1", "-r", "40", "-c", "24", "--mode", "strong",
                     "--option", "steps_per_task=0", "--out", str(tmp_path)])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "steps_per_task must be an integer >= 1, got 0" in err[0]


def test_worker_answers_on_the_marked_line():
    spec = {"backend": "numpy", "formulation": "slices", "devices": 1, "on_gpu": False, "rows": 20, "cols": 17,
            "steps": 3, "repeats": 2}
    answer = scale.measure_point(spec)
    assert answer["formulation"] == "slices" and answer["steps_per_call"] == 3
    assert answer["device"] == backends.probe("numpy").describe()
    timing = answer["timing"]
    assert timing["repeats"] == 2 and len(timing["samples_s"]) == 2 and all(s > 0 for s in timing["samples_s"])
    assert timing["min_s"] <= timing["median_s"] <= timing["max_s"]
    assert timing["compile_s"] is not None  # the warm-up call, timed apart
    assert answer["step_s"] == pytest.approx(timing["median_s"] / 3)  # a step, not a call of 3
