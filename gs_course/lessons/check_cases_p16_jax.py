"""The harness's cases from the sixteenth independent playtest, the jax notebook (and the same kinds of
answer in the cupy notebooks where a fix is shared: a list returned, a Laplacian's hint in the
notebook's words, a loop over another number of steps, a Legate fence after every step): each answer,
its verdict and the hint it must get.
`gs_course.lessons.check_cases` puts them in its `CASES` (through check_cases_playtest14); one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

_RETURNED = "return u + p.dt * du, v + p.dt * dv"
_FORI = "lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u, v))"
_NAMEDTUPLE = ("def step(u, v, p):", "import collections\nState = collections.namedtuple('State', 'u v')\n\ndef step(u, v, p):",
               _RETURNED, "return State(u + p.dt * du, v + p.dt * dv)")
_GIVEN_JIT = "@partial(jax.jit, static_argnums=(2, 3, 4))\n"
_SCAN = "_, frames = lax.scan(one_image, (u, v), None, length=nbimage)"
_IMAGES = "\ndef images(u, v, p, nbimage, nbextrastep):\n"

#: Images whose i-th starts again from (u, v) and runs (i + 1) x nbextrastep steps ({body}: one_image's).
_RESTARTING = _GIVEN_JIT + _IMAGES + """    {body}

check.images(images, device_type=jax.Array, to_device=jnp.asarray)
"""
_FROM_START = "lax.fori_loop(0, (i + 1) * nbextrastep, lambda _, s: step(*s, p), (u, v))"

#: A batch whose one_pair runs the notebook's step with the Parameters {p} built of the pair's feed and kill.
_PAIR_PARAMETERS = """
def batch(feeds, kills, rows, cols, steps):
    u0, v0 = (jnp.asarray(a) for a in model.initial_state(rows, cols))

    def one_pair(feed, kill):
        p = {p}
        return lax.fori_loop(0, steps, lambda _, uv: step(*uv, p), (u0, v0))[1]

    return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))

