"""The harness's cases from the sixteenth independent playtest, the synthesis notebook: each answer, its verdict and the hint it must get.
`gs_course.lessons.check_cases` puts them in its `CASES` (through check_cases_playtest14); one line each, as there.
The playtest's answers and others of their kind: an error of the student's own code, from any synthesis checker and
any of its calls, told in one line, and a function of other parameters named from its signature; the similarity by a
broadcast product of every pair (no matrix product), refused by its memory whatever its spelling, the matrix product's
spellings ticked (a notebook thread's memory not counted as the call's); a loop over xp.ascontiguousarray(images) or
under a decorator seen; the deciles from percentile ticked without claiming a sort; the edges of each image averaged; the
histograms numbered bin-major, of the whole batch over (0, images), shifted by the image in float32; the bitonic step's
values[j]; a whole kernel given as the body (the CuPy notebook's too).
"""

from __future__ import annotations

from . import analysis
from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)

_MASS = "return images.sum(axis=(1, 2), dtype=np.float64)"
_RAISED = r"^your function raised {0}: .*\(line {1} of your cell, in {2}"
_GRAM = "gram = rows @ rows.T"
_NO_PRODUCT = (r"^right values, but with no matrix product: your broadcast made an \(images, images, cells\) temporary, "
               r"\d+ times the batch's memory\. The exercise asks for one matrix product.*rows @ rows\.T[^:]*$")
_EDGES = "edges = ordered[xp.asarray(index)]"
_HISTOGRAMS = "index = xp.minimum((images * bins).astype(np.int64), bins - 1)\n    index += (xp.arange(count) * bins)[:, None, None]"
_READ = "const float a = values[i], b = values[partner];"
_WHOLE = r"^your code does not compile: your C defines a whole function, {0}\(\.\.\.\) \{{ \.\.\. \}}.*Give only the body"

