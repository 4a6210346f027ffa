"""The CuPy tutorial's GPU-only checkers (issue 22): each right answer accepted, each typical wrong
one rejected with its hint, the pinned fetch never racing, and an out-of-bounds kernel told without
losing the session. Skipped with "no GPU" where CuPy has no GPU."""

import threading

import numpy as np
import pytest

from gs_course import backends, model
from gs_course.lessons import checkers as check

CUPY = backends.probe("cupy")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")]

UPDATE_BODY = """
float uvv = u * v * v;
u_next = u + dt * (du * lu - uvv + feed * (1.0f - u));
v_next = v + dt * (dv * lv + uvv - (feed + kill) * v);
"""

#: The solution's window, and the statements the wrong answers change.
CLAMPED = """for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r)
    for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {"""
STEP_BODY = f"""
const float uc = u[cell], vc = v[cell];
float lu = 0.0f, lv = 0.0f;
{CLAMPED}
        lu += u[r * cols + c] - uc;
        lv += v[r * cols + c] - vc;
    }}
const float uvv = uc * vc * vc;
u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
"""

NINE = """float su = 0.0f, sv = 0.0f;
""" + CLAMPED + """
        su += u[r * cols + c];
        sv += v[r * cols + c];
    }
const float uc = u[cell], vc = v[cell];
const float lu = su - 9.0f * uc, lv = sv - 9.0f * vc;
const float uvv = uc * vc * vc;
u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
"""

#: Wrong RawKernel bodies (issue 22) and the hint each must get.
WRONG_STEP_BODIES = [
    (STEP_BODY.replace(CLAMPED, """for (int r = row - 1; r <= row + 1; ++r)
    for (int c = col - 1; c <= col + 1; ++c) {"""), "reads outside its arrays at the border"),
    (NINE, "cells at the border have fewer neighbours"),
    (STEP_BODY.replace("v_next[cell] =", "const float unused ="), "your v_next was never written"),
    ("", "your u_next was never written"),
    (STEP_BODY.replace("dt * (du * lu", "dt * (dv * lu").replace("dt * (dv * lv", "dt * (du * lv"),
     "Du and Dv are swapped"),
    (STEP_BODY.replace("vc + dt * (dv", "vc + (dv"), "multiply every term of the update by dt"),
    (STEP_BODY.replace("u_next[cell] =", "u_next[cell + 1] ="), "your kernel wrote outside its arrays"),
    ("u_next[cell] = undeclared;", "your code does not compile: undeclared is not defined"),
]


def _cupy_laplacian(a):
    import cupy

    rows, cols = a.shape
    padded = cupy.pad(a, 1)
    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - cupy.asarray(
        model.window_counts(rows, cols)) * a


def test_elementwise_update_accepts_the_right_body():
    assert check.elementwise_update(UPDATE_BODY, _cupy_laplacian) is not None


@pytest.mark.parametrize("body, hint", [
    (UPDATE_BODY.replace("u + dt * (du", "u + (du"), "multiply every term of the update by dt"),
    ("u_next = u + dt * (du * lu - u * v * v + feed * (1.0f - u));", "your v_next was never written"),
    (UPDATE_BODY.replace("du * lu", "dv * lu").replace("dv * lv", "du * lv"), "Du and Dv are swapped"),
    ("u_next = undeclared;", "your code does not compile: undeclared is not defined"),
])
def test_elementwise_update_explains_mistakes(body, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.elementwise_update(body, _cupy_laplacian)


def test_step_kernel_accepts_the_right_body_and_its_launch_steps():
    import cupy

    launch = check.step_kernel(STEP_BODY)
    u, v = (cupy.asarray(a) for a in model.initial_state(33, 47))
    u_next, v_next = cupy.empty_like(u), cupy.empty_like(v)
    launch(u, v, u_next, v_next, check.PARAMS)
    want = model.reference_step(*model.initial_state(33, 47, np.float64), check.PARAMS)
    assert np.allclose(cupy.asnumpy(v_next), want[1], atol=1e-6)


@pytest.mark.parametrize("body, hint", WRONG_STEP_BODIES)
def test_step_kernel_explains_mistakes_and_the_gpu_survives(body, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.step_kernel(body)
    check.step_kernel(STEP_BODY)  # the context is not lost: the right answer still passes


def test_a_wild_read_is_caught_in_a_child_process():
    body = STEP_BODY.replace("const float uc = u[cell]", "const float uc = u[cell + (1 << 28)]")
    with pytest.raises(check.NotYet, match="tried in a separate process \\(this notebook's GPU is unharmed\\)"):
        check.step_kernel(body)
    check.step_kernel(STEP_BODY)


def _right_fetch(v, stream):
    import cupy
    import cupyx

    out = cupyx.empty_pinned(v.shape, v.dtype)
    cupy.asnumpy(v, stream=stream, out=out, blocking=False)
    return out


def _default_stream_fetch(v, stream):
    import cupy
    import cupyx

    out = cupyx.empty_pinned(v.shape, v.dtype)
    cupy.asnumpy(v, out=out)
    return out


def test_pinned_fetch_accepts_the_copy_queued_on_the_stream(capsys):
    check.pinned_fetch(_right_fetch)
    out = capsys.readouterr().out
    assert "page-locked memory with the right values" in out


def test_pinned_fetch_refuses_a_copy_on_the_default_stream():
    """Issue 29: the copy must be queued on `stream` (held busy by the checker: a copy elsewhere
    fills the array while it is held), blocking or not."""
    with pytest.raises(check.NotYet, match="not queued on `stream`"):
        check.pinned_fetch(_default_stream_fetch)


def _wrong_fetches():
    import cupy
    import cupyx

    def pinned(v):
        return cupyx.empty_pinned(v.shape, v.dtype)

    return [
        (lambda v, s: cupy.asnumpy(v, stream=s, out=pinned(v)), "your fetch waits for the copy"),
        (lambda v, s: v.get(stream=s), "ordinary \\(pageable\\) memory"),
        (lambda v, s: v, "return a NumPy array"),
        (lambda v, s: pinned(v), "your fetched V is off"),
    ]


def test_pinned_fetch_rejects_typical_mistakes():
    for wrong, hint in _wrong_fetches():
        with pytest.raises(check.NotYet, match=hint):
            check.pinned_fetch(wrong)


def test_pinned_fetch_never_races_on_a_busy_gpu():
    """Issue 12: with the GPU busy (another thread's matrix products on their own stream), the
    checker rejected the right answer (the copy read V before its upload). 30 times each: the right
    answer passes, the pinned array that nothing was copied into is refused."""
    import cupy

    stop = threading.Event()

    def load():
        with cupy.cuda.Stream(non_blocking=True) as stream:
            a = cupy.random.random((2048, 2048), dtype=np.float32)
            while not stop.is_set():
                a = a @ a
                a /= cupy.abs(a).max() + 1
                stream.synchronize()  # one product queued at a time: busy, never a long queue

    busy = threading.Thread(target=load)
    busy.start()
    try:
        wrong, hint = _wrong_fetches()[-1]
        for _ in range(30):
            check.pinned_fetch(_right_fetch)
            with pytest.raises(check.NotYet, match=hint):
                check.pinned_fetch(wrong)
    finally:
        stop.set()
        busy.join()
