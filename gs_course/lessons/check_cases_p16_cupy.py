"""The harness's cases from the sixteenth independent playtest, the cupy notebooks (CuPy and cuPyNumeric): each answer, its verdict and the hint it must get.
`gs_course.lessons.check_cases` puts them in its `CASES` (through check_cases_playtest14); one line each, as there.
"""

from __future__ import annotations

from .check_answers import _STEP_BODY, FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

#: The CuPy step kernel's neighbour loop and its update, as the reference answer writes them.
_NEIGHBOURS = ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;")
_WRITES = ("u_next[cell] = uc", "v_next[cell] = vc")

PLAYTEST_16_CUPY: list[Case] = [
    # signatures: the exercise's call named, from the function's own parameters
    Case("cupy 1", ("def laplacian(a):", "def laplacian(a, counts):"), FAIL, r"laplacian\(a\)", name="laplacian(a, counts)"),
    Case("cupy 2", ("def step(u, v, p):", "def step(u, v):\n    p = params"), FAIL, r"calls it as step\(u, v, p\)", name="step(u, v)"),
    Case("cupy 2", ("def step(u, v, p):", "def step(p, u, v):"), FAIL, r"step\(u, v, p\), in that order", name="step(p, u, v)"),
    Case("cupy 6", ("def strip_launch(rows, cols, block, strip_rows):", "def strip_launch(cols, rows, block, strip_rows):"),
         FAIL, r"strip_launch\(rows, cols, block, strip_rows\), in that order", name="strip_launch(cols, rows, ...)"),
    Case("cupy 7", ("def save_images(simulation, path, nbimage, nbextrastep):", "def save_images(simulation, path, nbimage):",
                    "nbextrastep", "32"),
         FAIL, r"save_images\(simulation, path, nbimage, nbextrastep\), 4 arguments", name="save_images without nbextrastep"),
    Case("cupy 7", ("def save_images(simulation, path, nbimage, nbextrastep):", "def save_images(simulation, nbimage, path, nbextrastep):"),
         FAIL, r"save_images\(simulation, path, nbimage, nbextrastep\), in that order", name="save_images(simulation, nbimage, path, ...)"),
    Case("cupynumeric 4", ("def laplacian_convolve(a):", "def laplacian_convolve(a, window):"), FAIL,
         r"laplacian_convolve takes \(a, window\).*laplacian_convolve\(a\)", name="laplacian_convolve(a, window)"),
]

PLAYTEST_16_CUPY += [
    # CuPy ex4: a NaN the kernel computes (a read far outside the arrays) is no cell left unwritten
    Case("cupy 4", ("const float uvv", "lu += 0.0f * u[cell + rows * cols * 64];\n    const float uvv"), FAIL,
         r"reads u\[cell \+ rows \* cols \* 64\] outside u .*past its end", name="a read far past u's end, times 0"),
    Case("cupy 4", ("const float uvv", "lu += 0.0f / 0.0f;\n    const float uvv"), FAIL,
         r"computes NaN at \d+ cells \(it writes them", name="a NaN computed, no index outside"),
    # the window's neighbour read at the cell itself, however its index is spelt: the sums are 0, not truncated
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "lu += u[row * cols + col] - uc;\n            lv += v[row * cols + col] - vc;"), FAIL,
         r"each \+= reads the cell itself \(u\[row \* cols \+ col\]\)", name="the neighbour read at row, col"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = u[cell], vc = v[cell];\n    const int me = row * cols + col;",
                    "lu += u[r * cols + c] - uc;", "lu += u[me] - uc;", "lv += v[r * cols + c] - vc;", "lv += v[me] - vc;"), FAIL,
         r"each \+= reads the cell itself \(u\[me\]\)", name="the neighbour read at a local of the cell"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "int lu = 0, lv = 0;"), FAIL, r"are int: .*truncated",
         name="int accumulators: still truncated"),
    # a write index without the block's offset
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];",
                    "const float uc = u[cell], vc = v[cell];\n    const int me = threadIdx.y * cols + threadIdx.x;",
                    "u_next[cell] = uc", "u_next[me] = uc", "v_next[cell] = vc", "v_next[me] = vc"), FAIL,
         r"writes u_next\[me\], an index made of threadIdx alone.*blockIdx", name="the write index of threadIdx only"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];",
                    "const int me = (blockIdx.y * blockDim.y + threadIdx.y) * cols + blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "    const float uc = u[me], vc = v[me];", "u_next[cell] = uc", "u_next[me] = uc"), PASS,
         name="the cell's index spelt from blockIdx and threadIdx"),
]
PLAYTEST_16_CUPY += [
    Case("cupy 4", ("const float uvv", "if (lu > 1e30f) lu += u[cell + rows * cols * 64];\n    const float uvv"), FAIL,
         r"reads u\[cell \+ rows \* cols \* 64\] outside u at every cell", name="a read far past u's end, under a condition"),
    Case("cupy 4", ("const float uvv", "if (col + 1 < cols) lu += 0.0f * u[cell + 1];\n    const float uvv"), PASS,
         name="a read guarded at the border (its index outside at the last cell only)"),
]