check.batch(batch, device_type=jax.Array)
"""
_INSTEAD = "use params\\.replace\\(feed=feed, kill=kill\\)$"

_RUN = "def run(u, v, p, steps):"
_SIZE = (_RUN, "import types\nsize = types.SimpleNamespace(steps_per_image=32)\n\n" + _RUN)
_FENCE = (_RUN, "from legate.core import get_legate_runtime\n\ndef wait_for_legate():\n"
          "    get_legate_runtime().issue_execution_fence(block=True)\n\n" + _RUN)
_EACH_STEP = "        u, v = step(u, v, p)\n"

PLAYTEST_16_JAX: list[Case] = [
    # 1. a step or run that returns a list: the next exercise's loop takes it back as its carry (JAX only)
    Case("jax 1 step", (_RETURNED, "return [u + p.dt * du, v + p.dt * dv]"), FAIL,
         "your step returns a list \\[u_next, v_next\\]: return the tuple \\(u_next, v_next\\).*carry must keep one structure",
         name="step returns a list"),
    Case("jax 1 step", (_RETURNED, "return list((u + p.dt * du, v + p.dt * dv))"), FAIL, "your step returns a list",
         name="step returns list(...)"),
    Case("jax 1 step", _NAMEDTUPLE, FAIL, "your step returns a State, not a plain tuple: return the tuple",
         name="step returns a namedtuple"),
    Case("jax 1 step", (_RETURNED, "return tuple([u + p.dt * du, v + p.dt * dv])"), PASS, "step: right",
         name="tuple([...]) returned"),
    Case("jax 1 step", (_RETURNED, "new = [u + p.dt * du, v + p.dt * dv]\n    return (*new,)"), PASS, "step: right",
         name="a list unpacked into a tuple"),
    Case("jax 1 step", (_RETURNED, "return (u + p.dt * du, v + p.dt * dv)"), PASS, "step: right",
         name="a tuple in brackets"),
    Case("jax 2", ("return " + _FORI, "return list(" + _FORI + ")"), FAIL, "your run returns a list.*one_image's lax.scan",
         name="run returns a list"),
    Case("jax 2", ("return " + _FORI, "u, v = " + _FORI + "\n    return u, v"), PASS, "one loop on the device",
         name="run's carry unpacked, returned as a, b"),
    # the cupy notebooks' loops unpack the pair (u, v = step(...)), where a list is as good: accepted there
    Case("cupynumeric 2 step", (_RETURNED, "return [u + p.dt * du, v + p.dt * dv]"), PASS, "step: right",
         name="a list: the notebook's loop unpacks it"),
    Case("cupynumeric 3", ("return u, v", "return [u, v]"), PASS, "time loop: right",
         name="run returns a list: the notebook unpacks it"),
    Case("cupy 2", (_RETURNED, "return [u + p.dt * du, v + p.dt * dv]"), PASS, "step: right",
         name="a list: the notebook's loops unpack it"),
    # 2. the given jit of images deleted
    Case("jax 3", (_GIVEN_JIT, ""), FAIL,
         "your images are not jitted: the given line @partial\\(jax.jit, static_argnums=\\(2, 3, 4\\)\\) above def images is gone",
         name="the given decorator deleted"),
    Case("jax 3", ("static_argnums=(2, 3, 4)", 'static_argnames=("p", "nbimage", "nbextrastep")'), PASS, "one scan",
         name="jitted with static_argnames"),
    Case("jax 3", (_GIVEN_JIT, "", _SCAN, "_, frames = jax.jit(lambda a, b: lax.scan(one_image, (a, b), None, "
                   "length=nbimage))(u, v)"), PASS, "one scan", name="the scan jitted inside, no decorator"),
    # 3. each image started again from the initial state: right values, nbimage squared the work
    Case("jax 3", _RESTARTING.format(body="def one(uv, i):\n        w = " + _FROM_START + "\n        return uv, w[1]\n"
                                     "    return lax.scan(one, (u, v), jnp.arange(nbimage))[1]"), FAIL,
         "do not continue from the scan's carry: each image starts again from \\(u, v\\).*Run one_image's nbextrastep steps "
         "from its carry uv", name="each image from the start, the carry passed on unchanged"),
    Case("jax 3", _RESTARTING.format(body="def one(uv, i):\n        w = " + _FROM_START + "\n        return w, w[1]\n"
                                     "    return lax.scan(one, (u, v), jnp.arange(nbimage))[1]"), FAIL,
         "do not continue from the scan's carry", name="each image from the start, its state carried unread"),
    Case("jax 3", _RESTARTING.format(body="return lax.map(lambda i: " + _FROM_START + "[1], jnp.arange(nbimage))"),
         FAIL, "do not continue from the scan's carry", name="lax.map over the images, each from the start"),
    Case("jax 3", _RESTARTING.format(body="def one(c, _):\n        k, a, b = c\n        a, b = lax.fori_loop(0, nbextrastep, "
                                     "lambda _, s: step(*s, p), (a, b))\n        return (k + 1, a, b), b\n"
                                     "    return lax.scan(one, (0, u, v), None, length=nbimage)[1]"), PASS, "one scan",
         name="a counter carried beside the state"),
    Case("jax 3", (_SCAN, "_, frames = lax.scan(one_image, (u, v), jnp.arange(nbimage))"), PASS, "one scan",
         name="scanned over arange(nbimage)"),
    Case("jax 3", _RESTARTING.format(body="def one_image(uv, _):\n        uv = lax.fori_loop(0, nbextrastep, lambda _, s: "
                                     "jnp.stack(step(s[0], s[1], p)), uv)\n        return uv, uv[1]\n"
                                     "    return lax.scan(one_image, jnp.stack((u, v)), None, length=nbimage)[1]"), PASS,
         "one scan", name="the state carried as one stacked (2, rows, cols) array"),
    Case("jax 3", _RESTARTING.format(body="def one(uv, i):\n        w = " + _FROM_START + "\n        return uv, w[1]\n"
                                     "    return lax.scan(one, jnp.stack((u, v)), jnp.arange(nbimage))[1]"), FAIL,
         "do not continue from the scan's carry", name="each image from the start, a stacked carry passed on unchanged"),
    # 4. the Laplacian's hints in the notebook's words: nine slices, its library
    Case("jax 1 laplacian", ("for i in range(3)", "for i in range(2)"), FAIL,
         "^(?!.*(cnp|onvol)).*the window is 2 x 3.*nine slices of the grid padded by 1", name="a window of two rows"),
    Case("jax 1 laplacian", ("for j in range(3)", "for j in range(2)"), FAIL,
         "^(?!.*(cnp|onvol)).*the window is 3 x 2", name="a window of two columns"),
    Case("jax 1 laplacian", ("return window_sum - counts * a", "return window_sum / 9 - counts * a"), FAIL,
         "^(?!.*(cnp|onvol|ones\\(\\()).*weights are 1/9.*add the nine slices as they are", name="the window sum / 9"),
    Case("cupynumeric 2 laplacian", ("for i in range(3)", "for i in range(2)"), FAIL,
         "^(?!.*onvol).*the window is 2 x 3.*nine slices", name="a window of two rows"),
    Case("cupy 1", ("for i in range(3)", "for i in range(2)"), FAIL,
         "^(?!.*(cnp|onvol)).*the window is 2 x 3.*nine slices", name="a window of two rows"),
    Case("cupynumeric 4", ("window = cnp.ones((3, 3), dtype=np.float32)", "window = cnp.ones((2, 3), dtype=np.float32)"),
         FAIL, "the window is 2 x 3.*convolve with the whole 3 x 3 window, cnp.ones", name="a 2 x 3 window convolved"),
    # 5. the pair's Parameters built without dt, or its fields in another order
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(params.du, params.dv, feed, kill)"), FAIL,
         "Parameters\\(\\.\\.\\.\\) leaves dt out \\(Parameters' default 1\\), not the notebook's params.dt = 0.7: pass "
         "dt=params.dt, or " + _INSTEAD, name="Parameters without dt"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(params.du, params.dv, feed, kill, 1.0)"), FAIL,
         "^(?!.*(default|leaves)).*Parameters\\(\\.\\.\\.\\) gives dt = 1, not the notebook's params.dt = 0.7: pass "
         "dt=params.dt", name="Parameters with dt=1.0 written out"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(params.du, params.dv, feed=feed, kill=kill, dt=0.5)"), FAIL,
         "gives dt = 0.5, not the notebook's params.dt = 0.7", name="Parameters with dt=0.5"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(feed=feed, kill=kill)"), FAIL, "leaves dt out",
         name="Parameters of feed and kill only"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(feed, kill, params.du, params.dv, params.dt)"), FAIL,
         "gets its fields in another order \\(du = the pair's feed or kill.*feed = params.du's value 0.1.*\\): it takes "
         "du, dv, feed, kill, dt in that order; " + _INSTEAD, name="Parameters' fields in another order"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(params.du, params.dv, kill, feed, params.dt)"), FAIL,
         "F and k are swapped", name="Parameters with kill and feed swapped"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(params.du, params.dv, feed, kill, params.dt)"), PASS, "one vmap",
         name="Parameters, every field in order"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="Parameters(kill=kill, dt=params.dt, feed=feed, dv=params.dv, du=params.du)"),
         PASS, "one vmap", name="Parameters by keyword, in any order"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="params.replace(feed=feed, kill=kill)"), PASS, "one vmap",
         name="params.replace(feed=..., kill=...)"),
    Case("jax 4", _PAIR_PARAMETERS.format(p="__import__('dataclasses').replace(params, feed=feed, kill=kill)"), PASS,
         "one vmap", name="dataclasses.replace(params, ...)"),
    # 6. a loop over another number of steps than its argument
    Case("cupynumeric 3", (*_SIZE, "for _ in range(steps):", "for _ in range(size.steps_per_image):"), FAIL,
         "your time loop runs 32 steps \\(the notebook's size.steps_per_image\\?\\), not steps = 21.*for _ in range\\(steps\\)",
         name="a loop over size.steps_per_image"),
    Case("cupynumeric 3", ("for _ in range(steps):", "for _ in range(3 * steps):"), FAIL,
         "your time loop runs 63 steps, not steps = 21", name="three times the steps"),
    # 7. a Legate fence after every step (one after the loop is harmless)
    Case("cupynumeric 3", (*_FENCE, _EACH_STEP, _EACH_STEP + "        wait_for_legate()\n"), FAIL,
         "your time loop waits for Legate 21 times in a run of 21 steps", name="a fence after every step"),
    Case("cupynumeric 3", (_RUN, "from legate.core import get_legate_runtime\nruntime = get_legate_runtime()\n\n" + _RUN,
                           _EACH_STEP, _EACH_STEP + "        runtime.issue_execution_fence(block=True)\n"), FAIL,
         "waits for Legate 21 times", name="a fence after every step, the runtime kept in a name"),
    Case("cupynumeric 3", (*_FENCE, "    return u, v", "    wait_for_legate()\n    return u, v"), PASS, "time loop: right",
         name="one fence, after the loop"),
    Case("cupynumeric 2 step", ("def step(u, v, p):\n", "from legate.core import get_legate_runtime\n\ndef step(u, v, p):\n"
                                "    get_legate_runtime().issue_execution_fence(block=True)\n"), FAIL,
         "your step waits for Legate at every call", name="a fence in the step"),
]
