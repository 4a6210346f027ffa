import numpy as np
import pytest

from gs_course.model import GridError, MIN_SIZE, initial_state, laplacian, reference_step, seed_block, window_counts
from gs_course.parameters import Parameters


def test_initial_block_of_the_school_grid():
    u, v = initial_state(1080, 1920)
    assert u.dtype == v.dtype == np.float32 and u.shape == (1080, 1920)
    rows, cols = np.nonzero(v)
    assert (rows.min(), rows.max() + 1, cols.min(), cols.max() + 1) == (468, 536, 840, 960)
    assert v.sum() == 68 * 120 and np.all(u == 1 - v)


def test_initial_block_uses_integer_division():
    assert seed_block(37, 53) == (slice(12, 14), slice(23, 26))


@pytest.mark.parametrize("rows, cols", [(0, 20), (-5, 20), (20, MIN_SIZE - 1), (20.0, 20), (True, 20)])
def test_bad_grid_sizes_are_refused(rows, cols):
    with pytest.raises(GridError, match="must be"):
        initial_state(rows, cols)


def test_laplacian_leaves_out_neighbours_outside_the_grid():
    a = np.zeros((5, 6))
    a[0, 0] = 1.0
    lap = laplacian(a)
    assert lap[0, 0] == -3  # three in-grid neighbours, each 0 - 1
    assert lap[0, 1] == lap[1, 0] == lap[1, 1] == 1
    assert lap[-1, -1] == 0  # no wrap-around
    assert np.count_nonzero(lap) == 4


def test_laplacian_of_a_constant_is_zero_everywhere_and_conserves_mass():
    assert np.all(laplacian(np.full((17, 23), 3.5)) == 0)
    a = np.random.default_rng(1).random((17, 23))
    assert laplacian(a).sum() == pytest.approx(0, abs=1e-12)


def test_window_counts():
    counts = window_counts(4, 5)
    assert counts[0, 0] == counts[-1, -1] == 4 and counts[0, 2] == counts[2, 0] == 6 and counts[1, 1] == 9
    a = np.random.default_rng(2).random((4, 5))
    padded = np.pad(a, 1)
    window_sum = sum(padded[i : i + 4, j : j + 5] for i in range(3) for j in range(3))
    np.testing.assert_allclose(window_sum - counts * a, laplacian(a), atol=1e-12)


def test_one_step_by_hand():
    """Away from the seed, U = 1 and V = 0 is a fixed point; inside, only the terms of the model act."""
    p = Parameters(feed=0.02, kill=0.05, dt=0.5)
    u, v = initial_state(64, 64, np.float64)
    u1, v1 = reference_step(u, v, p)
    assert u1[0, 0] == 1 and v1[0, 0] == 0
    i, j = 25, 29  # inside the seed block, away from its edge: U = 0, V = 1 around it
    assert v[i - 1 : i + 2, j - 1 : j + 2].all()
    assert u1[i, j] == pytest.approx(0.5 * p.feed)  # dt * F * (1 - 0)
    assert v1[i, j] == pytest.approx(1 - 0.5 * (p.feed + p.kill))
