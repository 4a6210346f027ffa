"""The answers `gs_course.lessons.check_harness` gives the checkers: each exercise as its notebook has it
(the names its cell uses, the solved cell with its checker call). The cases, in
`gs_course.lessons.check_cases`, are one line each: the exercise, the answer (the reference with (old, new)
words replaced, or a whole cell), the verdict, a piece of the line it must get, and where it runs
("gpu": CuPy on an NVIDIA GPU only; "cpu": without one only). The wrong answers are those students type (issues 12 and 29's playtests,
and others of the same kinds); the right ones are written in several ways.
"""

from __future__ import annotations

import dataclasses

from . import analysis

#: The verdicts a case can expect: the checker's tick, its NotYet, its "not checked" line.
PASS, FAIL, NOT_CHECKED = "pass", "fail", "not checked"


@dataclasses.dataclass(frozen=True)
class Exercise:
    """An exercise as its notebook has it: `setup` makes the names its cell uses (run once per
    case, in a fresh module), `answer` is the solved cell, ending with the checker's call."""

    setup: str
    answer: str
    kernel: bool = False  # CUDA C: without a GPU it runs on the CPU only where a C++ compiler is
    own_process: bool = False  # JAX on four CPU devices (XLA_FLAGS, read once); a Legate abort kills only it


@dataclasses.dataclass(frozen=True)
class Case:
    """One answer and what the checker must say. `answer`: the reference answer with each
    (old, new) replaced (old must occur), or a whole cell (a str). `hint`: a regular expression
    that the checker's line must contain. `where`: "gpu" (CuPy on an NVIDIA GPU only), "cpu"
    (without one only), "" (both)."""

    exercise: str
    answer: tuple | str
    verdict: str
    hint: str = ""
    where: str = ""
    name: str = ""

    def source(self, exercises: dict) -> str:
        if isinstance(self.answer, str):
            return self.answer
        text = exercises[self.exercise].answer
        for old, new in zip(self.answer[::2], self.answer[1::2]):
            if old not in text:
                raise ValueError(f"{self.exercise}: {old!r} is not in the reference answer")
            text = text.replace(old, new)
        return text

    @property
    def label(self) -> str:
        what = self.name or (" -> ".join(self.answer[:2]) if isinstance(self.answer, tuple) else "whole cell")
        return f"{self.exercise}: {what}"[:110]



#: The notebooks' Laplacian of cuPyNumeric and CuPy ({xp}: the library; {own}: cuPyNumeric's copy into
#: an array of Legate's own).
_LAPLACIAN = """
@functools.cache
def window_counts(rows, cols):
    return {xp}.asarray(model.window_counts(rows, cols)){own}

def laplacian(a):
    rows, cols = a.shape
    counts = window_counts(rows, cols)
    padded = {xp}.pad(a, 1)
    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))
    return window_sum - counts * a
"""

_JAX = """
import jax, jax.numpy as jnp, numpy as np
from functools import partial
from jax import lax
from gs_course import model
from gs_course.lessons import checkers as check
from gs_course.parameters import Parameters
params = Parameters()

def laplacian(a):
    rows, cols = a.shape
    counts = jnp.asarray(model.window_counts(rows, cols))
    padded = jnp.pad(a, 1)
    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))
    return window_sum - counts * a

def step(u, v, p):
    uvv = u * v * v
    return (u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u)),
            v + p.dt * (p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v))
"""

_CUPYNUMERIC = """
import functools
import numpy as np
from gs_course import backends, model
from gs_course.lessons import checkers as check
backends.load("cupynumeric")
import cupynumeric as cnp
from legate.core import VariantCode, VariantOptions, broadcast
from legate.core.task import InputArray, OutputArray, task
from gs_course.parameters import Parameters
params = Parameters()

""" + _LAPLACIAN.format(xp="cnp", own=".copy()") + """
def step(u, v, p):
    uvv = u * v * v
    return (u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u)),
            v + p.dt * (p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v))
"""

#: The CuPy notebooks' choice: CuPy on a GPU, NumPy in its place without one.
_CUPY_OR_NUMPY = """
CUPY = backends.probe("cupy")
if CUPY.ok:
    import cupy, cupyx
    xp = cupy
else:
    xp = np
on_device = xp.ndarray if CUPY.ok else None
"""

_CUPY = """
import functools
import numpy as np
from gs_course import backends, model
from gs_course.lessons import checkers as check, cupy_check
from gs_course.output import BackgroundWriter, FrameWriter
from gs_course.parameters import Parameters
params = Parameters()
""" + _CUPY_OR_NUMPY + """BACKEND = "cupy" if CUPY.ok else "numpy"
""" + _LAPLACIAN.format(xp="xp", own="")



def _laplacian_of(setup: str) -> str:
    """The Laplacian that `setup` defines, as the Laplacian exercise's answer."""
    return "def laplacian(a):" + setup.split("def laplacian(a):")[1].split("\n\n")[0] + "\n\n"


_SYNTHESIS = """
import numpy as np
from gs_course import backends
from gs_course.lessons import analysis, analysis_check as check
""" + _CUPY_OR_NUMPY

