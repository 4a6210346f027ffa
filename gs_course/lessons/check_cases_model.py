"""The harness's cases of the model's and the task's checkers and of their common ground (the errors
raised in the student's code, an earlier exercise still wrong, what cannot be checked without a GPU),
from the third independent playtest and others of the same kinds; `gs_course.lessons.check_cases`
puts them first in its `CASES`. One line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, PASS, Case

#: A Laplacian that subtracts 9 everywhere (the border's counts wrong), put before the answer's step.
_NINE = ("def step(u, v, p):", "def laplacian(a):\n    rows, cols = a.shape\n    padded = {xp}.pad(a, 1)\n"
         "    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - 9 * a\n\n"
         "def step(u, v, p):")
#: A step that gets U's diffusion wrong, put before the answer's time loop.
_WRONG_STEP = ("def run(u, v, p, steps):", "def step(u, v, p):\n    return u + p.dt * laplacian(u), v\n\n"
               "def run(u, v, p, steps):")

PLAYTEST_3_MODEL = [
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)\n    for _ in range(steps):\n        a, b = model.reference_step(a, b, p)",
                           "a, b = np.asarray(u), np.asarray(v)\n    for _ in range(steps):\n        a[:], b[:] = model.reference_step(a, b, p)"),
         FAIL, "writes into its inputs", name="the task writes into its InputArrays"),
    Case("cupynumeric 5", ("a, b = model.reference_step(a, b, p)",
                           "a, b = model.updated(a, b, model.laplacian(a), model.laplacian(b), p)"), PASS,
         "time loop: right", name="model.laplacian inside the task (not the notebook's laplacian)"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b", "u_out[:] = a\n    v_out[:] = b"),
         FAIL, "np.asarray\\(u_out\\)\\[:\\] = ", name="an OutputArray written without np.asarray"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = u, v"), FAIL, "np.asarray\\(u\\)",
         name="the task's arrays used without np.asarray"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)", "u, v = step(u, v)"), FAIL, "^(?!.*fori_loop).*missing 1 required",
         name="step called without p (no JAX advice)"),
    Case("cupy 2", ("p.du * laplacian(u)", "p.du * laplacian(u, p)"), FAIL, "^(?!.*fori_loop).*takes 1 positional",
         name="laplacian called with p (no JAX advice)"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda uv: step(*uv, p)"), FAIL, "fori_loop calls its body",
         name="the fori_loop body without i"),
    Case("cupy 2", ("p.du * laplacian(u)", "p.du * lapacian(u)"), FAIL, "raised NameError: name 'lapacian'.*line \\d+ of your cell, in step",
         name="a typo in a name (NameError)"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, 1, mode=\"zeros\")"), FAIL,
         "raised ValueError: .*zeros.*in laplacian", name="a pad mode that does not exist"),
    Case("cupynumeric 3", ("for _ in range(steps):", "for _ in range(steps / 1):"), FAIL, "raised TypeError: 'float'",
         name="range of a float"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a, 1, mode=\"zeros\")"), FAIL, "raised \\w+: .*'zeros'.*in laplacian",
         name="jnp.pad of a mode that does not exist"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "with BackgroundWriter(path) as writer:"), FAIL,
         "BackgroundWriter\\(FrameWriter\\(", name="BackgroundWriter of the path"),
    Case("cupynumeric 4", ("cnp.convolve(a, window, mode=\"same\")", "cnp.convolve(a, cnp.ones(3, dtype=cnp.float32), mode=\"same\")"),
         FAIL, "3 x 3 window", name="a 1-D window"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.asarray(np.pad(np.asarray(a), 1))"), PASS,
         "kept on the device: not checked here", where="cpu", name="a host round trip without a GPU: not checked"),
    Case("cupy 2", ("return u + p.dt * du, v + p.dt * dv", "return model.reference_step(np.asarray(u), np.asarray(v), p)"),
         PASS, "kept on the device: not checked here", where="cpu", name="the host's step without a GPU: not checked"),
    Case("cupy 2", (_NINE[0], _NINE[1].format(xp="xp")), FAIL, "calls your laplacian, which is still wrong: fix exercise 1 .*%catch_up 1",
         name="a right step on a wrong laplacian"),
    Case("cupynumeric 2 step", (_NINE[0], _NINE[1].format(xp="cnp")), FAIL, "your laplacian, .*fix exercise 2 .*%catch_up 2",
         name="a right step on a wrong laplacian"),
    Case("cupynumeric 3", _WRONG_STEP, FAIL, "calls your step, which is still wrong: fix exercise 2", name="a right loop on a wrong step"),
    Case("jax 1 step", (_NINE[0], _NINE[1].format(xp="jnp")), FAIL, "your laplacian, which is still wrong: fix exercise \\d",
         name="a right step on a wrong laplacian"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "buffer = np.empty((rows, cols), np.float32)\n    "
                    "with BackgroundWriter(frames) as writer:", "writer.write(simulation.fetch_v())",
                    "buffer[:] = simulation.fetch_v()\n            writer.write(buffer)"), FAIL, "share one buffer",
         name="one host buffer reused for every image"),
    Case("cupy 7", ("simulation.params, nbextrastep, deflate=None)", "simulation.params, 1, deflate=None)"), FAIL,
         "records 1 as the steps between two images", name="the file records another nbextrastep"),
    Case("cupy 7", ("simulation.params, nbextrastep, deflate=None)", "params, nbextrastep, deflate=None)"), FAIL,
         "records feed = ", name="the file records the notebook's params"),
    Case("cupy 7", ("writer.write(simulation.fetch_v())", "writer.write(simulation.fetch_v().copy())"), PASS,
         "written by a second thread", name="a copy of each image written"),
    Case("cupy 2", ("return u + p.dt * du, v + p.dt * dv", "return du, dv"), FAIL, "it is the rates du and dv",
         name="the rates returned"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv", "return p.dt * du, p.dt * dv"), FAIL, "one step's change",
         name="the increments returned"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)\n    return u, v", "a, b = step(u, v, p)\n    return a, b"), FAIL,
         "^(?!.*task).*the state after one step", name="each step from the initial state"),
    Case("cupynumeric 5", ("for _ in range(steps):\n        a, b = model.reference_step(a, b, p)",
                           "a, b = model.reference_step(a, b, p)"), FAIL, "the state after one step.*task's loop",
         name="one step in the task, no loop"),
    Case("cupynumeric 2 laplacian", ("return window_sum - counts * a", "return window_sum - model.window_counts(rows, cols) * a"),
         FAIL, "copies \\d NumPy array.* at every call", name="NumPy window counts made at every call"),
    Case("cupynumeric 2 laplacian", ("return window_sum - counts * a", "return window_sum - cnp.asarray(model.window_counts(rows, cols)) * a"),
         FAIL, "at every call", name="the window counts copied to the device at every call"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)\n", "u = step(u, v, p)[0]\n        v = step(u, v, p)[1]\n"), FAIL,
         "V is updated from the new U", name="V's step from the new U"),
    Case("cupynumeric 4", ("cnp.convolve(a, window, mode=\"same\")",
                           "cnp.convolve(a.ravel(), window.ravel(), mode=\"same\").reshape(a.shape)"), FAIL,
         "1-D convolution of the flattened grid", name="the flattened grid convolved"),
    Case("cupy 1", ("for i in range(3) for j in range(3))", "for i in range(2) for j in range(2))"), FAIL, "2 x 2",
         name="a 2 x 2 window"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, 2)"), FAIL, "padded by 2", name="padded by 2"),
    Case("cupy 7", ("simulation.advance(nbextrastep)", "simulation.advance(1)"), FAIL, "advance\\(1\\) before each image",
         name="advance(1)"),
    Case("cupy 7", ("for _ in range(nbimage):\n            simulation.advance(nbextrastep)",
                    "for i in range(nbimage):\n            simulation.advance(nbextrastep * (i + 1))"), FAIL, "adds up",
         name="advance by the image's total steps"),
    Case("cupynumeric 1", ("v = cnp.asarray(v0)", "v = cnp.zeros_like(u)"), FAIL, "holds zeros: it was made empty",
         name="v made with zeros_like"),
]

#: The Laplacian's nine slices with the centre left out, and summed into a view of the padded grid.
_CENTRE_LEFT_OUT = ("for i in range(3) for j in range(3))", "for i in range(3) for j in range(3) if (i, j) != (1, 1))")
_SUM_INTO_A_VIEW = ("    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))\n",
                    "    window_sum = padded[0:rows, 0:cols]\n    for i in range(3):\n        for j in range(3):\n"
                    "            if (i, j) != (0, 0):\n                window_sum += padded[i : i + rows, j : j + cols]\n")
#: The same from the centre's slice, its columns outside: another first slice, another order.
_SUM_INTO_THE_CENTRE = (_SUM_INTO_A_VIEW[0],
                        "    window_sum = padded[1 : rows + 1, 1 : cols + 1]\n    for j in range(3):\n        for i in range(3):\n"
                        "            if (i, j) != (1, 1):\n                window_sum += padded[i : i + rows, j : j + cols]\n")
_CONVOLVE = "cnp.convolve(a, window, mode=\"same\") - counts * a"
#: The CuPy step's two updates, each written from the state as changed so far.
_IN_TURN = ("return u + p.dt * du, v + p.dt * dv",
            "u = u + p.dt * du\n    v = v + p.dt * (p.dv * laplacian(v) + u * v * v - (p.feed + p.kill) * v)\n    return u, v")

#: Playtest 4b's wrong answers of the Laplacian, step and convolve exercises, and right ones written otherwise.
PLAYTEST_4_MODEL = [
    Case("cupynumeric 4", (_CONVOLVE, "laplacian(a)"), FAIL, "never calls cnp.convolve", name="no convolve at all"),
    Case("cupynumeric 4", (_CONVOLVE, "cnp.convolve(cnp.convolve(a, cnp.ones((1, 3), dtype=np.float32), mode=\"same\"), "
                           "cnp.ones((3, 1), dtype=np.float32), mode=\"same\") - counts * a"), FAIL,
         "convolves with a 1 x 3 and 3 x 1 window", name="two separable convolves"),
    Case("cupynumeric 4", ("window = cnp.ones((3, 3), dtype=np.float32)", "window = cnp.full((3, 3), 1.0, cnp.float32)",
                           _CONVOLVE, "np.convolve(a, window, \"same\") - counts * a"), PASS, "laplacian: right",
         name="np.convolve of cnp arrays, the window as cnp.full"),
    Case("cupynumeric 4", (_CONVOLVE, "cnp.convolve(window, a, mode=\"same\") - counts * a"), FAIL,
         "the grid comes first", name="the window and the grid swapped"),
    Case("cupynumeric 4", ("counts * a", "window_counts(*a.shape[::-1]) * a"), FAIL, "one the other transposed",
         name="the counts of (cols, rows)"),
    Case("cupy 1", ("counts = window_counts(rows, cols)", "counts = window_counts(cols, rows)"), FAIL,
         "one the other transposed", name="window_counts(cols, rows)"),
    *(Case(exercise, _CENTRE_LEFT_OUT, FAIL, "the window leaves the centre out.*each cell is off by its own value",
           name="the centre left out") for exercise in ("cupy 1", "cupynumeric 2 laplacian", "jax 1 laplacian")),
    *(Case(exercise, _SUM_INTO_A_VIEW, FAIL, "added in place into a slice of the padded array",
           name="the sum added into a view of the padded grid") for exercise in ("cupy 1", "cupynumeric 2 laplacian")),
    Case("cupy 1", _SUM_INTO_THE_CENTRE, FAIL, "added in place into a slice of the padded array",
         name="the sum added into the centre's view, by columns"),
    Case("cupynumeric 4", ('cnp.convolve(a, window, mode="same")', 'cnp.convolve(a, window / 9, mode="same")'), FAIL,
         "weights are 1/9", name="a mean filter, window / 9"),
    Case("cupynumeric 4", ('cnp.convolve(a, window, mode="same")',
                           'cnp.convolve(a, cnp.asarray([[1, 1, 1], [1, 0, 1], [1, 1, 1]], dtype=np.float32), mode="same")'),
         FAIL, "leaves the centre out", name="a window with a zero centre"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, ((1, 1), (0, 0)))"), FAIL,
         r"pads the rows only \(pad width \(\(1, 1\), \(0, 0\)\)\)", name="only the rows padded"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, [(0, 0), (1, 1)])"), FAIL, "pads the columns only",
         name="only the columns padded"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, ((1, 1), (1, 1)), mode='constant')"), PASS,
         name="both axes padded, spelt out"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a, ((1, 1), (0, 0)))"), FAIL, "pads the rows only",
         name="only the rows padded"),
    Case("cupynumeric 2 laplacian", ("padded = cnp.pad(a, 1)", "padded = cnp.pad(a, ((0, 0), (1, 1)))"), FAIL,
         "pads the columns only", name="only the columns padded"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a.astype(int), 1)", "return window_sum - counts * a",
                    "return (window_sum - counts * a.astype(int)).astype(a.dtype)"), FAIL,
         "^(?!.*u_out).*integer array truncates", name="integer arrays"),
    Case("cupy 1", ("return window_sum - counts * a", "return xp.zeros_like(a)"), FAIL, "^(?!.*u_out).*holds zeros only",
         name="zeros returned (no task's advice outside the task)"),
    Case("cupynumeric 2 laplacian", ("padded = cnp.pad(a, 1)", "padded = cnp.pad(a, 1).astype(cnp.int32)"), FAIL,
         "integer array truncates", name="the padded grid as int32"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a.astype(xp.float64), 1).astype(xp.float32)"), PASS,
         "laplacian: right", name="padded in float64, back to float32"),
    Case("cupy 1", ("padded = xp.pad(a, 1)\n    window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))\n"
                    "    return window_sum - counts * a",
                    "return xp.roll(a, 1, 0) + xp.roll(a, -1, 0) + xp.roll(a, 1, 1) + xp.roll(a, -1, 1) - 4 * a"), FAIL,
         "five-point stencil.*np.roll wraps around", name="the five-point stencil with np.roll"),
    Case("cupynumeric 2 laplacian", ("for i in range(3) for j in range(3))", "for i, j in [(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)])"),
         FAIL, "five-point cross", name="the five-point window with the 3 x 3 counts"),
    Case("cupynumeric 4", ("window = cnp.ones((3, 3), dtype=np.float32)", "window = cnp.ones((5, 5), dtype=np.float32)"),
         FAIL, "the window is 5 x 5", name="a 5 x 5 window"),
    Case("cupy 1", ("return window_sum - counts * a", "return window_sum - counts"), FAIL, "counts alone",
         name="the counts without * a"),
    Case("cupynumeric 4", (_CONVOLVE, "cnp.convolve(a, window, mode=\"same\") - counts"), FAIL, "counts alone",
         name="the counts without * a"),
    Case("cupy 1", ("return window_sum - counts * a", "return window_sum - 8 * a"), FAIL, "includes the cell itself",
         name="8 * a subtracted"),
    Case("cupy 1", ("return window_sum - counts * a", "return window_sum - (counts * a)"), PASS, "laplacian: right",
         name="the product in brackets"),
    Case("cupy 2", ("p.feed * (1 - u)", "p.feed * 1 - u"), FAIL, "brackets: p.feed \\* \\(1 - u\\)", name="p.feed * 1 - u"),
    Case("cupy 2", ("(p.feed + p.kill) * v", "p.feed + p.kill * v"), FAIL, "brackets: - \\(p.feed \\+ p.kill\\) \\* v",
         name="- p.feed + p.kill * v"),
    Case("cupy 2", ("p.feed * (1 - u)", "(p.feed - p.feed * u)", "(p.feed + p.kill) * v", "p.feed * v - p.kill * v"), PASS,
         "step: right", name="the brackets multiplied out"),
    Case("cupy 2", _IN_TURN, FAIL, "V's update uses the new u", name="V from the new U"),
    Case("cupy 2", ("p.feed * (1 - u)", "1 - u * p.feed"), FAIL, "brackets: p.feed \\* \\(1 - u\\)", name="1 - u * p.feed"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return u + p.dt * dv, v + p.dt * du"), FAIL,
         "du and dv are swapped", name="the rates swapped"),
    Case("cupynumeric 2 step", ("v + p.dt * dv", "v + p.dt * du"), FAIL, "V's update adds du", name="V's update adds du"),
    Case("cupynumeric 2 step", ("u + p.dt * du, v + p.dt * dv", "u + 0.5 * p.dt * du, v + 0.5 * p.dt * dv"), FAIL,
         "half a dt", name="half a dt"),
    Case("cupynumeric 2 step", ("p.feed * (1 - u)\n", "p.feed * (1 - u) - p.kill * u\n"), FAIL, "extra - p.kill \\* u",
         name="an extra - p.kill * u in du"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv", "u_next = u + p.dt * du\n    return u_next, v + p.dt * dv"),
         PASS, "step: right", name="u_next named first"),
]

#: The saving exercise's in-line writer, run whole in a thread of the student's.
_IN_LINE_IN_A_THREAD = """
import threading
def save_images_in_line(simulation, path, nbimage, nbextrastep):
    with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as writer:
        for _ in range(nbimage):
            simulation.advance(nbextrastep)
            writer.write(simulation.fetch_v())

