"""Result records: files that refuse to be read as another kind, provenance that names the commit
measured, the record of a machine found by kind; and the grids defined once."""

import json
import subprocess

import pytest
from gs_course.measurement import records
from gs_course import paths, workload


def test_a_result_file_is_read_back_only_as_its_own_kind_and_schema(tmp_path):
    prov = records.provenance(command="gs-course bench")
    path = records.write("bench", {"cases": [1, 2]}, tmp_path / "sub" / "bench.json", schema=2, prov=prov)
    record = records.load(path, "bench", schema=2)
    assert record["cases"] == [1, 2] and record["kind"] == "bench" and record["provenance"] == prov
    with pytest.raises(records.ResultError, match=r"is a gs-course bench result, not a transfer result$"):
        records.load(path, "transfer", schema=2)
    with pytest.raises(records.ResultError, match="of schema 2; this gs-course reads schema 3"):
        records.load(path, "bench", schema=3)
    (tmp_path / "old.json").write_text(json.dumps({"schema": 1, "cases": []}))
    with pytest.raises(records.ResultError, match="names no kind"):
        records.load(tmp_path / "old.json", "bench")
    (tmp_path / "junk.json").write_text("<html>")
    with pytest.raises(records.ResultError, match="not JSON"):
        records.load(tmp_path / "junk.json", "bench")
    with pytest.raises(ValueError, match="may not set kind"):
        records.write("bench", {"kind": "x"}, tmp_path / "x.json")


def test_provenance_names_commit_machine_libraries_and_command(monkeypatch):
    monkeypatch.setenv("COMMIT", "abc1234")
    prov = records.provenance(command="gs-course transfer --out results/h200")
    assert prov["commit"] == "abc1234" and prov["command"] == "gs-course transfer --out results/h200"
    assert "numpy" in prov["libraries"] and prov["python"] and prov["date"].endswith("UTC")
    text = records.header(prov, "Instructor check")
    assert text.startswith("# Instructor check") and "abc1234" in text and "`gs-course transfer" in text
    monkeypatch.delenv("COMMIT")
    head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=paths.ROOT, capture_output=True, text=True)
    if head.returncode:
        pytest.skip("not a git clone: no commit to compare")
    assert records.commit().split("+")[0] == head.stdout.strip()


@pytest.mark.parametrize("head, status, expected", [
    ("abc1234", "", "abc1234"),
    ("abc1234", " M gs_course/model.py", "abc1234+changes"),
    (None, None, None),
], ids=["clean", "changed", "no-git"])
def test_the_commit_says_when_the_code_differs_from_it(monkeypatch, head, status, expected):
    """git faked: HEAD, '+changes' where gs_course/ or tools/ differ from it, None outside a clone."""
    monkeypatch.delenv("COMMIT", raising=False)
    answers = {"rev-parse": head, "status": status}
    monkeypatch.setattr(records, "_git", lambda *args: answers[args[0]])
    assert records.commit() == expected


def test_machine_names_for_results_folders():
    assert records.machine_name("NVIDIA H200") == "h200"
    assert records.machine_name("NVIDIA GeForce GTX 1650") == "gtx-1650"
    assert records.machine_name(None) == "cpu"
    assert records.results_dir("NVIDIA H200").parts[-2:] == ("results", "h200")


def test_the_grids_are_one_ladder_of_the_school_workload():
    assert (workload.FULL.rows, workload.FULL.cols, workload.FULL.steps) == (1080, 1920, 32_000)
    assert workload.FULL.bytes_moved_per_step == 4 * 4 * 1080 * 1920
    cells = [w.rows * w.cols for w in workload.GRIDS]
    assert cells == sorted(cells, reverse=True) and workload.GRIDS[-1] is workload.SMALL
    assert all(w.rows / w.cols == 1080 / 1920 for w in workload.GRIDS)
    assert workload.grid("Half") is workload.HALF
    with pytest.raises(ValueError, match="choose one of full, half, quarter, small"):
        workload.grid("huge")
    assert workload.FULL.same_run({"rows": 1080, "cols": 1920, "images": 1000, "steps_per_image": 32})


def test_recorded_finds_the_record_of_a_kind_for_a_machine(tmp_path):
    records.write("transfer", {"x": 1}, tmp_path / "h200" / "transfer.json", schema=2)
    records.write("bench", {"cases": []}, tmp_path / "h200" / "bench-quick.json", schema=2)
    assert records.recorded("transfer", "h200", schema=2, root=tmp_path)["x"] == 1
    assert records.recorded("bench", "h200", "bench-quick", schema=2, root=tmp_path)["kind"] == "bench"
    with pytest.raises(records.ResultError, match="cannot read"):
        records.recorded("bench", "a100", schema=2, root=tmp_path)
    assert records.recorded("transfer", "h200", schema=2)["provenance"]["gpu"] == "NVIDIA H200", \
        "the course's own record, from results/"
