"""Each checker accepts a right answer and rejects the typical wrong ones with the right hint."""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from gs_course import backends, check, model
from gs_course.backends.jax_backend import slices_laplacian
from gs_course.notebooks import YOUR_TURN
from gs_course.output import BackgroundWriter, FrameWriter

DEVICE = {"device_type": jax.Array, "to_device": jnp.asarray}


def right_laplacian(a):
    return slices_laplacian(a, jnp.asarray(model.window_counts(*a.shape)))


def right_step(u, v, p):
    uvv = u * v * v
    return (u + p.dt * (p.du * right_laplacian(u) - uvv + p.feed * (1 - u)),
            v + p.dt * (p.dv * right_laplacian(v) + uvv - (p.feed + p.kill) * v))


def right_run(u, v, p, steps):
    return jax.jit(lambda u, v: lax.fori_loop(0, steps, lambda _, uv: right_step(*uv, p), (u, v)))(u, v)


def test_on_device():
    a = jnp.zeros((4, 5), jnp.float32)
    check.on_device(a, a, device_type=jax.Array, shape=(4, 5))
    with pytest.raises(check.NotYet, match="array 1 is a numpy.ndarray, not on the device"):
        check.on_device(a, np.zeros((4, 5), np.float32), device_type=jax.Array, shape=(4, 5))
    with pytest.raises(check.NotYet, match="dtype float64, expected"):
        check.on_device(np.zeros((4, 5)), device_type=np.ndarray, shape=(4, 5))


def test_laplacian_accepts_the_right_answer(capsys):
    check.laplacian(right_laplacian, **DEVICE)
    assert capsys.readouterr().out.startswith("\N{CHECK MARK} laplacian")


@pytest.mark.parametrize("wrong, hint", [
    (lambda a: sum(jnp.roll(a, (i, j), (0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1)) - 9 * a,
     "only the border is wrong: neighbours outside the grid are left out"),
    (lambda a: right_laplacian(a)[1:-1, 1:-1], "has shape"),
    (lambda a: right_laplacian(a).astype(jnp.float16), "dtype float16, expected float32"),
    (lambda a: np.asarray(right_laplacian(a)), "is a NumPy array: it went back to the host"),
    (lambda a: 0.5 * right_laplacian(a), "is off the reference at"),
])
def test_laplacian_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.laplacian(wrong, **DEVICE)


def test_step_accepts_the_right_answer():
    check.step(right_step, **DEVICE)


def _dt_on_feed_only(u, v, p):
    uvv = u * v * v
    return (u + p.du * right_laplacian(u) - uvv + p.dt * p.feed * (1 - u),
            v + p.dv * right_laplacian(v) + uvv - (p.feed + p.kill) * v)


@pytest.mark.parametrize("wrong, hint", [
    (_dt_on_feed_only, "multiply every term of the update by dt"),
    (lambda u, v, p: right_step(u, v, p.replace(dt=1.0)), "multiply every term of the update by dt"),
    (lambda u, v, p: right_step(u, v, p)[0], "must return a pair"),
    (lambda u, v, p: right_step(u, v, p.replace(kill=0.0)), "your v_next is off the reference"),
])
def test_step_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.step(wrong, **DEVICE)


def test_time_loop_accepts_fori_loop_and_refuses_a_python_loop():
    check.time_loop(right_run, jaxpr=jax.make_jaxpr, **DEVICE)

    def python_loop(u, v, p, steps):
        for _ in range(steps):
            u, v = right_step(u, v, p)
        return u, v

    with pytest.raises(check.NotYet, match="Python loop traced step by step. Use lax.fori_loop"):
        check.time_loop(python_loop, jaxpr=jax.make_jaxpr, **DEVICE)
    with pytest.raises(check.NotYet, match="after 100 steps"):
        check.time_loop(lambda u, v, p, steps: right_run(u, v, p, steps - 1), jaxpr=jax.make_jaxpr, **DEVICE)


def _images(u, v, p, nbimage, nbextrastep, first=1):
    frames = []
    for i in range(nbimage):
        u, v = right_run(u, v, p, nbextrastep if i or first else 0)
        frames.append(v)
    return jnp.stack(frames)


def test_images_accepts_the_right_answer_and_explains_the_offset():
    check.images(_images, **DEVICE)
    with pytest.raises(check.NotYet, match=r"Image i holds V after \(i \+ 1\) x nbextrastep steps"):
        check.images(lambda *args: _images(*args, first=0), **DEVICE)
    with pytest.raises(check.NotYet, match="expected \\(nbimage, rows, cols\\)"):
        check.images(lambda *args: _images(*args)[1:], **DEVICE)


def _batch(feeds, kills, rows, cols, steps):
    u0, v0 = (jnp.asarray(a) for a in model.initial_state(rows, cols))
    return jnp.stack([right_run(u0, v0, check.PARAMS.replace(feed=float(f), kill=float(k), dt=1.0), steps)[1]
                      for f, k in zip(feeds, kills)])


def test_batch_accepts_the_right_answer_and_catches_swapped_parameters():
    check.batch(_batch, device_type=jax.Array)
    with pytest.raises(check.NotYet, match=r"pattern 0 \(F = 0.022, k = 0.051\) is off"):
        check.batch(lambda f, k, *rest: _batch(k, f, *rest), device_type=jax.Array)


def _save_in_line(simulation, path, nbimage, nbextrastep, first=1):
    with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as writer:
        for image in range(nbimage):
            simulation.advance(nbextrastep if image or first else 0)
            writer.write(simulation.fetch_v())


def _save_overlapped(simulation, path, nbimage, nbextrastep):
    frames = FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep, deflate=None)
    with BackgroundWriter(frames) as writer:
        for _ in range(nbimage):
            simulation.advance(nbextrastep)
            writer.write(simulation.fetch_v())


