"""Each checker accepts a right answer and rejects the typical wrong ones with the right hint.

The wrong answers are those students write (issue 12's 65 tried through the notebooks' cells):
each test names the mistake and the hint it must get. The GPU-only ones are in
tests/test_check_gpu.py; the hint shown alone in a notebook, in tests/test_check_kernel.py.
"""

import functools
import threading
import time
from functools import partial
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from gs_course import backends, model
from gs_course.lessons import checkers as check
from gs_course.backends.jax_one_device import slices_laplacian
from gs_course.lessons.notebooks import YOUR_TURN
from gs_course.output import BackgroundWriter, FrameWriter
from gs_course.parameters import Parameters

DEVICE = {"device_type": jax.Array, "to_device": jnp.asarray}
HOST = {"device_type": None, "to_device": np.asarray}  # the CuPy notebook without a GPU: NumPy arrays


def right_laplacian(a):
    return slices_laplacian(a, jnp.asarray(model.window_counts(*a.shape)))


def _step_with(laplacian):
    def step(u, v, p):
        uvv = u * v * v
        return (u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u)),
                v + p.dt * (p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v))
    return step


right_step = _step_with(right_laplacian)


def right_run(u, v, p, steps):
    return jax.jit(lambda u, v: lax.fori_loop(0, steps, lambda _, uv: right_step(*uv, p), (u, v)))(u, v)


def numpy_laplacian(a, pad=np.pad, counts=model.window_counts):
    rows, cols = a.shape
    padded = pad(a, 1)
    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - counts(rows, cols) * a


# Exercise 1: the arrays on the device.

def test_on_device_accepts_the_host_values_on_the_device(capsys):
    u0, v0 = model.initial_state(20, 24)
    check.on_device(jax.device_put(u0), jax.device_put(v0), expected=(u0, v0), device_type=jax.Array)
    assert capsys.readouterr().out.startswith("\N{CHECK MARK} 2 arrays on the device, 20 x 24 float32")


@pytest.mark.parametrize("wrong, hint", [
    (lambda u0, v0: (jax.device_put(u0), jax.device_put(u0)), "array 1 holds the values of host array 0"),
    (lambda u0, v0: (jax.device_put(v0), jax.device_put(u0)), "array 0 holds the values of host array 1"),
    (lambda u0, v0: (jax.device_put(u0), v0), "array 1 is a numpy.ndarray, not on the device"),
    (lambda u0, v0: (jax.device_put(u0), jnp.asarray(v0, jnp.float16)), "dtype float16, expected"),
    # an unassigned answer: `v` left over in the kernel from a later cell (V after some steps)
    (lambda u0, v0: (jax.device_put(u0), right_run(jnp.asarray(u0), jnp.asarray(v0), check.PARAMS, 3)[1]),
     "array 1 does not hold the values of host array 1.*left from an earlier cell"),
])
def test_on_device_checks_values_not_only_placement(wrong, hint):
    u0, v0 = model.initial_state(20, 24)
    with pytest.raises(check.NotYet, match=hint):
        check.on_device(*wrong(u0, v0), expected=(u0, v0), device_type=jax.Array)


# Exercise 2: the Laplacian.

def test_laplacian_accepts_the_right_answer(capsys):
    check.laplacian(right_laplacian, **DEVICE)
    assert "runs under jax.jit" in capsys.readouterr().out


def _window_sum(a, mode):
    rows, cols = a.shape
    padded = jnp.pad(a, 1, mode=mode)
    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))


