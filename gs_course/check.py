"""Answer checkers for the exercises: each tests a student's function on fresh random inputs
against the reference and says precisely what is wrong.

Every checker prints one line starting with a tick when the answer is right, and raises
`NotYet` with a hint otherwise: wrong shape or dtype, an array left on the host, the border
handled differently from the model, values off the reference (where), dt missing from a term,
a time loop that goes back to Python between steps.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import numpy as np

from .model import PARITY_ATOL, initial_state, laplacian as reference_laplacian, reference_run, reference_step
from .notebooks import YOUR_TURN_MESSAGE
from .parameters import Parameters

#: Odd, non-square, different each time: a right answer cannot depend on the grid.
PARAMS = Parameters(feed=0.03, kill=0.06, dt=0.7)


class NotYet(AssertionError):
    """The answer is not right yet; the message says why."""


def _grid(rng) -> tuple[int, int]:
    return int(rng.integers(17, 40)) * 2 + 1, int(rng.integers(20, 45)) * 2 + 1


def _to_numpy(result, what: str, device_type: type | None) -> np.ndarray:
    if device_type is not None and isinstance(result, np.ndarray):
        raise NotYet(f"{what} is a NumPy array: it went back to the host. Keep it on the device "
                     f"({device_type.__module__.split('.')[0]} arrays all the way)")
    if hasattr(result, "__cuda_array_interface__") and hasattr(result, "get"):
        return result.get()  # CuPy copies to the host only when asked to
    return np.asarray(result)


def _compare(got: np.ndarray, want: np.ndarray, what: str, atol: float) -> None:
    if got.shape != want.shape:
        raise NotYet(f"{what} has shape {got.shape}, expected {want.shape}")
    if got.dtype != np.float32:
        raise NotYet(f"{what} has dtype {got.dtype}, expected float32 (the course computes in float32)")
    wrong = ~np.isclose(got, want, rtol=0, atol=atol)
    if not wrong.any():
        return
    border = np.zeros(want.shape, bool)
    border[[0, -1], :] = border[:, [0, -1]] = True
    where = np.unravel_index(np.argmax(np.where(wrong, np.abs(got - want), -1)), want.shape)
    detail = (f"{what} is off the reference at {wrong.sum()} of {wrong.size} cells, the worst at "
              f"{tuple(int(i) for i in where)} by {abs(got[where] - want[where]):.3g}")
    if wrong[border].all() and not wrong[~border].any():
        detail += ("; only the border is wrong: neighbours outside the grid are left out of the sum "
                   "(not wrapped around, not copied from the edge)")
    raise NotYet(detail)


def _ok(message: str) -> None:
    print(f"\N{CHECK MARK} {message}")


def on_device(*arrays, device_type: type, shape: tuple[int, int]) -> None:
    """Each array must be a float32 array of `device_type` (on the device) and of `shape`."""
    for i, a in enumerate(arrays):
        if not isinstance(a, device_type):
            raise NotYet(f"array {i} is a {type(a).__module__}.{type(a).__name__}, not on the device: "
                         f"copy it there once ({device_type.__module__.split('.')[0]})")
        if a.shape != shape or a.dtype != np.float32:
            raise NotYet(f"array {i} has shape {a.shape} and dtype {a.dtype}, expected {shape} float32")
    _ok(f"{len(arrays)} arrays on the device, {shape[0]} x {shape[1]} float32")


def laplacian(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(a)` must return L(a): sum over the 3 x 3 window of (a[n] - a), neighbours outside
    the grid left out."""
    rng = np.random.default_rng()
    for _ in range(3):
        a = rng.random(_grid(rng), dtype=np.float32)
        got = _to_numpy(student(to_device(a)), "your Laplacian", device_type)
        _compare(got, reference_laplacian(a.astype(np.float64)).astype(np.float32), "your Laplacian", 1e-5)
    _ok("laplacian: right on three random odd, non-square grids, border included")


