"""The harness's cases of the review of playtest 16's fixes: a function's signature read before JAX traces
it (the trace's own errors would name the loop's body), the checkers' one decorator `hints.checks`.
`gs_course.lessons.check_cases` puts them in its `CASES` (through check_cases_playtest14); one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

PLAYTEST_16_REVIEW: list[Case] = [
    Case("jax 2", ("@partial(jax.jit, static_argnums=(2, 3))\ndef run(u, v, p, steps):",
                   "@partial(jax.jit, static_argnums=(2,))\ndef run(u, v, steps):\n    p = params"), FAIL,
         r"^your run takes \(u, v, steps\): the exercise calls it as run\(u, v, p, steps\), 4 arguments",
         name="run(u, v, steps) jitted, the parameters read from outside"),
    Case("jax 3", ("@partial(jax.jit, static_argnums=(2, 3, 4))\ndef images(u, v, p, nbimage, nbextrastep):",
                   "@partial(jax.jit, static_argnums=(2, 3))\ndef images(u, v, p, nbimage):\n    nbextrastep = 7"), FAIL,
         r"^your images takes \(u, v, p, nbimage\): the exercise calls it as images\(u, v, p, nbimage, nbextrastep\)",
         name="images without nbextrastep, jitted"),
    Case("jax 2", ("def run(u, v, p, steps):", "def run(u, v, steps, p):"), FAIL,
         r"^your run takes \(u, v, steps, p\): the exercise calls it as run\(u, v, p, steps\), in that order",
         name="run's steps and p the other way round"),
    Case("jax 1 step", ("def step(u, v, p):", "def step(u, v, p, *, scale=1.0):"), PASS, "step: right",
         name="a keyword-only parameter of its own, with a default"),
    Case("cupy 2", ("def step(u, v, p):", "def step(u, v, p=params):"), PASS, "step: right", name="p with a default"),
    Case("synthesis 1", ("def mass(images):", "def mass(images, /):"), PASS, "mass: one per image",
         name="a positional-only parameter"),
]
