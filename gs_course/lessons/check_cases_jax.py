"""The harness's cases of the JAX tutorial's checkers from the fourth independent playtest and others
of the same kinds: loops that would never end or take minutes to compile (told from the traced
program, before anything runs), errors told as one line, hints that name the mistake itself, and
right answers written otherwise. `gs_course.lessons.check_cases` puts them in its `CASES`; one line
each, as there.
"""

from __future__ import annotations

from .check_answers import EXERCISES, FAIL, PASS, Case

_FORI = "lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))"
_IMAGE_STEPS = "u, v = lax.fori_loop(0, nbextrastep, lambda _, uv: step(*uv, p), uv)"
_SCAN = "_, frames = lax.scan(one_image, (u, v), None, length=nbimage)\n    return frames"
_PAIRS = "jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))"
_ABOVE_BELOW = 'above = lax.ppermute(band[-1:], "rows", down)\n    below = lax.ppermute(band[:1], "rows", up)'
_PAIRS_OF = ("down = [(i, i + 1) for i in range(bands - 1)]\n    up = [(i + 1, i) for i in range(bands - 1)]")
#: A step that ignores the u, v it is given (it steps from the initial state), wrapping the notebook's own.
_FROM_INITIAL = ("_{name} = {name}\ndef {name}(u, v, p):\n    a, b = ({xp}.asarray(x) for x in model.initial_state(*u.shape))\n"
                 "    return _{name}(a, b, p)\n")
#: Every hint a checker gives outside the time loop must not send the student to lax.fori_loop's body.
_NO_FORI = "^(?!.*fori_loop)"