#: A shared tile stored by each thread, read at the window's cells (the neighbours outside the tile from u, v).
_TILE = '''
    __shared__ float tu[8][32];
    __shared__ float tv[8][32];
    tu[threadIdx.y][threadIdx.x] = u[cell];
    tv[threadIdx.y][threadIdx.x] = v[cell];{barrier}
    const float uc = u[cell], vc = v[cell];
    float lu = 0.0f, lv = 0.0f;
    for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r) {
        for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {
            int ty = r - blockIdx.y * blockDim.y, tx = c - blockIdx.x * blockDim.x;
            bool in = ty >= 0 && ty < 8 && tx >= 0 && tx < 32;
            lu += (in ? tu[ty][tx] : u[r * cols + c]) - uc;
            lv += (in ? tv[ty][tx] : v[r * cols + c]) - vc;
        }
    }'''
#: The reference step's reads and sums (its Laplacian), as the solved cell writes them.
_REFERENCE_HEAD = _STEP_BODY.split('step_body = """')[1].split("\n    const float uvv")[0]

PLAYTEST_16_CUPY += [
    # a shared tile read at other threads' cells with no barrier between the stores and the reads
    Case("cupy 4", (_REFERENCE_HEAD, _TILE.replace("{barrier}", "")), FAIL,
         r"reads its shared array tu\[ty\]\[tx\].*no __syncthreads\(\)", name="a shared tile without __syncthreads"),
    Case("cupy 4", (_REFERENCE_HEAD, _TILE.replace("{barrier}", "") + "\n    __shared__ float own[8][32];\n"
                    "    own[threadIdx.y][threadIdx.x] = lu;\n    lu = own[threadIdx.y][threadIdx.x];"), FAIL,
         r"shared array tu\[ty\]\[tx\]", name="a shared tile without __syncthreads, its own cell read back too"),
    Case("cupy 4", (_REFERENCE_HEAD, _REFERENCE_HEAD + "\n    __shared__ float own[8][32];\n"
                    "    own[threadIdx.y][threadIdx.x] = lu;\n    lu = own[threadIdx.y][threadIdx.x];"), PASS,
         name="a thread's own shared cell, stored then read back (no race)"),
    # CuPy ex3: an operator slipped in the feed's terms
    Case("cupy 3", ("feed * (1.0f - u)", "feed * (1 / u)"), FAIL, r"U's feed term computes feed \* \(1 / u\)",
         name="1 / u for 1 - u"),
    Case("cupy 3", ("feed * (1.0f - u)", "feed * 1.0f - u"), FAIL, r"U's feed term computes feed \* 1 - u \(the parentheses left out\)",
         name="feed * 1 - u, without parentheses"),
    Case("cupy 3", ("(feed + kill) * v", "(feed - kill) * v"), FAIL, r"V's loss term computes \(feed - kill\) \* v",
         name="(feed - kill) * v"),
    Case("cupy 3", ("feed * (1.0f - u)", "(feed - feed * u)"), PASS, name="the feed term expanded"),
    Case("cupy 4", ("feed * (1.0f - uc)", "feed * (1.0f / uc)"), FAIL, r"U's feed term computes feed \* \(1 / u\)",
         name="1 / uc for 1 - uc in the RawKernel"),
]

PLAYTEST_16_CUPY += [
    # CuPy ex1: a Laplacian that changes its input is told so first, whatever its values (the stencil's hints read them)
    Case("cupy 1", ("    return window_sum - counts * a", "    a -= counts * a\n    a += window_sum\n    return a"), FAIL,
         r"your Laplacian changed its input", name="in place: a -= counts * a; a += window_sum"),
    Case("cupy 1", ("    return window_sum - counts * a", "    a *= 1 - counts\n    a += window_sum\n    return a"), FAIL,
         r"your Laplacian changed its input", name="in place: a *= 1 - counts; a += window_sum"),
    Case("cupy 1", ("    return window_sum - counts * a", "    out = window_sum.copy()\n    out -= counts * a\n    return out"),
         PASS, name="in place on a new array of its own"),
]

