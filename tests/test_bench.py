"""The benchmark harness on a tiny workload: every case checked before it is timed, wrong answers
reported as failures, the table, the JSON and the chart built from the results."""

import json

import pytest

from gs_course import backends, cli
from gs_course.measurement import bench, records, timer
from gs_course.backends.numpy_backend import NumpySlices
from gs_course.cli import main

TINY = bench.Workload(rows=40, cols=56, images=4, steps_per_image=8, name="tiny")
#: The output modes run for JAX's fastest formulation: stacked on a GPU, slices on a CPU.
JAX_FASTEST = f"jax/{backends.load('jax').FASTEST}"


class _DtOnFeedOnly(NumpySlices):
    """The course prototype's bug: dt applied to the feed term only."""

    formulation = "dt-bug"

    def _step(self) -> None:
        p = self.params
        u, v = self._u[1:-1, 1:-1], self._v[1:-1, 1:-1]
        uvv = u * v * v
        du = p.du * self._laplacian(self._u) - uvv + p.dt * p.feed * (1 - u)
        dv = p.dv * self._laplacian(self._v) + uvv - (p.feed + p.kill) * v
        u += du
        v += dv


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(backends.load("numpy").FORMULATIONS, "dt-bug", _DtOnFeedOnly)
        return bench.run(TINY, budget_s=1e-6, only=["numpy", "jax/slices", JAX_FASTEST], output_dir=folder,
                         log=lambda line: None, isolate=False, repeats=2)


def _case(results, name):
    return next(c for c in results["cases"] if c["name"] == name)


def test_every_selected_case_is_checked_then_timed(results):
    names = [c["name"] for c in results["cases"] if c["mode"] == "compute"]
    jax_names = [n for n in (f"jax/{f}" for f in backends.load("jax").FORMULATIONS) if n in {"jax/slices", JAX_FASTEST}]
    assert names == ["numpy/slices", "numpy/dt-bug", *jax_names]
    for name in ("numpy/slices", *jax_names):
        case = _case(results, name)
        assert case["status"] == "ok" and case["check_error"] <= bench.PARITY_ATOL
        assert case["seconds"] > 0 and case["compile_s"] > 0
        assert case["repeats"] == len(case["samples_s"]) == 2
        assert case["min_s"] <= case["seconds"] <= case["max_s"]
        assert case["us_per_step"] == pytest.approx(case["seconds"] / TINY.steps * 1e6)


def test_a_wrong_formulation_is_a_failure_not_a_result(results):
    case = _case(results, "numpy/dt-bug")
    assert case["status"].startswith("wrong: ") and case["check_error"] > 100 * bench.PARITY_ATOL
    assert "seconds" not in case


def test_slow_cases_are_extrapolated_and_labelled(results):
    case = _case(results, "numpy/slices")  # a budget of 1 us: one image timed, four reported
    assert case["extrapolated"] and case["images_timed"] < TINY.images


class _ClockedSimulation:
    """A simulation whose every step takes one second of a fake clock: what the benchmark reports
    is then known exactly."""

    backend = "numpy"

    def __init__(self):
        self.now = 0.0
        self.steps = 0

    def clock(self) -> float:
        return self.now

    def advance(self, steps: int) -> None:
        self.steps += steps
        self.now += steps

    def synchronize(self) -> None:
        pass


@pytest.mark.parametrize("budget_s, images_timed", [(48.0, 2), (1e9, 8)])
def test_the_total_is_extrapolated_from_the_images_timed(budget_s, images_timed, monkeypatch):
    """8 images of 8 one-second steps: 64 s, whether 2 images were timed (a budget of 48 s over 3
    repeats, 16 s a repeat) and scaled by 4, or all 8."""
    sim = _ClockedSimulation()
    monkeypatch.setattr(timer, "for_library", lambda name: timer.Timer(clock=sim.clock))
    workload = bench.Workload(rows=4, cols=4, images=8, steps_per_image=8)
    case = bench.time_simulation(sim, workload, budget_s=budget_s, repeats=3)
    assert case["images_timed"] == images_timed and case["extrapolated"] == (images_timed < 8)
    assert case["samples_s"] == [64.0] * 3 and case["seconds"] == 64.0 and case["us_per_step"] == 1e6
    assert case["compile_s"] == 8.0  # the first image, timed apart
    assert sim.steps == 8 + 8 + 3 * images_timed * 8  # warm-up, the image that sets the pace, the repeats


