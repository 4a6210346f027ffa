"""gs_course.measurement.memory_kinds: the four kinds of host memory, each seen from both sides and moved by
its own means; the timings' table. The GPU tests run where CuPy finds an NVIDIA GPU."""

import ctypes
import gc
import json
import weakref

import numpy as np
import pytest

from gs_course import backends
from gs_course.measurement import memory_kinds
from gs_course.measurement.transfer import MIB, NoGPU
from gs_course.measurement import records
from gs_course.measurement import timer

CUPY = backends.probe("cupy")


def test_an_unknown_kind_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown memory kind 'paged': one of pageable, pinned, managed, mapped"):
        memory_kinds.allocate("paged", (4,))


def test_a_host_view_keeps_the_memory_it_shows_allocated():
    """Managed and mapped memory are freed by their owner: a NumPy view that outlives the Buffer
    must hold on to it, or it would show freed memory."""

    class Owner:
        def __init__(self):
            self.memory = (ctypes.c_float * 4)(1, 2, 3, 4)

    owner = Owner()
    view = memory_kinds._host_view(ctypes.addressof(owner.memory), (2, 2), np.float32, owner)
    alive = weakref.ref(owner)
    del owner
    gc.collect()
    assert alive() is not None and view.tolist() == [[1, 2], [3, 4]]
    del view
    gc.collect()
    assert alive() is None


def test_measuring_without_a_gpu_says_so():
    if CUPY.ok:
        pytest.skip("a GPU is here")
    with pytest.raises(NoGPU, match="no GPU to measure"):
        memory_kinds.measure()


def _results(seconds: dict) -> dict:
    rows = [{"label": label, "kind": kind,
             **{key: timer.Samples.of([s, 2 * s]).as_dict() for key, s in zip(memory_kinds.KEYS, seconds[label])}}
            for label, kind, _ in memory_kinds.ROWS]
    provenance = {**records.provenance(), "gpu": "Some GPU", "driver": "1.2", "commit": "abc1234",
                  "date": "2026-11-30 10:00 UTC"}
    return {"provenance": provenance, "bytes": 64 * MIB, "repeats": 2, "rows": rows}


def test_table_gives_milliseconds_and_bandwidth_for_each_row_and_column(tmp_path):
    # medians of (s, 2 s): 1.5 s
    seconds = {label: (0.01 * (i + 1), 0.001, 0.02) for i, (label, _, _) in enumerate(memory_kinds.ROWS)}
    text = memory_kinds.table(_results(seconds))
    lines = text.splitlines()
    assert lines[0].startswith("64 MiB of float32")
    assert "median of 2; Some GPU (driver 1.2), commit abc1234, 2026-11-30 10:00 UTC" in lines[0]
    assert all(column in lines[1] for column in memory_kinds.COLUMNS)
    assert len(lines) == 2 + len(memory_kinds.ROWS)
    pinned = next(line for line in lines if line.startswith("pinned "))
    # 64 MiB in 30 ms is 2.2 GB/s; in 1.5 ms, 44.7 GB/s
    assert pinned.split()[1:] == ["30.00", "ms", "2.2", "GB/s", "1.50", "ms", "44.7", "GB/s", "30.00", "ms", "2.2", "GB/s"]
    path = memory_kinds.save(_results(seconds), tmp_path / "kinds.json")
    again = memory_kinds.load(path)
    assert again["kind"] == "memory-kinds" and memory_kinds.table(again) == text
    path.write_text(json.dumps({"kind": "transfer", "schema": 1}))
    with pytest.raises(records.ResultError, match="not a memory-kinds result"):
        memory_kinds.load(path)


@pytest.mark.parametrize("kind", memory_kinds.KINDS)
@pytest.mark.gpu
@pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")
def test_each_kind_moves_values_both_ways(kind):
    import cupy

    buffer = memory_kinds.allocate(kind, (37, 53))
    assert buffer.host.shape == buffer.device.shape == (37, 53)
    assert buffer.host.dtype == buffer.device.dtype == np.float32
    want = np.random.default_rng(0).random((37, 53), dtype=np.float32)
    buffer.host[...] = want
    buffer.to_device()
    # Read by a kernel (into device memory), as kernels use it; only then copied to the host.
    assert np.array_equal(cupy.asnumpy(buffer.device + 0), want)
    buffer.device *= 2
    buffer.to_host()
    assert np.array_equal(buffer.host, 2 * want)


@pytest.mark.gpu
@pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")
def test_managed_and_mapped_share_one_memory_pageable_and_pinned_do_not():
    import cupy

    runtime = cupy.cuda.runtime
    for kind in memory_kinds.KINDS:
        buffer = memory_kinds.allocate(kind, (1000,))
        buffer.host.fill(1)
        buffer.device.fill(2)
        cupy.cuda.get_current_stream().synchronize()
        assert buffer.shared == (kind in ("managed", "mapped"))
        assert buffer.host[0] == (2 if buffer.shared else 1), f"{kind}: the host sees the kernel's write"
    # The buffers are held while their pointers are asked about: a Buffer made and dropped within
    # the call is freed before the driver answers (managed and mapped memory then read as
    # unregistered, 0, as the H200 showed; pinned memory stays registered in CuPy's pool).
    buffers = {kind: memory_kinds.allocate(kind, (8,)) for kind in ("pinned", "managed", "mapped")}
    memory_type = {kind: runtime.pointerGetAttributes(buffer.host.ctypes.data).type for kind, buffer in buffers.items()}
    assert memory_type == {"pinned": runtime.memoryTypeHost, "managed": runtime.memoryTypeManaged,
                           "mapped": runtime.memoryTypeHost}


@pytest.mark.gpu
@pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")
def test_measure_times_every_row_and_the_table_prints_them():
    results = memory_kinds.measure(nbytes=64 * MIB, repeats=2)
    assert [row["label"] for row in results["rows"]] == [label for label, _, _ in memory_kinds.ROWS]
    median = {(row["label"], key): row[key]["median_s"] for row in results["rows"] for key in memory_kinds.KEYS}
    assert all(seconds > 0 for seconds in median.values())
    assert memory_kinds.table(results).count(" GB/s") == 3 * len(memory_kinds.ROWS)
