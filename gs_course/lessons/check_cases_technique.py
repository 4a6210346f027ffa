"""The harness's cases from the fourteenth independent playtest and others of the same kinds: the technique each exercise teaches checked where the values are right (jit where it is asked, integer-array indexing, a task's steps from its inputs).
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.

The loops over the images and the scalar indexings are told by `analysis_watch`, which watches the
call on NumPy also where the notebook runs CuPy.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

_RUN_JIT = "@partial(jax.jit, static_argnums=(2, 3))\n"
_IMAGES_JIT = "@partial(jax.jit, static_argnums=(2, 3, 4))\n"
_FORI = "lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))"
_PAIRS = "jax.jit(jax.vmap(one_pair))"
_MASS = "return images.sum(axis=(1, 2), dtype=np.float64)"
_EDGES = "edges = ordered[xp.asarray(index)]"
_VALUES = "image[coordinates[:, 0], coordinates[:, 1]]"

TECHNIQUE_14: list[Case] = [
    # F9: the given jit of the time loop (and of the images) deleted
    Case("jax 2", (_RUN_JIT, ""), FAIL, "not jitted: the given line @partial\\(jax.jit", name="F9: the given jit line deleted"),
    Case("jax 2", (_RUN_JIT, "# " + _RUN_JIT), FAIL, "run is not jitted", name="the given jit line commented out"),
    Case("jax 2", (_RUN_JIT, "", _FORI, "lax.fori_loop(0, steps, jax.jit(lambda _, uv: step(*uv, p)), (u, v))"), FAIL,
         "run is not jitted", name="the jit moved onto the loop's body"),
    Case("jax 2", (_RUN_JIT, "", "check.time_loop", "run = jax.jit(run, static_argnums=(2, 3))\ncheck.time_loop"), PASS,
         "one loop on the device", name="jax.jit(run, static_argnums) after the def"),
    Case("jax 2", (_RUN_JIT, '@partial(jax.jit, static_argnames=("p", "steps"))\n'), PASS, "one loop on the device",
         name="static_argnames instead of static_argnums"),
    Case("jax 2", (_RUN_JIT, "", "return " + _FORI, "return jax.jit(lambda u, v: " + _FORI + ")(u, v)"), PASS,
         "one loop on the device", name="a plain def returning a jitted loop"),
    Case("jax 3", (_IMAGES_JIT, "", "check.images", "images = jax.jit(images, static_argnums=(2, 3, 4))\ncheck.images"),
         PASS, "one scan", name="images jitted after the def"),
    # F8: the batch's vmap without the jit the exercise asks for
    Case("jax 4", (_PAIRS, "jax.vmap(one_pair)"), FAIL, "batch is not jitted: .*jax.jit\\(jax.vmap\\(one_pair\\)\\)",
         name="F8: jax.vmap(one_pair) without jax.jit"),
    Case("jax 4", (_PAIRS, "jax.vmap(one_pair, in_axes=(0, 0))"), FAIL, "batch is not jitted",
         name="vmap with in_axes, no jit"),
    Case("jax 4", (_PAIRS, "jax.vmap(jax.checkpoint(one_pair))"), FAIL, "batch is not jitted",
         name="vmap of a checkpointed pair, no jit"),
    Case("jax 4", (_PAIRS, "partial(jax.jit)(jax.vmap(one_pair))"), PASS, "one vmap", name="partial(jax.jit)(vmap)"),
    Case("jax 4", ("    return " + _PAIRS, "    pairs = jax.jit(jax.vmap(one_pair))\n    return pairs"), PASS, "one vmap",
         name="the jitted vmap named first"),
    Case("jax 4", ("def batch(", "@partial(jax.jit, static_argnums=(2, 3, 4))\ndef batch(", _PAIRS, "jax.vmap(one_pair)"),
         PASS, "one vmap", name="batch jitted whole, rows, cols, steps static"),
    # F20: the task's steps start from its outputs, not from its inputs
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = np.asarray(u_out), np.asarray(v_out)"), FAIL,
         "^(?!.*never written).*starts its steps from u_out and v_out.*np.asarray\\(u\\)",
         name="F20: the steps from u_out, v_out"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = np.asarray(u_out), np.asarray(v)"), FAIL,
         "starts its steps from u_out, which holds nothing", name="U's steps from u_out, V's from v"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "a, b = np.asarray(u_out).copy(), np.asarray(v_out).copy()"),
         FAIL, "starts its steps from u_out and v_out", name="the steps from copies of the outputs"),
    Case("cupynumeric 5", ("a, b = np.asarray(u), np.asarray(v)", "np.asarray(u_out)[:] = np.asarray(u)\n    "
                           "np.asarray(v_out)[:] = np.asarray(v)\n    a, b = np.asarray(u_out), np.asarray(v_out)"), PASS,
         "time loop: right", name="the inputs copied into the outputs, then stepped from there"),
    # F10: one task per step from an edited run_task
    Case("cupynumeric 5", ("    steps_task(u, v, u_out, v_out, steps, p.du, p.dv, p.feed, p.kill, p.dt)",
                           "    for _ in range(steps):\n        steps_task(u, v, u_out, v_out, 1, p.du, p.dv, p.feed, p.kill, p.dt)\n"
                           "        u, v = u_out.copy(), v_out.copy()"), FAIL, "more than once in one call .*one task for all the steps",
         name="F10: run_task issuing one task per step"),
    Case("cupynumeric 5", ("    steps_task(u, v, u_out, v_out, steps, p.du, p.dv, p.feed, p.kill, p.dt)",
                           "    half = steps // 2\n    steps_task(u, v, u_out, v_out, half, p.du, p.dv, p.feed, p.kill, p.dt)\n"
                           "    u, v = u_out.copy(), v_out.copy()\n"
                           "    steps_task(u, v, u_out, v_out, steps - half, p.du, p.dv, p.feed, p.kill, p.dt)"), FAIL,
         "more than once in one call", name="run_task issuing two tasks of half the steps"),
    Case("cupynumeric 5", ("    steps_task(u, v, u_out, v_out, steps, p.du, p.dv, p.feed, p.kill, p.dt)",
                           "    step = 0\n    while step < steps:\n        steps_task(u, v, u_out, v_out, 1, p.du, p.dv, p.feed, "
                           "p.kill, p.dt)\n        u, v, step = u_out.copy(), v_out.copy(), step + 1"), FAIL,
         "more than once in one call", name="run_task's while loop of one-step tasks"),
    Case("cupynumeric 5", ("    steps_task(u, v, u_out, v_out, steps, p.du, p.dv, p.feed, p.kill, p.dt)",
                           "    steps_task(u, v, u_out, v_out, steps, du=p.du, dv=p.dv, feed=p.feed, kill=p.kill, dt=p.dt)"),
         PASS, "time loop: right", name="the task's scalars by name"),
    # F5: a loop over the images in any spelling
    Case("synthesis 1", (_MASS, "return xp.asarray(list(map(lambda im: im.sum(dtype=np.float64), images)))"), FAIL,
         "from a Python loop over the images", name="F5: map with a lambda over the images"),
    Case("synthesis 1", ("def mass(images):\n    " + _MASS, "def one(im):\n    return im.sum(dtype=np.float64)\n\n"
                         "def mass(images):\n    return xp.stack(list(map(one, images)))"), FAIL,
         "from a Python loop over the images", name="map with a named function over the images"),
    Case("synthesis 1", (_MASS, "out = xp.zeros(len(images))\n    i = 0\n    while i < len(images):\n"
                         "        out[i] = images[i].sum(dtype=np.float64)\n        i += 1\n    return out"), FAIL,
         "from a Python loop over the images", name="a while loop over the images"),
    Case("synthesis 1", (_MASS, "if len(images) == 0:\n        return xp.zeros(0)\n    return xp.concatenate("
                         "[images[:1].sum(axis=(1, 2), dtype=np.float64), mass(images[1:])])"), FAIL,
         "from a Python loop over the images", name="recursion on images[1:]"),
    Case("synthesis 1", (_MASS, "return xp.asarray(list(itertools.starmap(lambda im: im.sum(dtype=np.float64), "
                         "zip(images))))", "def mass(", "import itertools\n\ndef mass("), FAIL,
         "from a Python loop over the images", name="itertools.starmap over the images"),
    Case("synthesis 1", (_MASS, "return xp.asarray(functools.reduce(lambda acc, im: acc + [im.sum(dtype=np.float64)], "
                         "images, []))", "def mass(", "import functools\n\ndef mass("), FAIL,
         "from a Python loop over the images", name="functools.reduce over the images"),
    Case("synthesis 1", (_MASS, "return images.reshape(len(images), -1).sum(axis=1, dtype=np.float64)"), PASS,
         "mass: one per image", name="rows of the images summed"),
    Case("synthesis 1", (_MASS, "return xp.sum(images, axis=(2, 1), dtype=np.float64)"), PASS, "mass: one per image",
         name="xp.sum with the axes the other way round"),
    Case("synthesis 1", (_MASS, "n = images.shape[0]\n    return xp.einsum('ijk->i', images.astype(np.float64))"), PASS,
         "mass: one per image", name="einsum in float64"),
    Case("synthesis 3", ("return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "return xp.stack(list(map(lambda one: xp.bincount(one.ravel() - one.min() // bins * bins, "
                         "minlength=bins)[:bins], index)))"), FAIL, "Python loop over the images",
         name="histograms: a bincount per image through map"),
    Case("synthesis 5", ("gram = rows @ rows.T", "gram = xp.stack(list(map(lambda r: rows @ r, rows)))"), FAIL,
         "Python loop over the images", name="similarity: a product per image through map"),
    # F6: the deciles' edges picked one by one
    Case("synthesis 4", (_EDGES, "edges = xp.stack([ordered[int(q * (ordered.size - 1))] for q in analysis.DECILES])"),
         FAIL, "picked by 9 scalar indexings", name="F6: nine scalar indexings in a comprehension"),
    Case("synthesis 4", (_EDGES, "edges = xp.asarray(list(map(lambda i: ordered[int(i)], index)))"), FAIL,
         "scalar indexings", name="the edges picked through map"),
    Case("synthesis 4", (_EDGES, "edges = xp.concatenate(list(map(lambda i: ordered[i:i + 1], index)))"), FAIL,
         "scalar indexings", name="the edges as nine slices of one"),
    Case("synthesis 4", (_EDGES, "edges = xp.take(ordered, xp.asarray(index))"), PASS, "deciles:", name="xp.take of the indices"),
    Case("synthesis 4", ("index = np.floor(analysis.DECILES * (ordered.size - 1)).astype(np.int64)",
                         "index = [int(q * (ordered.size - 1)) for q in analysis.DECILES]"), PASS, "deciles:",
         name="the indices from a comprehension on the host"),
    # F7: the bright cells' values by a boolean mask
    Case("synthesis 6", ("coordinates = xp.argwhere(image > threshold)\n    return coordinates, image[coordinates[:, 0], "
                         "coordinates[:, 1]]", "mask = image > threshold\n    return xp.argwhere(mask), image[mask]"), FAIL,
         "taken by a boolean mask .*integer-array indexing", name="F7: the values by a boolean mask"),
    Case("synthesis 6", (_VALUES, "xp.extract(image > threshold, image)"), FAIL, "boolean mask", name="xp.extract of the mask"),
    Case("synthesis 6", (_VALUES, "image.ravel()[(image > threshold).ravel()]"), FAIL, "boolean mask",
         name="the flat image by the flat mask"),
    Case("synthesis 6", (_VALUES, "xp.asarray(list(map(lambda rc: image[rc[0], rc[1]], coordinates)))"), FAIL,
         "Python loop over the cells", name="the values one cell at a time through map"),
    Case("synthesis 6", (_VALUES, "image[tuple(coordinates.T)]"), PASS, "bright cells:", name="image[tuple(coordinates.T)]"),
    Case("synthesis 6", (_VALUES, "image[xp.nonzero(image > threshold)]"), PASS, "bright cells:",
         name="the values at nonzero's integer arrays"),
    Case("synthesis 6", (_VALUES, "image.ravel()[coordinates[:, 0] * image.shape[1] + coordinates[:, 1]]"), PASS,
         "bright cells:", name="the flat image at the flat indices"),
    Case("synthesis 6", ("    return coordinates, " + _VALUES, "    rows, cols = coordinates.T\n    return coordinates, image[rows, cols]"),
         PASS, "bright cells:", name="rows, cols unpacked from coordinates.T"),
]
