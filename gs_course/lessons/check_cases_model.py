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
    Case("cupynumeric 6", ("a, b = np.asarray(u), np.asarray(v)\n    for _ in range(steps):\n        a, b = model.reference_step(a, b, p)",
                           "a, b = np.asarray(u), np.asarray(v)\n    for _ in range(steps):\n        a[:], b[:] = model.reference_step(a, b, p)"),
         FAIL, "writes into its inputs", name="the task writes into its InputArrays"),
    Case("cupynumeric 6", ("a, b = model.reference_step(a, b, p)",
                           "a, b = model.updated(a, b, model.laplacian(a), model.laplacian(b), p)"), PASS,
         "time loop: right", name="model.laplacian inside the task (not the notebook's laplacian)"),
    Case("cupynumeric 6", ("np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b", "u_out[:] = a\n    v_out[:] = b"),
         FAIL, "np.asarray\\(u_out\\)\\[:\\] = ", name="an OutputArray written without np.asarray"),
    Case("cupynumeric 6", ("a, b = np.asarray(u), np.asarray(v)", "a, b = u, v"), FAIL, "np.asarray\\(u\\)",
         name="the task's arrays used without np.asarray"),
    Case("cupynumeric 4", ("u, v = step(u, v, p)", "u, v = step(u, v)"), FAIL, "^(?!.*fori_loop).*missing 1 required",
         name="step called without p (no JAX advice)"),
    Case("cupy 2", ("p.du * laplacian(u)", "p.du * laplacian(u, p)"), FAIL, "^(?!.*fori_loop).*takes 1 positional",
         name="laplacian called with p (no JAX advice)"),
    Case("jax 4", ("lambda _, uv: step(*uv, p)", "lambda uv: step(*uv, p)"), FAIL, "fori_loop calls its body",
         name="the fori_loop body without i"),
    Case("cupy 2", ("p.du * laplacian(u)", "p.du * lapacian(u)"), FAIL, "raised NameError: name 'lapacian'.*line \\d+ of your cell, in step",
         name="a typo in a name (NameError)"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, 1, mode=\"zeros\")"), FAIL,
         "raised ValueError: .*zeros.*in laplacian", name="a pad mode that does not exist"),
    Case("cupynumeric 4", ("for _ in range(steps):", "for _ in range(steps / 1):"), FAIL, "raised TypeError: 'float'",
         name="range of a float"),
    Case("jax 2", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a, 1, mode=\"zeros\")"), FAIL, "raised \\w+: .*'zeros'.*in laplacian",
         name="jnp.pad of a mode that does not exist"),
    Case("cupy 7", ("with BackgroundWriter(frames) as writer:", "with BackgroundWriter(path) as writer:"), FAIL,
         "BackgroundWriter\\(FrameWriter\\(", name="BackgroundWriter of the path"),
    Case("cupynumeric 5", ("cnp.convolve(a, window, mode=\"same\")", "cnp.convolve(a, cnp.ones(3, dtype=cnp.float32), mode=\"same\")"),
         FAIL, "3 x 3 window", name="a 1-D window"),
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.asarray(np.pad(np.asarray(a), 1))"), PASS,
         "kept on the device: not checked here", where="cpu", name="a host round trip without a GPU: not checked"),
    Case("cupy 2", ("return u + p.dt * du, v + p.dt * dv", "return model.reference_step(np.asarray(u), np.asarray(v), p)"),
         PASS, "kept on the device: not checked here", where="cpu", name="the host's step without a GPU: not checked"),
    Case("cupy 2", (_NINE[0], _NINE[1].format(xp="xp")), FAIL, "calls your laplacian, which is still wrong: fix exercise 1 .*%catch_up 1",
         name="a right step on a wrong laplacian"),
    Case("cupynumeric 3", (_NINE[0], _NINE[1].format(xp="cnp")), FAIL, "your laplacian, .*fix exercise 2 .*%catch_up 2",
         name="a right step on a wrong laplacian"),
    Case("cupynumeric 4", _WRONG_STEP, FAIL, "calls your step, which is still wrong: fix exercise 2", name="a right loop on a wrong step"),
    Case("jax 3", (_NINE[0], _NINE[1].format(xp="jnp")), FAIL, "your laplacian, which is still wrong: fix exercise \\d",
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
    Case("cupynumeric 3", ("return u + p.dt * du, v + p.dt * dv", "return p.dt * du, p.dt * dv"), FAIL, "one step's change",
         name="the increments returned"),
    Case("cupynumeric 4", ("u, v = step(u, v, p)\n    return u, v", "a, b = step(u, v, p)\n    return a, b"), FAIL,
         "the state after one step", name="each step from the initial state"),
    Case("cupynumeric 6", ("for _ in range(steps):\n        a, b = model.reference_step(a, b, p)",
                           "a, b = model.reference_step(a, b, p)"), FAIL, "the state after one step",
         name="one step in the task, no loop"),
    Case("cupynumeric 2", ("return window_sum - counts * a", "return window_sum - model.window_counts(rows, cols) * a"),
         FAIL, "copies \\d NumPy array.* at every call", name="NumPy window counts made at every call"),
    Case("cupynumeric 2", ("return window_sum - counts * a", "return window_sum - cnp.asarray(model.window_counts(rows, cols)) * a"),
         FAIL, "at every call", name="the window counts copied to the device at every call"),
    Case("cupynumeric 4", ("u, v = step(u, v, p)\n", "u = step(u, v, p)[0]\n        v = step(u, v, p)[1]\n"), FAIL,
         "V is updated from the new U", name="V's step from the new U"),
    Case("cupynumeric 5", ("cnp.convolve(a, window, mode=\"same\")",
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