@pytest.mark.parametrize("wrong, hint", [
    (lambda a: _window_sum(a, "constant") - 9 * a, "cells at the border have fewer neighbours: subtract each cell's"),
    (lambda a: sum(jnp.roll(a, (i, j), (0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1)) - 9 * a,
     "wrapped around from the other side"),
    (lambda a: _window_sum(a, "edge") - 9 * a, "copied from the edge"),
    (lambda a: _window_sum(a, "constant"), "it is the window sum: subtract counts"),
    (lambda a: -right_laplacian(a), "the sign is reversed"),
    (lambda a: right_laplacian(a)[1:-1, 1:-1], "has shape"),
    (lambda a: right_laplacian(a).astype(jnp.float16), "dtype float16, expected float32"),
    (lambda a: np.asarray(right_laplacian(a)), "is a NumPy array: it went back to the host"),
    (lambda a: 0.5 * right_laplacian(a), "stencil is not the model's: a cell gets 0.5 0.5 0.5 / 0.5 -4 0.5 / 0.5 0.5 0.5"),
    (lambda a: right_laplacian(a) + 0.5 * a * a, "is off the reference at"),  # no stencil: a distance, nothing named
    (lambda a: None, "your Laplacian is None: end the function with return"),
    # NumPy inside a JAX function: right values, then breaks under jax.jit
    (partial(numpy_laplacian, pad=np.pad), "does not run under jax.jit: it hands a JAX array to NumPy"),
])
def test_laplacian_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.laplacian(wrong, **DEVICE)


def test_laplacian_on_the_host_accepts_numpy(capsys):
    check.laplacian(numpy_laplacian, **HOST)
    assert "jax" not in capsys.readouterr().out


# Exercise 3: the step.

def test_step_accepts_the_right_answer():
    check.step(right_step, **DEVICE)


def test_step_refuses_an_in_place_update_of_its_inputs():
    """Right values, but the caller's u and v changed: the notebook's later cells would start from
    them (a seventh playtest found the tick with a note misleading)."""
    def in_place(u, v, p):
        uvv = u * v * v
        du = p.du * numpy_laplacian(u) - uvv + p.feed * (1 - u)
        dv = p.dv * numpy_laplacian(v) + uvv - (p.feed + p.kill) * v
        u += p.dt * du
        v += p.dt * dv
        return u, v

    with pytest.raises(check.NotYet, match="right values but changes its inputs in place .*return u \\+ p.dt \\* du"):
        check.step(in_place, **HOST)


def test_step_that_changes_its_inputs_too_early_is_told_so():
    def too_early(u, v, p):
        uvv = u * v * v
        u += p.dt * (p.du * numpy_laplacian(u) - uvv + p.feed * (1 - u))
        v += p.dt * (p.dv * numpy_laplacian(v) + u * v * v - (p.feed + p.kill) * v)
        return u, v

    with pytest.raises(check.NotYet, match="Your step changed its inputs: compute both updates"):
        check.step(too_early, **HOST)


def _dt_on_feed_only(u, v, p):
    uvv = u * v * v
    return (u + p.du * right_laplacian(u) - uvv + p.dt * p.feed * (1 - u),
            v + p.dv * right_laplacian(v) + uvv - p.dt * (p.feed + p.kill) * v)


def _dt_on_diffusion_only(u, v, p):
    uvv = u * v * v
    return (u + p.dt * p.du * right_laplacian(u) - uvv + p.feed * (1 - u),
            v + p.dt * p.dv * right_laplacian(v) + uvv - (p.feed + p.kill) * v)


def _nine(a):
    return _window_sum(a, "constant") - 9 * a


@pytest.mark.parametrize("wrong, hint", [
    (_dt_on_feed_only, "dt on the feed terms only gives.*: multiply every term of the update by dt"),
    (_dt_on_diffusion_only, "dt on the diffusion terms only gives.*: multiply every term"),
    (lambda u, v, p: right_step(u, v, p.replace(dt=1.0)), "a step without dt gives"),
    (lambda u, v, p: (u, v), "it is the state you were given"),
    (lambda u, v, p: right_step(u, v, p)[::-1], "U and V are swapped: return u_next, v_next in that order"),
    (lambda u, v, p: right_step(u, v, p.replace(du=p.dv, dv=p.du)), "Du and Dv are swapped"),
    (_step_with(_nine), "your step calls your laplacian, which is still wrong: fix exercise 1 first"),
    (lambda u, v, p: right_step(u, v, p)[0], "returned an ArrayImpl: it must return a pair, return u, v"),
    (lambda u, v, p: None, "returned None: it must return a pair, end it with return u, v"),
    (lambda u, v, p: jnp.stack(right_step(u, v, p)), "returned one array of shape \\(2, .*return u, v"),
    (lambda u, v, p: right_step(u, v, p.replace(kill=0.0)), "V's loss term is p.feed \\* v where \\(p.feed \\+ p.kill\\)"),
    (lambda u, v, p: right_step(u, v, p.replace(kill=0.0, feed=0.5)), "your u_next is off the reference at"),
    (_step_with(partial(numpy_laplacian, pad=np.pad)), "your step does not run under jax.jit"),
])
def test_step_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.step(wrong, **DEVICE)


# Exercise 4: the time loop.

def _python_loop(u, v, p, steps):
    for _ in range(steps):
        u, v = right_step(u, v, p)
    return u, v


def test_time_loop_accepts_one_loop_on_the_device(capsys):
    check.time_loop(right_run, **DEVICE)
    assert "one loop on the device" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", [
    (_python_loop, "Python loop traced step by step. Use lax.fori_loop"),
    (lambda u, v, p, steps: right_run(u, v, p, steps - 1), "one step too early"),
    (lambda u, v, p, steps: right_run(u, v, p, steps + 1), "one step too late"),
    (lambda u, v, p, steps: (u, v), "it is the start state"),
    (lambda u, v, p, steps: right_run(u, v, p, steps)[::-1], "U and V are swapped: return u, v in that order"),
    (lambda u, v, p, steps: None, "returned None: it must return a pair"),
])
def test_time_loop_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.time_loop(wrong, **DEVICE)