_STEP = """
def step(u, v, p):
    uvv = u * v * v
    du = p.du * laplacian(u) - uvv + p.feed * (1 - u)
    dv = p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v
    return u + p.dt * du, v + p.dt * dv
"""

_STEP_TASK = """
@task(variants=(VariantCode.CPU,),
      constraints=(broadcast("u"), broadcast("v"), broadcast("u_out"), broadcast("v_out")),
      options=VariantOptions(may_throw_exception=True))
def steps_task(u: InputArray, v: InputArray, u_out: OutputArray, v_out: OutputArray,
               steps: int, du: float, dv: float, feed: float, kill: float, dt: float) -> None:
    p = Parameters(du, dv, feed, kill, dt)
    a, b = np.asarray(u), np.asarray(v)
    for _ in range(steps):
        a, b = model.reference_step(a, b, p)
    np.asarray(u_out)[:] = a
    np.asarray(v_out)[:] = b

def run_task(u, v, p, steps):
    u_out, v_out = cnp.empty_like(u), cnp.empty_like(v)
    steps_task(u, v, u_out, v_out, steps, p.du, p.dv, p.feed, p.kill, p.dt)
    return u_out, v_out

check.time_loop(run_task, device_type=cnp.ndarray, to_device=cnp.asarray)
"""

_STEP_BODY = '''
step_body = """
    const float uc = u[cell], vc = v[cell];
    float lu = 0.0f, lv = 0.0f;
    for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r) {
        for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {
            lu += u[r * cols + c] - uc;
            lv += v[r * cols + c] - vc;
        }
    }
    const float uvv = uc * vc * vc;
    u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));
    v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);
"""
launch = check.step_kernel(step_body)
'''

_SAVE = """
def save_images(simulation, path, nbimage, nbextrastep):
    rows, cols = simulation.rows, simulation.cols
    frames = FrameWriter(path, nbimage, rows, cols, simulation.params, nbextrastep, deflate=None)
    with BackgroundWriter(frames) as writer:
        for _ in range(nbimage):
            simulation.advance(nbextrastep)
            writer.write(simulation.fetch_v())

check.saved_images(save_images, BACKEND, overlapped=True)
"""

_HISTOGRAM_BODY = f'''
privatised = r"""{analysis.PRIVATISED}"""
privatised_kernel = check.histogram_kernel(privatised)
'''

_BITONIC_BODY = f'''
bitonic_body = r"""{analysis.BITONIC_BODY}"""
bitonic_sort = check.bitonic_step(bitonic_body)
'''