def test_saved_images_accepts_writing_in_line_or_overlapped_and_catches_the_offset(capsys):
    check.saved_images(_save_in_line, "numpy")
    check.saved_images(_save_overlapped, "numpy")
    assert capsys.readouterr().out.count("\N{CHECK MARK} saved images: 4 images") == 2
    with pytest.raises(check.NotYet, match=r"Image i holds V after \(i \+ 1\) x nbextrastep steps"):
        check.saved_images(partial(_save_in_line, first=0), "numpy")
    with pytest.raises(check.NotYet, match="no file at path"):
        check.saved_images(lambda *args: None, "numpy")


CUPY = backends.probe("cupy")
gpu_only = pytest.mark.skipif(not CUPY.ok, reason=f"no GPU: {CUPY.reason}")

UPDATE_BODY = """
float uvv = u * v * v;
u_next = u + dt * (du * lu - uvv + feed * (1.0f - u));
v_next = v + dt * (dv * lv + uvv - (feed + kill) * v);
"""

STEP_BODY = """
const float uc = u[cell], vc = v[cell];
float lu = 0.0f, lv = 0.0f;
for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r)
    for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {
        lu += u[r * cols + c] - uc;
        lv += v[r * cols + c] - vc;
    }
const float uvv = uc * vc * vc;
u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
v_next[cell] = vc + DT_ON_V (dv * lv + uvv - (feed + kill) * vc);
"""


def test_gpu_checkers_say_what_they_cannot_check_without_a_gpu(capsys):
    if CUPY.ok:
        pytest.skip("a GPU is here: the checkers check")
    assert check.elementwise_update(UPDATE_BODY, None) is None
    assert check.step_kernel(STEP_BODY) is None
    check.pinned_fetch(lambda v, stream: v)
    out = capsys.readouterr().out

    student = {}  # the function as the student notebook gives it
    exec(f"def fetch(v, stream):\n    {YOUR_TURN}\n", student)
    with pytest.raises(NotImplementedError, match="Your turn"):
        check.pinned_fetch(student["fetch"])
    for what in ("your ElementwiseKernel", "your RawKernel", "your pinned fetch"):
        assert f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy" in out


def _cupy_laplacian(a):
    import cupy

    rows, cols = a.shape
    padded = cupy.pad(a, 1)
    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - cupy.asarray(
        model.window_counts(rows, cols)) * a


@gpu_only
def test_elementwise_update_accepts_the_right_body_and_explains_mistakes():
    assert check.elementwise_update(UPDATE_BODY, _cupy_laplacian) is not None
    with pytest.raises(check.NotYet, match="multiply every term of the update by dt"):
        check.elementwise_update(UPDATE_BODY.replace("u + dt * (du", "u + (du"), _cupy_laplacian)
    with pytest.raises(check.NotYet, match="your kernel does not compile:\n.*error"):
        check.elementwise_update("u_next = undeclared;", _cupy_laplacian)


@gpu_only
def test_step_kernel_accepts_the_right_body_and_explains_mistakes():
    import cupy

    launch = check.step_kernel(STEP_BODY.replace("DT_ON_V", "dt *"))
    u, v = (cupy.asarray(a) for a in model.initial_state(33, 47))
    u_next, v_next = cupy.empty_like(u), cupy.empty_like(v)
    launch(u, v, u_next, v_next, check.PARAMS)
    want = model.reference_step(*model.initial_state(33, 47, np.float64), check.PARAMS)
    assert np.allclose(cupy.asnumpy(v_next), want[1], atol=1e-6)
    with pytest.raises(check.NotYet, match="your v_next is off the reference"):
        check.step_kernel(STEP_BODY.replace("DT_ON_V", "1.0f *"))
    with pytest.raises(check.NotYet, match="your kernel does not compile:\n.*error"):
        check.step_kernel("u_next[cell] = undeclared;")


@gpu_only
def test_pinned_fetch_wants_page_locked_memory():
    import cupy
    import cupyx

    check.pinned_fetch(lambda v, s: cupy.asnumpy(v, stream=s, out=cupyx.empty_pinned(v.shape, v.dtype), blocking=False))
    with pytest.raises(check.NotYet, match="ordinary \\(pageable\\) memory"):
        check.pinned_fetch(lambda v, s: v.get(stream=s))
    with pytest.raises(check.NotYet, match="return a NumPy array"):
        check.pinned_fetch(lambda v, s: v)
