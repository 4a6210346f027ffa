"""The CuPy tutorial's lessons on launches and GPU memory: the launch-configuration checker (plain
Python, anywhere), and the tutorial's kernel variants (gs_course.lessons.cupy_variants) against
the reference (GPU only: they run where CuPy finds an NVIDIA GPU). How fast each variant is, the
tutorial measures; a unit test checks no speed."""

import numpy as np
import pytest

from gs_course import backends
from gs_course.lessons import cupy_check
from gs_course.lessons.checkers import PARAMS, NotYet
from gs_course.model import PARITY_ATOL, initial_state, laplacian, reference_run

CUPY = backends.probe("cupy")
needs_gpu = pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")


def _right(rows, cols, block, strip_rows):
    return (-(-cols // block[0]), -(-rows // (block[1] * strip_rows))), block


def test_strip_launch_accepts_the_right_configuration(capsys):
    cupy_check.strip_launch(_right)
    out = capsys.readouterr().out
    assert out.startswith("\N{CHECK MARK} launch configuration: right on 6 grids")
    assert ("the strip kernel launched with it computed every cell" in out) == CUPY.ok


@pytest.mark.parametrize("student, hint", [
    (lambda r, c, b, s: ((c // b[0], r // (b[1] * s)), b), "round the division up"),
    (lambda r, c, b, s: (_right(r, c, b, s)[0][::-1], b), "x and y swapped"),
    (lambda r, c, b, s: ((-(-c // b[0]), -(-r // b[1])), b), "launches a thread for every row"),
    (lambda r, c, b, s: (_right(r, c, b, s)[0], (b[0], b[1] * s)), "return them unchanged"),
    (lambda r, c, b, s: ((-(-c // b[0]) + 1, -(-r // (b[1] * s))), b), "wholly outside the domain"),
    (lambda r, c, b, s: _right(r, c, b, s)[0], "return a pair \\(grid, block\\)"),
    (lambda r, c, b, s: ((-(-c // b[0]),), b), "has one number: CuPy takes it as"),
    (lambda r, c, b, s: ((-(-c // b[0]), 1, 1, 1), b), "give two whole numbers"),
])
def test_strip_launch_names_the_mistake(student, hint):
    with pytest.raises(NotYet, match=hint):
        cupy_check.strip_launch(student)


def _run(launch, rows, cols, steps, params):
    """`steps` steps of a variant from the school's initial state, (U, V) back on the host."""
    import cupy

    from gs_course.backends.cuda_steps import scalars

    u, v = (cupy.asarray(a) for a in initial_state(rows, cols))
    pairs = [(u, v), (cupy.empty_like(u), cupy.empty_like(v))]
    for k in range(steps):
        launch(*pairs[k % 2], *pairs[1 - k % 2], scalars(params, rows, cols))
    return tuple(cupy.asnumpy(a) for a in pairs[steps % 2])


def _variants():
    if not CUPY.ok:
        return [pytest.param(None, marks=[pytest.mark.gpu, needs_gpu], id="no-gpu")]
    from gs_course.lessons.cupy_variants import VARIANTS

    return [pytest.param(name, marks=pytest.mark.gpu, id=name) for name in VARIANTS]


@pytest.mark.parametrize("variant", _variants())
def test_each_variant_matches_the_reference_on_odd_grids(variant):
    """Odd, non-square grids that no block or tile divides, dt != 1: border, tails and dt all count."""
    from gs_course.lessons.cupy_variants import VARIANTS

    for rows, cols in ((67, 91), (129, 47)):
        got = _run(VARIANTS[variant], rows, cols, 60, PARAMS)
        want = reference_run(rows, cols, 60, PARAMS)
        for g, w in zip(got, want):
            assert np.abs(g - w).max() < PARITY_ATOL, f"{variant} on {rows} x {cols}"


@pytest.mark.gpu
@needs_gpu
def test_constant_memory_holds_the_stencil_weights_and_follows_their_changes():
    """The accurate stencil (not all ones) tells a kernel that reads its weights from one that does
    not; switching back to all ones must rewrite the constants, not keep the last ones."""
    import cupy

    from gs_course.backends.cuda_steps import scalars
    from gs_course.lessons.cupy_variants import launch_constant

    accurate = np.array([[0.05, 0.2, 0.05], [0.2, 0.0, 0.2], [0.05, 0.2, 0.05]])
    rng = np.random.default_rng(0)
    u, v = (rng.random((41, 77), dtype=np.float32) for _ in range(2))
    for weights in (accurate, np.ones((3, 3)), accurate):
        u_next, v_next = cupy.empty((41, 77), np.float32), cupy.empty((41, 77), np.float32)
        launch_constant(cupy.asarray(u), cupy.asarray(v), u_next, v_next, scalars(PARAMS, 41, 77), weights=weights)
        u64, v64 = u.astype(np.float64), v.astype(np.float64)
        uvv = u64 * v64 * v64
        want_v = v64 + PARAMS.dt * (PARAMS.dv * laplacian(v64, weights) + uvv - (PARAMS.feed + PARAMS.kill) * v64)
        assert np.abs(cupy.asnumpy(v_next) - want_v).max() < 1e-5