def step(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params)` must return (u, v) after one step of the model, dt on every term."""
    rng = np.random.default_rng()
    rows, cols = _grid(rng)
    u, v = (rng.random((rows, cols), dtype=np.float32) for _ in range(2))
    got = student(to_device(u), to_device(v), PARAMS)
    if not isinstance(got, tuple) or len(got) != 2:
        raise NotYet("your step must return a pair (u_next, v_next)")
    want = reference_step(u.astype(np.float64), v.astype(np.float64), PARAMS)
    for name, g, w in zip("uv", got, want):
        g = _to_numpy(g, f"your {name}_next", device_type)
        try:
            _compare(g, w.astype(np.float32), f"your {name}_next", 1e-5)
        except NotYet as err:
            if any(np.allclose(g, wrong["uv".index(name)], atol=1e-4) for wrong in _dt_mistakes(u, v)):
                raise NotYet(f"{err}; it is what dt on some terms only gives: multiply every term of the "
                             "update by dt") from None
            raise
    _ok(f"step: right with dt = {PARAMS.dt}, F = {PARAMS.feed}, k = {PARAMS.kill}")


def _dt_mistakes(u, v):
    """What a step gives without dt, or with dt on the feed term only (the course prototype's bug)."""
    u, v = u.astype(np.float64), v.astype(np.float64)
    p = PARAMS
    uvv = u * v * v
    without_dt = reference_step(u, v, p.replace(dt=1.0))
    dt_on_feed_only = (u + p.du * reference_laplacian(u) - uvv + p.dt * p.feed * (1 - u),
                       v + p.dv * reference_laplacian(v) + uvv - (p.feed + p.kill) * v)
    return without_dt, dt_on_feed_only


def time_loop(student, device_type: type | None = None, to_device=lambda a: a, jaxpr=None) -> None:
    """`student(u, v, params, steps)` must return (u, v) after `steps` steps. With `jaxpr` (JAX's
    `jax.make_jaxpr`), the loop must be one device loop (fori_loop or scan), not a Python loop."""
    rows, cols = _grid(np.random.default_rng())
    steps = 100
    u0, v0 = initial_state(rows, cols)
    if jaxpr is not None:
        program = str(jaxpr(lambda u, v: student(u, v, PARAMS, steps))(to_device(u0), to_device(v0)))
        if "while" not in program and "scan" not in program:
            raise NotYet(f"your time loop unrolls into {program.count('add')} additions: it is a Python loop "
                         "traced step by step. Use lax.fori_loop so that one loop runs on the device")
    got = student(to_device(u0), to_device(v0), PARAMS, steps)
    want = reference_run(rows, cols, steps, PARAMS)
    for name, g, w in zip("uv", got, want):
        _compare(_to_numpy(g, f"your {name}", device_type), w.astype(np.float32), f"your {name} after {steps} steps",
                 PARITY_ATOL)
    _ok(f"time loop: right after {steps} steps" + (", one loop on the device" if jaxpr else ""))


def images(student, device_type: type | None = None, to_device=lambda a: a) -> None:
    """`student(u, v, params, nbimage, nbextrastep)` must return the V images, shape
    (nbimage, rows, cols), image i after (i + 1) x nbextrastep steps."""
    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 5, 7
    u0, v0 = initial_state(rows, cols)
    got = _to_numpy(student(to_device(u0), to_device(v0), PARAMS, nbimage, nbextrastep), "your images", device_type)
    _compare_images(got, rows, cols, nbimage, nbextrastep)
    _ok(f"images: {nbimage} images, each after (i + 1) x {nbextrastep} steps")


def _compare_images(got: np.ndarray, rows: int, cols: int, nbimage: int, nbextrastep: int) -> None:
    if got.shape != (nbimage, rows, cols):
        raise NotYet(f"your images have shape {got.shape}, expected (nbimage, rows, cols) = {(nbimage, rows, cols)}")
    for i in range(nbimage):
        _, v = reference_run(rows, cols, (i + 1) * nbextrastep, PARAMS)
        try:
            _compare(got[i], v.astype(np.float32), f"image {i}", PARITY_ATOL)
        except NotYet as err:
            raise NotYet(f"{err}. Image i holds V after (i + 1) x nbextrastep steps") from None


def batch(student, device_type: type | None = None) -> None:
    """`student(feeds, kills, rows, cols, steps)` must return V after `steps` steps for each
    (feed, kill) pair: shape (pairs, rows, cols)."""
    feeds = np.array([0.022, 0.03, 0.046], np.float32)
    kills = np.array([0.051, 0.06, 0.063], np.float32)
    rows, cols, steps = 33, 41, 60
    got = _to_numpy(student(feeds, kills, rows, cols, steps), "your batch", device_type)
    if got.shape != (len(feeds), rows, cols):
        raise NotYet(f"your batch has shape {got.shape}, expected (pairs, rows, cols) = {(len(feeds), rows, cols)}")
    for i, (f, k) in enumerate(zip(feeds, kills)):
        _, v = reference_run(rows, cols, steps, Parameters(feed=float(f), kill=float(k)))
        _compare(got[i], v.astype(np.float32), f"pattern {i} (F = {f:.3f}, k = {k:.3f})", PARITY_ATOL)
    _ok(f"batch: {len(feeds)} (F, k) pairs in one call, each right")


def saved_images(student, backend: str) -> None:
    """`student(simulation, path, nbimage, nbextrastep)` must store V in the HDF5 file `path` after
    every `nbextrastep` steps of `simulation` (a gs_course Simulation), `nbimage` images in all."""
    from .backends import create
    from .output import read_frames

    rows, cols = _grid(np.random.default_rng())
    nbimage, nbextrastep = 4, 7
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "images.h5"
        student(create(backend, PARAMS, rows, cols), path, nbimage, nbextrastep)
        if not path.is_file():
            raise NotYet(f"no file at path: write the images to {path.name} with a FrameWriter")
        frames, attributes = read_frames(path)
    _compare_images(frames, rows, cols, nbimage, nbextrastep)
    if not attributes.get("complete"):
        raise NotYet("the file is not marked complete: close the writer (a with block does it)")
    _ok(f"saved images: {nbimage} images in the file, each after (i + 1) x {nbextrastep} steps, file complete")


# CuPy's exercises: kernels and pinned memory need an NVIDIA GPU. Without one, each checker says
# what it could not check and why, and the notebook runs on.

#: The ElementwiseKernel of the update: per cell, U and V, their Laplacians and the parameters in.
UPDATE_INPUTS = "float32 u, float32 v, float32 lu, float32 lv, float32 du, float32 dv, float32 feed, float32 kill, float32 dt"
UPDATE_OUTPUTS = "float32 u_next, float32 v_next"

#: The RawKernel of a whole step, one thread a cell; the student writes what replaces BODY.
STEP_KERNEL = """extern "C" __global__ void step(
    const float* u, const float* v, float* u_next, float* v_next,
    int rows, int cols, float du, float dv, float feed, float kill, float dt)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    const int cell = row * cols + col;
BODY
}"""

#: cudaPointerGetAttributes' memory type of page-locked (pinned) host memory.
_CUDA_MEMORY_TYPE_HOST = 1


def _gpu_cupy(what: str):
    """CuPy where it runs on a GPU here; else None, after saying what is not checked and why."""
    from .backends import probe

    found = probe("cupy")
    if not found.ok:
        print(f"- {what}: not checked here, it needs an NVIDIA GPU with CuPy ({found.reason})")
        return None
    import cupy

    return cupy


def _refuse_the_placeholder(student) -> None:
    """The "your turn" error of a student function still unwritten, without calling it: where a
    GPU-only checker cannot run the function, the student still learns that it is not written."""
    if YOUR_TURN_MESSAGE in student.__code__.co_consts:
        raise NotImplementedError(YOUR_TURN_MESSAGE)


@contextlib.contextmanager
def _compile_errors_as_hints(cupy):
    """nvrtc's log (the compiler's error lines) instead of CuPy's long traceback."""
    try:
        yield
    except cupy.cuda.compiler.CompileException as err:
        lines = [line.strip() for line in str(err).splitlines() if "error" in line]
        raise NotYet("your kernel does not compile:\n" + "\n".join(lines[:5] or str(err).splitlines()[:5])) from None


def elementwise_update(body: str, laplacian):
    """`body`, the CUDA C of an ElementwiseKernel with UPDATE_INPUTS and UPDATE_OUTPUTS, must compute
    one cell's u_next and v_next: checked as a step with `laplacian`. Returns the kernel (None
    without a GPU)."""
    cupy = _gpu_cupy("your ElementwiseKernel")
    if cupy is None:
        return None
    from .backends.cupy_backend import scalars

    kernel = cupy.ElementwiseKernel(UPDATE_INPUTS, UPDATE_OUTPUTS, body, "student_update")

    def fused_step(u, v, p):
        return kernel(u, v, laplacian(u), laplacian(v), *scalars(p, *u.shape)[2:])  # no rows, cols

    with _compile_errors_as_hints(cupy):
        step(fused_step, device_type=cupy.ndarray, to_device=cupy.asarray)
    return kernel


def step_kernel(body: str):
    """`body` completes STEP_KERNEL: one thread computes cell (row, col) of a whole step. Checked on
    a random odd grid; returns `launch(u, v, u_next, v_next, params)`, which queues one step
    (None without a GPU)."""
    cupy = _gpu_cupy("your RawKernel")
    if cupy is None:
        return None
    from .backends.cupy_backend import launch_step, scalars

    kernel = cupy.RawKernel(STEP_KERNEL.replace("BODY", body), "step")

    def launch(u, v, u_next, v_next, p):
        launch_step(u, v, u_next, v_next, scalars(p, *u.shape), kernel)

    def one_step(u, v, p):
        u_next, v_next = cupy.empty_like(u), cupy.empty_like(v)
        launch(u, v, u_next, v_next, p)
        return u_next, v_next

    with _compile_errors_as_hints(cupy):
        step(one_step, device_type=cupy.ndarray, to_device=cupy.asarray)
    return launch


def pinned_fetch(student) -> None:
    """`student(v, stream)` must return V in a host array of pinned (page-locked) memory, the copy
    queued on `stream`; the checker waits for the stream before looking."""
    cupy = _gpu_cupy("your pinned fetch")
    if cupy is None:
        _refuse_the_placeholder(student)  # without a GPU, at least this much
        return
    rng = np.random.default_rng()
    want = rng.random(_grid(rng), dtype=np.float32)
    stream = cupy.cuda.Stream(non_blocking=True)
    got = student(cupy.asarray(want), stream)
    stream.synchronize()
    if not isinstance(got, np.ndarray):
        raise NotYet(f"your fetch returned a {type(got).__module__}.{type(got).__name__}: return a NumPy array "
                     "in pinned memory (cupyx.empty_pinned) that the copy filled")
    attributes = cupy.cuda.runtime.pointerGetAttributes(got.ctypes.data)
    if getattr(attributes, "type", getattr(attributes, "memoryType", None)) != _CUDA_MEMORY_TYPE_HOST:
        raise NotYet("your array is in ordinary (pageable) memory: allocate it with cupyx.empty_pinned, "
                     "then copy into it (out=...)")
    _compare(got, want, "your fetched V", 0.0)
    _ok("pinned fetch: V in page-locked memory, copied on your stream")