PLAYTEST_16_CUPY += [
    # CuPy ex1: the counts made on the host and copied at every call (the notebook makes them once a grid shape)
    Case("cupy 1", ("    counts = window_counts(rows, cols)", "    counts = xp.asarray(model.window_counts(rows, cols))"), FAIL,
         r"makes the counts on the host and copies them to the device at every call \(model\.window_counts\(\d+, \d+\) "
         r"again\): call the notebook's cached window_counts\(rows, cols\) instead$", name="counts made on the host at every call"),
    Case("cupy 1", ("    counts = window_counts(rows, cols)", "    counts = window_counts(rows, cols)\n"
                    "    counts = xp.asarray(model.window_counts(*a.shape))"), FAIL,
         r"makes the counts on the host and copies them to the device at every call", name="counts made again after the cached ones"),
    Case("cupy 1", ("def laplacian(a):", "_counts = {}\n\ndef cached_counts(shape):\n    if shape not in _counts:\n"
                    "        _counts[shape] = xp.asarray(model.window_counts(*shape))\n    return _counts[shape]\n\n"
                    "def laplacian(a):", "    counts = window_counts(rows, cols)", "    counts = cached_counts(a.shape)"), PASS,
         name="counts through a cache of the student's own (a dict)"),
]

PLAYTEST_16_CUPY += [
    # cuPyNumeric ex4: one convolution of the 3 x 3 window, not two passes of a separable one
    Case("cupynumeric 4", ("    return cnp.convolve(a, window, mode=\"same\") - counts * a",
                           "    row = cnp.ones((1, 3), dtype=np.float32)\n    col = cnp.ones((3, 1), dtype=np.float32)\n"
                           "    return cnp.convolve(cnp.convolve(a, row, mode='same'), col, mode='same') - counts * a"),
         FAIL, r"convolves with a 1 x 3 and 3 x 1 window \(2 convolutions", name="two chained 1 x 3 and 3 x 1 convolves"),
    Case("cupynumeric 4", ("    return cnp.convolve(a, window, mode=\"same\") - counts * a",
                           "    return cnp.convolve(a, cnp.ones((3, 3), dtype=a.dtype), mode=\"same\") - counts * a"),
         PASS, name="the 3 x 3 window made in the function"),
]

PLAYTEST_16_CUPY += [
    # cuPyNumeric ex5: a Python loop over the cells inside the task's body
    Case("cupynumeric 5", ("    np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b",
                           "    uo, vo = np.asarray(u_out), np.asarray(v_out)\n    for r in range(a.shape[0]):\n"
                           "        for c in range(a.shape[1]):\n            uo[r, c] = a[r, c]\n            vo[r, c] = b[r, c]"),
         FAIL, r"your task steps_task runs a Python loop over the grid's cells \(line \d+ of your cell, in steps_task",
         name="the outputs written cell by cell in the task"),
    Case("cupynumeric 5", ("@task(", "def np_laplacian(a):\n    rows, cols = a.shape\n    padded = np.pad(a, 1)\n"
                           "    return sum(padded[i : i + rows, j : j + cols] for i in range(3) for j in range(3)) "
                           "- model.window_counts(rows, cols) * a\n\ndef np_step(u, v, p):\n    uvv = u * v * v\n"
                           "    return (u + p.dt * (p.du * np_laplacian(u) - uvv + p.feed * (1 - u)),\n"
                           "            v + p.dt * (p.dv * np_laplacian(v) + uvv - (p.feed + p.kill) * v))\n\n@task(",
                           "        a, b = model.reference_step(a, b, p)", "        a, b = np_step(a, b, p)"), PASS,
         name="the task's body runs the notebook's own step (many lines, each a few times a step)"),
    Case("cupynumeric 5", ("    np.asarray(u_out)[:] = a\n    np.asarray(v_out)[:] = b",
                           "    for out, new in ((u_out, a), (v_out, b)):\n        np.asarray(out)[:] = new"), PASS,
         name="the outputs written in a loop over the pair"),
]

#: The window's loops over offsets from 0 that stop after the first (dr < 1, dc < 1), reads at (row + dr, col + dc).
_ONE_OFFSET = """
    const float uc = u[cell], vc = v[cell];
    float lu = 0.0f, lv = 0.0f;
    for (int dr = 0; dr < 1; ++dr) {
        for (int dc = 0; dc < 1; ++dc) {
            lu += u[(row + dr) * cols + col + dc] - uc;
            lv += v[(row + dr) * cols + col + dc] - vc;
        }
    }"""

PLAYTEST_16_CUPY += [
    # a loop's variable is not the value it starts at: u[(row + dr) * cols + col + dc] is no read of the cell itself
    Case("cupy 4", (_REFERENCE_HEAD, _ONE_OFFSET), FAIL, r"^(?!.*reads the cell itself).*add up to 0",
         name="a window of offsets dr, dc from 0 that stops at 1: not told it reads the cell itself"),
]