def test_output_modes_run_against_writing_alone(results):
    assert results["output"]["seconds"] > 0 and results["output"]["repeats"] == 2
    for mode in ("output in line", "output overlapped"):
        case = _case(results, f"{JAX_FASTEST}, {mode}")
        assert case["status"] == "ok" and case["seconds"] > 0 and not case["extrapolated"]


def test_table_chart_and_json(results, tmp_path):
    text = bench.table(results)
    assert "40 x 56 float32, 4 images x 8 steps = 32 steps" in text and "median (range) of 2 repeats" in text
    slices = _case(results, "numpy/slices")
    assert timer.format_range(slices["seconds"], slices["min_s"], slices["max_s"]) in text
    assert "numpy/dt-bug" in text and "wrong: " in text
    assert "the school's" not in text, "the school's figures are for the full workload only"
    as_if_full = {**results, "workload": bench.FULL.as_dict()}
    assert "the school's: 377 s (best CPU, day 5)" in bench.table(as_if_full)
    assert "* extrapolated" in text
    fig = bench.figure(results)
    assert fig.axes[0].get_xscale() == "log"
    timed = [c for c in results["cases"] if c["status"] == "ok"]
    assert len(fig.axes[0].patches) == len(timed)
    bench.save(results, tmp_path / "b.json")
    assert bench.load(tmp_path / "b.json") == json.loads(json.dumps(results))
    assert "| numpy/slices |" in bench.markdown(results)


def test_a_transfer_result_given_as_a_benchmark_gets_one_line(tmp_path):
    from gs_course.measurement import transfer

    transfer.save(transfer.recorded(), tmp_path / "t.json")
    with pytest.raises(records.ResultError, match=r"t.json is a gs-course transfer result, not a bench result$"):
        bench.load(tmp_path / "t.json")


def test_bench_command_runs_each_library_in_its_own_process(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "SMALL", TINY)
    monkeypatch.chdir(tmp_path)
    out_dir = tmp_path / "results"
    out_dir.mkdir()
    args = ["bench", "--quick", "--only", "numpy/slices", "jax/slices", "--budget", "0.05", "--repeats", "2",
            "--output-dir", str(tmp_path), "--out", str(out_dir)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "The course benchmark: 40 x 56" in out and "each library in its own process" in out
    assert f"saved {out_dir / 'bench.json'}" in out
    results = bench.load(out_dir / "bench.json")
    names = [c["name"] for c in results["cases"]]
    assert names[:2] == ["numpy/slices", "jax/slices"] and all(c["status"] == "ok" for c in results["cases"])
    assert results["backends"]["numpy"] and results["isolated"] and results["provenance"]["command"]
    assert (out_dir / "bench.png").stat().st_size > 5000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"], "nothing else written, HDF5 files removed"


@pytest.mark.parametrize("args, message", [(["--budget", "0"], "--budget must be > 0"),
                                           (["--output-dir", "/no/such"], "--output-dir /no/such: no such folder, nor /no: make it first"),
                                           (["--out", "/no/such"], "--out /no/such: no such folder, nor /no: make it first"),
                                           (["--repeats", "0"], "--repeats must be at least 1")])
def test_bench_bad_input(args, message, capsys):
    assert main(["bench", "--quick", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_backend_that_only_rules_out_by_name_is_not_even_loaded():
    """A word with a '/' names a backend: `only=["jax/conv"]` must not start Legate (which takes
    4,000 MiB of the GPU) nor CuPy. A word without one may match any backend's formulations."""
    assert bench._may_select("jax", ["jax/conv"]) and not bench._may_select("cupynumeric", ["jax/conv"])
    assert bench._may_select("cupynumeric", ["cupynumeric/"]) and not bench._may_select("cupy", ["cupynumeric/"])
    assert bench._may_select("cupy", ["y/s"])  # "cupy/slices" contains it
    assert bench._may_select("torch", ["slices"]) and bench._may_select("torch", None)
    results = bench.run(TINY, budget_s=1e-6, only=["numpy/"], output_dir=None, log=lambda line: None, isolate=False,
                        repeats=1)
    assert set(results["backends"]) == {"numpy"} and results["unavailable"] == {}
    assert [c["name"] for c in results["cases"]] == ["numpy/slices"]
