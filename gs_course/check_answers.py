"""The answers `gs_course.check_harness` gives the checkers: each exercise as its notebook has it
(the names its cell uses, the solved cell with its checker call), then the cases. A case is one
line: the exercise, the answer (the reference with (old, new) words replaced, or a whole cell), the
verdict, a piece of the line it must get, and where it runs ("gpu": CuPy on an NVIDIA GPU only;
"cpu": without one only). The wrong answers are those students type (issues 12 and 29's playtests,
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
from gs_course import check, model
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
from gs_course import backends, check, model
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
from gs_course import backends, check, cupy_check, model
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
from gs_course import analysis, backends
from gs_course import analysis_check as check
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
    "jax 5": Exercise(_JAX, """
@partial(jax.jit, static_argnums=(2, 3, 4))
def images(u, v, p, nbimage, nbextrastep):
    def one_image(uv, _):
        u, v = lax.fori_loop(0, nbextrastep, lambda _, uv: step(*uv, p), uv)
        return (u, v), v

    _, frames = lax.scan(one_image, (u, v), None, length=nbimage)
    return frames

check.images(images, device_type=jax.Array, to_device=jnp.asarray)
"""),
    "jax 2": Exercise(_JAX, _laplacian_of(_JAX) + "check.laplacian(laplacian, device_type=jax.Array, to_device=jnp.asarray)"),
    "jax 3": Exercise(_JAX, _STEP + "check.step(step, device_type=jax.Array, to_device=jnp.asarray)"),
    "jax 4": Exercise(_JAX, """
@partial(jax.jit, static_argnums=(2, 3))
def run(u, v, p, steps):
    return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))