# Exercise 5: the images, one lax.scan.

def _scan_images(u, v, p, nbimage, nbextrastep, returned=lambda carry, frames: frames, stored=lambda u, v: v, first=1):
    def one_image(uv, i):
        uv = lax.fori_loop(0, nbextrastep - (first == 0) * (i == 0) * nbextrastep, lambda _, uv: right_step(*uv, p), uv)
        return uv, stored(*uv)

    carry, frames = lax.scan(one_image, (u, v), jnp.arange(nbimage))
    return returned(carry, frames)


def _loop_images(u, v, p, nbimage, nbextrastep):
    frames = []
    for _ in range(nbimage):
        u, v = right_run(u, v, p, nbextrastep)
        frames.append(v)
    return jnp.stack(frames)


#: The right answer as the notebook gives it, jitted (the checker asks for the given jit once the values are right).
_JITTED_SCAN = jax.jit(_scan_images, static_argnums=(2, 3, 4))


def test_images_accepts_one_scan(capsys):
    check.images(_JITTED_SCAN, **DEVICE)
    assert "one scan" in capsys.readouterr().out


@pytest.mark.parametrize("student, accepted", [(_JITTED_SCAN, True), (_loop_images, False)])
def test_images_finds_the_scan_without_reading_its_params(student, accepted, monkeypatch):
    """JAX renames equation params between versions (scan's num_carry is gone in 0.11): with every
    equation's params hidden from the checker, the scan over the images is still told from a loop."""
    from gs_course.lessons import check_model

    found = check_model._equations
    monkeypatch.setattr(check_model, "_equations", lambda jaxpr: (
        SimpleNamespace(primitive=e.primitive, outvars=e.outvars, params={}) for e in found(jaxpr)))
    if accepted:
        check.images(student, **DEVICE)
    else:
        with pytest.raises(check.NotYet, match="grows with the images.*lax.scan"):
            check.images(student, **DEVICE)


@pytest.mark.parametrize("wrong, hint", [
    (_loop_images, "grows with the images .*a Python loop.*Use lax.scan over the images"),
    (partial(_scan_images, returned=lambda carry, frames: (carry, frames)),
     "lax.scan returns \\(carry, stacked\\); return the stacked images only"),
    (partial(_scan_images, returned=lambda carry, frames: None), "your images are None"),
    (partial(_scan_images, returned=lambda carry, frames: frames[1:]), "expected \\(nbimage, rows, cols\\)"),
    (partial(_scan_images, stored=lambda u, v: u), "image 0 is off: it is U: store V"),
    (partial(_scan_images, first=0), "image 0 is off: it is V after 0 x nbextrastep steps"),
])
def test_images_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.images(wrong, **DEVICE)


# Exercise 6: the (F, k) pairs, one vmap.

def _one_pair_run(feed, kill, rows, cols, steps):
    u0, v0 = (jnp.asarray(a) for a in model.initial_state(rows, cols))
    p = Parameters()  # the school's Du, Dv and dt: the checker's reference for each pair

    def body(_, uv):
        u, v = uv
        uvv = u * v * v
        return (u + p.dt * (p.du * right_laplacian(u) - uvv + feed * (1 - u)),
                v + p.dt * (p.dv * right_laplacian(v) + uvv - (feed + kill) * v))

    return lax.fori_loop(0, steps, body, (u0, v0))[1]


def _vmap_batch(feeds, kills, rows, cols, steps):
    return jax.jit(jax.vmap(lambda f, k: _one_pair_run(f, k, rows, cols, steps)))(jnp.asarray(feeds), jnp.asarray(kills))


