"""`gs-course tune`: the sweep's budget and its failures, the best that must pass the check, the
diff that makes it the default, and the command's refusals on a machine without a GPU (the
sweep's timings themselves need CuPy and JAX on a GPU)."""

import dataclasses
import json
import subprocess

import pytest

from gs_course import backends
from gs_course.backends import jax_pallas, temporal_blocking
from gs_course.backends.temporal_blocking import BLOCKING, Blocking
from gs_course.cli import main
from gs_course.measurement import records, tune
from gs_course.model import PARITY_ATOL
from gs_course import paths


def row(us, error=0.0, **extra):
    return {"us_per_step": us, "min_us": us, "max_us": us, "check_error": error, **extra}


def test_the_sweep_stops_at_its_budget_and_keeps_a_failure_as_a_row():
    now = [0.0]

    def measure(candidate):
        now[0] += 10.0
        if candidate == "bad":
            raise RuntimeError("CUDA_ERROR_INVALID_VALUE")
        return row(candidate)

    said = []
    rows = tune.sweep([1.0, "bad", 3.0, 4.0, 5.0], measure, 25.0, str, said.append, clock=lambda: now[0])
    assert [r.get("us_per_step") for r in rows] == [1.0, None, 3.0]  # at 30 s, past 25: the rest not measured
    assert rows[1] == {"candidate": "bad", "failed": "RuntimeError: CUDA_ERROR_INVALID_VALUE"}
    assert said[-1].startswith("time's up")


def test_the_best_is_the_fastest_that_passed_the_check():
    rows = [row(1.0, error=10 * PARITY_ATOL), {"candidate": "x", "failed": "boom"}, row(3.0), row(2.0)]
    assert tune.best(rows) == rows[3]
    assert tune.best(rows[:2]) is None


def test_the_candidates_are_valid_shapes_and_the_neighbours_vary_one_thing():
    shapes = list(tune.cupy_candidates())
    assert len(shapes) > 20 and all(isinstance(b, Blocking) and b.depth == b.halo for b in shapes)
    assert {b.halo for b in shapes} == {2, 4, 6, 8, 12, 16}
    for neighbour in tune.cupy_neighbours(BLOCKING):
        changed = {f.name for f in dataclasses.fields(Blocking) if getattr(neighbour, f.name) != getattr(BLOCKING, f.name)}
        assert changed in ({"depth"}, {"threads"})


def test_the_defaults_diff_sets_the_best_shapes_and_changes_no_file(tmp_path):
    sweep = records.recorded(tune.KIND, "h200")
    before = {p: p.read_text() for p in (paths.ROOT / "gs_course/backends/temporal_blocking.py",
                                         paths.ROOT / "gs_course/backends/jax_pallas.py")}
    found = {"cupy_best": {"blocking": dataclasses.asdict(dataclasses.replace(BLOCKING, depth=BLOCKING.halo - 1))},
             "pallas_best": {"block": [8, 256]}}
    said = tune.write_defaults_diff(found, tmp_path / "d.diff")
    assert "patch -p1" in said and {p: p.read_text() for p in before} == before
    copy = tmp_path / "tree"
    for path in before:
        (copy / path.relative_to(paths.ROOT)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(paths.ROOT)).write_text(path.read_text())
    subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "d.diff")], cwd=copy, check=True)
    blocking = (copy / "gs_course/backends/temporal_blocking.py").read_text()
    assert f"depth={BLOCKING.halo - 1}, threads=({BLOCKING.threads[0]}, {BLOCKING.threads[1]}))" in blocking
    assert "\nBLOCK = (8, 256)\n" in (copy / "gs_course/backends/jax_pallas.py").read_text()
    current = {"cupy_best": {"blocking": dataclasses.asdict(temporal_blocking.BLOCKING)},
               "pallas_best": {"block": list(jax_pallas.BLOCK)}}
    assert tune.defaults_diff(current) == "" and tune.defaults_diff({}) == ""
    assert sweep["cupy_best"]["blocking"]  # the kept sweep is a record the notebook reads


def test_the_sweep_needs_a_gpu_and_says_so(monkeypatch):
    if backends.probe("cupy").on_gpu:
        pytest.skip("a GPU here: the sweep runs")
    with pytest.raises(tune.TuneError, match="the cupy sweep needs cupy on a GPU"):
        tune.run(["cupy"], 10, None)


@pytest.mark.parametrize("args, said", [
    (["--budget", "0"], "--budget must be > 0 seconds"),
    (["--apply-best"], "--apply-best writes multistep-defaults.diff to --out FOLDER"),
    (["--out", "/no/such/folder"], "--out /no/such/folder: no such folder, nor /no/such: make it first"),
])
def test_tune_refuses_bad_options_in_one_line(args, said, capsys):
    assert main(["tune", *args]) == 2
    assert said in capsys.readouterr().err


def test_tune_without_a_gpu_is_one_line(capsys, tmp_path):
    if backends.probe("jax").on_gpu:
        pytest.skip("a GPU here: the sweep runs")
    assert main(["tune", "--only", "jax", "--out", str(tmp_path)]) == 2
    assert "the jax sweep needs jax on a GPU" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_saved_sweep_is_a_record(tmp_path, monkeypatch):
    monkeypatch.setattr(tune.backends, "probe", lambda name: backends.Probe(name, True, on_gpu=True))
    monkeypatch.setattr(tune, "measure_pallas", lambda block: row(float(block[0]), block=list(block)))
    found = tune.run(["jax"], 60, tmp_path, log=lambda line: None)
    saved = tune.load(tmp_path / "multistep-sweep.json")
    assert saved["pallas_best"] == found["pallas_best"] == row(8.0, block=[8, 128])
    assert json.loads((tmp_path / "multistep-sweep.json").read_text())["provenance"]["command"]
