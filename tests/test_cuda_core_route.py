"""The CuPy tutorial's cuda.core route (gs_course.lessons.cuda_core_route): the launch configuration, the
two import paths and the one-line reasons anywhere; on a GPU with cuda.core, the kernel compiled
and launched by cuda.core against the reference and against CuPy's RawKernel."""

import types

import numpy as np
import pytest

from gs_course import backends, model
from gs_course.lessons import cuda_core_route
from gs_course.parameters import Parameters


@pytest.mark.parametrize("rows, cols, block, grid", [
    (1080, 1920, (32, 8), (60, 135)),
    (77, 103, (32, 8), (4, 10)),
    (8, 32, (32, 8), (1, 1)),
    (9, 33, (32, 8), (2, 2)),
])
def test_the_grid_covers_the_cells_with_no_block_wholly_outside(rows, cols, block, grid):
    got_grid, got_block = cuda_core_route.launch_configuration(rows, cols, block)
    assert got_grid == grid and got_block == block
    for blocks, threads, cells in zip(got_grid, block, (cols, rows)):
        assert blocks * threads >= cells > (blocks - 1) * threads


def test_a_bad_block_is_refused_in_one_line():
    with pytest.raises(ValueError, match="two positive numbers"):
        cuda_core_route.launch_configuration(10, 10, (32, 0))


def _fake_module(name, names):
    module = types.ModuleType(name)
    for attribute in names:
        setattr(module, attribute, object())
    return module


@pytest.mark.parametrize("present, found", [
    ({"cuda.core": cuda_core_route.NAMES, "cuda.core.experimental": cuda_core_route.NAMES}, "cuda.core"),
    ({"cuda.core": ("Device",), "cuda.core.experimental": cuda_core_route.NAMES}, "cuda.core.experimental"),
    ({"cuda.core": ()}, None),
])
def test_cuda_core_is_found_under_either_import_path(monkeypatch, present, found):
    def import_module(name):
        if name not in present:
            raise ImportError(name)
        return _fake_module(name, present[name])

    monkeypatch.setattr(cuda_core_route.importlib, "import_module", import_module)
    core = cuda_core_route.import_cuda_core()
    assert (core.path if core else None) == found
    if core:
        assert all(hasattr(core, name) for name in cuda_core_route.NAMES)


def test_the_reason_is_one_line_naming_what_is_missing(monkeypatch):
    monkeypatch.setattr(backends, "probe", lambda name: backends.Probe(name, False, reason="no GPU found"))
    line = cuda_core_route.unavailable()
    assert line.startswith("not run here") and "NVIDIA GPU" in line and "no GPU found" in line and "\n" not in line
    monkeypatch.setattr(backends, "probe", lambda name: backends.Probe(name, True, device="a GPU"))
    monkeypatch.setattr(cuda_core_route, "import_cuda_core", lambda: None)
    line = cuda_core_route.unavailable()
    assert "cuda.core is not installed" in line and "pip install" in line and "\n" not in line
    monkeypatch.setattr(cuda_core_route, "import_cuda_core", lambda: types.SimpleNamespace(path="cuda.core"))
    assert cuda_core_route.unavailable() is None


def test_the_report_gives_both_routes_in_their_units():
    result = {"cuda_core_path": "cuda.core", "compile_s": {"cupy": 0.0021, "cuda.core": 0.25},
              "step_s": {"cupy": 12.5e-6, "cuda.core": 12.25e-6}, "max_difference": 0.0}
    text = cuda_core_route.report(result)
    assert "CuPy's RawKernel: compiled in      2.1 ms,   12.50 us a step" in text
    assert "cuda.core: compiled in    250.0 ms,   12.25 us a step" in text
    assert text.endswith("largest difference between their V: 0.0e+00")


REASON = cuda_core_route.unavailable()
on_gpu = pytest.mark.skipif(REASON is not None, reason=f"cuda.core route: {REASON}")


@pytest.mark.gpu
@on_gpu
def test_the_kernel_through_cuda_core_makes_the_reference_step():
    import cupy

    from gs_course.backends.cuda_source import GRAY_SCOTT_CU

    params = Parameters(feed=0.03, kill=0.06, dt=0.7)
    rng = np.random.default_rng(0)
    u, v = (rng.random((67, 131), dtype=np.float32) for _ in range(2))
    kernel = cuda_core_route.CudaCoreKernel(GRAY_SCOTT_CU, "gray_scott_step", (32, 8))
    stream = cupy.cuda.Stream(non_blocking=False)
    with stream:
        inputs = [cupy.asarray(a) for a in (u, v)]
        outputs = [cupy.full_like(a, np.nan) for a in inputs]
        kernel.launch(stream, *inputs, *outputs, params)
        got = [a.get() for a in outputs]
    for got_field, want in zip(got, model.reference_step(u, v, params)):
        np.testing.assert_allclose(got_field, want, atol=1e-6)
    assert kernel.compile_s > 0


@pytest.mark.gpu
@on_gpu
def test_both_routes_run_the_same_kernel_to_the_same_state_and_are_timed():
    from gs_course.backends.cuda_source import GRAY_SCOTT_CU

    result = cuda_core_route.compare(GRAY_SCOTT_CU, "gray_scott_step", Parameters(), 135, 240, steps=8, repeats=3)
    assert result["max_difference"] < 1e-6
    assert all(seconds > 0 for seconds in result["step_s"].values())
    assert all(seconds > 0 for seconds in result["compile_s"].values())
    assert result["cuda_core_path"] in cuda_core_route.IMPORT_PATHS