def _loop_batch(feeds, kills, rows, cols, steps):
    return jnp.stack([_one_pair_run(f, k, rows, cols, steps) for f, k in zip(feeds, kills)])


def test_batch_accepts_one_vmap(capsys):
    check.batch(_vmap_batch, device_type=jax.Array)
    assert "one vmap" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, hint", [
    (_loop_batch, "your program grows with the pairs.*a Python loop.*one pair's run, jax.vmap"),
    (lambda f, k, *rest: _vmap_batch(k, f, *rest), r"pattern 0 \(F = 0.022, k = 0.051\) is off: F and k are swapped"),
    (lambda *args: _vmap_batch(*args)[:2], "expected \\(pairs, rows, cols\\)"),
])
def test_batch_rejects_typical_mistakes(wrong, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.batch(wrong, device_type=jax.Array)


# cuPyNumeric converts its arrays to NumPy silently: a round trip through the host is refused.

def test_cupynumeric_laplacian_through_the_host_is_refused():
    found = backends.probe("cupynumeric")
    if not found.ok:
        pytest.skip(f"cupynumeric not available: {found.reason}")
    backends.load("cupynumeric")
    import cupynumeric as cnp

    on_cnp = {"device_type": cnp.ndarray, "to_device": cnp.asarray}

    counts = functools.cache(lambda rows, cols: cnp.asarray(model.window_counts(rows, cols)))  # copied once a grid
    check.laplacian(partial(numpy_laplacian, pad=cnp.pad, counts=counts), **on_cnp)
    check.laplacian(partial(numpy_laplacian, pad=np.pad, counts=counts), **on_cnp)  # np.pad hands over to cnp.pad: no copy
    with pytest.raises(check.NotYet, match="copies 1 NumPy array.* to the device at every call"):
        check.laplacian(partial(numpy_laplacian, pad=cnp.pad), **on_cnp)  # NumPy's window counts made at every call
    with pytest.raises(check.NotYet, match="copies arrays to the host .*a round trip through the host"):
        check.laplacian(partial(numpy_laplacian, pad=lambda a, n: cnp.asarray(np.pad(np.asarray(a), n))), **on_cnp)
    u0, v0 = model.initial_state(20, 24)
    with pytest.raises(check.NotYet, match="array 1 holds the values of host array 0"):
        check.on_device(cnp.asarray(u0), cnp.asarray(u0), expected=(u0, v0), device_type=cnp.ndarray)


# Output: saved images, in line or from a second thread.

def _save_in_line(simulation, path, nbimage, nbextrastep, first=1):
    with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as writer:
        for image in range(nbimage):
            simulation.advance(nbextrastep if image or first else 0)
            writer.write(simulation.fetch_v())


def _save_overlapped(simulation, path, nbimage, nbextrastep, close=True):
    frames = FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep, deflate=None)
    writer = BackgroundWriter(frames)
    for _ in range(nbimage):
        simulation.advance(nbextrastep)
        writer.write(simulation.fetch_v())
    if close:
        writer.close()


def _writers_alive():
    return [t for t in threading.enumerate() if t.name == "gs-course-writer"]


def test_saved_images_accepts_writing_in_line_or_overlapped(capsys):
    check.saved_images(_save_in_line, "numpy")
    check.saved_images(_save_overlapped, "numpy", overlapped=True)
    out = capsys.readouterr().out
    assert out.count("\N{CHECK MARK} saved images: 4 images") == 2
    assert "written by a second thread" in out


@pytest.mark.parametrize("wrong, overlapped, hint", [
    (partial(_save_in_line, first=0), False, r"image 0 is off: it is V after 0 x nbextrastep steps"),
    (lambda *args: None, False, "no file at path"),
    (_save_in_line, True, "written in line, by the thread that computes: write them from a second thread"),
])
def test_saved_images_rejects_typical_mistakes(wrong, overlapped, hint):
    with pytest.raises(check.NotYet, match=hint):
        check.saved_images(wrong, "numpy", overlapped=overlapped)


def test_saved_images_never_races_an_open_writer_and_leaves_no_thread():
    """A BackgroundWriter never closed: always the same hint (its thread was still writing when the
    file was read, 2 times in 5 'close the writer', 3 times 'image 0 is off'), no thread left."""
    for _ in range(5):
        with pytest.raises(check.NotYet, match="your writer is still open when your function returns: close it"):
            check.saved_images(partial(_save_overlapped, close=False), "numpy", overlapped=True)
        assert not _writers_alive()