def save_images(simulation, path, nbimage, nbextrastep):
    thread = threading.Thread(target=save_images_in_line, args=(simulation, path, nbimage, nbextrastep))
    thread.start()
    thread.join()

check.saved_images(save_images, BACKEND, overlapped=True)
"""
#: A writer thread of the student's own fed by a queue (made with `queue`'s arguments), joined after the loop:
#: the writing overlaps the steps. It writes `image`, each one it gets; `limit`: the checker's further arguments.
OWN_QUEUE_THREAD = """
import queue, threading
def save_images(simulation, path, nbimage, nbextrastep):
    images = queue.Queue({queue})
    def write():
        with FrameWriter(path, nbimage, simulation.rows, simulation.cols, simulation.params, nbextrastep) as writer:
            for _ in range(nbimage):
                writer.write({image})
    thread = threading.Thread(target=write)
    thread.start()
    for _ in range(nbimage):
        simulation.advance(nbextrastep)
        images.put(simulation.fetch_v())
    thread.join()

check.saved_images(save_images, BACKEND, overlapped=True{limit})
"""

_NINE_SUM = "window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))"
#: The window sums as a summed-area table (a running sum over both axes), accumulated in `dtype`.
_SUMMED_AREA = ("s = xp.pad(a, ((2, 1), (2, 1))){dtype}.cumsum(0).cumsum(1)\n"
                "    window_sum = (s[3:, 3:] - s[:-3, 3:] - s[3:, :-3] + s[:-3, :-3]).astype(xp.float32)")
_TASK_LOOP = ("a, b = np.asarray(u), np.asarray(v)\n    for _ in range(steps):\n        a, b = model.reference_step(a, b, p)\n"
              "    np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b")

PLAYTEST_5_MODEL = [
    Case("cupy 7", _IN_LINE_IN_A_THREAD, FAIL, "never written while the simulation computes: your thread runs the in-line loop",
         name="the in-line writer run in a thread, joined"),
    Case("cupy 7", OWN_QUEUE_THREAD.format(queue="", image="images.get()", limit=""), PASS, "written by a second thread",
         name="a writer thread of one's own, fed by a queue"),
    Case("cupy 7", ("FrameWriter(path, nbimage,", "FrameWriter(path, nbimage + 1,"), FAIL, "records 5 as the number of images",
         name="a file made for nbimage + 1 images"),
    Case("cupy 7", ("simulation.advance(nbextrastep)", "simulation.advance(nbextrastep - 1)"), FAIL,
         "^(?!.*lax).*advance\\(6\\) before each image", name="advance(nbextrastep - 1)"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "simulation.advance(nbextrastep * nbimage)\n    "
                    "with BackgroundWriter(frames) as writer:", "            simulation.advance(nbextrastep)\n", ""), FAIL,
         "^(?!.*lax).*advances once, before the loop", name="every step before the loop"),
    Case("cupy 7", ("writer.write(simulation.fetch_v())", "writer.write(simulation.fetch_v)"), FAIL,
         "^(?!.*line \\d).*call it, writer.write\\(simulation.fetch_v\\(\\)\\)", name="the method written, not called"),
    Case("cupy 1", (_NINE_SUM, "window_sum = xp.lib.stride_tricks.sliding_window_view(padded, (3, 3)).sum(axis=(0, 1))"),
         FAIL, "window's axes last: .sum\\(axis=\\(2, 3\\)\\)", name="sliding_window_view summed over the grid's axes"),
    Case("cupy 1", (_NINE_SUM, "window_sum = xp.lib.stride_tricks.sliding_window_view(padded, (3, 3)).sum(axis=(-1, -2))"),
         PASS, "laplacian: right", name="sliding_window_view summed over axes -1, -2"),
    Case("cupy 1", (_NINE_SUM, _SUMMED_AREA.format(dtype="")), FAIL, "cumsum.*float64", name="a float32 summed-area table"),
    Case("cupy 1", (_NINE_SUM, _SUMMED_AREA.format(dtype="").replace("cumsum(0).cumsum(1)", "cumsum(1).cumsum(0)")), FAIL,
         "cumsum.*float64", name="a float32 summed-area table, its rows summed first (another order of rounding)"),
    Case("cupy 1", (_NINE_SUM, _SUMMED_AREA.format(dtype=".astype(xp.float64)")), PASS, "laplacian: right",
         name="a float64 summed-area table"),
    Case("cupy 1", ("return window_sum - counts * a", "return window_sum / counts - a"), FAIL, "window's mean minus a",
         name="the window's mean minus a"),
    Case("cupynumeric 2 laplacian", ("return window_sum - counts * a", "return window_sum / counts - a"), FAIL,
         "window's mean minus a", name="the window's mean minus a"),
    Case("cupy 1", ("for i in range(3) for j in range(3))", "for i in (0, 2) for j in (0, 2))"), FAIL, "four corners only",
         name="the window's corners only"),
    Case("cupy 1", ("for i in range(3) for j in range(3))", "for i in (0, 1, 2) for j in (2, 1, 0))"), PASS,
         "laplacian: right", name="the offsets as tuples"),
    Case("cupynumeric 4", ("cnp.convolve(a, window, mode=\"same\")", "cnp.convolve(a, window[:2], mode=\"same\")"),
         FAIL, "2 x 3", name="a 2 x 3 window, window[:2]"),
    Case("cupy 2", ("uvv = u * v * v", "uvv = u * v ** 3"), FAIL, "u v\\^3", name="u * v ** 3"),
    Case("cupy 2", ("uvv = u * v * v", "uvv = u * v ** 2"), PASS, "step: right", name="u * v ** 2"),
    Case("cupynumeric 2 step", ("return u + p.dt * du, v + p.dt * dv", "return u + p.dt * p.dt * du, v + p.dt * p.dt * dv"),
         FAIL, "dt twice", name="dt twice"),
    Case("cupy 4", ("v_next[cell] = vc", "u_next[cell] = vc"), FAIL, "u_next holds V's result, which belongs in v_next",
         name="V's update written to u_next too"),
    Case("cupy 4", ("    u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));\n",
                    "    v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);\n",
                    "    v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);\n\"\"\"",
                    "    u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));\n\"\"\""),
         PASS, "step: right", name="v_next written before u_next"),
    Case("cupynumeric 5", ("np.asarray(v_out)[:] = b", "np.asarray(v_out)[:] = a"), FAIL,
         "v_out holds U's result, which belongs in u_out, and u_out holds it too", name="both outputs get U"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a\n", "np.asarray(u_out)[:] = a.T\n", "np.asarray(v_out)[:] = b", "np.asarray(v_out)[:] = b.T"),
         FAIL, "^(?!.*window_counts).*transposed.*\\.T", name="the outputs transposed"),
    Case("cupynumeric 5", ("a, b = model.reference_step(a, b, p)", "a, b = model.reference_step(b, a, p)"), FAIL,
         "called with u and v swapped: it takes \\(u, v, p\\)", name="reference_step(b, a, p)"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)", "u, v = step(v, u, p)"), FAIL, "called with u and v swapped",
         name="step(v, u, p)"),
    Case("cupynumeric 5", ("p = Parameters(du, dv, feed, kill, dt)", "p = Parameters(du, dv, kill, feed, dt)"), FAIL,
         "F and k are swapped: Parameters\\(du, dv, feed, kill, dt\\)", name="Parameters with kill and feed swapped"),
    Case("cupynumeric 5", ("p = Parameters(du, dv, feed, kill, dt)", "p = Parameters(du=du, dv=dv, kill=kill, feed=feed, dt=dt)"),
         PASS, "time loop: right", name="Parameters by keyword"),
    Case("cupynumeric 5", ("np.asarray(u_out)[:] = a\n", "np.asarray(u_out)[:] = a.astype(np.float16)\n"), FAIL,
         "float16", name="float16 results"),
    Case("cupynumeric 1", ("u = cnp.asarray(u0)", "u = cnp.asarray(u0[::-1])"), FAIL, "rows in reverse order",
         name="u's rows reversed"),
]


#: Playtest 6 (CPU, 256 answers): a small error got a mistake of the other array (the reference's
#: own value there), and a run that overflowed read as cells never written.
_STEP_RETURN = "return u + p.dt * du, v + p.dt * dv"
PLAYTEST_6_MODEL = [
    Case("cupynumeric 2 step", ("p.feed * (1 - u)", "p.feed * (1.001 - u)"), FAIL, "^(?!.*new u).*u_next is off the reference",
         name="1.001 - u: a small error, no named mistake"),
    Case("jax 1 step", (_STEP_RETURN, "return u + p.dt * du, v + p.dt * dv + 2e-5"), FAIL,
         "^(?!.*feed term).*v_next is off the reference", name="V off by 2e-5 everywhere"),
    Case("jax 1 step", (_STEP_RETURN, "return u + p.dt * du + 5e-5, v + p.dt * dv"), FAIL,
         "^(?!.*new u).*u_next is off the reference", name="U off by 5e-5 everywhere"),
    Case("cupy 2", (_STEP_RETURN, "v2 = v + p.dt * dv\n    v2[0, 0] += 5e-5\n    return u + p.dt * du, v2"), FAIL,
         "^(?!.*feed term).*v_next is off the reference at 1 of", name="one cell of V off by 5e-5"),
    Case("jax 4", ("dv = params.dv * laplacian(v) + uvv - (feed + kill) * v",
                   "dv = params.dv * laplacian(u) + uvv - (feed + kill) * v"), FAIL, "grew without bound",
         name="V diffuses U's Laplacian (the run overflows)"),
    Case("jax 4", ("du = params.du * laplacian(u)", "du = -params.du * laplacian(u)"), FAIL, "grew without bound",
         name="U's diffusion with a minus sign"),
    Case("jax 3", ("lambda _, uv: step(*uv, p)", "lambda _, uv: step(uv[0] * 50, uv[1] * 50, p)"), FAIL,
         "grew without bound", name="the state scaled by 50 each step"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)\n", "u, v = u + 100 * (step(u, v, p)[0] - u), "
                           "v + 100 * (step(u, v, p)[1] - v)\n"), FAIL, "grew without bound", name="a step 100 times too long"),
    # ... and a loop or batch whose own step is wrong got a distance: the runs of the wrong steps name them
    Case("jax 4", ("u + params.dt * du, v + params.dt * dv", "u + params.dt * du, v + params.dt * du"), FAIL,
         "V's update adds du", name="the batch's V adds du"),
    Case("cupynumeric 5", ("a, b = model.reference_step(a, b, p)",
                           "a, b = model.reference_step(a, b, Parameters(p.dv, p.du, p.feed, p.kill, p.dt))"), FAIL,
         "Du and Dv are swapped", name="the task's step with Du and Dv swapped"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)\n", "u, v = step(u, v, p)\n        u, v = step(u, v, p)\n"), FAIL,
         "after 2 x steps steps", name="two steps each time round the loop"),
    Case("cupynumeric 5", ('constraints=(broadcast("u"), broadcast("v"), broadcast("u_out"), broadcast("v_out")),\n', ""),
         FAIL, "does not keep u, v, u_out, v_out whole", name="the task without its broadcast constraints"),
    Case("cupynumeric 5", ('broadcast("v_out")', "broadcast('v_out')"), PASS, "", name="broadcast's names in single quotes"),
]


#: Playtest 7 (CPU, 430 answers): a run that ignores the u, v it is given passed (the checkers started it from
#: the initial state only), images calling `run` met a NameError in the harness alone, a batch on params' F and k
#: was told it ran the pairs in turn, and a few mistakes got a distance (a 3 x 2 window, a half-precision
#: intermediate, + counts * a, F + k feeding U, V out of the carry, a -8 centre minus counts).
_INITIAL = "{a}0, {b}0 = ({xp}.asarray(x) for x in model.initial_state(*u.shape))\n    "
_IGNORES = "ignores the u, v it is given.*initial state"
_COUNTS = "window_sum - counts * a"
PLAYTEST_7_MODEL = [
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   _INITIAL.format(a="u", b="v", xp="jnp") + "return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u0, v0))"),
         FAIL, _IGNORES, name="the loop restarts from model.initial_state"),
    Case("jax 2", ("(u, v))", "(jnp.ones_like(u), jnp.zeros_like(v)))"), FAIL, "ignores the u, v it is given.*a state of its own",
         name="the loop starts from ones and zeros"),
    Case("jax 2", ("(u, v))", "(u, jnp.asarray(model.initial_state(*u.shape)[1])))"), FAIL, "ignores the v it is given",
         name="the loop takes u, and V from model.initial_state"),
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "u = lax.fori_loop(0, steps, lambda _, a: step(a, v, p)[0], u)\n    return u, v"), FAIL,
         "V never changes.*only u is carried", name="V left out of the carry"),
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "start = (u, v)\n    return lax.fori_loop(0, steps, lambda _, uv: step(uv[0], uv[1], p), start)"), PASS,
         "time loop: right", name="the carry named, step(uv[0], uv[1], p)"),
    Case("cupynumeric 3", ("def run(u, v, p, steps):\n", "def run(u, v, p, steps):\n    u, v = (cnp.asarray(x) for x in model.initial_state(*u.shape))\n"),
         FAIL, _IGNORES, name="the loop restarts from model.initial_state"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)", "u = step(u, v, p)[0]"), FAIL, "V never changes.*only u is carried",
         name="v never reassigned"),
    Case("cupynumeric 3", ("for _ in range(steps):\n        u, v = step(u, v, p)\n    return u, v",
                           "a, b = u.copy(), v.copy()\n    for _ in range(steps):\n        a, b = step(a, b, p)\n    return a, b"),
         PASS, "time loop: right", name="the loop on copies of u, v"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = model.initial_state(*np.asarray(u).shape)"), FAIL,
         _IGNORES, name="the task restarts from model.initial_state"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = np.asarray(u), model.initial_state(*np.asarray(u).shape)[1]"),
         FAIL, "ignores the v it is given", name="the task takes V from model.initial_state"),
    Case("jax 3", ("_, frames = lax.scan(one_image, (u, v), None, length=nbimage)",
                   _INITIAL.format(a="u", b="v", xp="jnp") + "_, frames = lax.scan(one_image, (u0, v0), None, length=nbimage)"),
         FAIL, "your run of the images " + _IGNORES, name="the scan restarts from model.initial_state"),
    Case("jax 3", ("(u, v), None, length", "(u, jnp.zeros_like(v)), None, length"), FAIL,
         "^(?!.*never written).*(a state of its own|ignores the v|started without V)", name="the scan starts from V = 0"),
    Case("jax 3", "@partial(jax.jit, static_argnums=(2, 3, 4))\ndef images(u, v, p, nbimage, nbextrastep):\n"
         "    def one_image(uv, _):\n        uv = run(*uv, p, nbextrastep)\n        return uv, uv[1]\n\n"
         "    return lax.scan(one_image, (u, v), None, length=nbimage)[1]\n\n"
         "check.images(images, device_type=jax.Array, to_device=jnp.asarray)\n", PASS, "one scan",
         name="exercise 2's run inside the scan"),
    Case("jax 4", ("+ feed * (1 - u)", "+ params.feed * (1 - u)", "- (feed + kill) * v", "- (params.feed + params.kill) * v"),
         FAIL, "ignores each pair's feed and kill", name="one_pair on params.feed and params.kill"),
    Case("jax 4", ("return lax.fori_loop(0, steps, body, (u0, v0))[1]",
                   "return lax.fori_loop(0, steps, body, (jnp.zeros_like(u0) + 1, jnp.zeros_like(v0)))[1]"), FAIL,
         "^(?!.*never written).*V = 0 everywhere.*initial state", name="each pair starts from u = 1, v = 0"),
    Case("jax 4", ("def one_pair(feed, kill):", "def one_pair(f, k):\n        feed, kill = f, k"), PASS, "one vmap",
         name="one_pair's arguments renamed"),
    # a 3 x 2 window, in slices or a convolution
    Case("cupy 1", ("for j in range(3)", "for j in range(2)"), FAIL, "3 x 2", name="the columns' offsets range(2)"),
    Case("jax 1 laplacian", ("for j in range(3)", "for j in range(2)"), FAIL, "3 x 2", name="the columns' offsets range(2)"),
    Case("cupynumeric 2 laplacian", ("for j in range(3)", "for j in range(2)"), FAIL, "3 x 2", name="the columns' offsets range(2)"),
    Case("cupynumeric 2 laplacian", ("for j in range(3)", "for j in (1, 2)"), FAIL, "3 x 2", name="the columns' offsets (1, 2)"),
    Case("cupynumeric 4", ("cnp.ones((3, 3), dtype=np.float32)", "cnp.ones((3, 2), dtype=np.float32)"), FAIL, "3 x 2",
         name="a (3, 2) window"),
    Case("cupy 1", ("for i in range(3) for j in range(3)", "for j in range(3) for i in range(3)"), PASS, "laplacian: right",
         name="the offsets' loops the other way round"),
    # the sign of counts * a; a -8 centre minus the counts again
    Case("cupy 1", (_COUNTS, "window_sum + counts * a"), FAIL, "sign of counts \\* a", name="+ counts * a"),
    Case("jax 1 laplacian", (_COUNTS, "counts * a + window_sum"), FAIL, "sign of counts \\* a", name="counts * a + window_sum"),
    Case("cupynumeric 4", ("window = cnp.ones((3, 3), dtype=np.float32)",
                           "window = cnp.array([[1, 1, 1], [1, -8, 1], [1, 1, 1]], dtype=np.float32)"), FAIL,
         "centre is -8.*counted twice", name="the -8 stencil minus counts * a"),
    Case("cupynumeric 4", ("window = cnp.ones((3, 3), dtype=np.float32)",
                           "window = cnp.full((3, 3), 1.0, dtype=np.float32)"), PASS, "laplacian: right",
         name="the window of ones from cnp.full"),
    # an intermediate rounded to a half precision
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a.astype(np.float16), 1)"), FAIL, "rounded to float16",
         name="the padded grid in float16"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a.astype(jnp.bfloat16), 1)"), FAIL, "rounded to bfloat16",
         name="the padded grid in bfloat16"),
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a.astype(jnp.float16), 1)"), FAIL, "rounded to float16",
         name="the padded grid in float16"),
    Case("cupy 1", (_COUNTS, "window_sum - (counts * a).astype(np.float16)"), FAIL, "counts \\* a is rounded to float16",
         name="counts * a in float16"),
    Case("cupy 2", ("uvv = u * v * v", "uvv = (u * v * v).astype(np.float16)"), FAIL, "uvv term.*rounded to float16",
         name="uvv in float16"),
    Case("jax 1 step", ("uvv = u * v * v", "uvv = (u * v * v).astype(jnp.bfloat16)"), FAIL, "uvv term.*rounded to bfloat16",
         name="uvv in bfloat16"),
    Case("cupynumeric 2 step", ("du = p.du * laplacian(u)", "du = p.du * laplacian(u).astype(np.float16)"), FAIL,
         "U's diffusion term .*rounded to float16", name="U's Laplacian in float16"),
    Case("cupy 2", ("uvv = u * v * v", "uvv = u * (v * v)"), PASS, "right with dt", name="uvv = u * (v * v)"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a.astype(np.float64), 1)", _COUNTS,
                    "(window_sum - counts * a).astype(np.float32)"), PASS, "laplacian: right",
         name="the window sum in float64"),
    # a wrong rate in U's feed term
    Case("cupy 2", ("p.feed * (1 - u)", "(p.feed + p.kill) * (1 - u)"), FAIL, "U's feed term is \\(p.feed \\+ p.kill\\)",
         name="(F + k) feeds U"),
    Case("jax 1 step", ("p.feed * (1 - u)", "p.feed * p.kill * (1 - u)"), FAIL, "U's feed term is p.feed \\* p.kill",
         name="F k feeds U"),
]


#: Playtest 8: a factor too many in one term (dt twice, an extra v) got a distance in the step, the loop and the
#: batch; a halo row sent as bfloat16 was "no row of the grid"; a task that leaves a row unwritten got a distance;
#: a bfloat16 carry got JAX's message cut before the difference; a step returning a list (right on its own) got a
#: hint about the loop's carry, which is right; a task's error without may_throw_exception stopped the process.
_DT_TWICE, _EXTRA_V = "dt is applied twice on {}", "{} has an extra factor of v"
_LOSS = "V's \\(p.feed \\+ p.kill\\) v term"
_LIST_STEP = ("def step(u, v, p):\n    uvv = u * v * v\n    du = p.du * laplacian(u) - uvv + p.feed * (1 - u)\n"
              "    dv = p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v\n    return [u + p.dt * du, v + p.dt * dv]\n\n")
_BODY_CALL = "a, b = model.reference_step(a, b, p)"
_NO_THROW = ("options=VariantOptions(may_throw_exception=True))", ")")
_WRITES = "    np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b"
PLAYTEST_8_MODEL = [
    Case("jax 1 step", ("- (p.feed + p.kill) * v", "- (p.feed + p.kill) * v * p.dt"), FAIL, _DT_TWICE.format(_LOSS),
         name="dt twice on V's loss term"),
    Case("cupy 2", ("p.feed * (1 - u)", "p.dt * p.feed * (1 - u)"), FAIL, _DT_TWICE.format("U's feed term"),
         name="dt twice on U's feed term"),
    Case("cupynumeric 2 step", ("- (p.feed + p.kill) * v", "- (p.feed + p.kill) * v * v"), FAIL, _EXTRA_V.format(_LOSS),
         name="V's loss term (F + k) v^2"),
    Case("jax 1 step", ("p.feed * (1 - u)", "p.feed * (1 - u) * v"), FAIL, _EXTRA_V.format("U's feed term"),
         name="U's feed term times v"),
    Case("jax 4", ("- (feed + kill) * v", "- (feed + kill) * v * params.dt"), FAIL, _DT_TWICE.format(_LOSS),
         name="the batch's dt twice on V's loss term"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)", "uvv = u * v * v\n        u, v = (u + p.dt * (p.du * laplacian(u) - uvv "
                           "+ p.feed * (1 - u)), v + p.dt * (p.dv * laplacian(v) + uvv * p.dt - (p.feed + p.kill) * v))"),
         FAIL, _DT_TWICE.format("V's uvv term"), name="a loop's own step with dt twice on V's uvv term"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return u + du * p.dt, v + p.dt * (p.dv * laplacian(v) + uvv) "
                   "- p.dt * (p.feed + p.kill) * v"), PASS, "step: right", name="dt spread over V's terms by hand"),
    Case("cupynumeric 2 step", ("- (p.feed + p.kill) * v", "- v * (p.kill + p.feed)"), PASS, "step: right",
         name="V's loss term written v (k + F)"),
    Case("jax 4", ("return u + params.dt * du, v + params.dt * dv", "dt = params.dt\n            return u + du * dt, v + dt * dv"),
         PASS, "batch: .* each right", name="the batch's dt named"),
    Case("jax 5", ('band[-1:], "rows", down)', 'band[-1:].astype(jnp.bfloat16), "rows", down)'), FAIL,
         "row above has dtype bfloat16.*rounded", name="a halo row sent as bfloat16"),
    Case("jax 5", ('band[-1:], "rows", down)', 'band[-1:].astype(jnp.bfloat16), "rows", down).astype(band.dtype)'), FAIL,
         "row above is row \\d+ rounded to bfloat16", name="a halo row sent as bfloat16, cast back"),
    Case("jax 5", ('band[-1:], "rows", down)', 'band[-1:].astype(jnp.float32), "rows", down)'), PASS, "halo exchange: right",
         name="a halo row cast to its own float32"),
    Case("cupynumeric 5", (_WRITES, "    np.asarray(u_out)[:-1] = a[:-1]\n    np.asarray(v_out)[:-1] = b[:-1]"), FAIL,
         "never writes u_out's row \\d+ \\(the last\\)", name="the task leaves the outputs' last row unwritten"),
    Case("cupynumeric 5", (_WRITES, "    np.asarray(u_out)[:, 1:] = a[:, 1:]\n    np.asarray(v_out)[:] = b"), FAIL,
         "never writes u_out's column 0 \\(the first\\)", name="the task leaves u_out's first column unwritten"),
    Case("cupynumeric 5", (_WRITES, "    np.copyto(np.asarray(u_out), a)\n    for i in range(b.shape[0]):\n"
                           "        np.asarray(v_out)[i] = b[i]"), PASS, "time loop: right", name="outputs written by copyto and by rows"),
    Case("cupynumeric 5", _NO_THROW, PASS, "time loop: right", name="a right task without may_throw_exception"),
    Case("cupynumeric 5", (*_NO_THROW, "a, b = np.asarray(u), np.asarray(v)", "a, b = np.asarray(u.data()), np.asarray(v.data())"),
         PASS, "time loop: right", name="a task reading its inputs through PhysicalArray.data()"),
    Case("cupynumeric 5", (_WRITES, "    assert u.type == u_out.type\n" + _WRITES), PASS, "time loop: right",
         name="a task reading its arrays' Legate type"),
    Case("cupynumeric 5", (_WRITES, "    assert np.asarray(u_out).dtype == a.dtype\n" + _WRITES), PASS, "time loop: right",
         name="a task reading its output's dtype"),
    Case("cupynumeric 5", (*_NO_THROW, _BODY_CALL, _BODY_CALL.replace("p)", "P)")), FAIL,
         "^your task steps_task raised NameError.*P.*may_throw_exception back", name="a task's error without may_throw_exception"),
    Case("cupynumeric 5", (_BODY_CALL, _BODY_CALL.replace("p)", "P)")), FAIL, "^(?!.*may_throw).*raised NameError",
         name="a task's error with may_throw_exception"),
    Case("jax 2", ("(u, v))", "(u.astype(jnp.bfloat16), v.astype(jnp.bfloat16)))"), FAIL,
         "carry starts as bfloat16 arrays and its body returns float32", name="a bfloat16 carry"),
    Case("jax 2", ("(u, v))", "(u.astype(jnp.float32), v.astype(jnp.float32)))"), PASS, "time loop: right",
         name="a carry cast to its own float32"),
    Case("jax 2", ("@partial", _LIST_STEP + "@partial"), FAIL, "^your step returns a list: lax.fori_loop's body",
         name="the reference loop with a step returning a list"),
    Case("jax 3", ("@partial", _LIST_STEP + "@partial"), FAIL, "^your step returns a list", name="the images with a step returning a list"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda _, uv: list(step(*uv, p))"), FAIL,
         "^(?!.*your step).*body returns a list where its start is a tuple", name="a loop body returning a list"),
    Case("jax 1 step", ("return u + p.dt * du, v + p.dt * dv", "return [u + p.dt * du, v + p.dt * dv]"), FAIL,
         "^your step returns a list", name="a step returning a list"),
]

# Playtest 9: a task body using its InputArrays as arrays (Legate's have no arithmetic, indexing or .shape)
# passed the trial on NumPy copies and, without may_throw_exception, stopped the process.
_READS = "a, b = np.asarray(u), np.asarray(v)"
PLAYTEST_9_MODEL = [
    Case("cupynumeric 5", (*_NO_THROW, _READS, "a, b = u, v"), FAIL,
         "^your task steps_task uses u as an array .*np\\.asarray\\(u\\) first.*may_throw_exception back",
         name="task InputArray directly, no may_throw"),
    Case("cupynumeric 5", (_READS, "rows, cols = u.shape\n    " + _READS), FAIL,
         "^(?!.*may_throw)your task steps_task uses u as an array \\(.*shape.*np\\.asarray\\(u\\)", name="a task reading u.shape"),
    Case("cupynumeric 5", (*_NO_THROW, _WRITES, "    u_out[:] = a\n    v_out[:] = b"), FAIL,
         "^your task steps_task writes into u_out itself .*np\\.asarray\\(u_out\\)\\[:\\] = .*may_throw_exception back",
         name="a task writing its OutputArray by indexing"),
    Case("cupynumeric 5", (*_NO_THROW, _READS, "a, b = np.array(u, copy=True), np.array(v.data())"), PASS, "time loop: right",
         name="a task copying its inputs with np.array"),
    Case("cupynumeric 5", (_READS, "assert u.ndim == 2 and u.type.to_numpy_dtype() == np.asarray(u).dtype\n    " + _READS),
         PASS, "time loop: right", name="a task reading its arrays' ndim and numpy dtype"),
    *(Case("cupynumeric 5", ("u: InputArray, v: InputArray", "u: InputStore, v: InputStore", "@task(",
                             "from legate.core.task import InputStore\n@task(", _READS, read), PASS, "time loop: right",
           name=f"a task of InputStores reading {what}")  # a PhysicalStore's members, not a PhysicalArray's
      for read, what in (("assert u.domain.hi[0] > 0\n    " + _READS, "their domain property"),
                         ("a, b = (np.asarray(s.get_inline_allocation()) for s in (u, v))", "an inline allocation"))),
]

#: jax 6's batch with one_pair building the pair's Parameters and running it by `_ONE_RUN`, paired by `{pairs}`.
_PAIR_CELL = ("def batch(feeds, kills, rows, cols, steps):\n    u0, v0 = (jnp.asarray(a) for a in model.initial_state(rows, cols))\n"
              "    def one_pair(feed, kill):\n        q = Parameters(params.du, params.dv, feed, kill, params.dt)\n"
              "        return {run}\n    return {pairs}\n\ncheck.batch(batch, device_type=jax.Array)\n")
_ONE_RUN = "lax.fori_loop(0, steps, lambda _, uv: step(*uv, q), (u0, v0))[1]"
_VMAP = "jax.jit(jax.vmap(one_pair{}))(jnp.asarray(feeds), jnp.asarray(kills))"
PLAYTEST_9_MODEL += [
    Case("jax 4", _PAIR_CELL.format(run="run(u0, v0, q, steps)[1]", pairs=_VMAP.format("")), FAIL,
         "^your batch calls a jitted function whose p is a static argument.*traced.*lax\\.fori_loop",
         name="batch calls jitted run (harness)"),
    Case("jax 4", _PAIR_CELL.format(run=_ONE_RUN, pairs=_VMAP.format(", in_axes=(0, None)")), FAIL,
         "^your batch: one_pair's kill is the whole array of kills .*in_axes=\\(0, 0\\)", name="batch in_axes None for kill"),
    Case("jax 4", _PAIR_CELL.format(run=_ONE_RUN, pairs=_VMAP.format(", in_axes=(None, 0)")), FAIL,
         "^your batch: one_pair's feed is the whole array of feeds", name="batch in_axes None for feed"),
    Case("jax 4", _PAIR_CELL.format(run=_ONE_RUN, pairs="jnp.stack([one_pair(f, k) for f, k in zip(feeds, kills)])"),
         FAIL, "^your batch takes the pairs one by one in Python.*jax\\.vmap", name="batch python loop no vmap"),
    Case("jax 4", _PAIR_CELL.format(run=_ONE_RUN, pairs="jnp.stack([one_pair(feeds[i], kills[i]) for i in range(len(feeds))])"),
         FAIL, "^your batch takes the pairs one by one in Python.*jax\\.vmap", name="batch python loop over indices"),
    Case("jax 4", _PAIR_CELL.format(run=_ONE_RUN, pairs=_VMAP.format(", in_axes=(0, 0)")), PASS, "batch: .* each right",
         name="batch with Parameters of vmap's tracers, in_axes=(0, 0)"),
    Case("jax 4", _PAIR_CELL.format(run="lax.fori_loop(0, steps, lambda _, uv: step(uv[0], uv[1], q), (u0, v0))[1]",
                                    pairs="jax.vmap(one_pair, in_axes=0)(feeds, kills)"), FAIL, "not jitted",
         name="batch with Parameters, vmap unjitted on the NumPy pairs (the exercise asks for jit)"),
]
#: An input rounded to a half precision as the operand of one product only: named with the operand.
_A_HALF = "window_sum - counts * a.astype({})"
PLAYTEST_9_MODEL += [
    Case("jax 1 laplacian", (_COUNTS, _A_HALF.format("jnp.float16")), FAIL, "the grid a in counts \\* a is rounded to float16",
         name="jax lap float16 cast"),
    Case("jax 1 laplacian", (_COUNTS, _A_HALF.format("jnp.bfloat16")), FAIL, "a in counts \\* a is rounded to bfloat16",
         name="counts * a with a in bfloat16"),
    Case("cupy 1", (_COUNTS, _A_HALF.format("np.float16")), FAIL, "a in counts \\* a is rounded to float16",
         name="counts * a with a in float16"),
    Case("jax 1 step", ("uvv = u * v * v", "uvv = u.astype(jnp.bfloat16) * v * v"), FAIL,
         "^your u_next is off: u in U's uvv term .*rounded to bfloat16", name="u in uvv in bfloat16"),
    Case("cupynumeric 2 step", ("(p.feed + p.kill) * v", "(p.feed + p.kill) * v.astype(np.float16)"), FAIL,
         "^your v_next is off: (v in )?V's \\(p.feed \\+ p.kill\\) v term .*rounded to float16", name="v in the loss term in float16"),
    Case("jax 1 laplacian", (_COUNTS, _A_HALF.format("jnp.float32")), PASS, "laplacian: right", name="counts * a cast to its float32"),
    Case("jax 1 step", ("uvv = u * v * v", "uvv = u * (v * v)"), PASS, "step: right", name="uvv as u * (v * v)"),
]

#: Playtest 10 (in real notebooks): a return indented into the loop gives one step's state, as a loop
#: that restarts from the start does: the code tells which (a right loop returning after it still passes).
PLAYTEST_9_MODEL += [
    Case("cupynumeric 3", ("    return u, v\n", "        return u, v\n"), FAIL,
         "state after one step: your return is inside the loop", name="the return inside the loop"),
    Case("cupynumeric 3", ("    for _ in range(steps):\n        u, v = step(u, v, p)\n    return u, v\n",
                           "    for _ in range(steps):\n        u, v = step(u, v, p)\n        if _ == steps - 1:\n"
                           "            return u, v\n    return u, v\n"), PASS, "time loop: right",
         name="a return inside the loop, at its last turn"),
    Case("cupynumeric 3", ("u, v = step(u, v, p)", "a, b = step(u, v, p)", "return u, v", "return a, b"), FAIL,
         "state after one step: start each step from the one before", name="each step from the start, returned after the loop"),
]
# A GPU variant of a task is tried only where a GPU runs it: its body may import CuPy, which a CPU machine lacks.
PLAYTEST_9_MODEL += [
    Case("cupynumeric 5", ("\ndef run_task(", "\n@steps_task.gpu_variant\ndef _on_the_gpu(u: InputArray, v: InputArray, "
                           "u_out: OutputArray, v_out: OutputArray, steps: int, du: float, dv: float, feed: float, kill: float, "
                           "dt: float) -> None:\n    import cupy\n    raise RuntimeError('a GPU variant, run on the CPU')\n\n"
                           "def run_task("), PASS, "time loop: right", where="cpu", name="a GPU variant of its own, importing cupy"),
]
