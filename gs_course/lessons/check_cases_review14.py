"""The harness's cases from the second reading of playtest 14's fixes: right answers written otherwise
that the new technique checks (grid_loops, analysis_watch, the jit checks, the compile-first kernels)
must still pass, and wrong ones they must still catch.
`gs_course.lessons.check_cases_playtest14` puts them in its `PLAYTEST_14`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

_SUM = "window_sum = sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3))"
_MASS = "return images.sum(axis=(1, 2), dtype=np.float64)"
_EDGES = "edges = ordered[xp.asarray(index)]"
_VALUES = "image[coordinates[:, 0], coordinates[:, 1]]"
_PAIRS = "return jax.jit(jax.vmap(one_pair))(jnp.asarray(feeds), jnp.asarray(kills))"
_RUN_JIT = "@partial(jax.jit, static_argnums=(2, 3))\n"

REVIEW_14: list[Case] = [
    # the Laplacian: whole-array answers whose lines do not grow with the grid
    Case("cupy 1", (_SUM, "offsets = [(i, j) for i in range(3) for j in range(3)]\n"
                          "    window_sum = sum(padded[i : i + rows, j : j + cols] for i, j in offsets)"), PASS,
         "laplacian: right", name="a comprehension over the nine offsets"),
    Case("cupy 1", ("rows, cols = a.shape", "a = xp.asarray(a)\n    rows, cols = a.shape"), PASS, "laplacian: right",
         name="the input through xp.asarray first"),
    Case("cupy 1", ("rows, cols = a.shape", "a = a.astype(xp.float32)\n    rows, cols = a.shape"), PASS, "laplacian: right",
         name="the input through .astype first"),
    Case("cupy 1", (_SUM, "window_sum = xp.add.reduce([padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)])"),
         PASS, "laplacian: right", name="add.reduce of the nine slices",
         where="cpu"),  # NumPy only: CuPy's add.reduce takes no list (H200: AttributeError, told as such)
    Case("cupynumeric 2 laplacian", (_SUM, "window_sum = cnp.zeros_like(a)\n    for di, dj in itertools.product(range(3), repeat=2):\n"
                                           "        window_sum += padded[di : di + rows, dj : dj + cols]",
                                     "def laplacian(a):", "import itertools\n\ndef laplacian(a):"), PASS, "laplacian: right",
         name="itertools.product over the nine offsets"),
    # the Laplacian: loops over the rows in blocks
    Case("cupy 1", ("padded = xp.pad(a, 1)", "padded = xp.pad(a, ((1, 17), (1, 1)))", _SUM,
                    "window_sum = xp.empty((rows + 16, cols), dtype=a.dtype)\n    for r in range(0, rows, 16):\n"
                    "        window_sum[r : r + 16] = " + " + ".join(f"padded[r + {i} : r + {i + 16}, {j} : cols + {j}]" for i in range(3) for j in range(3))
                    + "\n    window_sum = window_sum[:rows]"),
         FAIL, "loop over the grid's rows", name="a loop over the rows, sixteen a turn, one line"),
    Case("cupynumeric 2 laplacian", ("padded = cnp.pad(a, 1)", "padded = cnp.pad(a, ((1, 9), (1, 1)))", _SUM,
                    "window_sum = cnp.empty((rows + 8, cols), dtype=a.dtype)\n    for r in range(0, rows, 8):\n"
                    "        window_sum[r : r + 8] = " + " + ".join(f"padded[r + {i} : r + {i + 8}, {j} : cols + {j}]" for i in range(3) for j in range(3))
                    + "\n    window_sum = window_sum[:rows]"),
         FAIL, "loop over the grid's rows", name="a loop over the rows, eight a turn, one line"),
    Case("synthesis 1", (_MASS, "out = xp.zeros(len(images))\n    out[0] = images[0].sum(dtype=np.float64)\n"
                                "    out[1:] = images[1:].sum(axis=(1, 2), dtype=np.float64)\n    return out"), PASS, "mass: one per image",
         name="the first image apart, the rest in one sum"),
    Case("synthesis 4", (_EDGES, "edges = xp.concatenate([ordered[i:i + 1] for i in index])"), FAIL, "scalar indexings",
         name="the edges as nine one-item slices"),
    Case("synthesis 6", (_VALUES, "xp.asarray([image[r, c] for r, c in coordinates.tolist()])"), FAIL,
         "Python loop over the cells", name="the values one cell at a time from a list"),
    # the mass: an image's shape read from the first image, twice (no loop)
    Case("synthesis 1", (_MASS, "rows, cols = images[0].shape[0], images[0].shape[1]\n"
                                "    return images.reshape(len(images), rows * cols).sum(axis=1, dtype=np.float64)"), PASS,
         "mass: one per image", name="the image's shape from images[0], twice"),
    Case("synthesis 1", (_MASS, "images = xp.asarray(images)\n    " + _MASS), PASS, "mass: one per image",
         name="the input through xp.asarray first"),
    Case("synthesis 1", (_MASS, "return images.astype(np.float64).sum(axis=2).sum(axis=1)"), PASS, "mass: one per image",
         name="astype, then two sums"),
    # the similarity
    Case("synthesis 5", ("norms = xp.sqrt(xp.diagonal(gram))", "norms = xp.sqrt(xp.einsum('ij,ij->i', rows, rows))"), PASS,
         "similarity:", name="the norms by einsum"),
    Case("synthesis 5", ("norms = xp.sqrt(xp.diagonal(gram))", "norms = xp.linalg.norm(rows, axis=1)"), PASS,
         "similarity:", name="the norms by linalg.norm"),
    # the deciles
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "flat = images.ravel()\n    ordered = xp.sort(flat[:])"), PASS,
         "deciles:", name="a view of the flat values sorted"),
    Case("synthesis 4", (_EDGES, "edges = ordered[:][xp.asarray(index)][:]\n    edges = edges[...]"), PASS, "deciles:",
         name="edges through whole slices"),
    Case("synthesis 4", (_EDGES, "edges = xp.partition(ordered, index)[index]"), PASS, "deciles:", name="partition, then the indices"),
    # the bright cells
    Case("synthesis 6", ("coordinates = xp.argwhere(image > threshold)", "rows, cols = xp.nonzero(image > threshold)\n"
                         "    coordinates = xp.stack((rows, cols), axis=1)"), PASS, "bright cells:", name="nonzero's rows and columns stacked"),
    # JAX: jitted otherwise
    Case("jax 2", (_RUN_JIT, '@jax.jit\n', "def run(u, v, p, steps):", "def run(u, v, p, steps):\n    steps = 21",), FAIL, "",
         name="probe: jax.jit, steps fixed inside"),
    Case("jax 4", (_PAIRS, "pairs = jax.vmap(jax.jit(one_pair))\n    return pairs(jnp.asarray(feeds), jnp.asarray(kills))"), PASS,
         "one vmap", name="vmap of the jitted pair"),
    Case("jax 4", (_PAIRS, "return jax.jit(lambda f, k: jax.vmap(one_pair)(f, k))(jnp.asarray(feeds), jnp.asarray(kills))"), PASS,
         "one vmap", name="a jitted lambda that vmaps"),
    Case("jax 4", ("def batch(", '@partial(jax.jit, static_argnames=("rows", "cols", "steps"))\ndef batch(', _PAIRS,
                   "return jax.vmap(one_pair)(feeds, kills)"), PASS, "one vmap", name="batch jitted whole, static_argnames"),
    Case("jax 2", (_RUN_JIT, "", "check.time_loop", "run = jax.jit(run, static_argnames=('p', 'steps'))\ncheck.time_loop"), PASS,
         "one loop on the device", name="jax.jit(run, static_argnames) after the def"),
    # kernels with valid but unusual C
    Case("cupy 4", ("    const float uc = u[cell], vc = v[cell];", "#define AT(a, r, c) a[(r) * cols + (c)]  /* a { in a comment; */\n"
                    "    const float uc = AT(u, row, col), vc = AT(v, row, col);  // } and ; in a comment",
                    "lu += u[r * cols + c] - uc;", "lu += AT(u, r, c) - uc;", "lv += v[r * cols + c] - vc;", "lv += AT(v, r, c) - vc;"),
         PASS, "step: right", name="a #define macro, braces and semicolons in comments"),
    Case("cupy 4", ("    const float uc = u[cell], vc = v[cell];", "    const float* __restrict__ uu = u;\n    const float uc = uu[cell], vc = v[cell];"),
         PASS, "step: right", name="a __restrict__ pointer"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v;  // the reaction term { u v^2 }; one line"), PASS, "step: right",
         name="braces and a ; in a comment of the ElementwiseKernel's body"),
    Case("synthesis 7", ("    __syncthreads();\n    for (int i = first;", "    __syncthreads();  /* all zeroed } { */\n    #pragma unroll 4\n    for (int i = first;"),
         PASS, "histogram kernel: right", name="a #pragma and braces in a comment"),
    Case("synthesis 8", ("            values[i] = b;\n            values[partner] = a;",
                         "#define PUT(x, y) do { values[i] = (x); values[partner] = (y); } while (0)\n            PUT(b, a);\n#undef PUT"),
         PASS, "", name="a do-while macro for the swap"),
    Case("cupy 6", ("def strip_launch(rows, cols, block, strip_rows):\n    grid = (-(-cols // block[0]), -(-rows // (block[1] * strip_rows)))\n"
                    "    return grid, block", "strip_launch = lambda rows, cols, block, strip_rows: ((-(-cols // block[0]), "
                    "-(-rows // (block[1] * strip_rows))), block)"), PASS, "launch configuration: right", name="strip_launch as a lambda"),
    Case("cupy 6", ("def strip_launch(rows, cols, block, strip_rows):\n    grid = (-(-cols // block[0]), -(-rows // (block[1] * strip_rows)))\n"
                    "    return grid, block", "strip_launch = lambda rows, cols, block: ((-(-cols // block[0]), -(-rows // block[1])), block)"),
         FAIL, "your strip_launch takes \\(rows, cols, block\\)", name="a lambda of three parameters"),
]