PLAYTEST_16_SYNTHESIS: list[Case] = [
    # --- 1. an error of the student's own code: one line, from every checker and every call of it
    Case("synthesis 1", (_MASS, "return images.summ(axis=(1, 2), dtype=np.float64)"), FAIL,
         _RAISED.format("AttributeError", 3, "mass") + ".*summ", name="images.summ: one line, its line named"),
    Case("synthesis 1", (_MASS, "return images.sum(axis='cells', dtype=np.float64)"), FAIL,
         _RAISED.format("TypeError", 3, "mass"), name="axis='cells': one line, not NumPy's traceback"),
    Case("synthesis 3", ("count = images.shape[0]", "count = images.shape[0]\n    assert images.max() == 1.0, 'not scaled'"),
         FAIL, _RAISED.format("AssertionError", 4, "histograms") + ".*not scaled",
         name="raises on the second batch only (within [0, 0.5]): one line"),
    Case("synthesis 5", (_GRAM, "gram = rows @ rows.TT"), FAIL, _RAISED.format("AttributeError", 4, "similarity"),
         name="rows.TT: one line"),
    Case("synthesis 6", ("xp.argwhere(image > threshold)", "xp.argwher(image > threshold)"), FAIL,
         _RAISED.format("AttributeError", 3, "bright_cells"), name="xp.argwher: one line"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = xp.sorted(images.ravel())"), FAIL,
         _RAISED.format("AttributeError", 3, "deciles"), name="xp.sorted: one line"),
    # --- 1. the signature read first, each exercise's call named
    Case("synthesis 1", ("def mass(images):", "def mass(images, axis):"), FAIL,
         r"your mass takes \(images, axis\): the exercise calls it as mass\(images\), 1 argument", name="mass of two parameters"),
    Case("synthesis 3", ("def histograms(images, bins):", "def histograms(bins, images):"), FAIL,
         r"your histograms takes \(bins, images\): the exercise calls it as histograms\(images, bins\), in that order",
         name="histograms' parameters swapped"),
    Case("synthesis 6", ("def bright_cells(image, threshold):", "def bright_cells(image):"), FAIL,
         r"calls it as bright_cells\(image, threshold\), 2 arguments", name="bright_cells without its threshold"),
    Case("synthesis 4", ("def deciles(images):", "def deciles(images, q):"), FAIL, r"calls it as deciles\(values\)",
         name="deciles of two parameters"),
    Case("synthesis 5", ("check.similarity(similarity,", "check.similarity(similarity(xp.ones((2, 3, 4), np.float32)),"), FAIL,
         r"your similarity is an? ndarray, not a function", name="the similarity's result given, not the function"),
    Case("synthesis 1", ("def mass(images):", "def mass(batch, dtype=np.float64):", _MASS,
                         "return batch.sum(axis=(1, 2), dtype=dtype)"), PASS, "mass: one per image",
         name="mass(batch) with a default: callable as mass(images)"),
    # --- 2. the similarity by a broadcast product of every pair: no matrix product, told by its memory
    Case("synthesis 5", (_GRAM, "gram = (rows[:, None, :] * rows[None, :, :]).sum(axis=2)"), FAIL, _NO_PRODUCT,
         name="a broadcast product summed over the cells"),
    Case("synthesis 5", (_GRAM, "gram = xp.sum(rows[:, None] * rows, axis=-1)"), FAIL, _NO_PRODUCT,
         name="a broadcast product by xp.sum, axis=-1"),
    Case("synthesis 5", (_GRAM, "gram = (images[:, None] * images[None]).sum(axis=(2, 3))"), FAIL, _NO_PRODUCT,
         name="a broadcast product of the 3-D images"),
    Case("synthesis 5", (_GRAM, "gram = xp.multiply(rows[:, None, :], rows[None, :, :], dtype=np.float64).sum(2)"), FAIL,
         _NO_PRODUCT, name="a broadcast product by xp.multiply in float64"),
    Case("synthesis 5", (_GRAM, "gram = xp.matmul(rows, rows.T)"), PASS, "similarity: 7 x 7", name="xp.matmul"),
    Case("synthesis 5", (_GRAM, "gram = rows.dot(rows.T)"), PASS, "similarity: 7 x 7", name="rows.dot"),
    Case("synthesis 5", (_GRAM, "gram = xp.einsum('ic,jc->ij', rows, rows)"), PASS, "similarity: 7 x 7",
         name="einsum ic,jc->ij: a matrix product"),
    Case("synthesis 5", (_GRAM, "gram = xp.einsum('irc,jrc->ij', images, images)"), PASS, "similarity: 7 x 7",
         name="einsum of the 3-D images"),
    Case("synthesis 5", (_GRAM, "gram = xp.tensordot(rows, rows, axes=(1, 1))"), PASS, "similarity: 7 x 7",
         name="tensordot"),
    Case("synthesis 5", (_GRAM, "gram = xp.inner(rows.astype(np.float64), rows.astype(np.float64))"), PASS,
         "similarity: 7 x 7", name="inner in float64"),
    Case("synthesis 5", ("def similarity(images):", "import threading, time\nstop = threading.Event()\n"
                         "def churn():\n    while not stop.is_set():\n        block = bytearray(50_000_000)\n        time.sleep(0.001)\n"
                         "def similarity(images):\n    time.sleep(0.05)",
                         "check.similarity(similarity, device_type=on_device, to_device=xp.asarray)",
                         "worker = threading.Thread(target=churn)\nworker.start()\ntry:\n"
                         "    check.similarity(similarity, device_type=on_device, to_device=xp.asarray)\n"
                         "finally:\n    stop.set()\n    worker.join()"), PASS, "similarity: 7 x 7",
         name="a notebook thread allocating meanwhile: its memory not the call's"),
    # --- 2. the watch kept through xp.ascontiguousarray, and through a decorator (the notebook's xp swapped)
    Case("synthesis 1", (_MASS, "rows = xp.ascontiguousarray(images)\n"
                                "    return xp.stack(list(map(lambda image: image.sum(dtype=np.float64), rows)))"), FAIL,
         r"from a Python loop over the images \(map", name="a map over xp.ascontiguousarray(images)"),
    Case("synthesis 1", ("def mass(images):", "@np.errstate(all='ignore')\ndef mass(images):", _MASS,
                         "rows = xp.asarray(images)\n    return xp.stack(list(map(lambda image: image.sum(dtype=np.float64), rows)))"),
         FAIL, r"from a Python loop over the images \(map", name="a map over xp.asarray(images) under @np.errstate"),
    # --- 3. the deciles from percentile: ticked, not as sorted
    Case("synthesis 4", (_EDGES, "edges = xp.percentile(images, 100 * analysis.DECILES, method='lower')"), PASS,
         r"by xp\.percentile\(method='lower'\), not by your own sort as the exercise asks, every", name="percentile lower: no sort claimed"),
    Case("synthesis 4", (_EDGES, "edges = xp.quantile(images.ravel(), analysis.DECILES, method='lower')"), PASS,
         r"by xp\.quantile\(method='lower'\), not by your own sort as the exercise asks, every", name="quantile lower: no sort claimed"),
    Case("synthesis 4", ("return edges,", "return edges,"), PASS, "edges of a random batch by sorting, every",
         name="sorted: by sorting"),
    # --- 6. the deciles of each image (or row), averaged
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())\n    index = np.floor(analysis.DECILES * (ordered.size - 1)).astype(np.int64)\n"
                         "    edges = ordered[xp.asarray(index)]",
                         "flat = xp.sort(images.reshape(len(images), -1), axis=1)\n"
                         "    index = np.floor(analysis.DECILES * (flat.shape[1] - 1)).astype(np.int64)\n"
                         "    edges = flat[:, xp.asarray(index)].mean(axis=0)"), FAIL,
         r"deciles of each image apart, averaged over the \d+: the deciles of the batch are of all its values together",
         name="each image's deciles averaged"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())\n    index = np.floor(analysis.DECILES * (ordered.size - 1)).astype(np.int64)\n"
                         "    edges = ordered[xp.asarray(index)]",
                         "flat = xp.sort(images, axis=-1)\n"
                         "    index = np.floor(analysis.DECILES * (flat.shape[-1] - 1)).astype(np.int64)\n"
                         "    edges = xp.median(flat[..., xp.asarray(index)].reshape(-1, 9), axis=0).astype(images.dtype)"), FAIL,
         r"deciles of each row apart, their median taken", name="each row's deciles, their median"),
    # --- 5. the histograms: bin-major numbering, the whole batch over (0, images), float32 shifts
    Case("synthesis 3", (_HISTOGRAMS, "index = xp.minimum((images * bins).astype(np.int64), bins - 1) * count + "
                                      "xp.arange(count)[:, None, None]"), FAIL,
         r"numbered bin x images \+ image \(bin-major.*reshape\(images, bins\) reads the counts image by image",
         name="bins numbered bin-major, reshaped image-major"),
    Case("synthesis 3", (_HISTOGRAMS + "\n    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "index = xp.minimum((images * bins).astype(np.int64), bins - 1) * count + xp.arange(count)[:, None, None]\n"
                         "    return xp.bincount(index.ravel(), minlength=count * bins).reshape(bins, count).T"),
         PASS, "histograms: 5 images", name="bin-major numbering read as such, reshape(bins, images).T",),
    Case("synthesis 3", (_HISTOGRAMS + "\n    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "return xp.histogram(images, bins * count, (0, count))[0].reshape(count, bins)"), FAIL,
         r"^every image's cells went into the first image's bins.*histogram of the whole batch over \(0, images\)\. "
         r"Number image m's bins from m \* bins, \(xp\.arange\(images\) \* bins\)\[:, None, None\]$",
         name="one histogram of the whole batch over (0, images)"),
    Case("synthesis 3", (_HISTOGRAMS, "index = xp.minimum((images * bins).astype(np.int64), bins - 1)"), FAIL,
         r"^every image's cells went into the first image's bins \(row 0 is the whole batch's histogram\): the values, "
         r"all in \[0, 1\], were never moved", name="no offsets: one hint (histogram_mistakes'), not two"),
    Case("synthesis 3", (_HISTOGRAMS + "\n    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "shifted = xp.minimum(images, np.nextafter(np.float32(1), np.float32(0))) + "
                         "xp.arange(count, dtype=images.dtype)[:, None, None]\n"
                         "    return xp.histogram(shifted, bins * count, (0, count))[0].reshape(count, bins)"), FAIL,
         r"counted in a neighbouring bin \(at .*\): likely rounding at the bins' edges, as v \+ m does \(in float32.*int\(v \* bins\)", name="V + image in float32"),
    Case("synthesis 3", (_HISTOGRAMS + "\n    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "shifted = xp.minimum(images.astype(np.float64), np.nextafter(1.0, 0.0)) + xp.arange(count)[:, None, None]\n"
                         "    return xp.histogram(shifted, bins * count, (0, count))[0].reshape(count, bins)"), FAIL,
         r"counted in a neighbouring bin \(at .*\): likely rounding.*just under 1\)", name="V clipped just under 1, + image in float64"),
    Case("synthesis 3", (_HISTOGRAMS + "\n    return xp.bincount(index.ravel(), minlength=count * bins).reshape(count, bins)",
                         "shifted = xp.minimum(images.astype(np.float64), 1 - 1e-9) + xp.arange(count)[:, None, None]\n"
                         "    return xp.histogram(shifted, bins * count, (0, count))[0].reshape(count, bins)"), PASS,
         "histograms: 5 images", name="V + image in float64, one histogram over (0, images)"),
    # --- 4. the bitonic step's values[j] for values[partner]
    Case("synthesis 8", (_READ, "const float a = values[i], b = values[j];", "values[partner] = a;", "values[j] = a;"), FAIL,
         r"your exchange uses values\[j\], but j is the distance between a pair's two elements", name="values[j] for values[partner]"),
    Case("synthesis 8", (_READ, "const float a = values[i], b = values[j];"), FAIL, r"uses values\[j\], but j is the distance",
         name="values[j] read, values[partner] written"),
    Case("synthesis 8", (_READ, "const float a = values[i], b = values[threadIdx.x];"), FAIL,
         r"uses values\[threadIdx\.x\], but threadIdx\.x is the thread's number within its block", name="values[threadIdx.x]"),
    Case("synthesis 8", (_READ, "const float a = values[i], b = values[i ^ j];  // not values[j]"), PASS, "bitonic sort:",
         name="values[i ^ j], values[j] in a comment"),
    Case("synthesis 8", (_READ, "const float a = values[i], b = values[i + j];", "values[partner] = a;", "values[i + j] = a;"),
         PASS, "bitonic sort:", name="values[i + j]: the partner under partner > i"),
    # --- 7. the whole kernel given as the body
    Case("synthesis 7", f'privatised = r"""{analysis.HISTOGRAM_KERNEL.replace("BODY", analysis.GLOBAL_ATOMICS)}"""\n'
                        "privatised_kernel = check.histogram_kernel(privatised)\n", FAIL, _WHOLE.format("histograms"),
         name="the whole kernel printed, given as the body"),
    Case("synthesis 7", f'privatised = r"""{analysis.HISTOGRAM_KERNEL.replace("BODY", analysis.PRIVATISED)}"""\n'
                        "privatised_kernel = check.histogram_kernel(privatised)\n", FAIL, _WHOLE.format("histograms"),
         name="the whole privatised kernel, signature and braces"),
    Case("synthesis 8", f'bitonic_body = r"""{analysis.BITONIC_KERNEL.replace("BODY", analysis.BITONIC_BODY)}"""\n'
                        "bitonic_sort = check.bitonic_step(bitonic_body)\n", FAIL, _WHOLE.format("bitonic_step"),
         name="the whole bitonic kernel as the body"),
    # the CuPy notebook's kernels through the same compile; its ElementwiseKernel is compiled by CuPy on a GPU
    Case("cupy 4", ('step_body = """', 'step_body = check.STEP_KERNEL.split("BODY")[0] + """', 'vc);\n"""', 'vc);\n}"""'),
         FAIL, _WHOLE.format("step"), name="the whole RawKernel printed by the notebook, the body filled in"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "__device__ float cube(float x) { return x * x * x; }\n"
                    "    const float uvv = uc * vc * vc;"), FAIL, _WHOLE.format("cube"), name="a helper function in the body"),
    Case("cupy 3", ("float uvv = u * v * v;", "float cube(float x) { return x * x * x; }\nfloat uvv = u * v * v;"), FAIL,
         _WHOLE.format("cube"), where="cpu", name="a helper function in the body"),
]
