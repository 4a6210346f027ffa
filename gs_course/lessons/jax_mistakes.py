"""The values common mistakes of the JAX tutorial's images and batch exercises give, and what each
is: an image after another number of steps than nbextrastep, pairs that all ran with the first
feed or kill (in_axes=None for one of them) or F and k rounded to float16, a pair's run one step
short or long."""

from __future__ import annotations

import numpy as np

from ..model import initial_state, reference_run, reference_step
from ..parameters import Parameters


#: How the JAX exercise runs an image's steps (the saving exercise's own: simulation.advance).
JAX_IMAGE_STEPS = "lax.fori_loop(0, nbextrastep, ...) in one_image"


def steps_of_first_image(image: np.ndarray, rows: int, cols: int, p: Parameters, nbextrastep: int,
                         atol: float, advance: str = JAX_IMAGE_STEPS) -> str | None:
    """Where the first image is V after k steps, k other than nbextrastep (up to 4 x nbextrastep + 8;
    0 and 1 have hints of their own), the hint that names k, and `advance`, the exercise's call that runs
    an image's steps; else None."""
    u, v = initial_state(rows, cols, np.float64)
    for k in range(1, 4 * nbextrastep + 9):
        u, v = reference_step(u, v, p)
        if k > 1 and k != nbextrastep and np.allclose(image, v, rtol=0, atol=max(atol, 1e-4)):
            return (f"image 0 is V after {k} steps, not after nbextrastep = {nbextrastep}: each image is V after "
                    f"nbextrastep more steps, the argument ({advance})")
    return None


def batch_mistakes(rows: int, cols: int, steps: int, base: Parameters, feeds, kills, i: int):
    """(V, hint) of pattern i's common mistakes, made only when asked for (each is a run)."""
    for name, p in (("kill", base.replace(feed=float(feeds[i]), kill=float(kills[0]))),
                    ("feed", base.replace(feed=float(feeds[0]), kill=float(kills[i]))),
                    ("feed and kill", base.replace(feed=float(feeds[0]), kill=float(kills[0])))):
        if i:
            yield (reference_run(rows, cols, steps, p)[1],
                   f"it is pattern {i}'s run with the first {name}, " + " and ".join(f"{n}s[0]" for n in name.split(" and "))
                   + ": every pair needs its own, map both arrays together, jax.vmap(one_pair) with in_axes=0 for both "
                   "(in_axes=None hands every pair the same value)")
    for name, p in (("feed", base.replace(kill=float(kills[i]))), ("kill", base.replace(feed=float(feeds[i]))),
                    ("feed and kill", base)):
        if p != base.replace(feed=float(feeds[i]), kill=float(kills[i])):
            yield (reference_run(rows, cols, steps, p)[1],
                   f"it is pattern {i}'s run with the setup's {name}, " + " and ".join(f"params.{n}" for n in name.split(" and "))
                   + f": inside one_pair use the pair's own {name}, the arguments jax.vmap hands it")
    p = base.replace(feed=float(feeds[i]), kill=float(kills[i]))
    rounded = base.replace(feed=float(np.float16(feeds[i])), kill=float(np.float16(kills[i])))
    yield (reference_run(rows, cols, steps, rounded)[1],
           "it is the run with F and k rounded to float16: keep the feeds and kills float32, jnp.asarray(feeds)")
    yield (reference_run(rows, cols, steps - 1, p)[1],
           "it is V one step too early: run all the steps, lax.fori_loop(0, steps, ...)")
    yield (reference_run(rows, cols, steps + 1, p)[1],
           "it is V one step too late: run exactly steps steps, lax.fori_loop(0, steps, ...)")