EXERCISES = {
    "jax 3": Exercise(_JAX, """
@partial(jax.jit, static_argnums=(2, 3, 4))
def images(u, v, p, nbimage, nbextrastep):
    def one_image(uv, _):
        u, v = lax.fori_loop(0, nbextrastep, lambda _, uv: step(*uv, p), uv)
        return (u, v), v

    _, frames = lax.scan(one_image, (u, v), None, length=nbimage)
    return frames

check.images(images, device_type=jax.Array, to_device=jnp.asarray)
"""),
    "jax 1 laplacian": Exercise(_JAX, _laplacian_of(_JAX) + "check.laplacian(laplacian, device_type=jax.Array, to_device=jnp.asarray)"),
    "jax 1 step": Exercise(_JAX, _STEP + "check.step(step, device_type=jax.Array, to_device=jnp.asarray)"),
    "jax 2": Exercise(_JAX, """
@partial(jax.jit, static_argnums=(2, 3))
def run(u, v, p, steps):
    return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))

check.time_loop(run, device_type=jax.Array, to_device=jnp.asarray)
"""),
    "jax 4": Exercise(_JAX, """
def batch(feeds, kills, rows, cols, steps):
    u0, v0 = (jnp.asarray(a) for a in model.initial_state(rows, cols))

    def one_pair(feed, kill):
        def body(_, uv):
            u, v = uv
            uvv = u * v * v
            du = params.du * laplacian(u) - uvv + feed * (1 - u)
            dv = params.dv * laplacian(v) + uvv - (feed + kill) * v
            return u + params.dt * du, v + params.dt * dv

        return lax.fori_loop(0, steps, body, (u0, v0))[1]

    return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))

check.batch(batch, device_type=jax.Array)
"""),
    "jax 5": Exercise(_JAX, """
def exchange(band, bands):
    down = [(i, i + 1) for i in range(bands - 1)]
    up = [(i + 1, i) for i in range(bands - 1)]
    above = lax.ppermute(band[-1:], "rows", down)
    below = lax.ppermute(band[:1], "rows", up)
    return above, below

check.halo_exchange(exchange)
""", own_process=True),
    "cupynumeric 1": Exercise(_CUPYNUMERIC, """
u0, v0 = model.initial_state(41, 53)
u = cnp.asarray(u0)
v = cnp.asarray(v0)
check.on_device(u, v, expected=(u0, v0), device_type=cnp.ndarray)
"""),
    "cupynumeric 2 step": Exercise(_CUPYNUMERIC, _STEP + "check.step(step, device_type=cnp.ndarray, to_device=cnp.asarray)"),
    "cupynumeric 3": Exercise(_CUPYNUMERIC, """
def run(u, v, p, steps):
    for _ in range(steps):
        u, v = step(u, v, p)
    return u, v

check.time_loop(run, device_type=cnp.ndarray, to_device=cnp.asarray)
"""),
    "cupynumeric 2 laplacian": Exercise(_CUPYNUMERIC, _laplacian_of(_CUPYNUMERIC) + "check.laplacian(laplacian, device_type=cnp.ndarray, to_device=cnp.asarray)"),
    "cupynumeric 4": Exercise(_CUPYNUMERIC, """
window = cnp.ones((3, 3), dtype=np.float32)

def laplacian_convolve(a):
    counts = window_counts(*a.shape)
    return cnp.convolve(a, window, mode="same") - counts * a

check.laplacian(laplacian_convolve, device_type=cnp.ndarray, to_device=cnp.asarray, uses="convolve")
"""),
    "cupynumeric 5": Exercise(_CUPYNUMERIC, _STEP_TASK, own_process=True),  # a regression aborts the process
    "cupy 1": Exercise(_CUPY, _laplacian_of(_CUPY) + "check.laplacian(laplacian, device_type=on_device, to_device=xp.asarray)"),
    "cupy 2": Exercise(_CUPY, _STEP + "check.step(step, device_type=on_device, to_device=xp.asarray)"),
    "cupy 6": Exercise(_CUPY, """
def strip_launch(rows, cols, block, strip_rows):
    grid = (-(-cols // block[0]), -(-rows // (block[1] * strip_rows)))
    return grid, block

cupy_check.strip_launch(strip_launch)
"""),
    "cupy 3": Exercise(_CUPY, '''
update_body = """
float uvv = u * v * v;
u_next = u + dt * (du * lu - uvv + feed * (1.0f - u));
v_next = v + dt * (dv * lv + uvv - (feed + kill) * v);
"""
update = check.elementwise_update(update_body, laplacian)
''', kernel=True),
    "cupy 4": Exercise(_CUPY, _STEP_BODY, kernel=True),
    "cupy 5": Exercise(_CUPY, """
def fetch(v, stream):
    out = cupyx.empty_pinned(v.shape, v.dtype)
    cupy.asnumpy(v, stream=stream, out=out, blocking=False)
    return out

check.pinned_fetch(fetch)
"""),
    "cupy 7": Exercise(_CUPY, _SAVE),
    "synthesis 1": Exercise(_SYNTHESIS, """
def mass(images):
    return images.sum(axis=(1, 2), dtype=np.float64)

check.mass(mass, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 2": Exercise(_SYNTHESIS, """
map_expr = "v > threshold ? v : 0.0"
reduce_expr = "a + b"
identity = "0"
spot_mass = check.spot_mass_kernel(map_expr, reduce_expr, identity)
""", kernel=True),
    "synthesis 3": Exercise(_SYNTHESIS, """
def histograms(images, bins):
    count = images.shape[0]
    index = xp.minimum((images * bins).astype(np.int64), bins - 1)
    index += (xp.arange(count) * bins)[:, None, None]
    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)

check.histograms(histograms, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 6": Exercise(_SYNTHESIS, """
def bright_cells(image, threshold):
    coordinates = xp.argwhere(image > threshold)
    return coordinates, image[coordinates[:, 0], coordinates[:, 1]]

check.bright_cells(bright_cells, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 5": Exercise(_SYNTHESIS, """
def similarity(images):
    rows = images.reshape(images.shape[0], -1)
    gram = rows @ rows.T
    norms = xp.sqrt(xp.diagonal(gram))
    return gram / (norms[:, None] * norms[None, :])

check.similarity(similarity, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 4": Exercise(_SYNTHESIS, """
def deciles(images):
    ordered = xp.sort(images.ravel())
    index = np.floor(analysis.DECILES * (ordered.size - 1)).astype(np.int64)
    edges = ordered[xp.asarray(index)]
    return edges, xp.searchsorted(edges, images, side="right")

check.deciles(deciles, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 7": Exercise(_SYNTHESIS, _HISTOGRAM_BODY, kernel=True),
    "synthesis 8": Exercise(_SYNTHESIS, _BITONIC_BODY, kernel=True),
}


def _with_the_earlier_answers(exercises: dict, notebook: str) -> None:
    """Each exercise of `notebook` ("jax", "cupynumeric") gets the names its notebook defines in the
    exercises before it (the solved cells, their checker calls left out): an answer may call them,
    as images may call the time loop's `run`, where a setup without them raises NameError."""
    names = sorted((n for n in exercises if n.split()[0] == notebook), key=lambda n: int(n.split()[1]))
    for earlier, name in zip(names, names[1:]):
        defined = "\n".join(line for line in exercises[earlier].answer.splitlines() if not line.startswith("check."))
        exercises[name] = dataclasses.replace(exercises[name], setup=f"{exercises[earlier].setup}\n{defined}\n")


for _notebook in ("jax", "cupynumeric"):
    _with_the_earlier_answers(EXERCISES, _notebook)
