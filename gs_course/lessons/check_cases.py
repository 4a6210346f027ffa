"""The cases `gs_course.lessons.check_harness` runs, one line each: the exercise (of
`gs_course.lessons.check_answers.EXERCISES`), the answer (the reference with (old, new) words replaced, or a
whole cell), the verdict, a piece of the line it must get, and where it runs. A new wrong answer a
class types is a new line here.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case
from .check_cases_kernels import KERNEL_CASES, PLAYTEST_7_CUPY, PLAYTEST_8_CUPY, PLAYTEST_9_CUPY, PLAYTEST_11_CUPY, REVIEW_11
from .check_cases_jax import PLAYTEST_4_JAX
from .check_cases_playtest14 import PLAYTEST_14
from .check_cases_model import (OWN_QUEUE_THREAD, PLAYTEST_3_MODEL, PLAYTEST_4_MODEL, PLAYTEST_5_MODEL, PLAYTEST_6_MODEL,
                               PLAYTEST_7_MODEL, PLAYTEST_8_MODEL, PLAYTEST_9_MODEL)
from .check_cases_synthesis import PLAYTEST_7_SYNTHESIS, PLAYTEST_8_SYNTHESIS, PLAYTEST_9_SYNTHESIS, PLAYTEST_11_SYNTHESIS, SYNTHESIS_CASES

_PYTHON_LOOP = ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                "for _ in range(steps):\n        u, v = step(u, v, p)\n    return u, v")


#: The histogram kernel's loops over the bins: setting them to 0 (with the barrier after), and adding them to global memory.
_ZERO = "for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;\n    __syncthreads();"
_FLUSH = "for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&image_counts[b], block_counts[b]);"
#: The saving exercise's writer and its loop over the images.
_SAVE_LOOP = ("frames = FrameWriter(path, nbimage, rows, cols, simulation.params, nbextrastep, deflate=None)\n"
              "    with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n"
              "            simulation.advance(nbextrastep)\n            writer.write(simulation.fetch_v())")
_WRITER_AN_IMAGE = "for _ in range(nbimage):\n        simulation.advance(nbextrastep)\n"
_ONE_BIN_A_THREAD = "if (threadIdx.x < bins) atomicAdd(&image_counts[threadIdx.x], block_counts[threadIdx.x]);"


def _each_step(line: str) -> tuple[str, str]:
    """The time loop of cuPyNumeric's exercise with `line` run after each step."""
    return "u, v = step(u, v, p)\n", f"u, v = step(u, v, p)\n        {line}\n"


_TASK_WITH_CNP = ("a, b = model.reference_step(a, b, p)", "a, b = step(cnp.asarray(a), cnp.asarray(b), p)")