def test_saved_images_waits_for_the_students_own_thread_or_says_it_runs():
    release = threading.Event()

    def thread_left_running(simulation, path, nbimage, nbextrastep):
        _save_in_line(simulation, path, nbimage, nbextrastep)
        threading.Thread(target=release.wait, name="students-writer").start()

    timer = threading.Timer(30, release.set)
    timer.start()
    try:
        with pytest.raises(check.NotYet, match=r"a thread you started \(students-writer\) still ran when your function returned"):
            check.saved_images(thread_left_running, "numpy")
    finally:
        release.set()
        timer.cancel()


def test_an_error_in_the_students_own_thread_is_not_printed_before_the_hint(monkeypatch):
    """One thread per image, never joined, the file closed under them: their h5py errors used to
    print a traceback each, ahead of the one line that names the mistake."""
    def a_thread_per_image(simulation, path, nbimage, nbextrastep):
        frames = FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep,
                             deflate=None)
        threads = []
        for _ in range(nbimage):
            simulation.advance(nbextrastep)
            threads.append(threading.Thread(target=lambda frame: (time.sleep(0.3), frames.write(frame)),
                                            args=(simulation.fetch_v(),), name="students-writer"))
            threads[-1].start()
        frames.close()

    printed = []  # what Python's hook, which prints a thread's traceback, would have been given
    monkeypatch.setattr(threading, "excepthook", printed.append)
    with pytest.raises(check.NotYet, match="a thread you started|never joined|image"):
        check.saved_images(a_thread_per_image, "numpy")
    time.sleep(1)
    assert printed == [], [str(e.exc_value) for e in printed]


def test_an_error_of_the_students_own_code_in_their_thread_is_the_hint():
    def a_typo_in_the_thread(simulation, path, nbimage, nbextrastep):
        with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as frames:
            for _ in range(nbimage):
                simulation.advance(nbextrastep)
                image = simulation.fetch_v()
                thread = threading.Thread(target=lambda: frames.write(imag))  # noqa: F821 (the typo)
                thread.start()
                thread.join()
            del image

    with pytest.raises(check.NotYet, match=r"a thread you started .* raised NameError: name 'imag' is not defined"):
        check.saved_images(a_typo_in_the_thread, "numpy", overlapped=True)


# Without a GPU: what the GPU-only checkers cannot check.

CUPY = backends.probe("cupy")


def test_gpu_checkers_say_what_they_cannot_check_without_a_gpu(capsys, monkeypatch):
    """Without a GPU and without a C++ compiler (with one, the kernels run on the CPU: the harness's
    cases of tests/test_check_harness.py)."""
    if CUPY.ok:
        pytest.skip("a GPU is here: the checkers check (tests/test_check_gpu.py)")
    from gs_course.lessons import cuda_on_cpu

    monkeypatch.setattr(cuda_on_cpu, "compiler", lambda: None)
    assert check.elementwise_update("u_next = u;", lambda a: a) is None
    assert check.step_kernel("u_next[cell] = u[cell];") is None
    check.pinned_fetch(lambda v, stream: v)
    out = capsys.readouterr().out

    student = {}  # the function as the student notebook gives it
    exec(f"def fetch(v, stream):\n    {YOUR_TURN}\n", student)
    with pytest.raises(NotImplementedError, match="Your turn"):
        check.pinned_fetch(student["fetch"])
    for what in ("your ElementwiseKernel", "your RawKernel", "your pinned fetch"):
        assert f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy" in out


_ROW_LOOP_STEP = "def launch(u, v, p):\n    for row in range(u.shape[0]):\n        u[row] = u[row]\n    return u, v\n"


@pytest.mark.parametrize("module, refused", [("gs_course.lessons.kernel_runs", False), ("__main__", True)])
def test_only_the_students_own_loops_over_the_rows_are_refused(module, refused):
    # check.step_kernel checks a kernel's launch, a function of the course's, as a step: its own loop (over
    # guard buffers, on a GPU) grew with the grid, and every right kernel was refused (H200, 0b15db5)
    from gs_course.lessons import grid_loops

    namespace = {"__name__": module}
    exec(_ROW_LOOP_STEP, namespace)  # noqa: S102
    checking = lambda: grid_loops.step_grows(namespace["launch"], np.ndarray, np.asarray, (40, 50), Parameters())  # noqa: E731
    if refused:
        with pytest.raises(check.NotYet, match="loop over the grid's rows"):
            checking()
    else:
        checking()