check.time_loop(run, device_type=jax.Array, to_device=jnp.asarray)
"""),
    "jax 6": Exercise(_JAX, """
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
    "jax 7": Exercise(_JAX, """
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
    "cupynumeric 3": Exercise(_CUPYNUMERIC, _STEP + "check.step(step, device_type=cnp.ndarray, to_device=cnp.asarray)"),
    "cupynumeric 4": Exercise(_CUPYNUMERIC, """
def run(u, v, p, steps):
    for _ in range(steps):
        u, v = step(u, v, p)
    return u, v

check.time_loop(run, device_type=cnp.ndarray, to_device=cnp.asarray)
"""),
    "cupynumeric 2": Exercise(_CUPYNUMERIC, _laplacian_of(_CUPYNUMERIC) + "check.laplacian(laplacian, device_type=cnp.ndarray, to_device=cnp.asarray)"),
    "cupynumeric 5": Exercise(_CUPYNUMERIC, """
window = cnp.ones((3, 3), dtype=np.float32)

def laplacian_convolve(a):
    counts = window_counts(*a.shape)
    return cnp.convolve(a, window, mode="same") - counts * a

check.laplacian(laplacian_convolve, device_type=cnp.ndarray, to_device=cnp.asarray)
"""),
    "cupynumeric 6": Exercise(_CUPYNUMERIC, _STEP_TASK, own_process=True),  # a regression aborts the process
    "cupy 1": Exercise(_CUPY, _laplacian_of(_CUPY) + "check.laplacian(laplacian, device_type=on_device, to_device=xp.asarray)"),
    "cupy 2": Exercise(_CUPY, _STEP + "check.step(step, device_type=on_device, to_device=xp.asarray)"),
    "cupy 5": Exercise(_CUPY, """
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
    "cupy 6": Exercise(_CUPY, """
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
    "synthesis 4": Exercise(_SYNTHESIS, """
def bright_cells(image, threshold):
    coordinates = xp.argwhere(image > threshold)
    return coordinates, image[coordinates[:, 0], coordinates[:, 1]]

check.bright_cells(bright_cells, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 6": Exercise(_SYNTHESIS, """
def similarity(images):
    rows = images.reshape(images.shape[0], -1)
    gram = rows @ rows.T
    norms = xp.sqrt(xp.diagonal(gram))
    return gram / (norms[:, None] * norms[None, :])

check.similarity(similarity, device_type=on_device, to_device=xp.asarray)
"""),
    "synthesis 5": Exercise(_SYNTHESIS, """
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

_PYTHON_LOOP = ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                "for _ in range(steps):\n        u, v = step(u, v, p)\n    return u, v")
_TASK_WITH_CNP = ("a, b = model.reference_step(a, b, p)", "a, b = step(cnp.asarray(a), cnp.asarray(b), p)")

CASES = [
    # --- JAX ------------------------------------------------------------------------------------
    Case("jax 5", (), PASS, "one scan"),
    Case("jax 5", ("return (u, v), v", "return (u, v), u"), FAIL, "it is U: store V", name="U stored"),
    Case("jax 5", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "return lax.scan(one_image, (u, v), None, length=nbimage)"), FAIL, "lax.scan returns \\(carry, stacked\\)",
         name="the scan's pair returned"),
    Case("cupynumeric 1", (), PASS, "2 arrays on the device"),
    Case("cupynumeric 1", ("v = cnp.asarray(v0)", "v = v0"), FAIL, "not on the device", name="v left on the host"),
    Case("cupynumeric 3", (), PASS, "right with dt"),
    Case("cupynumeric 3", ("return u + p.dt * du, v + p.dt * dv", "return v + p.dt * dv, u + p.dt * du"), FAIL,
         "U and V are swapped", name="U and V swapped"),
    Case("cupynumeric 4", (), PASS, "time loop: right"),
    Case("cupynumeric 4", ("for _ in range(steps):", "for _ in range(steps - 1):"), FAIL, "one step too early",
         name="one step too few"),
    Case("cupy 2", (), PASS, "right with dt"),
    Case("cupy 2", ("du = p.du * laplacian(u)", "du = p.dv * laplacian(u)", "dv = p.dv * laplacian(v)",
                    "dv = p.du * laplacian(v)"), FAIL, "Du and Dv are swapped", name="Du and Dv swapped"),
    Case("cupy 5", (), PASS, "launch configuration: right"),
    Case("cupy 5", ("-(-rows // (block[1] * strip_rows))", "-(-rows // block[1])"), FAIL, "a thread for every row",
         name="a thread a row"),
    Case("cupy 5", ("-(-cols // block[0])", "cols // block[0]"), FAIL, "round the division up", name="rounded down"),
    Case("synthesis 3", (), PASS, "histograms"),
    Case("synthesis 3", ("xp.minimum((images * bins).astype(np.int64), bins - 1)", "(images * bins).astype(np.int64)"),
         FAIL, "one past the last bin|bins - 1", name="the top edge past the last bin"),
    Case("synthesis 4", (), PASS, "bright cells"),
    Case("synthesis 4", ("image > threshold", "image >= threshold"), FAIL, "not >=", name=">="),
    Case("synthesis 4", ("image[coordinates[:, 0], coordinates[:, 1]]", "image[coordinates]"), FAIL, "",
         name="indexed with the coordinates array"),
    Case("synthesis 6", (), PASS, "similarity"),
    Case("synthesis 6", ("return gram / (norms[:, None] * norms[None, :])", "return gram"), FAIL, "Gram matrix",
         name="the Gram matrix"),
    Case("jax 2", (), PASS, "runs under jax.jit"),
    Case("jax 2", ("padded[i : i + rows, j : j + cols]", "padded[i : i + rows - 1, j : j + cols]"), FAIL,
         "different shapes.*padded\\[i : i \\+ rows, j : j \\+ cols\\]", name="a slice one row short"),
    Case("jax 2", ("for i in range(3) for j in range(3))", "for i, j in ((0, 1), (1, 0), (1, 2), (2, 1)))",
                   "window_sum - counts * a", "window_sum - 4 * a"), FAIL, "five-point stencil",
         name="five-point stencil"),
    Case("jax 2", ("padded = jnp.pad(a, 1)\n    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "window_sum = sum(jnp.roll(a, (i, j), axis=(0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1))"),
         FAIL, "wrapped around", name="jnp.roll: the border wrapped around"),
    Case("jax 2", ("padded = jnp.pad(a, 1)", "padded = np.pad(a, 1)"), FAIL, "hands a JAX array to NumPy",
         name="np.pad of a JAX array"),
    Case("jax 3", (), PASS, "right with dt"),
    Case("jax 3", ("return u + p.dt * du, v + p.dt * dv", "return u + p.dt * (du - p.feed * (1 - u)) + p.feed * (1 - u), "
                   "v + p.dt * (dv + (p.feed + p.kill) * v) - (p.feed + p.kill) * v"),
         FAIL, "dt on the reaction and diffusion terms only", name="dt on all but the feed"),
    Case("jax 3", ("p.du * laplacian(u)", "params.du * laplacian(u)", "p.dv * laplacian(v) + uvv - (p.feed + p.kill)",
                   "params.dv * laplacian(v) + uvv - (params.feed + params.kill)", "p.feed * (1 - u)",
                   "params.feed * (1 - u)", "u + p.dt * du, v + p.dt * dv", "u + params.dt * du, v + params.dt * dv"),
         FAIL, "default parameters.*not the notebook's params", name="params instead of p"),
    Case("jax 3", ("return u + p.dt * du, v + p.dt * dv", "return u + du * p.dt, p.dt * dv + v"), PASS, "right with dt",
         name="dt written after"),
    Case("jax 4", (), PASS, "one loop on the device"),
    Case("jax 4", _PYTHON_LOOP, FAIL, "Python loop traced step by step", name="a Python for loop under jit"),
    Case("jax 4", ("lambda _, uv: step(*uv, p)", "lambda uv: step(*uv, p)"), FAIL, "body\\(i, carry\\)",
         name="fori_loop body without the index"),
    Case("jax 4", ("lambda _, uv: step(*uv, p), (u, v))", "lambda i, u, v: step(u, v, p), (u, v))"), FAIL,
         "body\\(i, carry\\)", name="fori_loop body taking u, v apart"),
    Case("jax 4", ("lambda _, uv: step(*uv, p)", "lambda _, uv: list(step(*uv, p))"), FAIL, "a tuple \\(u, v\\)",
         name="fori_loop body returning a list"),
    Case("jax 4", ("lambda _, uv: step(*uv, p)", "lambda _, uv: step(*(jnp.asarray(np.asarray(x)) for x in uv), p)"),
         FAIL, "does not run under jax.jit: it hands a JAX array to NumPy", name="np.asarray under jit"),
    Case("jax 4", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "return lax.scan(lambda uv, _: (step(*uv, p), None), (u, v), None, length=steps)[0]"),
         PASS, "one loop on the device", name="lax.scan instead of fori_loop"),
    Case("jax 4", ("lax.fori_loop(0, steps,", "lax.fori_loop(1, steps,"), FAIL, "one step too early",
         name="the loop from 1"),
    Case("jax 6", (), PASS, "one vmap"),
    Case("jax 6", ("jax.vmap(one_pair)", "jax.vmap(one_pair, in_axes=(0, None))"), FAIL, "in_axes",
         name="in_axes=(0, None)"),
    Case("jax 6", ("(u0, v0))[1]", "(u0, v0))[0]"), FAIL, "it is U: return V", name="U for V"),
    Case("jax 6", ("return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))",
                   "return jnp.stack([one_pair(f, k) for f, k in zip(feeds, kills)])"), FAIL, "grows with the pairs",
         name="a Python loop over the pairs"),
    Case("jax 6", ("(jnp.asarray(feeds), jnp.asarray(kills))", "(jnp.asarray(kills), jnp.asarray(feeds))"), FAIL,
         "F and k are swapped", name="kills for feeds"),
    Case("jax 7", (), PASS, "halo exchange: right"),
    Case("jax 7", ("return above, below", "return [above, below]"), PASS, "halo exchange: right",
         name="a list of the two rows"),
    Case("jax 7", ('lax.ppermute(band[-1:], "rows", down)', 'lax.ppermute(band[-1:], "row", down)'), FAIL,
         "axis the mesh does not have", name="a wrong axis name"),
    Case("jax 7", ('above = lax.ppermute(band[-1:], "rows", down)\n    below = lax.ppermute(band[:1], "rows", up)',
                   'above = lax.ppermute(band[:1], "rows", up)\n    below = lax.ppermute(band[-1:], "rows", down)'),
         FAIL, "swapped", name="above and below swapped"),
    Case("jax 7", ("down = [(i, i + 1) for i in range(bands - 1)]", "down = [(i, (i + 1) % bands) for i in range(bands)]"),
         FAIL, "nothing lies beyond the grid's edges", name="the last band sends to the first"),
    # --- cuPyNumeric ----------------------------------------------------------------------------
    Case("cupynumeric 2", (), PASS, "laplacian: right"),
    Case("cupynumeric 2", "def laplacian(a):\n    return sum(cnp.roll(cnp.pad(a, 1), (-i, -j), axis=(0, 1))[1:-1, 1:-1] "
         "for i in (-1, 0, 1) for j in (-1, 0, 1)) - window_counts(*a.shape) * a\n"
         "check.laplacian(laplacian, device_type=cnp.ndarray, to_device=cnp.asarray)", PASS, "laplacian: right",
         name="cnp.roll of the padded grid"),
    Case("cupynumeric 2", ("padded = cnp.pad(a, 1)", "padded = cnp.asarray(np.pad(np.asarray(a), 1))"), FAIL,
         "copies arrays to the host", name="np.pad through the host"),
    Case("cupynumeric 5", (), PASS, "laplacian: right"),
    Case("cupynumeric 5", ('mode="same"', 'mode="valid"'), FAIL, "mode='same' only", name="mode='valid'"),
    Case("cupynumeric 5", ('mode="same"', 'mode="full"'), FAIL, "mode='same' only", name="mode='full'"),
    Case("cupynumeric 6", (), PASS, "time loop: right"),
    Case("cupynumeric 6", _TASK_WITH_CNP, FAIL, "calls cuPyNumeric inside its body", name="cnp inside the task"),
    Case("cupynumeric 6", ("np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b", "pass"), FAIL,
         "never written", name="empty_like outputs never written"),
    # --- CuPy -----------------------------------------------------------------------------------
    Case("cupy 1", (), PASS, "laplacian: right"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.asarray(np.pad(a.get(), 1))"), FAIL,
         "copies arrays to the host", "gpu", name="a.get(), np.pad, cupy.asarray back"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = cupy.asarray(np.pad(cupy.asnumpy(a), 1))"), FAIL,
         "copies arrays to the host", "gpu", name="cupy.asnumpy, np.pad, cupy.asarray back"),
    Case("cupy 3", (), PASS, "step: right"),
    Case("cupy 3", ("v_next = v + dt * (dv * lv + uvv - (feed + kill) * v);\n", ""), FAIL, "v_next was never written",
         name="v_next never written"),
    Case("cupy 3", ("u_next = u + dt * (du * lu - uvv + feed * (1.0f - u))", "u_next = u + dt * (du * lu - uvv) + feed * (1.0f - u)"),
         FAIL, "dt on the reaction and diffusion terms only", name="dt on all but the feed"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v"), FAIL, "does not compile", name="a missing ;"),
    Case("cupy 4", (), PASS, "step: right"),
    Case("cupy 4", ("const float uc = u[cell]", "const float uc = u[cell * 100000]"), FAIL,
         "separate process", "gpu", name="u[cell * 100000]"),
    Case("cupy 4", ("u_next[cell] =", "u_next[cell * 100000] ="), FAIL, "separate process", "gpu",
         name="u_next[cell * 100000]"),
    Case("cupy 4", ("const float uc = u[cell]", "const float uc = u[cell * 100000]"), FAIL,
         "outside its arrays \\(run on the CPU", "cpu", name="u[cell * 100000], on the CPU"),
    Case("cupy 4", ("u_next[cell] =", "u_next[cell + 1] ="), FAIL, "outside", name="u_next[cell + 1]"),
    Case("cupy 4", ("for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r)",
                    "for (int r = row - 1; r <= row + 1; ++r)"), FAIL, "reads outside its arrays at the border",
         name="the window not clamped at the border"),

    Case("cupy 6", (), NOT_CHECKED, "needs an NVIDIA GPU", "cpu"),
    Case("cupy 6", (), PASS, "copied on `stream`", "gpu"),
    Case("cupy 6", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "cupy.asnumpy(v, out=out)"), FAIL,
         "not queued on `stream`", "gpu", name="a blocking copy on the default stream"),
    Case("cupy 6", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "cupy.asnumpy(v, out=out, blocking=False)"),
         FAIL, "not queued on `stream`", "gpu", name="a non-blocking copy on the default stream"),
    Case("cupy 6", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "v.get(stream=stream, out=out, blocking=False)"),
         PASS, "copied on `stream`", "gpu", name="v.get on the stream"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "with frames as writer:"), FAIL, "written in line",
         name="the frames written in line"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "if True:\n        writer = BackgroundWriter(frames)"),
         FAIL, "still open", name="the writer never closed"),
    Case("cupy 7", (), PASS, "written by a second thread"),
    Case("cupy 7", """
import threading
def save_images(simulation, path, nbimage, nbextrastep):
    def write():
        with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as writer:
            for _ in range(nbimage):
                simulation.advance(nbextrastep)
                writer.write(simulation.fetch_v())
    threading.Thread(target=write).start()

check.saved_images(save_images, BACKEND, overlapped=True)
""", FAIL, "still ran when your function returned", name="a writer thread never joined"),
    Case("cupy 7", """
import threading
def save_images(simulation, path, nbimage, nbextrastep):
    def write():  # a writer whose file cannot be made: it is seen, but has no file
        with FrameWriter(path.parent / "no such folder" / path.name, nbimage, simulation.rows, simulation.cols,
                         simulation.params, nbextrastep) as writer:
            writer.write(simulation.fetch_v())
    thread = threading.Thread(target=write)
    thread.start()
    thread.join()

check.saved_images(save_images, BACKEND, overlapped=True)
""", FAIL, "no file at path", name="a writer made in a thread that fails"),
    Case("cupy 7", ("writer.write(simulation.fetch_v())", "writer.write(np.stack([simulation.fetch_v()] * 2))"),
         FAIL, "another shape than an image", name="two images a call"),
    # --- Synthesis ------------------------------------------------------------------------------
    Case("synthesis 1", (), PASS, "mass: one per image"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images.sum(axis=(1, 2)).astype(np.float64)"),
         FAIL, "summed in float32", name="summed in float32, then converted"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images.astype(np.float64).sum(axis=(2, 1))"),
         PASS, "mass: one per image", name="converted first, axes in the other order"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images.mean(axis=(1, 2), dtype=np.float64)"),
         FAIL, "mean V", name="the mean"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images.sum(axis=0, dtype=np.float64)"),
         FAIL, "summed over the images", name="summed over the images"),
    Case("synthesis 1", ("return images.sum(axis=(1, 2), dtype=np.float64)",
                         "return [image.sum(dtype=np.float64) for image in images]"), FAIL, "Python list",
         name="a list, one sum per image"),
    Case("synthesis 1", ("dtype=np.float64", "dtype=np.float32"), FAIL, "float32", name="summed in float32"),
    Case("synthesis 2", (), PASS, "spot mass kernel: right"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v < threshold ? v : 0.0"'), FAIL, "",
         name="the condition inverted"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"threshold < v ? v : 0"'), PASS, "spot mass kernel: right",
         name="the comparison the other way round"),
    Case("synthesis 2", ('identity = "0"', 'identity = "1"'), FAIL, "identity", name="identity 1"),
    Case("synthesis 2", ('reduce_expr = "a + b"', 'reduce_expr = "max(a, b)"'), FAIL, "largest value", name="max for +"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v >= threshold ? v : 0.0"'), FAIL, "not >=", name=">="),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold"'), FAIL, "counts the spots", name="the mask alone"),
    Case("synthesis 5", (), PASS, "binary search"),
    Case("synthesis 5", ('xp.searchsorted(edges, images, side="right")', "(images[..., None] >= edges).sum(axis=-1)"),
         FAIL, "binary search", name="classes by comparing with every edge"),
    Case("synthesis 5", ('xp.searchsorted(edges, images, side="right")', "xp.digitize(images, edges)"), PASS,
         "binary search", name="digitize"),
    Case("synthesis 5", ('side="right"', 'side="left"'), FAIL, "side='right'", name="side='left'"),
    Case("synthesis 5", ("edges = ordered[xp.asarray(index)]", "edges = xp.percentile(images, 100 * analysis.DECILES)"),
         FAIL, "interpolated", name="numpy.percentile's interpolation"),
    Case("synthesis 7", (), PASS, "privatised in shared memory"),
    Case("synthesis 7", ("for (int i = first; i < cells; i += stride)", "for (int i = threadIdx.x; i < cells; "
                         "i += blockDim.x)"), FAIL, "every block counted every cell", name="every block counts every cell"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "block_counts[bin] += 1;"), FAIL, "atomicAdd",
         name="a +1 that is not atomic"),
    Case("synthesis 7", ("for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;\n    __syncthreads();",
                         "for (int b = threadIdx.x; b < bins; b += blockDim.x) { block_counts[b] = 0; __syncthreads(); }"),
         FAIL, "only some threads of the block reach", name="a __syncthreads() in the zeroing loop"),
    Case("synthesis 7", ("min((int)(image[i] * bins), bins - 1)", "(int)(image[i] * bins)"), FAIL,
         "one past the last bin|outside its arrays",  # on a GPU the trial in a child process catches it first
         name="the top edge past the last bin"),
    Case("synthesis 7", ("min((int)(image[i] * bins), bins - 1)", "(image[i] < 1.0f ? (int)(image[i] * bins) : 63)"),
         PASS, "privatised", name="the last bin as a ternary"),
    Case("synthesis 7", ("block_counts[b] = 0;\n    __syncthreads();",
                         "block_counts[b] = 0;\n    if (threadIdx.x < bins) __syncthreads();"), FAIL,
         "divergent|every thread of the block", name="a __syncthreads() under if (threadIdx.x < bins)"),
    Case("synthesis 7", ("atomicAdd(&image_counts[b], block_counts[b])",
                         "if (blockIdx.x == 0) atomicAdd(&image_counts[b], block_counts[b] * gridDim.x)"), FAIL,
         "", name="one block's counts for all"),
    Case("synthesis 8", (), PASS, "bitonic sort"),
    Case("synthesis 8", ("(i & k) == 0", "(k & i) == 0"), PASS, "bitonic sort", name="(k & i) == 0"),
    Case("synthesis 8", ("if (partner > i) {", "if ((i & j) == 0) {"), PASS, "bitonic sort", name="if ((i & j) == 0)"),
    Case("synthesis 8", ("if (partner > i) {", "if (partner < i) {"), FAIL, "descending|ascending",
         name="the upper thread of each pair"),
    Case("synthesis 8", ("(i & k) == 0", "(i & k) != 0"), FAIL, "descending", name="the direction inverted"),
    Case("synthesis 8", ("values[i] = b;\n            values[partner] = a;",
                         "values[i] = values[partner];\n            values[partner] = values[i];"), FAIL,
         "lost or duplicated", name="a swap that loses a value"),
    Case("synthesis 8", ("if (partner > i) {", "{"), FAIL, "only the one with partner > i", name="both threads of a pair swap"),
    Case("synthesis 8", ("if (partner > i) {", "if (i < partner) {"), PASS, "bitonic sort", name="i < partner"),
    Case("synthesis 8", ("const float a = values[i]", "const float a = values[i] +"), FAIL, "does not compile",
         name="does not compile"),
]
