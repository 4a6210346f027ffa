"""Every backend and formulation against the float64 reference, on odd non-square grids, dt != 1.

The tolerance is gs_course.model.PARITY_ATOL (2e-5, justified there); the tests below keep its
justification true: float32 rounding stays ten times inside it, wrong models land far outside.
"""

import dataclasses
import functools
import subprocess
import sys

import numpy as np
import pytest

from gs_course import backends
from gs_course.model import PARITY_ATOL, initial_state, laplacian, reference_run, reference_step
from gs_course.parameters import Parameters

ATOL = PARITY_ATOL
STEPS = 300
PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)
GRIDS = [(37, 53), (61, 24)]


@pytest.fixture(scope="module")
def reference():
    return {grid: reference_run(*grid, STEPS, PARAMS) for grid in GRIDS}


def test_the_pattern_has_spread(reference):
    """The test grids are not trivially close to the initial state: V has grown over much of them."""
    for _, v in reference.values():
        assert (v > 0.01).mean() > 0.25


def test_float32_rounding_is_well_inside_the_tolerance(reference):
    for grid, (u, v) in reference.items():
        u32, v32 = reference_run(*grid, STEPS, PARAMS, np.float32)
        assert max(np.abs(u32 - u).max(), np.abs(v32 - v).max()) < ATOL / 10


def _prototype_dt_bug(u, v, p):
    """The course prototype's vmap version: dt applied to the feed term only."""
    uvv = u * v * v
    return (u + p.du * laplacian(u) - uvv + p.dt * p.feed * (1 - u),
            v + p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v)


def _wrapped_boundary(u, v, p):
    """Periodic neighbours instead of left-out ones."""
    def lap(a):
        return sum(np.roll(a, (i, j), (0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1)) - 9 * a
    uvv = u * v * v
    return (u + p.dt * (p.du * lap(u) - uvv + p.feed * (1 - u)),
            v + p.dt * (p.dv * lap(v) + uvv - (p.feed + p.kill) * v))


@pytest.mark.parametrize("wrong_step", [_prototype_dt_bug, _wrapped_boundary])
def test_a_wrong_model_is_far_outside_the_tolerance(reference, wrong_step):
    grid = GRIDS[0]
    u, v = initial_state(*grid, np.float64)
    for _ in range(STEPS):
        u, v = wrong_step(u, v, PARAMS)
    assert np.abs(v - reference[grid][1]).max() > 1e4 * ATOL or np.abs(u - reference[grid][0]).max() > 1e4 * ATOL


@pytest.mark.parametrize("grid", GRIDS)
def test_formulation_matches_the_reference(case, reference, grid):
    sim = backends.create(*case[:1], PARAMS, *grid, formulation=case[1])
    sim.advance(STEPS)
    u, v = sim.fetch()
    assert isinstance(u, np.ndarray) and u.dtype == v.dtype == np.float32 and u.shape == v.shape == grid
    ref_u, ref_v = reference[grid]
    np.testing.assert_allclose(u, ref_u, rtol=0, atol=ATOL)
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=ATOL)
    assert sim.steps_done == STEPS


def test_formulation_advances_the_same_in_pieces(case, reference):
    grid = GRIDS[0]
    sim = backends.create(case[0], PARAMS, *grid, formulation=case[1])
    for steps in (1, 0, 99, 200):
        sim.advance(steps)
    sim.synchronize()
    np.testing.assert_allclose(sim.fetch_v(), reference[grid][1], rtol=0, atol=ATOL)


