import dataclasses
import math
import warnings

import numpy as np
import pytest

from gs_course.model import laplacian
from gs_course.parameters import PRESETS, Parameters, UnstableTimeStepWarning, preset, stencil_spectral_radius


def test_defaults_are_the_schools():
    p = Parameters()
    assert (p.du, p.dv, p.feed, p.kill, p.dt) == (0.1, 0.05, 0.014, 0.054, 1.0)


def test_parameters_are_immutable_and_hashable():
    p = Parameters()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.dt = 2.0
    assert hash(p) == hash(Parameters()) and p.replace(dt=0.5) != p


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"dt": 0}, "dt must be > 0"),
        ({"dt": -1}, "dt must be > 0"),
        ({"feed": -0.1}, "feed must be >= 0"),
        ({"kill": math.nan}, "kill must be finite"),
        ({"du": math.inf}, "du must be finite"),
        ({"dv": "0.05"}, "dv must be a number"),
        ({"feed": True}, "feed must be a number"),
    ],
)
def test_bad_values_are_refused_with_the_reason(changes, message):
    with pytest.raises((ValueError, TypeError), match=message):
        Parameters(**changes)


def test_all_ones_stencil_damps_at_most_twelve():
    assert stencil_spectral_radius() == pytest.approx(12.0)
    assert Parameters().max_stable_dt() == pytest.approx(2 / (0.1 * 12))


def test_warns_only_above_the_stable_time_step():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Parameters(dt=1.6)
    with pytest.warns(UnstableTimeStepWarning, match="lower dt"):
        Parameters(dt=1.7)


@pytest.mark.parametrize("factor, stable", [(0.97, True), (1.1, False)])
def test_stability_limit_matches_the_reference_laplacian(factor, stable):
    """Pure diffusion with the reference Laplacian decays below the limit and explodes above it."""
    dt = factor * Parameters().max_stable_dt()
    a = np.random.default_rng(0).standard_normal((40, 30))
    for _ in range(400):
        a = a + dt * 0.1 * laplacian(a)
    assert (np.abs(a).max() < 10) == stable


def test_presets():
    assert preset("spots") == Parameters()
    assert all(p.is_stable() for p in PRESETS.values())
    with pytest.raises(ValueError, match="unknown preset 'nope'; choose one of spots"):
        preset("nope")


def test_the_stability_check_computes_the_stencils_radius_once():
    """It evaluates a 361 x 361 grid (30 ms); every Legate task of the cuPyNumeric backend builds a
    Parameters, and recomputing it made each task cost 20 ms more (measured on the CPU)."""
    from gs_course import parameters

    Parameters()
    before = parameters._school_stencil_radius.cache_info()
    for dt in (0.5, 1.0, 1.5):
        Parameters(dt=dt)
    assert parameters._school_stencil_radius.cache_info().misses == before.misses


def test_values_that_jax_traces_are_taken_unchecked_and_compute_as_numbers():
    """Under jax.vmap each (feed, kill) pair's values are tracers, with no value yet: the batch exercise's
    dataclasses.replace(params, feed=feed, kill=kill) builds, and computes as the numbers would. Only
    tracers pass: an array with a value is still no number."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    feeds = jnp.asarray([0.02, 0.03], jnp.float32)
    got = jax.vmap(lambda f: dataclasses.replace(Parameters(), feed=f, kill=f + 0.01).kill * 2)(feeds)
    np.testing.assert_allclose(np.asarray(got), [0.06, 0.08], rtol=1e-6)
    with pytest.raises(TypeError, match="feed must be a number"):
        Parameters(feed=jnp.asarray(0.03))
    with pytest.raises(TypeError, match="feed must be a number"):
        Parameters(feed=np.ones(1))
