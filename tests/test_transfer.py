"""The PCIe toll: tables and figures from the recorded H200 JSON on any machine; real
measurements, ordered as physics says, where there is a GPU."""

import json

import pytest

from gs_course import backends
from gs_course.measurement import transfer
from gs_course.cli import main
from gs_course import paths


@pytest.fixture(scope="module")
def recorded():
    return transfer.recorded()


def _assert_physics(results, largest):
    """Pinned beats pageable on large copies, the GPU's own memory beats the link by far, the
    overlapped pipeline beats the serial one: checked on the recorded H200 file, whose figures do
    not change; a live GPU's depend on the machine and its load, so its test checks no speed."""
    for direction in transfer.DIRECTIONS:
        pageable = dict(transfer.bandwidth(results, direction, "pageable"))
        pinned = dict(transfer.bandwidth(results, direction, "pinned"))
        assert all(gbps > 0 for gbps in [*pageable.values(), *pinned.values()])
        assert pinned[largest] >= pageable[largest], direction
    best_link = max(c["bytes"] / c["median_s"] / 1e9 for c in results["copies"])
    assert transfer.device_bandwidth(results) > 10 * best_link
    pipeline = results["pipeline"]
    assert pipeline["overlapped"]["median_s"] < 0.9 * pipeline["serial"]["median_s"]
    assert 0 < results["latency"]["host_to_device"]["median_s"] < 1e-3
    assert results["async_call"]["pinned"]["median_s"] < results["async_call"]["pageable"]["median_s"]


def test_recorded_measurements_are_the_course_h200s_and_obey_physics(recorded):
    assert recorded["kind"] == "transfer" and recorded["schema"] == transfer.SCHEMA
    assert "H200" in recorded["provenance"]["gpu"] and recorded["provenance"]["date"].startswith("2026-")
    assert {(c["direction"], c["memory"]) for c in recorded["copies"]} == {
        (d, m) for d in transfer.DIRECTIONS for m in transfer.MEMORIES}
    _assert_physics(recorded, max(transfer.SIZES))


def test_table_shows_every_size_and_the_lessons(recorded):
    text = transfer.table(recorded)
    for size in ("4 KiB", "1 MiB", "1 GiB"):
        assert f"\n{size:>9}" in text
    one_gib_pinned_h2d = dict(transfer.bandwidth(recorded, "host_to_device", "pinned"))[transfer.GIB]
    assert f"{one_gib_pinned_h2d:.2f}" in text
    assert recorded["provenance"]["gpu"] in text and recorded["provenance"]["date"] in text
    assert "latency of a 4-byte copy" in text and "device -> device copy" in text
    assert "three streams" in text and "32,000 steps: every step" in text


def test_readback_every_step_costs_32000_frames(recorded):
    cost = transfer.readback_cost(recorded)
    frame = recorded["frame"]["device_to_host"]
    assert cost["every_step_pageable_s"] == pytest.approx(32_000 * frame["pageable"]["median_s"])
    assert cost["every_step_pinned_s"] < cost["every_step_pageable_s"]
    assert cost["once_s"] == frame["pageable"]["median_s"]
    bytes_of_the_steps = 32_000 * 4 * 4 * 1080 * 1920  # U and V read and written, float32, every step
    assert cost["memory_floor_of_the_steps_s"] == pytest.approx(
        bytes_of_the_steps / (transfer.device_bandwidth(recorded) * 1e9))


def test_figure_draws_bandwidth_on_log_axes_and_the_pipeline_timeline(recorded, tmp_path):
    fig = transfer.figure(recorded, "recorded")
    left, right = fig.axes[:2]
    assert left.get_xscale() == left.get_yscale() == "log"
    assert len(left.get_lines()) == 5  # four kinds of copy and the device's own bandwidth
    streams = {span["stream"] for span in recorded["pipeline"]["overlapped"]["timeline"]}
    assert len(right.collections) == 1 + len(streams)  # one row of bars per stream
    assert "(recorded)" in fig.get_suptitle()
    fig.savefig(tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 10_000


def test_load_refuses_other_json(tmp_path, recorded):
    (tmp_path / "good.json").write_text(json.dumps(recorded))
    assert transfer.load(tmp_path / "good.json") == recorded
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a gs-course transfer result"):
        transfer.load(tmp_path / "bad.json")


def test_the_packaged_figures_are_the_current_result_file():
    """Students without a GPU see results/h200/transfer.json itself, not a copy that can drift."""
    from importlib import resources


    packaged = resources.files("gs_course").joinpath("data", transfer.RECORDED).read_text()
    assert packaged == (paths.ROOT / "results" / "h200" / "transfer.json").read_text()


def test_without_a_gpu_the_command_says_so_shows_the_recorded_figures_and_writes_nothing(tmp_path, capsys,
                                                                                          monkeypatch):
    if backends.probe("cupy").ok:
        pytest.skip("a GPU is here: the command measures instead")
    monkeypatch.chdir(tmp_path)
    assert main(["transfer", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no GPU to measure: ") and "Nothing was measured here." in out
    assert "The course's GPU recorded (NVIDIA H200" in out and "Copies between host and GPU" in out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args, message", [(["--max-size", "0"], "--max-size must be at least 1 MiB"),
                                           (["--out", "/no/such/folder"], "--out /no/such/folder: no such folder, nor /no/such: make it first")])
def test_transfer_bad_input(args, message, capsys):
    assert main(["transfer", *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.gpu
def test_measurements_on_this_gpu_are_complete_and_ordered(tmp_path):
    """Every size, direction and kind of memory copied, each with its repeats; the serial pipeline
    on one stream, the overlapped one on three, each chunk's copy in, kernel and copy out in turn
    on its stream (CUDA's order within a stream: true on any GPU, however fast)."""
    if not backends.probe("cupy").ok:
        pytest.skip("no GPU")
    results = transfer.run(64 * transfer.MIB, pipeline_chunks=6, pipeline_chunk_bytes=8 * transfer.MIB)
    sizes = [size for size in transfer.SIZES if size <= 64 * transfer.MIB]
    assert sorted((c["direction"], c["memory"], c["bytes"]) for c in results["copies"]) == sorted(
        (d, m, size) for d in transfer.DIRECTIONS for m in transfer.MEMORIES for size in sizes)
    assert all(c["repeats"] == len(c["samples_s"]) and 0 < c["min_s"] <= c["median_s"] <= c["max_s"]
               for c in results["copies"])
    for name, streams in (("serial", {0}), ("overlapped", {0, 1, 2})):
        timeline = results["pipeline"][name]["timeline"]
        assert {span["stream"] for span in timeline} == streams, name
        for chunk in range(6):
            spans = [span for span in timeline if span["chunk"] == chunk]
            assert [span["stage"] for span in spans] == ["copy in", "kernel", "copy out"]
            assert all(a["end_ms"] <= b["start_ms"] for a, b in zip(spans, spans[1:])), (name, chunk)
    transfer.save(results, tmp_path / "t.json")
    assert transfer.load(tmp_path / "t.json")["provenance"]["gpu"] == results["provenance"]["gpu"]