def test_formulation_first_step_is_the_reference_step(case):
    sim = backends.create(case[0], PARAMS, 20, 17, formulation=case[1])
    sim.advance(1)
    expected = reference_step(*initial_state(20, 17, np.float64), PARAMS)
    for got, want in zip(sim.fetch(), expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_formulation_state_is_apart_from_the_callers_arrays(case):
    """set_state takes a copy and fetch gives one: an array attached to the caller's buffer (as
    `cupynumeric.asarray` or `torch.as_tensor` of NumPy's makes it) would see the caller's later
    writes, and write its updates through to the caller (for Legate, at every step)."""
    rows, cols = 19, 23
    sim = backends.create(case[0], PARAMS, rows, cols, formulation=case[1])
    u, v = (a.astype(np.float32) for a in initial_state(rows, cols))
    given = u.copy(), v.copy()
    sim.set_state(u, v)
    u[...], v[...] = 0.5, 0.25
    for got, want in zip(sim.fetch(), given):
        np.testing.assert_array_equal(got, want)
    sim.advance(3)
    fetched = sim.fetch()
    before = tuple(a.copy() for a in fetched)
    sim.advance(3)
    sim.synchronize()
    assert (u == 0.5).all() and (v == 0.25).all(), "the caller's arrays were written to"
    for got, want in zip(fetched, before):
        np.testing.assert_array_equal(got, want, err_msg="a fetched array kept changing with the state")
    assert not np.array_equal(sim.fetch_v(), before[1]), "the state did advance"


def test_unknown_backend_lists_the_backends():
    with pytest.raises(backends.BackendError, match=r"unknown backend 'numba'; the backends are numpy, jax, cupynumeric, cupy, torch; working here: numpy"):
        backends.create("numba", PARAMS, 20, 20)


def test_unknown_formulation_lists_the_formulations():
    with pytest.raises(backends.BackendError, match="backend jax has no formulation 'magic'; it has conv, slices, unrolled, stacked"):
        backends.create("jax", PARAMS, 20, 20, "magic")


def test_negative_steps_are_refused():
    with pytest.raises(ValueError, match="steps must be >= 0"):
        backends.create("numpy", PARAMS, 20, 20).advance(-1)


def test_a_grid_too_large_names_the_largest_that_fits(backend):
    free, _ = backends.free_memory(backend)
    simulation = backends.formulation_class(backend)
    rows = cols = int((2 * free / simulation.bytes_needed(1, 1)) ** 0.5)
    with pytest.raises(backends.BackendError, match=r"needs about .* free; the largest grid of this shape that fits is -r (\d+) -c (\d+)") as caught:
        backends.create(backend, PARAMS, rows, cols)
    fit_rows, fit_cols = map(int, caught.value.args[0].split("-r ")[1].split(" -c "))
    assert simulation.bytes_needed(fit_rows, fit_cols) <= free < simulation.bytes_needed(fit_rows + 2, fit_cols + 2)


#: Fake probes: "gpu" runs on a GPU, "cpu" runs on the CPU only, absent does not run.
@pytest.mark.parametrize("gpu_here, running, expected", [
    (True, {"cupy": "gpu", "jax": "gpu", "cupynumeric": "gpu", "numpy": "cpu"}, "cupy"),
    (True, {"jax": "gpu", "cupynumeric": "gpu", "numpy": "cpu"}, "jax"),
    (True, {"jax": "cpu", "cupynumeric": "gpu", "numpy": "cpu"}, "cupynumeric"),
    (True, {"jax": "cpu", "cupynumeric": "cpu", "torch": "gpu", "numpy": "cpu"}, "jax"),
    (False, {"cupy": "gpu", "jax": "cpu", "numpy": "cpu"}, "jax"),
    (False, {"cupynumeric": "cpu", "numpy": "cpu"}, "numpy"),
], ids=["all-on-gpu", "no-cupy", "jax-on-cpu", "no-gpu-library", "no-gpu", "no-jax"])
def test_default_backend_is_the_first_of_the_preference_that_runs(monkeypatch, gpu_here, running, expected):
    """The fastest GPU library that runs on the GPU, else JAX, else NumPy: probes and GPUs faked."""
    monkeypatch.setattr(backends, "gpus", lambda: ("a GPU",) if gpu_here else ())
    monkeypatch.setattr(backends, "probe", lambda name: backends.Probe(
        name, name in running, on_gpu=running.get(name) == "gpu", reason=None if name in running else "faked"))
    assert backends.default_backend() == expected


def test_no_backend_running_is_one_line(monkeypatch):
    monkeypatch.setattr(backends, "gpus", lambda: ())
    monkeypatch.setattr(backends, "probe", lambda name: backends.Probe(name, False, reason="faked"))
    with pytest.raises(backends.BackendError, match="^no backend runs here: install numpy$"):
        backends.default_backend()


@functools.cache
def _school_grid_reference():
    """200 steps on the full 1080 x 1920 grid, in float64 (about a minute on one CPU core)."""
    return reference_run(1080, 1920, 200, Parameters(dt=0.9))


@pytest.mark.gpu
def test_gpu_formulation_matches_the_reference_on_the_school_grid(case):
    if not backends.probe(case[0]).on_gpu:
        pytest.skip("no GPU (the full grid is checked on GPUs only)")
    sim = backends.create(case[0], Parameters(dt=0.9), 1080, 1920, formulation=case[1])
    sim.advance(200)
    u, v = sim.fetch()
    ref_u, ref_v = _school_grid_reference()
    np.testing.assert_allclose(v, ref_v, rtol=0, atol=ATOL)
    np.testing.assert_allclose(u, ref_u, rtol=0, atol=ATOL)


def test_h5py_still_works_after_loading_cupynumeric(tmp_path):
    """Legate brings its own HDF5; loading it before h5py broke h5py's import ('Not a datatype')."""
    if not backends.probe("cupynumeric").ok:
        pytest.skip(f"cupynumeric not available: {backends.probe('cupynumeric').reason}")
    code = ("from gs_course.backends import load; load('cupynumeric'); import h5py; "
            f"h5py.File({str(tmp_path / 'x.h5')!r}, 'w').create_dataset('m', data=[1.0]); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


@pytest.mark.parametrize("shape", [(32, 8, 4), (64, 2, 16), (16, 4, 3)], ids=lambda s: "x".join(map(str, s)))
def test_cupy_strip_shapes_match_the_reference(reference, shape):
    """Any block shape and strip length, including strips cut short by the grid's last row."""
    if not backends.probe("cupy").ok:
        pytest.skip(f"no GPU: {backends.probe('cupy').reason}")
    from gs_course.backends import cupy_backend

    for grid in GRIDS:
        sim = cupy_backend.CupyStrip(PARAMS, *grid, cupy_backend.Strips(*shape))
        for steps in (5, 0, 1, 294):
            sim.advance(steps)
        for got, want in zip(sim.fetch(), reference[grid]):
            np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


def test_cupy_strip_shapes_are_validated():
    cupy_backend = pytest.importorskip("gs_course.backends.cupy_backend", reason="CuPy is not installed")
    with pytest.raises(ValueError, match="1 to 1024 threads"):
        cupy_backend.Strips(64, 32, 1)
    with pytest.raises(ValueError, match="at least one row"):
        cupy_backend.Strips(32, 4, 0)


def test_jax_to_host_through_pinned_memory_gives_the_same_array():
    """The path JAX's fetch_v takes on a GPU, checked wherever JAX runs (its CPU has pinned memory too)."""
    import jax.numpy as jnp

    from gs_course.backends.jax_backend import to_host

    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)[1:]
    for pinned in (False, True):
        host = to_host(x, pinned=pinned)
        assert isinstance(host, np.ndarray) and host.dtype == np.float32
        np.testing.assert_array_equal(host, np.arange(4, 12, dtype=np.float32).reshape(2, 4))


def test_a_formulation_declares_its_options_and_create_checks_them():
    """Options are a frozen dataclass a formulation; create refuses an unknown name or a bad value
    in one line that names the options, and takes a JSON list where a tuple is wanted."""
    with pytest.raises(backends.BackendError, match=r"^jax/pallas has no option 'blocks'; its options: block=\(16, 64\)$"):
        backends.create("jax", PARAMS, 24, 40, "pallas", blocks=(8, 8))
    with pytest.raises(backends.BackendError, match=r"^numpy/slices has no option 'depth'; it has none$"):
        backends.create("numpy", PARAMS, 24, 40, "slices", depth=3)
    with pytest.raises(backends.BackendError, match=r"block must be two integers >= 1"):
        backends.create("jax", PARAMS, 24, 40, "pallas", block=[0, 8])
    with pytest.raises(backends.BackendError, match=r"^ghost rows: depth 0 is not a row count"):
        backends.create("jax", PARAMS, 24, 40, "sharded-deep", depth=0)
    sim = backends.create("jax", PARAMS, 24, 40, "pallas", block=[8, 16])
    assert sim.block == (8, 16)
    listed = backends.formulations("jax")
    assert listed["pallas"] == "block=(16, 64)" and listed["sharded-deep"] == "depth=32" and listed["slices"] == ""
    assert set(listed) == set(backends.load("jax").FORMULATIONS) >= {"stacked", "sharded", "sharded-auto"}


def test_options_given_change_only_those_fields_of_the_formulations_default():
    """multistep's default is the measured best (temporal_blocking.BLOCKING), not Blocking()'s
    field defaults: one option given keeps the rest of it, and doctor lists it."""
    from gs_course.backends import temporal_blocking
    from gs_course.backends.base import Simulation

    class Tuned(Simulation):
        backend, formulation, Options = "test", "tuned", temporal_blocking.Blocking

        def __init__(self, params, rows, cols, options=temporal_blocking.BLOCKING):
            super().__init__(params, rows, cols)

    best = temporal_blocking.BLOCKING
    assert Tuned.options({"depth": 2}) == dataclasses.replace(best, depth=2)
    assert f"tile_rows={best.tile_rows}" in Tuned.describe_options() and f"threads={best.threads!r}" in Tuned.describe_options()
