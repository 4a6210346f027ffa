"""The measurement layer: samples and their statistics, result files that refuse to be read as
another kind, provenance, and the grids defined once."""

import json
import time

import pytest

from gs_course import measure


def test_timed_stops_the_clock_after_synchronize_and_keeps_the_warm_up_apart():
    calls = []
    samples = measure.timed(lambda: calls.append("fn"), repeats=3, warmup=2,
                            synchronize=lambda: (calls.append("sync"), time.sleep(0.02)))
    assert calls == ["fn", "sync"] * 5
    assert len(samples.seconds) == 3 and all(s >= 0.02 for s in samples.seconds)
    assert samples.compile_s >= 0.04  # both warm-up calls, waited for
    assert samples.min <= samples.median <= samples.max


def test_samples_statistics_and_their_round_trip():
    samples = measure.Samples.of([0.30, 0.25, 0.27, 0.28], compile_s=1.5)
    assert samples.median == pytest.approx(0.275) and samples.min == 0.25 and samples.max == 0.30
    assert samples.spread == pytest.approx(0.05 / 0.275)
    stored = json.loads(json.dumps(samples.as_dict()))
    assert measure.Samples.from_dict(stored) == samples and stored["repeats"] == 4
    assert samples.scaled(10).median == pytest.approx(2.75) and samples.scaled(10).compile_s == 1.5
    assert str(samples) == "275 ms (250-300)"
    assert measure.format_range(8.5e-6, 8.4e-6, 8.9e-6) == "8.5 us (8.4-8.9)"
    assert measure.format_range(2.7, None, None) == measure.format_range(2.7, 2.7, 2.7) == "2.7 s", \
        "no range: one repeat, or a file that kept none"
    with pytest.raises(ValueError):
        measure.Samples.of([])
    with pytest.raises(ValueError):
        measure.timed(lambda: None, repeats=0)


def test_a_result_file_is_read_back_only_as_its_own_kind_and_schema(tmp_path):
    prov = measure.provenance(command="gs-course bench")
    path = measure.write("bench", {"cases": [1, 2]}, tmp_path / "sub" / "bench.json", schema=2, prov=prov)
    record = measure.load(path, "bench", schema=2)
    assert record["cases"] == [1, 2] and record["kind"] == "bench" and record["provenance"] == prov
    with pytest.raises(measure.ResultError, match=r"is a gs-course bench result, not a transfer result$"):
        measure.load(path, "transfer", schema=2)
    with pytest.raises(measure.ResultError, match="of schema 2; this gs-course reads schema 3"):
        measure.load(path, "bench", schema=3)
    (tmp_path / "old.json").write_text(json.dumps({"schema": 1, "cases": []}))
    with pytest.raises(measure.ResultError, match="names no kind"):
        measure.load(tmp_path / "old.json", "bench")
    (tmp_path / "junk.json").write_text("<html>")
    with pytest.raises(measure.ResultError, match="not JSON"):
        measure.load(tmp_path / "junk.json", "bench")
    with pytest.raises(ValueError, match="may not set kind"):
        measure.write("bench", {"kind": "x"}, tmp_path / "x.json")


def test_provenance_names_commit_machine_libraries_and_command(monkeypatch):
    monkeypatch.setenv("COMMIT", "abc1234")
    prov = measure.provenance(command="gs-course transfer --out results/h200")
    assert prov["commit"] == "abc1234" and prov["command"] == "gs-course transfer --out results/h200"
    assert "numpy" in prov["libraries"] and prov["python"] and prov["date"].endswith("UTC")
    text = measure.header(prov, "Instructor check")
    assert text.startswith("# Instructor check") and "abc1234" in text and "`gs-course transfer" in text
    monkeypatch.delenv("COMMIT")
    assert measure.commit() is None or len(measure.commit().split("+")[0]) == 7


def test_machine_names_for_results_folders():
    assert measure.machine_name("NVIDIA H200") == "h200"
    assert measure.machine_name("NVIDIA GeForce GTX 1650") == "gtx-1650"
    assert measure.machine_name(None) == "cpu"
    assert measure.results_dir("NVIDIA H200").parts[-2:] == ("results", "h200")


def test_the_grids_are_one_ladder_of_the_school_workload():
    assert (measure.FULL.rows, measure.FULL.cols, measure.FULL.steps) == (1080, 1920, 32_000)
    assert measure.FULL.bytes_moved_per_step == 4 * 4 * 1080 * 1920
    cells = [w.rows * w.cols for w in measure.GRIDS]
    assert cells == sorted(cells, reverse=True) and measure.GRIDS[-1] is measure.SMALL
    assert all(w.rows / w.cols == 1080 / 1920 for w in measure.GRIDS)
    assert measure.grid("Half") is measure.HALF
    with pytest.raises(ValueError, match="choose one of full, half, quarter, small"):
        measure.grid("huge")
    assert measure.FULL.same_run({"rows": 1080, "cols": 1920, "images": 1000, "steps_per_image": 32})