CASES = [
    # --- playtest 3: the model's and the task's checkers (their own module: this one stays under 600 lines)
    *PLAYTEST_3_MODEL,
    *PLAYTEST_4_MODEL,
    *PLAYTEST_6_MODEL,
    *PLAYTEST_5_MODEL,
    *PLAYTEST_7_MODEL, *PLAYTEST_8_MODEL, *PLAYTEST_9_MODEL,
    # --- playtest 4: the JAX tutorial's checkers (their own module too)
    *PLAYTEST_4_JAX,
    # --- JAX ------------------------------------------------------------------------------------
    Case("jax 1 step", ("p.feed * (1 - u)", "p.F * (1 - u)"), FAIL, "p.du, p.dv, p.feed, p.kill and p.dt",
         name="F for p.feed"),
    Case("cupy 2", ("(p.feed + p.kill) * v", "(p.feed + p.k) * v"), FAIL, "p.du, p.dv, p.feed, p.kill and p.dt",
         name="k for p.kill"),
    Case("cupynumeric 2 step", ("p.du * laplacian(u)", "p.Du * laplacian(u)"), FAIL, "p.du, p.dv, p.feed, p.kill and p.dt",
         name="Du for p.du"),
    Case("cupynumeric 2 laplacian", ("padded[i : i + rows, j : j + cols]", "padded[i : i + rows, j : j + cols - 1]"), FAIL,
         "different shapes", name="a slice a column short"),
    Case("jax 3", (), PASS, "one scan"),
    Case("jax 3", ("return (u, v), v", "return (u, v), u"), FAIL, "it is U: store V", name="U stored"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "return lax.scan(one_image, (u, v), None, length=nbimage)"), FAIL, "lax.scan returns \\(carry, stacked\\)",
         name="the scan's pair returned"),
    Case("cupynumeric 1", (), PASS, "2 arrays on the device"),
    Case("cupynumeric 1", ("v = cnp.asarray(v0)", "v = v0"), FAIL, "not on the device", name="v left on the host"),
    Case("cupynumeric 2 step", (), PASS, "right with dt"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv", "u += p.dt * du\n    v += p.dt * dv\n    return u, v"),
         FAIL, "right values but changes its inputs in place.*return u \\+ p.dt \\* du", name="the inputs updated in place"),
    Case("cupy 2", ("return u + p.dt * du, v + p.dt * dv", "u += p.dt * du\n    v += p.dt * dv\n    return u, v"),
         FAIL, "changes its inputs in place", name="the inputs updated in place"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv", "return v + p.dt * dv, u + p.dt * du"), FAIL,
         "U and V are swapped", name="U and V swapped"),
    Case("cupynumeric 3", (), PASS, "time loop: right"),
    Case("cupynumeric 3", ("for _ in range(steps):", "for _ in range(steps - 1):"), FAIL, "one step too early",
         name="one step too few"),
    Case("cupy 2", (), PASS, "right with dt"),
    Case("cupy 2", ("du = p.du * laplacian(u)", "du = p.dv * laplacian(u)", "dv = p.dv * laplacian(v)",
                    "dv = p.du * laplacian(v)"), FAIL, "Du and Dv are swapped", name="Du and Dv swapped"),
    Case("cupy 6", (), PASS, "launch configuration: right"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "-(-rows // block[1])"), FAIL, "a thread for every row",
         name="a thread a row"),
    Case("cupy 6", ("-(-cols // block[0])", "cols // block[0]"), FAIL, "round the division up", name="rounded down"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "rows // (block[1] * strip_rows) + 1"), FAIL,
         "wholly outside the domain.*adding one .* adds a block too many where the blocks divide the rows", name="rows rounded down, plus one"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "(rows // strip_rows) // block[1] + 1"), FAIL,
         "wholly outside the domain", name="rows per strip, then per block, plus one"),
    Case("cupy 6", ("-(-cols // block[0]), -(-rows // (block[1] * strip_rows))",
                    "-(-cols // block[1]), -(-rows // (block[0] * strip_rows))"), FAIL,
         "divides the columns by block\\[1\\] and the rows by block\\[0\\]", name="block[0] and block[1] swapped"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "(rows + block[1] * strip_rows) // (block[1] * strip_rows)"),
         FAIL, "which \\(n \\+ per_block\\) // per_block is too", name="a whole block added, then divided"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "(rows + block[1] * strip_rows - 1) // (block[1] * strip_rows)"),
         PASS, "launch configuration: right", name="rounded up by adding the divisor less one"),
    Case("synthesis 3", (), PASS, "histograms"),
    Case("synthesis 3", ("xp.minimum((images * bins).astype(np.int64), bins - 1)", "(images * bins).astype(np.int64)"),
         FAIL, "one past the last bin|bins - 1", name="the top edge past the last bin"),
    Case("synthesis 6", (), PASS, "bright cells"),
    Case("synthesis 6", ("image > threshold", "image >= threshold"), FAIL, "not >=", name=">="),
    Case("synthesis 6", ("image[coordinates[:, 0], coordinates[:, 1]]", "image[coordinates]"), FAIL, "",
         name="indexed with the coordinates array"),
    Case("synthesis 5", (), PASS, "similarity"),
    Case("synthesis 5", ("return gram / (norms[:, None] * norms[None, :])",
                         "return xp.sqrt(xp.maximum(norms[:, None] ** 2 + norms[None, :] ** 2 - 2 * gram, 0))"), FAIL,
         "0 on its diagonal.*a distance", name="the distances between the images"),
    Case("synthesis 5", ("return gram / (norms[:, None] * norms[None, :])", "return gram"), FAIL, "Gram matrix",
         name="the Gram matrix"),
    Case("jax 1 laplacian", (), PASS, "runs under jax.jit"),
    Case("jax 1 laplacian", ("    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))\n"
                   "    return window_sum - counts * a",
                   "    out = jnp.zeros_like(a)\n    for r in range(rows):\n"
                   "        out = out.at[r].set(padded[r : r + 3].sum(axis=0)[0:cols] + padded[r : r + 3].sum(axis=0)[1:cols + 1]"
                   " + padded[r : r + 3].sum(axis=0)[2:cols + 2])\n"
                   "    return out - counts * a"), FAIL, "grows with the grid's rows.*the nine slices",
         name="a Python loop over the rows, each row set with .at"),
    Case("jax 1 laplacian", ("padded[i : i + rows, j : j + cols]", "padded[i : i + rows - 1, j : j + cols]"), FAIL,
         "different shapes.*padded\\[i : i \\+ rows, j : j \\+ cols\\]", name="a slice one row short"),
    Case("jax 1 laplacian", ("for i in range(3) for j in range(3))", "for i, j in ((0, 1), (1, 0), (1, 2), (2, 1)))",
                   "window_sum - counts * a", "window_sum - 4 * a"), FAIL, "five-point stencil",
         name="five-point stencil"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)\n    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "window_sum = sum(jnp.roll(a, (i, j), axis=(0, 1)) for i in (-1, 0, 1) for j in (-1, 0, 1))"),
         FAIL, "wrapped around", name="jnp.roll: the border wrapped around"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = np.pad(a, 1)"), FAIL, "hands a JAX array to NumPy",
         name="np.pad of a JAX array"),
    Case("jax 1 step", (), PASS, "right with dt"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return u + p.dt * (du - p.feed * (1 - u)) + p.feed * (1 - u), "
                   "v + p.dt * (dv + (p.feed + p.kill) * v) - (p.feed + p.kill) * v"),
         FAIL, "dt on the reaction and diffusion terms only", name="dt on all but the feed"),
    Case("jax 1 step", ("p.du * laplacian(u)", "params.du * laplacian(u)", "p.dv * laplacian(v) + uvv - (p.feed + p.kill)",
                   "params.dv * laplacian(v) + uvv - (params.feed + params.kill)", "p.feed * (1 - u)",
                   "params.feed * (1 - u)", "u + p.dt * du, v + p.dt * dv", "u + params.dt * du, v + params.dt * dv"),
         FAIL, "default parameters.*not the notebook's params", name="params instead of p"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return u + du * p.dt, p.dt * dv + v"), PASS, "right with dt",
         name="dt written after"),
    Case("jax 2", (), PASS, "one loop on the device"),
    Case("jax 2", _PYTHON_LOOP, FAIL, "Python loop traced step by step", name="a Python for loop under jit"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda uv: step(*uv, p)"), FAIL, "body\\(i, carry\\)",
         name="fori_loop body without the index"),
    Case("jax 2", ("lambda _, uv: step(*uv, p), (u, v))", "lambda i, u, v: step(u, v, p), (u, v))"), FAIL,
         "body\\(i, carry\\)", name="fori_loop body taking u, v apart"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda _, uv: list(step(*uv, p))"), FAIL, "a tuple \\(u, v\\)",
         name="fori_loop body returning a list"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda _, uv: step(*(jnp.asarray(np.asarray(x)) for x in uv), p)"),
         FAIL, "does not run under jax.jit: it hands a JAX array to NumPy", name="np.asarray under jit"),
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "return lax.scan(lambda uv, _: (step(*uv, p), None), (u, v), None, length=steps)[0]"),
         PASS, "one loop on the device", name="lax.scan instead of fori_loop"),
    Case("jax 2", ("lax.fori_loop(0, steps,", "lax.fori_loop(1, steps,"), FAIL, "one step too early",
         name="the loop from 1"),
    Case("jax 4", (), PASS, "one vmap"),
    Case("jax 4", ("jax.vmap(one_pair)", "jax.vmap(one_pair, in_axes=(0, None))"), FAIL, "in_axes",
         name="in_axes=(0, None)"),
    Case("jax 4", ("(u0, v0))[1]", "(u0, v0))[0]"), FAIL, "it is U: return V", name="U for V"),
    Case("jax 4", ("return u + params.dt * du, v + params.dt * dv", "return u + du, v + dv"), FAIL, "dt",
         name="dt left out (right by luck at the school's dt = 1)"),
    Case("cupynumeric 3", ("for _ in range(steps):", "for _ in range(steps // 2):\n        u, v = step(u, v, p)"),
         FAIL, "after 21 steps", name="half as many double steps (right for even counts only)"),
    Case("jax 4", ("return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))",
                   "return jnp.stack([one_pair(f, k) for f, k in zip(feeds, kills)])"), FAIL, "grows with the pairs",
         name="a Python loop over the pairs"),
    Case("jax 4", ("+ feed * (1 - u)", "+ params.feed * (1 - u)", "(feed + kill) * v", "(params.feed + kill) * v"), FAIL,
         "the setup's feed, params.feed: inside one_pair use the pair's own feed", name="params.feed for the pair's feed"),
    Case("jax 4", ("(jnp.asarray(feeds), jnp.asarray(kills))", "(jnp.asarray(kills), jnp.asarray(feeds))"), FAIL,
         "F and k are swapped", name="kills for feeds"),
    Case("jax 5", (), PASS, "halo exchange: right"),
    Case("jax 5", ("return above, below", "return [above, below]"), PASS, "halo exchange: right",
         name="a list of the two rows"),
    Case("jax 5", ('lax.ppermute(band[-1:], "rows", down)', 'lax.ppermute(band[-1:], "row", down)'), FAIL,
         "axis the mesh does not have", name="a wrong axis name"),
    Case("jax 5", ('above = lax.ppermute(band[-1:], "rows", down)\n    below = lax.ppermute(band[:1], "rows", up)',
                   'above = lax.ppermute(band[:1], "rows", up)\n    below = lax.ppermute(band[-1:], "rows", down)'),
         FAIL, "swapped", name="above and below swapped"),
    Case("jax 5", ("down = [(i, i + 1) for i in range(bands - 1)]", "down = [(i, (i + 1) % bands) for i in range(bands)]"),
         FAIL, "nothing lies beyond the grid's edges", name="the last band sends to the first"),
    Case("jax 5", ('above = lax.ppermute(band[-1:], "rows", down)',
                   'above = sum(lax.ppermute(band[-1:], "rows", [pair]) for pair in down)'), PASS, "halo exchange: right",
         name="one ppermute a pair, summed"),
    Case("jax 5", ("for i in range(bands - 1)]", "for i in range(bands - 2)]"), FAIL, "one pair short",
         name="the pairs one short (empty with 2 bands)"),
    # --- cuPyNumeric ----------------------------------------------------------------------------
    Case("cupynumeric 2 laplacian", (), PASS, "laplacian: right"),
    Case("cupynumeric 2 laplacian", "def laplacian(a):\n    return sum(cnp.roll(cnp.pad(a, 1), (-i, -j), axis=(0, 1))[1:-1, 1:-1] "
         "for i in (-1, 0, 1) for j in (-1, 0, 1)) - window_counts(*a.shape) * a\n"
         "check.laplacian(laplacian, device_type=cnp.ndarray, to_device=cnp.asarray)", PASS, "laplacian: right",
         name="cnp.roll of the padded grid"),
    Case("cupynumeric 2 laplacian", ("padded = cnp.pad(a, 1)", "padded = cnp.asarray(np.pad(np.asarray(a), 1))"), FAIL,
         "copies arrays to the host", name="np.pad through the host"),
    Case("cupynumeric 4", (), PASS, "laplacian: right"),
    Case("cupynumeric 4", ('mode="same"', 'mode="valid"'), FAIL, "mode='same' only", name="mode='valid'"),
    Case("cupynumeric 4", ('mode="same"', 'mode="full"'), FAIL, "mode='same' only", name="mode='full'"),
    Case("cupynumeric 5", (), PASS, "time loop: right"),
    Case("cupynumeric 5", _TASK_WITH_CNP, FAIL, "calls cuPyNumeric inside its body", name="cnp inside the task"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b", "pass"), FAIL,
         "never writes u_out and v_out.*np.asarray\\(u_out\\)\\[:\\] = ", name="empty_like outputs never written"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a", "u_out = a"), FAIL, "never writes u_out \\(",
         name="u_out rebound, v_out written"),
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
         FAIL, "dt is missing on U's feed term only", name="dt on all but the feed"),
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

    Case("cupy 6", "import numpy as np\ndef strip_launch(rows, cols, block, strip_rows):\n"
         "    return (np.ceil(cols / block[0]), np.ceil(rows / (block[1] * strip_rows))), block\n"
         "cupy_check.strip_launch(strip_launch)", FAIL, "whole numbers", name="np.ceil's floats for the grid"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "__syncthreads();\n    const float uc = u[cell], vc = v[cell];"), FAIL,
         "never reach it", name="a __syncthreads() in the step kernel"),
    Case("cupy 5", (), NOT_CHECKED, "needs an NVIDIA GPU", "cpu"),
    Case("cupy 5", (), PASS, "copied on `stream`", "gpu"),
    Case("cupy 5", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "cupy.asnumpy(v, out=out)"), FAIL,
         "not queued on `stream`", "gpu", name="a blocking copy on the default stream"),
    Case("cupy 5", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "cupy.asnumpy(v, out=out, blocking=False)"),
         FAIL, "not queued on `stream`", "gpu", name="a non-blocking copy on the default stream"),
    Case("cupy 5", ("cupy.asnumpy(v, stream=stream, out=out, blocking=False)", "v.get(stream=stream, out=out, blocking=False)"),
         PASS, "copied on `stream`", "gpu", name="v.get on the stream"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "with frames as writer:"), FAIL, "written in line",
         name="the frames written in line"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "if True:\n        writer = BackgroundWriter(frames)"),
         FAIL, "still open", name="the writer never closed"),
    Case("cupy 7", (), PASS, "written by a second thread"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n",
                    "with BackgroundWriter(frames) as writer:\n        pass\n    for _ in range(nbimage):\n",
                    "            simulation.advance(nbextrastep)\n            writer.write(", "        simulation.advance(nbextrastep)\n        writer.write("),
         FAIL, "writes after the writer was closed", name="the loop after the with block"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n",
                    "with frames as writer:\n        pass\n    for _ in range(nbimage):\n",
                    "            simulation.advance(nbextrastep)\n            writer.write(", "        simulation.advance(nbextrastep)\n        writer.write("),
         FAIL, "writes after the writer was closed", name="the loop after the FrameWriter's with block"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "writer = BackgroundWriter(frames)\n    with writer:"), PASS,
         "written by a second thread", name="the writer made before its with block"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n            writer.write(simulation.fetch_v())",
                    "import threading\n    with frames as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n"
                    "            threading.Thread(target=writer.write, args=(simulation.fetch_v(),)).start()"),
         FAIL, "join", name="a thread an image, never joined"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n            writer.write(simulation.fetch_v())",
                    "import threading, time\n    with frames as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n"
                    "            threading.Thread(target=writer.write, args=(simulation.fetch_v(),)).start()\n"
                    "        time.sleep(0.5)  # they have finished: by luck"),
         FAIL, "never joined", name="a thread an image, never joined, finished by luck"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n            writer.write(simulation.fetch_v())",
                    "import threading\n    with frames as writer:\n        for _ in range(nbimage):\n"
                    "            simulation.advance(nbextrastep)\n"
                    "            thread = threading.Thread(target=writer.write, args=(simulation.fetch_v(),))\n"
                    "            thread.start()\n            thread.join()"),
         FAIL, "never written while the simulation computes: each writing thread is joined before",
         name="a thread an image, each joined at once"),
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
""", FAIL, "still ran when your function returned|never joined", name="a writer thread never joined"),
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
    Case("cupy 7", OWN_QUEUE_THREAD.format(queue="maxsize=1", image="images.get().T", limit=", time_limit_s=3"), FAIL,
         "has not returned after 3 s.*a writer thread that stopped", name="a writer thread that died (an image transposed), its queue full"),
    # --- Synthesis ------------------------------------------------------------------------------
    *SYNTHESIS_CASES,  # playtest 4a's kinds (their own module: this one stays under 600 lines)
    Case("synthesis 1", (), PASS, "mass: one per image"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images.astype(np.int64).sum(axis=(1, 2))"),
         FAIL, "astype\\(int\\) turns each V", name="summed as integers"),
    Case("synthesis 1", ("images.sum(axis=(1, 2), dtype=np.float64)", "images[:, 0, :].sum(axis=1, dtype=np.float64)"),
         FAIL, "first row only", name="the first row of each image"),
    Case("synthesis 3", ("    index += (xp.arange(count) * bins)[:, None, None]\n", ""), FAIL,
         "went into the first image's bins", name="no offsets"),
    Case("synthesis 3", ("    index = xp.minimum((images * bins).astype(np.int64), bins - 1)\n"
                         "    index += (xp.arange(count) * bins)[:, None, None]\n"
                         "    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "    return xp.tile(xp.histogram(images, bins, (0, 1))[0], (count, 1))"), FAIL,
         "each row is the histogram of the whole batch", name="the batch's histogram, tiled"),
    Case("synthesis 3", ("    index += (xp.arange(count) * bins)[:, None, None]\n"
                         "    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "    index += (xp.arange(images.shape[1]) * bins)[None, :, None]\n"
                         "    return xp.bincount(index.ravel(), minlength=count * bins)[: count * bins].reshape(count, bins)"),
         FAIL, "follow the rows of an image", name="offsets along the rows"),
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
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? v - threshold : 0.0"'), FAIL,
         "excess over the threshold", name="the excess over the threshold"),
    Case("synthesis 4", (), PASS, "binary search"),
    Case("synthesis 4", ('xp.searchsorted(edges, images, side="right")', "(images[..., None] >= edges).sum(axis=-1)"),
         FAIL, "binary search", name="classes by comparing with every edge"),
    Case("synthesis 4", ('xp.searchsorted(edges, images, side="right")', "xp.digitize(images, edges)"), PASS,
         "binary search", name="digitize"),
    Case("synthesis 4", ('side="right"', 'side="left"'), FAIL, "side='right'", name="side='left'"),
    Case("synthesis 4", ("edges = ordered[xp.asarray(index)]", "edges = xp.percentile(images, 100 * analysis.DECILES)"),
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
    Case("synthesis 8", ("if (partner > i) {", "if (partner < i) {"), FAIL, "the upper one of its pair",
         name="the upper thread of each pair"),
    Case("synthesis 8", ("(i & k) == 0", "(i & k) != 0"), FAIL, "descending", name="the direction inverted"),
    Case("synthesis 8", ("            values[i] = b;\n            values[partner] = a;", "            swap(values[i], values[partner]);"),
         FAIL, "swap\\(\\) is no function of CUDA C here", "cpu", name="swap() as in C++"),
    Case("synthesis 8", ("if ((a > b) == ascending)", "if ((i > partner) == ascending)"), FAIL,
         "compares the indices i and partner, not the values", name="the indices compared, not the values"),
    Case("synthesis 8", ("values[i] = b;\n            values[partner] = a;",
                         "values[i] = values[partner];\n            values[partner] = values[i];"), FAIL,
         "lost or duplicated", name="a swap that loses a value"),
    Case("synthesis 8", ("if (partner > i) {", "{"), FAIL, "only the one with partner > i", name="both threads of a pair swap"),
    Case("synthesis 8", ("if (partner > i) {", "if (i < partner) {"), PASS, "bitonic sort", name="i < partner"),
    Case("synthesis 8", ("const float a = values[i]", "const float a = values[i] +"), FAIL, "does not compile",
         name="does not compile"),
    # --- Issue 29's second playtest: each class with a wrong answer it had not seen, and right ones written otherwise
    Case("jax 4", ("jax.jit(jax.vmap(one_pair))", "jax.jit(lambda f, k: lax.map(lambda fk: one_pair(*fk), (f, k)))"),
         FAIL, "one pair after another.*jax.vmap", name="lax.map for jax.vmap"),
    Case("jax 4", ("jax.jit(jax.vmap(one_pair))", "jax.jit(lambda f, k: jnp.stack([one_pair(f[i], k[i]) "
                   "for i in range(f.shape[0])]))"), FAIL, "grows with the pairs", name="a Python loop over the batch under jit"),
    Case("jax 4", ("return lax.fori_loop(0, steps, body, (u0, v0))[1]",
                   "uv = (u0, v0)\n        for i in range(steps):\n            uv = body(i, uv)\n        return uv[1]"),
         FAIL, "grows with the steps.*lax.fori_loop", name="a Python loop over the steps"),
    Case("jax 4", ("+ feed * (1 - u)", "+ params.feed * (1 - u)"), FAIL, "params.feed", name="params.feed for the pair's feed"),
    Case("jax 4", ("jax.vmap(one_pair)", "jax.vmap(one_pair, in_axes=(0, 0))"), PASS, "one vmap", name="in_axes=(0, 0)"),
    Case("jax 4", ("jax.jit(jax.vmap(one_pair))", "jax.vmap(jax.jit(one_pair))"), PASS, "one vmap", name="vmap of a jitted pair"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "frames = []\n    for _ in range(nbimage):\n        (u, v), image = one_image((u, v), None)\n"
                   "        frames.append(image)\n    return jnp.stack(frames)"), FAIL, "lax.scan", name="a Python loop over the images"),
    Case("jax 3", ("u, v = lax.fori_loop(0, nbextrastep, lambda _, uv: step(*uv, p), uv)",
                   "u, v = uv\n        for _ in range(nbextrastep):\n            u, v = step(u, v, p)"), FAIL,
         "grows with the steps.*lax.fori_loop", name="a Python loop over the steps of an image"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "return lax.scan(one_image, (u, v), xs=None, length=nbimage)[1]"), PASS, "one scan", name="scan(...)[1]"),
    Case("jax 3", ("u, v = lax.fori_loop(0, nbextrastep, lambda _, uv: step(*uv, p), uv)",
                   "u, v = lax.scan(lambda c, _: (step(*c, p), None), uv, None, length=nbextrastep)[0]"), PASS,
         "one scan", name="the steps of an image a scan too"),
    *(Case("cupynumeric 3", _each_step(line), FAIL, hint, name=f"{line.split(' = ')[-1]} each step")
      for line, hint in (("total = float(v.sum())", "a round trip through the host"), ("peak = v.max().item()", "a round trip through the host"),
                         ("print(v.max())", "a round trip through the host"), ("snapshot = np.asarray(v)", "copies arrays to the host"))),
    Case("cupynumeric 3", ("for _ in range(steps):\n        u, v = step(u, v, p)",
                           "done = 0\n    while done < steps:\n        u, v = step(u, v, p)\n        done += 1"), PASS,
         "time loop: right", name="a while loop"),
    Case("synthesis 4", ('xp.searchsorted(edges, images, side="right")',
                         'xp.stack([xp.searchsorted(edges, image, side="right") for image in images])'), FAIL,
         "one call per image", name="searchsorted image by image"),
    Case("synthesis 4", ('xp.searchsorted(edges, images, side="right")', 'edges.searchsorted(images, side="right")'),
         PASS, "binary search", name="the searchsorted method"),
    Case("synthesis 4", ('return edges, xp.searchsorted(edges, images, side="right")',
                         'return xp.searchsorted(edges, images, side="right"), edges'), FAIL, "\\(edges, classes\\)",
         name="(classes, edges) returned"),
    Case("synthesis 6", ("return coordinates, image[coordinates[:, 0], coordinates[:, 1]]",
                         "return image[coordinates[:, 0], coordinates[:, 1]], coordinates"), FAIL,
         "\\(coordinates, values\\)", name="(values, coordinates) returned"),
    Case("synthesis 6", ("image > threshold", "image > 0.5"), FAIL, "above 0.5.*the threshold your function is given",
         name="a constant 0.5 for the threshold"),
    Case("synthesis 6", ("xp.argwhere(image > threshold)", "xp.stack(xp.nonzero(threshold < image), axis=1)"), PASS,
         "bright cells", name="nonzero stacked, the comparison the other way round"),
    Case("cupy 1", "def laplacian(a):\n    rows, cols = a.shape\n    out = xp.zeros_like(a)\n    for r in range(rows):\n"
         "        for c in range(cols):\n            for i in range(max(r - 1, 0), min(r + 2, rows)):\n"
         "                for j in range(max(c - 1, 0), min(c + 2, cols)):\n                    out[r, c] += a[i, j] - a[r, c]\n"
         "    return out\ncheck.laplacian(laplacian, device_type=on_device, to_device=xp.asarray)", FAIL,
         "Python loop over the grid's cells", name="a Python loop over the cells"),
    Case("cupy 1", "def laplacian(a):\n    rows, cols = a.shape\n    padded = xp.pad(a, 1)\n    out = xp.empty_like(a)\n"
         "    for r in range(rows):\n        out[r] = sum(padded[r + i, j : j + cols] for i in range(3) for j in range(3)) "
         "- xp.asarray(model.window_counts(rows, cols))[r] * a[r]\n    return out\n"
         "check.laplacian(laplacian, device_type=on_device, to_device=xp.asarray)", FAIL, "Python loop over the grid's cells or rows",
         name="a Python loop over the rows"),
    Case("cupy 1", ("return window_sum - counts * a", "return window_sum - model.window_counts(rows, cols) * a"),
         FAIL, "mixes a NumPy array", "gpu", name="a NumPy array mixed into CuPy's"),
    Case("cupy 1", ("window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                    "window_sum = 0\n    for i in range(3):\n        for j in range(3):\n"
                    "            window_sum = window_sum + padded[i : i + rows, j : j + cols]"), PASS, "laplacian: right",
         name="the nine slices in a loop"),
    Case("jax 5", ('above = lax.ppermute(band[-1:], "rows", down)', 'above = lax.psum(band[-1:], "rows")',
                   'below = lax.ppermute(band[:1], "rows", up)', 'below = lax.psum(band[:1], "rows")'), FAIL,
         "sends no row from one device", name="psum instead of ppermute"),
    Case("jax 5", ('above = lax.ppermute(band[-1:], "rows", down)', 'above = lax.ppermute(band[-1:], "rows", up)'), FAIL,
         "row above.*sent up", name="the row above sent up"),
    Case("jax 5", ('below = lax.ppermute(band[:1], "rows", up)', 'below = lax.ppermute(band[:1], "rows", down)'), FAIL,
         "row below.*sent down", name="the row below sent down"),
    Case("jax 5", ("down = [(i, i + 1) for i in range(bands - 1)]", "down = [(i + 1, i) for i in range(bands - 1)]"),
         FAIL, "row above.*sent up", name="the pairs of down reversed"),
    Case("jax 5", ("up = [(i + 1, i) for i in range(bands - 1)]", "up = [(j, j - 1) for j in range(1, bands)]"), PASS,
         "halo exchange: right", name="up written from the sender"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicAdd(&image_counts[bin], 1u);"), FAIL,
         "not privatised", name="every thread's atomicAdd into global memory"),
    Case("synthesis 7", ("for (int i = first; i < cells; i += stride)", "for (int i = 0; i < cells; i += stride)"), FAIL,
         "starts at 0.*first", name="the thread loop from 0"),
    Case("synthesis 7", ("for (int i = first; i < cells; i += stride)", "for (int i = first; i < cells; i += 1)"), FAIL,
         "by 1.*stride", name="the thread loop by 1"),
    Case("synthesis 7", ("for (int i = first; i < cells; i += stride)",
                         "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < cells; i += blockDim.x * gridDim.x)"),
         PASS, "privatised", name="first and stride written out"),
    Case("cupy 4", ("c <= min(col + 1, cols - 1); ++c)", "c <= min(col + 1, cols - 1); )"), FAIL,
         "never ends.*c is never", "cpu", name="a loop variable never incremented"),
    Case("synthesis 8", ("(i & k) == 0", "(i & (k - 1)) == 0"), FAIL, "i & k.*i & \\(k - 1\\)", name="i & (k - 1)"),
    Case("synthesis 8", ("(i & k) == 0", "(i & j) == 0"), FAIL, "i & k.*i & j", name="i & j for the direction"),
    Case("synthesis 8", ("(i & k) == 0", "!(i & k)"), PASS, "bitonic sort", name="!(i & k)"),
    Case("synthesis 8", ("(i & k) == 0", "(i / k) % 2 == 0"), PASS, "bitonic sort", name="(i / k) % 2 == 0"),
    Case("cupy 4", ("u_next[cell] = uc + dt", "v_next[cell] = uc + dt", "v_next[cell] = vc + dt", "u_next[cell] = vc + dt"),
         FAIL, "U and V are swapped: your kernel writes", name="u_next and v_next swapped in a kernel"),
    Case("cupy 3", ("u_next = u + dt", "v_next = u + dt", "v_next = v + dt", "u_next = v + dt"), FAIL,
         "U and V are swapped: your kernel writes", name="u_next and v_next swapped in an ElementwiseKernel"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b",
                           "np.asarray(u_out)[:] = b\n    np.asarray(v_out)[:] = a"), FAIL, "U and V are swapped: your task writes",
         name="u_out and v_out swapped in the task"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u[i] * v * v;"), FAIL, "u, v, lu and lv are one cell's values",
         name="u[i] in an ElementwiseKernel"),
    # The usual slips of the formula, each named (the reference recomputed with the slip)
    Case("jax 1 step", ("- uvv + p.feed", "+ uvv + p.feed"), FAIL, "sign of the uvv term", name="+uvv in U"),
    Case("cupy 3", ("dv * lv + uvv", "dv * lv - uvv"), FAIL, "sign of the uvv term", name="-uvv in V, a kernel"),
    Case("cupy 2", ("p.feed * (1 - u)", "p.kill * (1 - u)"), FAIL, "p.kill where p.feed", name="k for F in the feed"),
    Case("jax 1 step", ("(p.feed + p.kill) * v", "(p.feed + p.feed) * v"), FAIL, "\\(p.feed \\+ p.kill\\) v",
         name="F + F in V's loss"),
    Case("cupynumeric 2 step", ("p.feed * (1 - u)", "p.feed * (1 - v)"), FAIL, "\\(1 - v\\) where \\(1 - u\\)", name="(1 - v)"),
    Case("cupynumeric 2 step", ("(p.feed + p.kill) * v", "p.kill * v"), FAIL, "\\(p.feed \\+ p.kill\\) v", name="k v for (F + k) v"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc;"), FAIL, "u v\\^2", name="u v for u v^2"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return u + p.dt * du, v + p.dt * (dv + (p.feed + p.kill) * v) "
                   "- (p.feed + p.kill) * v"), FAIL, "dt is missing on V's \\(p.feed \\+ p.kill\\) v", name="dt on all but V's loss"),
    Case("cupy 2", ("du = p.du * laplacian(u)", "du = p.dv * laplacian(u)"), FAIL, "p.dv where p.du", name="Dv for U"),
    Case("jax 1 step", ("uvv = u * v * v", "uvv = u * v ** 2"), PASS, "right with dt", name="v ** 2"),
    Case("cupy 2", ("p.feed * (1 - u)", "(p.feed - p.feed * u)"), PASS, "right with dt", name="F (1 - u) expanded"),
    # Other answers of the same kinds: each class, not only the playtest's example
    Case("jax 4", ("(feed + kill) * v", "(feed + params.kill) * v"), FAIL, "params.kill", name="params.kill for the pair's kill"),
    Case("cupy 2", ("return u + p.dt * du", "return u + p.dt * (du - p.du * laplacian(u)) + p.du * laplacian(u)"), FAIL,
         "dt is missing on U's diffusion term only", name="dt on all but U's diffusion"),
    Case("jax 1 step", ("p.dv * laplacian(v)", "p.dv * laplacian(u)"), FAIL, "V's diffusion is of U", name="laplacian(u) in V"),
    Case("synthesis 8", ("(i & k) == 0", "(i & (2 * k)) == 0"), FAIL, "i & \\(2 \\* k\\)", name="i & (2 * k)"),
    Case("jax 5", ('above = lax.ppermute(band[-1:], "rows", down)', 'above = lax.ppermute(band[:1], "rows", down)'), FAIL,
         "row above: it is each band's first row", name="the first row sent down"),
    Case("synthesis 7", ("for (int i = first; i < cells; i += stride)", "for (int i = threadIdx.x; i < cells; i += stride)"),
         FAIL, "starts at threadIdx.x", name="the thread loop from threadIdx.x"),
    Case("cupy 4", ("for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {",
                    "int c = max(col - 1, 0);\n        while (c <= min(col + 1, cols - 1)) {"), FAIL,
         "never ends: nothing in it changes c", "cpu", name="a while loop whose variable never changes"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * w;"), FAIL, "w is not defined", name="an undeclared name"),
    Case("synthesis 6", ("image > threshold", "image > 0.2"), FAIL, "above 0.2, not above the threshold",
         name="a constant 0.2 for the threshold"),
    Case("jax 4", ("return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))",
                   "return np.asarray(jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills)))"), FAIL,
         "NumPy array: it went back to the host", name="the batch returned as a NumPy array"),
    # Kernels whose values alone suggested another cause: the first barrier, bins left out, a flush by every thread
    Case("synthesis 7", (_ZERO, "for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;"), FAIL,
         "no __syncthreads\\(\\) between setting the block's histogram to 0 and counting", name="no barrier after the zeroing"),
    Case("synthesis 7", (_ZERO, "if (threadIdx.x < bins) block_counts[threadIdx.x] = 0;"), FAIL,
         "no __syncthreads\\(\\) between setting", name="no barrier after zeroing one bin a thread"),
    Case("synthesis 7", ("__syncthreads();\n    for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd", "for (int b = "
                         "threadIdx.x; b < bins; b += blockDim.x) atomicAdd"), FAIL, "no __syncthreads\\(\\) between counting",
         name="no barrier before adding to global memory"),
    Case("synthesis 7", (_ZERO, "if (threadIdx.x < blockDim.x) block_counts[threadIdx.x] = 0;\n    __syncthreads();"), FAIL,
         "bins 32 to 63 \\(from blockDim.x = 32 on\\): never set to 0", "cpu", name="zeroed one bin a thread"),
    Case("synthesis 7", (_ZERO, _ZERO.replace("b < bins", "b < blockDim.x")), FAIL, "bins 32 to 63.*never set to 0", "cpu",
         name="zeroed up to blockDim.x"),
    Case("synthesis 7", (_FLUSH, _ONE_BIN_A_THREAD), FAIL, "bins 32 to 63.*never added to global memory", "cpu",
         name="added to global memory one bin a thread"),
    Case("synthesis 7", (_FLUSH, _FLUSH.replace("b < bins", "b < bins - 1")), FAIL, "bin 63: never added to global memory",
         name="added to global memory up to bins - 1"),
    Case("synthesis 7", (_ZERO, _ZERO.replace("b < bins", "b < bins / 4")), FAIL, "bins 16 to 63: never set to 0",
         name="zeroed up to bins / 4"),
    Case("synthesis 7", (_FLUSH, "for (int b = 0; b < bins; ++b) atomicAdd(&image_counts[b], block_counts[b]);"), FAIL,
         "once a thread of the block: every thread adds the whole block's histogram", name="every thread adds every bin"),
    Case("synthesis 7", (_FLUSH, "for (int b = 0; b < bins; b++) { atomicAdd(image_counts + b, block_counts[b]); }"), FAIL,
         "every thread adds the whole block's histogram", name="every thread adds every bin, written otherwise"),
    Case("synthesis 7", (_FLUSH, _FLUSH.replace("b += blockDim.x", "++b")), FAIL, "added to global memory by several threads.*"
         "bin 1 2 times", name="the bins added from threadIdx.x by 1"),
    Case("synthesis 7", (_FLUSH, "for (int b = 0; b < bins; ++b) atomicAdd(&counts[blockIdx.y * bins + b], block_counts[b]);"),
         FAIL, "every thread adds the whole block's histogram", name="every thread adds every bin, into counts"),
    Case("synthesis 7", (_FLUSH, "for (int b = threadIdx.x; b < bins; b += blockDim.x) { const unsigned int c = block_counts"
                         "[b]; if (c) atomicAdd(&image_counts[b], c); }"), PASS, "privatised", name="the non-zero bins added"),
    Case("synthesis 7", (_ZERO, "int b = threadIdx.x;\n    while (b < bins) { block_counts[b] = 0u; b += blockDim.x; }\n"
                         "    __syncthreads();"), PASS, "privatised", name="zeroed in a while loop"),
    Case("synthesis 7", (_ZERO, "for (int b = 0; b < bins; ++b) block_counts[b] = 0;\n    __syncthreads();"), PASS,
         "privatised", name="every thread zeroes every bin"),
    Case("synthesis 7", (_FLUSH, "if (threadIdx.x == 0) for (int b = 0; b < bins; ++b) atomicAdd(&image_counts[b], "
                         "block_counts[b]);"), PASS, "privatised", name="thread 0 adds every bin"),
    Case("synthesis 7", (_FLUSH, _ONE_BIN_A_THREAD), FAIL, "one bin a thread", "gpu",
         name="added one bin a thread, on a GPU of 256 threads a block"),
    Case("synthesis 8", ("const bool ascending = (i & k) == 0;\n", "", "(a > b) == ascending", "a > b"), FAIL,
         "ascending order, the direction ignored", name="always ascending, no direction"),
    Case("synthesis 8", ("(a > b) == ascending", "a > b"), FAIL, "the direction ignored", name="the direction computed, unused"),
    Case("synthesis 8", ("(i & k) == 0", "(i & 0) == 0"), FAIL, "the direction ignored", name="i & 0 for the direction"),
    Case("synthesis 8", ("const bool ascending = (i & k) == 0;\n        const float a = values[i], b = values[partner];\n"
                         "        if ((a > b) == ascending) {\n            values[i] = b;\n            values[partner] = a;\n        }",
                         "const float a = values[i], b = values[partner];\n        values[i] = fminf(a, b);\n"
                         "        values[partner] = fmaxf(a, b);"), FAIL, "the direction ignored", name="fminf and fmaxf"),
    Case("jax 4", ("jax.vmap(one_pair)", "jax.vmap(jax.vmap(one_pair, in_axes=(None, 0)), in_axes=(0, None))"), FAIL,
         "every \\(F, k\\) combination, N x N runs", name="vmap over both axes nested: N x N"),
    Case("jax 4", ("jax.jit(jax.vmap(one_pair))", "jax.jit(lambda f, k: jax.vmap(lambda a: jax.vmap(lambda b: one_pair(a, b))(k))(f))"),
         FAIL, "every \\(F, k\\) combination", name="a vmap over the kills inside one over the feeds"),
    Case("jax 4", ("(jnp.asarray(feeds), jnp.asarray(kills))", "(*(g.ravel() for g in jnp.meshgrid(jnp.asarray(feeds), "
                   "jnp.asarray(kills))))"), FAIL, "every \\(F, k\\) combination", name="a meshgrid of the feeds and kills"),
    Case("jax 4", ("return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))",
                   "grid = jax.jit(jax.vmap(jax.vmap(one_pair, in_axes=(None, 0)), in_axes=(0, None)))(jnp.asarray(feeds), "
                   "jnp.asarray(kills))\n    return grid[jnp.arange(len(feeds)), jnp.arange(len(feeds))]"), FAIL,
         "every \\(F, k\\) combination", name="the diagonal of every combination"),
    Case("jax 4", ("(jnp.asarray(feeds), jnp.asarray(kills))", "(jnp.repeat(jnp.asarray(feeds), len(kills)), "
                   "jnp.tile(jnp.asarray(kills), len(feeds)))"), FAIL, "every \\(F, k\\) combination", name="repeat and tile"),
    Case("jax 4", ("return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))",
                   "return jax.jit(jax.vmap(one_pair))(*map(jnp.asarray, (feeds, kills)))"), PASS, "one vmap",
         name="the arrays converted by map"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "_, frames = lax.scan(one_image, (u, v), None, length=nbimage - 1)\n    return jnp.concatenate([v[None], frames])"),
         FAIL, "initial V: the first image is V after the first nbextrastep steps", name="nbimage - 1 scanned, the initial V first"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "_, frames = lax.scan(one_image, (u, v), None, length=nbimage - 1)\n    return jnp.vstack([v[jnp.newaxis], frames])"),
         FAIL, "the initial state is not an image", name="nbimage - 1 scanned, stacked under the initial V"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return jnp.concatenate([v[None], frames])"),
         FAIL, "one too many: image 0 is the initial V, but the first image is V after", name="nbimage scanned, the initial V first"),
    Case("jax 3", ("return (u, v), v", "return (u, v), uv[1]"), FAIL, "initial state is not an image",
         name="V stored before the image's steps"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames",
                   "_, frames = lax.scan(one_image, (u, v), None, length=nbimage + 1)\n    return frames[:-1]"), PASS,
         "one scan", name="one image more scanned, the last dropped"),
    Case("cupy 7", (_SAVE_LOOP, _WRITER_AN_IMAGE + "        frames = FrameWriter(path, nbimage, rows, cols, simulation.params, "
                    "nbextrastep, deflate=None)\n        with BackgroundWriter(frames) as writer:\n"
                    "            writer.write(simulation.fetch_v())"), FAIL, "opens images.h5 4 times.*one writer for the whole run",
         name="a writer an image, each closed"),
    Case("cupy 7", (_SAVE_LOOP, "writers = []\n    " + _WRITER_AN_IMAGE + "        writers.append(BackgroundWriter(FrameWriter(path, "
                    "nbimage, rows, cols, simulation.params, nbextrastep)))\n        writers[-1].write(simulation.fetch_v())\n"
                    "    for writer in writers:\n        writer.close()"), FAIL, "opens images.h5 2 times.*one writer",
         name="a writer an image, all open at once (h5py refuses the second)"),
    Case("cupy 7", (_SAVE_LOOP, "import threading\n    def one(image):\n        with FrameWriter(path, nbimage, rows, cols, "
                    "simulation.params, nbextrastep) as writer:\n            writer.write(image)\n    " + _WRITER_AN_IMAGE +
                    "        thread = threading.Thread(target=one, args=(simulation.fetch_v(),))\n        thread.start()\n"
                    "        thread.join()"), FAIL, "opens images.h5 4 times", name="a writer thread an image, each opening the file"),
    Case("cupy 7", (_SAVE_LOOP, "frames = FrameWriter(path, nbimage, rows, cols, simulation.params, nbextrastep)\n    " +
                    _WRITER_AN_IMAGE + "        with BackgroundWriter(frames) as writer:\n            writer.write(simulation.fetch_v())"),
         FAIL, "makes 2 BackgroundWriters for one file.*one writer", name="one file, a BackgroundWriter an image"),
    # --- playtest 3: the CuPy kernels
    *KERNEL_CASES, *PLAYTEST_7_CUPY, *PLAYTEST_7_SYNTHESIS, *PLAYTEST_8_CUPY, *PLAYTEST_8_SYNTHESIS, *PLAYTEST_9_CUPY, *PLAYTEST_9_SYNTHESIS, *PLAYTEST_11_CUPY, *PLAYTEST_11_SYNTHESIS, *REVIEW_11, *PLAYTEST_14,
]