PLAYTEST_4_JAX = [
    # hangs and slow checks: read from the traced program
    Case("jax 2", ("return " + _FORI, "_, u, v = lax.while_loop(lambda c: c[0] < steps, lambda c: (c[0], *step(c[1], c[2], p)), "
                   "(0, u, v))\n    return u, v"), FAIL, "your loop never ends: .*c\\[0\\]", name="a while loop's counter never incremented"),
    Case("jax 2", ("return " + _FORI, "return lax.while_loop(lambda c: True, lambda c: step(*c, p), (u, v))"), FAIL,
         "never ends", name="a while loop whose condition is always True"),
    Case("jax 2", ("return " + _FORI, "_, u, v = lax.while_loop(lambda c: c[0] != steps, lambda c: (c[0] + 2, *step(c[1], c[2], p)), "
                   "(0, u, v))\n    return u, v"), FAIL, "never ends: after 20,000 rounds", name="a counter that steps past its bound"),
    Case("jax 2", ("return " + _FORI, "_, u, v = lax.while_loop(lambda c: c[0] < steps, lambda c: (c[0] - 1, *step(c[1], c[2], p)), "
                   "(0, u, v))\n    return u, v"), FAIL, "never ends: after 20,000 rounds", name="a counter that counts down"),
    Case("jax 2", ("return " + _FORI, "_, u, v = lax.while_loop(lambda c: c[0] > 0, lambda c: (c[0] - 1, *step(c[1], c[2], p)), "
                   "(steps, u, v))\n    return u, v"), PASS, "one loop on the device", name="a while loop counting down from steps"),
    Case("jax 2", ("return " + _FORI, "def more(c):\n        return c[0] < steps\n\n    def one(c):\n        i, a, b = c\n"
                   "        return (i + 1, *step(a, b, p))\n\n    return lax.while_loop(more, one, (0, u, v))[1:]"), PASS,
         "one loop on the device", name="a while loop, named functions"),
    Case("jax 2", ("return " + _FORI, "return lax.scan(lambda uv, _: (step(*uv, p), None), (u, v), None, length=steps)"),
         FAIL, "a pair whose first item is a pair, as lax.scan's \\(carry, ys\\)", name="scan's (carry, ys) returned whole"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda _, uv: step(*uv, p)[::-1]"), FAIL,
         "handed back swapped, \\(v, u\\)", name="each step's result handed back swapped"),
    Case("jax 2", ("(u, v))", "(u, v), unroll=True)"), FAIL, "unrolls into \\d+ operations: unroll=True",
         name="fori_loop(..., unroll=True)"),
    Case("jax 2", ("(u, v))", "(u, v), unroll=4)"), PASS, "one loop on the device", name="fori_loop(..., unroll=4)"),
    Case("jax 2", ("lax.fori_loop(0, steps,", "lax.fori_loop(0, 100,"), FAIL, "ignores its argument steps",
         name="a number of steps of its own"),
    Case("jax 2", ("static_argnums=(2, 3)", "static_argnums=2"), PASS, "one loop on the device",
         name="steps traced (not static)"),
    Case("jax 3", (_IMAGE_STEPS, _IMAGE_STEPS.replace("nbextrastep", "32")), FAIL, "ignores the argument nbextrastep",
         name="a number of steps an image of its own (size.steps_per_image)"),
    Case("jax 3", (_IMAGE_STEPS, _IMAGE_STEPS.replace("uv)", "uv, unroll=True)")), FAIL, "unroll into \\d+ operations: unroll=True",
         name="the steps of an image unrolled"),
    Case("jax 4", ("lax.fori_loop(0, steps,", "lax.fori_loop(0, 60,"), FAIL, "ignores the argument steps",
         name="a number of steps of its own"),
    Case("jax 4", ("return lax.fori_loop(0, steps, body, (u0, v0))[1]",
                   "return lax.while_loop(lambda c: c[0] < steps, lambda c: (c[0], *body(0, c[1:])), (0, u0, v0))[2]"),
         FAIL, "never ends", name="a while loop's counter never incremented"),
    Case("jax 4", ("def body(_, uv):", "def body(uv):"), FAIL, "fori_loop calls its body as body\\(i, carry\\)",
         name="the fori_loop body without i"),
    # raw tracebacks
    Case("jax 5", ("range(bands - 1)]\n    up", "range(bands - 1)] + [(0, 1)]\n    up"), FAIL,
         "device 0 twice as a source: .*once as a source and once as a destination", name="a pair twice in the permutation"),
    Case("jax 5", (_PAIRS_OF, "down = list(zip(range(bands - 1), range(1, bands)))\n    up = [(b, a) for a, b in down]"),
         PASS, "halo exchange: right", name="the pairs zipped, up from down"),
    # playtest 5: a device that is not a band
    Case("jax 5", (_PAIRS_OF, "down = [(i, i + 1) for i in range(bands)]\n    up = [(i + 1, i) for i in range(bands)]"), FAIL,
         "name device 2, but the 2 bands are devices 0 to 1: there is no band 2", name="pairs over range(bands)"),
    Case("jax 5", (_PAIRS_OF, "down = [(i - 1, i) for i in range(bands)]\n    up = [(i, i - 1) for i in range(bands)]"), FAIL,
         "^[^;]*name device -1, which JAX takes for the last band", name="pairs from device -1"),
    Case("jax 5", (_PAIRS_OF, "down = [(i - 1, i) for i in range(1, bands)]\n    up = [(i, i - 1) for i in range(1, bands)]"),
         PASS, "halo exchange: right", name="the pairs (i - 1, i) from 1"),
    # playtest 5: scan's body, pmap for vmap
    Case("jax 3", ("return (u, v), v", "return (u, v), (v, u)"), FAIL, "two stacks of images: your scan's body emits a pair",
         name="each image emitted as the pair (v, u)"),
    Case("jax 3", ("return (u, v), v", "return u, v"), FAIL, "lax.scan's body returns a pair \\(carry, y\\)",
         name="one_image returning the carry only"),
    Case("jax 3", ("def one_image(uv, _):", "def one_image(_, uv):"), FAIL, "lax.scan calls its body as body\\(carry, x\\)",
         name="one_image(_, uv)"),
    Case("jax 3", ("return (u, v), v", "carry = (u, v)\n        return carry, carry[1]"), PASS, "one scan",
         name="the carry named, y its second"),
    Case("jax 4", (_PAIRS, "jax.pmap(one_pair)(jnp.asarray(feeds), jnp.asarray(kills))"), FAIL,
         "jax.pmap maps over devices.*jax.vmap\\(one_pair\\)", name="jax.pmap for jax.vmap"),
    Case("jax 4", (_PAIRS, "jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds, jnp.float16), jnp.asarray(kills, jnp.float16))"),
         FAIL, "F and k rounded to float16", name="float16 feeds and kills"),
    Case("jax 4", (_PAIRS, "jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds, jnp.float32), jnp.asarray(kills, jnp.float32))"),
         PASS, "one vmap", name="float32 feeds and kills, said"),
    Case("jax 2", ("(u, v))", "(v, u))"), FAIL, "the run from U and V swapped", name="the carry starts as (v, u)"),
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum - a"), FAIL, "it subtracts a once",
         name="- a (not counts * a)"),
    Case("jax 1 step", ("+ p.feed * (1 - u)\n", "+ p.feed * (1 - u) * u\n"), FAIL, "feed term is p.feed \\* \\(1 - u\\), not times u",
         name="the feed term times u"),
    Case("jax 1 laplacian", ("window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "window_sum = jnp.stack([padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)]).sum(axis=1)"),
         FAIL, "summed over a slice's axis.*sum\\(axis=0\\)", name="the stack of nine slices summed over axis 1"),
    Case("jax 1 laplacian", ("window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "window_sum = jnp.stack([padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)], -1).sum(-1)"),
         PASS, "laplacian: right", name="the nine slices stacked last, summed over it"),
    # hints that named another cause
    Case("jax 1 laplacian", "def laplacian(a, counts):\n    rows, cols = a.shape\n    padded = jnp.pad(a, 1)\n"
         "    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) - counts * a\n\n"
         "check.laplacian(laplacian, device_type=jax.Array, to_device=jnp.asarray)", FAIL,
         _NO_FORI + r"your laplacian takes \(a, counts\): the exercise calls it as laplacian\(a\), 1 argument",
         name="laplacian(a, counts)"),
    Case("jax 1 step", ("def step(u, v, p):\n    uvv", "def step(u, v):\n    p = params\n    uvv"), FAIL,
         _NO_FORI + r"your step takes \(u, v\): the exercise calls it as step\(u, v, p\), 3 arguments", name="step(u, v)"),
    Case("jax 3", ("return (u, v), v", "return (u, v), jnp.stack((u, v))"), FAIL, "\\(nbimage, 2, \\d+, \\d+\\).*Store V only",
         name="images of (u, v)"),
    Case("jax 3", (_IMAGE_STEPS, _IMAGE_STEPS.replace("nbextrastep", "nbextrastep + 1")), FAIL,
         "^(?!.*`steps`).*after 8 steps, not after nbextrastep = 7", name="nbextrastep + 1 steps an image"),
    Case("jax 3", (_IMAGE_STEPS, _IMAGE_STEPS.replace("nbextrastep", "2 * nbextrastep")), FAIL,
         "after 14 steps, not after nbextrastep", name="twice nbextrastep an image"),
    Case("jax 5", (_PAIRS_OF, "down = [(i, (i + 1) % bands) for i in range(bands)]\n"
                   "    up = [((i + 1) % bands, i) for i in range(bands)]"), FAIL,
         "^(?!.*sent (down|up) \\().*with 2 bands.*nothing lies beyond the grid's edges", name="both directions wrap around"),
    Case("jax 5", (_ABOVE_BELOW, 'above = lax.pshuffle(band[-1:], "rows", [(i - 1) % bands for i in range(bands)])\n'
                   '    below = lax.pshuffle(band[:1], "rows", [(i + 1) % bands for i in range(bands)])'), FAIL,
         "^(?!.*sent (down|up) \\().*nothing lies beyond the grid's edges", name="pshuffle, wrapping around"),
    Case("jax 5", (_ABOVE_BELOW, _ABOVE_BELOW.replace("band[-1:]", "band").replace("band[:1]", "band")), FAIL,
         "^(?!.*not band\\[-1\\]).*whole band: send one row, band\\[-1:\\]", name="the whole band sent"),
    Case("jax 5", ("band[-1:]", "band[-1]"), FAIL, "not band\\[-1\\]", name="band[-1], one dimension lost"),
    # hints that were a distance
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum - (counts - 1) * a"), FAIL,
         "the window sum includes the cell itself", name="- (counts - 1) * a"),
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum - counts"), FAIL, "counts alone",
         name="- counts (no * a)"),
    Case("jax 1 laplacian", ("window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "window_sum = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] + a"),
         FAIL, "five-point cross", name="five-point with the centre, - counts * a"),
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum - a * counts"), PASS, "laplacian: right",
         name="a * counts"),
    Case("jax 1 step", ("    du = p.du * laplacian(u) - uvv + p.feed * (1 - u)\n    dv = p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v\n"
                   "    return u + p.dt * du, v + p.dt * dv",
                   "    u = u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u))\n"
                   "    v = v + p.dt * (p.dv * laplacian(v) + u * v * v - (p.feed + p.kill) * v)\n    return u, v"), FAIL,
         "V's update uses the new u", name="V's update from the new u"),
    Case("jax 1 step", ("    return u + p.dt * du, v + p.dt * dv", "    u_next = u + p.dt * du\n    v = v + p.dt * dv\n"
                   "    return u_next, v"), PASS, "right with dt", name="u_next first, v reassigned"),
    Case("jax 4", (_PAIRS, "jax.vmap(one_pair, in_axes=(0, None))(jnp.asarray(feeds), jnp.asarray(kills)[0])"), FAIL,
         "first kill, kills\\[0\\]", name="in_axes=(0, None) with kills[0]"),
    Case("jax 4", (_PAIRS, "jax.vmap(one_pair, in_axes=(None, 0))(jnp.asarray(feeds)[0], jnp.asarray(kills))"), FAIL,
         "first feed, feeds\\[0\\]", name="in_axes=(None, 0) with feeds[0]"),
    Case("jax 4", ("lax.fori_loop(0, steps,", "lax.fori_loop(0, steps - 1,"), FAIL, "one step too early",
         name="steps - 1 for each pair"),
    Case("jax 4", ("lax.fori_loop(0, steps,", "lax.fori_loop(0, steps + 1,"), FAIL, "one step too late",
         name="steps + 1 for each pair"),
    # a right answer that the course's Parameters refused (it checked for plain numbers under vmap)
    Case("jax 4", ("    def one_pair(feed, kill):", "    import dataclasses\n\n    def one_pair(feed, kill):\n"
                   "        q = dataclasses.replace(params, feed=feed, kill=kill)\n"
                   "        return lax.fori_loop(0, steps, lambda _, uv: step(*uv, q), (u0, v0))[1]\n\n"
                   "    def unused(feed, kill):"), PASS, "one vmap", name="dataclasses.replace(params, feed=..., kill=...)"),
    Case("jax 4", ("    def one_pair(feed, kill):", "    def one_pair(feed, kill):\n"
                   "        q = Parameters(params.du, params.dv, feed, kill, params.dt)\n"
                   "        return lax.fori_loop(0, steps, lambda _, uv: step(*uv, q), (u0, v0))[1]\n\n"
                   "    def unused(feed, kill):"), PASS, "one vmap", name="Parameters of the pair's feed and kill"),
    Case("jax 2", ("lambda _, uv: step(*uv, p)", "lambda uv, i: step(*uv, p)"), FAIL,
         "body\\(i, carry\\), the step number first", name="the body's arguments (carry, i)"),
    Case("jax 4", ("(jnp.asarray(feeds), jnp.asarray(kills))", "(jnp.asarray(feeds, dtype=jnp.int32), "
                   "jnp.asarray(kills, dtype=jnp.int32))"), FAIL, "F and k are 0 in your run", name="feeds and kills int32"),
    Case("jax 4", ("(u0, v0))[1]", "(v0, u0))[1]"), FAIL, "starts from \\(v0, u0\\)", name="started from (v0, u0)"),
    # another independent playtest: the kills mapped along an axis they do not have
    Case("jax 4", ("jax.vmap(one_pair)", "jax.vmap(one_pair, in_axes=(0, 1))"), FAIL,
         "maps feeds or kills along axis 1 \\(in_axes\\), an axis they do not have.*in_axes=\\(0, 0\\)", name="in_axes=(0, 1)"),
    Case("jax 4", ("jax.vmap(one_pair)", "jax.vmap(one_pair, in_axes=(-1, 0))"), PASS, "one vmap",
         name="in_axes=(-1, 0), the last axis of a 1-D array"),
    Case("jax 2", ("(u, v))", "[u, v])"), FAIL, "a tuple \\(u, v\\) both ways \\(the start value too: not a list",
         name="the loop started from a list [u, v]"),
    Case("jax 4", ("model.initial_state(rows, cols)", "model.initial_state(cols, rows)"), FAIL,
         "your grids are 41 x 33, rows and cols swapped", name="the start state cols x rows"),
    Case("jax 3", ("return (u, v), v", "return (u, v), v.T"), FAIL, "each image your scan emits is V transposed",
         name="each image emitted transposed"),
    Case("jax 3", ("return (u, v), v", "return (u, v), v[None]"), FAIL, "of shape \\(1, rows, cols\\), an axis more",
         name="each image emitted with an axis more"),
    # Right answers that donate their inputs to XLA (jit's donate_argnums): the arrays given are
    # deleted after the call, which the checkers must not read as changed (the time loop raised).
    Case("jax 1 laplacian", ("def laplacian(a):", "@partial(jax.jit, donate_argnums=0)\ndef laplacian(a):"), PASS, "",
         name="the Laplacian's input donated"),
    Case("jax 1 step", ("def step(u, v, p):", "@partial(jax.jit, static_argnums=2, donate_argnums=(0, 1))\ndef step(u, v, p):"),
         PASS, "", name="the step's inputs donated"),
    Case("jax 2", ("static_argnums=(2, 3))", "static_argnums=(2, 3), donate_argnums=(0, 1))"), PASS, "",
         name="the time loop's inputs donated"),
    Case("jax 3", ("static_argnums=(2, 3, 4))", "static_argnums=(2, 3, 4), donate_argnums=(0, 1))"), PASS, "",
         name="the images' inputs donated"),
    # Zeros from every start are not a start of the loop's own (the review of 6cd915f): they are named as zeros.
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "return jnp.zeros_like(u), jnp.zeros_like(v)"), FAIL,
         "^(?!.*state of its own).*holds zeros only: .*zeros returned", name="zeros returned"),
    Case("jax 2", ("return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))",
                   "u, v = lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))\n    return u * 0, v * 0"), FAIL,
         "^(?!.*(state of its own|never written)).*holds zeros only", name="the result multiplied by zero"),
    # A loop that calls a step which ignores its own u, v is right: the step is the one to mend.
    Case("jax 2", _FROM_INITIAL.format(xp="jnp", name="step") + EXERCISES["jax 2"].answer, FAIL,
         "calls your step, which is still wrong: fix exercise 1 first", name="the loop calls a step that ignores its u, v"),
    Case("jax 3", _FROM_INITIAL.format(xp="jnp", name="step") + EXERCISES["jax 3"].answer, FAIL,
         "calls your step, which is still wrong: fix exercise 1 first", name="the images call a step that ignores its u, v"),
    Case("cupynumeric 3", _FROM_INITIAL.format(xp="cnp", name="step") + EXERCISES["cupynumeric 3"].answer, FAIL,
         "calls your step, which is still wrong: fix exercise 2 first", name="the loop calls a step that ignores its u, v"),
    Case("jax 3", "@partial(jax.jit, static_argnums=(2, 3))\ndef run(u, v, p, steps):\n"
         "    a, b = (jnp.asarray(x) for x in model.initial_state(*u.shape))\n"
         "    return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (a, b))\n\n"
         "@partial(jax.jit, static_argnums=(2, 3, 4))\ndef images(u, v, p, nbimage, nbextrastep):\n"
         "    def one_image(uv, _):\n        uv = run(*uv, p, nbextrastep)\n        return uv, uv[1]\n\n"
         "    return lax.scan(one_image, (u, v), None, length=nbimage)[1]\n\n"
         "check.images(images, device_type=jax.Array, to_device=jnp.asarray)\n", FAIL,
         "calls your run, which is still wrong: fix exercise 2 first", name="the images call a jitted run that ignores its u, v"),
    # Playtest 12: the batch jitted whole (its rows, cols and steps traced); nbimage given to lax.scan as xs
    Case("jax 4", ("def batch(feeds, kills, rows, cols, steps):", "@jax.jit\ndef batch(feeds, kills, rows, cols, steps):"),
         FAIL, "your batch is jitted whole.*static_argnums=\\(2, 3, 4\\)", name="the batch jitted whole"),
    Case("jax 4", ("def batch(feeds, kills, rows, cols, steps):",
                   "@partial(jax.jit, static_argnums=(2, 3, 4))\ndef batch(feeds, kills, rows, cols, steps):"),
         PASS, "one vmap", name="the batch jitted whole, rows, cols and steps static"),
    Case("jax 3", ("lax.scan(one_image, (u, v), None, length=nbimage)", "lax.scan(one_image, (u, v), nbimage)"), FAIL,
         "third argument is xs.*None, length=nbimage", name="nbimage given to lax.scan as xs"),
    # Playtest 13: an earlier exercise's step at fault, told as the step's (not the loop's, the images', a tick)
    Case("jax 2", "_step_ok = step\ndef step(u, v, p):\n    if v.max() > 0.99:\n        v = jnp.clip(v, 0, 0.99)\n"
         "    return _step_ok(u, v, p)\n" + EXERCISES["jax 2"].answer, FAIL, "does not run under jax.jit.*in step: if v.max",
         name="the step it calls has a Python if"),
    Case("jax 3", "_step_ok = step\ndef step(u, v, p):\n    return _step_ok(u, v, p.replace(dt=1.0))\n" + EXERCISES["jax 3"].answer,
         FAIL, "calls your step, which is still wrong: fix exercise 1 first", name="the step it calls leaves dt out"),
    Case("jax 4", ("def batch(feeds, kills, rows, cols, steps):",
                   "@partial(jax.jit, static_argnums=(2, 3, 4))\ndef batch(feeds, kills, rows, cols, steps):",
                   "return u + params.dt * du, v + params.dt * dv", "return u + du, v + dv"), FAIL, "dt = 0.7",
         name="jitted whole, static, a step without dt"),
    # Playtest 11 (JAX notebook, in real kernels): a Laplacian's stencil shown, a step that cannot run under jit, the batch's grids
    Case("jax 1 laplacian", ("padded = jnp.pad(a, 1)", "padded = jnp.pad(a, 2)", "padded[i : i + rows", "padded[i + 1 : i + 1 + rows"), FAIL,
         "stencil is not the model's: a cell gets 0 0 0 0 0 / 1 1 1 0 0 / 1 1 -8 0 0 / 1 1 1 0 0 / 0 0 0 0 0.*centred 1 column\\(s\\) to the left",
         name="the window shifted a column left"),
    Case("jax 1 laplacian", ("sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))",
                   "(padded[0:rows, 0:cols] + padded[0:rows, 1:cols + 1] + padded[0:rows, 2:cols + 2] + padded[1:rows + 1, 0:cols]"
                   " + padded[1:rows + 1, 1:cols + 1] + padded[1:rows + 1, 1:cols + 1] + padded[2:rows + 2, 0:cols]"
                   " + padded[2:rows + 2, 1:cols + 1] + padded[2:rows + 2, 2:cols + 2])"), FAIL,
         "stencil is not the model's: a cell gets 1 1 1 / 1 -7 0 / 1 1 1 ", name="nine slices typed, the centre twice"),
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum - 8 * a"), FAIL,
         "^(?!.*stencil)", name="8 for every cell's count (the border's hint, not the stencil)"),
    Case("jax 1 step", ("    return u + p.dt * du", "    v = jnp.where(v > 1, 1.0, v)\n    return u + p.dt * du"), PASS, "step: right",
         name="a clip that changes nothing, written with jnp.where"),
    Case("jax 1 step", "def step(u, v, p):\n    uvv = u * v * v\n    u2 = u + p.dt * (p.du * laplacian(u) - uvv + p.feed * (1 - u))\n"
         "    v2 = v + p.dt * (p.dv * laplacian(v) + uvv - (p.feed + p.kill) * v)\n    if v2.max() > 0.3:\n"
         "        v2 = jnp.clip(v2, 0, 0.3)\n    return u2, v2\n\ncheck.step(step, device_type=jax.Array, to_device=jnp.asarray)\n",
         FAIL, "does not run under jax.jit", name="a Python if on V's largest value clips it"),
    Case("jax 4", ("lax.fori_loop(0, steps, body, (u0, v0))", "lax.fori_loop(0, steps, body, (u, v))", "def batch(",
                   "u, v = (jnp.asarray(a) for a in model.initial_state(45, 52))\ndef batch("), FAIL,
         "start from grids of 45 x 52, not rows x cols = 33 x 41.*not the notebook's u, v", name="the pairs start from the notebook's u, v"),
]
