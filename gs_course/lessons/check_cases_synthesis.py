"""The harness's cases of tutorial 4 (the synthesis) from playtest 4a and their kind: answers whose
result has the wrong dtype, ignores an argument, changes its input or loops over the cells; the
kernels' shared array, barriers and exchanges; the similarity's and the deciles' usual slips; and
right answers written otherwise. `gs_course.lessons.check_cases` puts them in its CASES (the format
is its own: exercise, answer, verdict, a piece of the line, where).
"""

from __future__ import annotations

from . import analysis
from .check_answers import FAIL, NOT_CHECKED, PASS, Case

_CHANGED = "changed its input.*compute into new arrays"
_ON_CPU = "kept on the device: not checked here"

_MASS = "return images.sum(axis=(1, 2), dtype=np.float64)"
_BINNED = "xp.minimum((images * bins).astype(np.int64), bins - 1)"
_COUNTED = ".reshape(count, bins)"
_ARGWHERE = "coordinates = xp.argwhere(image > threshold)"
_RETURNED = "return coordinates, image[coordinates[:, 0], coordinates[:, 1]]"
_ROWS = "rows = images.reshape(images.shape[0], -1)"
_COSINE = "return gram / (norms[:, None] * norms[None, :])"
_READ = "const float a = values[i], b = values[partner];"
_BIN = "min((int)(image[i] * bins), bins - 1)"
_DIRECTION = "const bool ascending = (i & k) == 0;"
_ZEROED = "for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;"

SYNTHESIS_CASES = [
    # --- dtypes, in place, a CPU's ticks: the mass
    Case("synthesis 1", ("dtype=np.float64", "dtype=np.float16"), FAIL, "float16: sum in float64", name="summed in float16"),
    Case("synthesis 1", (_MASS, "images *= 2\n    return images.sum(axis=(1, 2), dtype=np.float64) / 2"), FAIL, _CHANGED,
         name="images *= 2, then halved"),
    Case("synthesis 1", (_MASS, "return np.asarray(images).sum(axis=(1, 2), dtype=np.float64)"), PASS, _ON_CPU, "cpu",
         name="a round trip to the host: on a CPU not checked"),
    Case("synthesis 1", (), PASS, _ON_CPU, "cpu", name="the reference: staying on the device not checked on a CPU"),
    # --- the histograms: integer counts, the argument bins, the input left alone, the offsets
    Case("synthesis 3", (_COUNTED, _COUNTED + ".astype(np.float32)"), FAIL, "float32: a count is a whole number",
         name="float32 counts"),
    Case("synthesis 3", (_COUNTED, _COUNTED + ".astype(np.uint8)"), FAIL, "uint8, which holds up to 255", name="uint8 counts"),
    Case("synthesis 3", (_BINNED, "xp.minimum(xp.floor(images * bins), bins - 1)"), FAIL,
         "bin indices are floats.*astype\\(np.int64\\)", name="floor left as floats"),
    Case("synthesis 3", (_BINNED, "((images - 0.5) * bins).astype(np.int64)"), FAIL, "a bin index is negative",
         name="V shifted by 0.5"),
    Case("synthesis 3", (_BINNED, "xp.minimum(((images - images.min()) / (images.max() - images.min()) * bins)"
                                  ".astype(np.int64), bins - 1)"), FAIL, "not on one within \\[0, 0.5\\]",
         name="scaled by the batch's smallest and largest values"),
    Case("synthesis 3", ("(xp.arange(count) * bins)", "(xp.arange(count) * (bins - 1))", ".reshape(count, bins)",
                         "[:count * bins].reshape(count, bins)"), FAIL, "image x \\(bins - 1\\)",
         name="offsets of bins - 1"),
    Case("synthesis 3", ("minlength=count * bins", "count * bins"), FAIL, "second argument is weights",
         name="the length given as bincount's second argument"),
    Case("synthesis 3", (_COUNTED, ".reshape(bins, count).T"), FAIL, "reshape\\(bins, images\\).T mixes the images",
         name="reshaped to (bins, images), then transposed"),
    Case("synthesis 5", ("gram / (norms[:, None] * norms[None, :])", "gram / xp.linalg.norm(rows, axis=0)"), FAIL,
         "your norms do not broadcast", name="the norms over axis 0, one a cell"),
    Case("synthesis 5", ("gram = rows @ rows.T", "gram = rows @ rows"), FAIL, "the product's shapes do not match",
         name="rows @ rows without the transpose"),
    Case("synthesis 5", (_COSINE, "return xp.triu(gram / (norms[:, None] * norms[None, :]))"), FAIL,
         "keeps its upper triangle only", name="the upper triangle only"),
    Case("synthesis 7", ("extern __shared__ unsigned int block_counts[];", "extern __shared__ unsigned char block_counts[];"),
         FAIL, "block_counts is unsigned char", name="8-bit shared counts"),
    Case("synthesis 3", (_COUNTED, ".reshape(count, bins + 1)"), FAIL, "reshaped them to \\(5, ?65\\)",
         name="reshaped to bins + 1"),
    Case("synthesis 3", (_COUNTED, _COUNTED + ".astype(np.int32)"), PASS, "histograms", name="int32 counts"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * 64).astype(np.int64), 63)"), FAIL, "not with bins=10.*not 64",
         name="64 bins written out in the index"),
    Case("synthesis 3", ("minlength=count * bins).reshape(count, bins)", "minlength=count * 64).reshape(count, 64)"),
         FAIL, "not with bins=10.*shape", name="64 bins written out in the reshape"),
    Case("synthesis 3", (_BINNED, "(images * bins).astype(np.int64)\n    index = xp.minimum(index, bins - 1)"), PASS,
         "histograms", name="the index clipped on a line of its own"),
    Case("synthesis 3", ("index = " + _BINNED, "images *= bins\n    index = xp.minimum(images.astype(np.int64), bins - 1)"),
         FAIL, _CHANGED, name="images *= bins"),
    Case("synthesis 3", ("(xp.arange(count) * bins)[:, None, None]", "xp.arange(count)[:, None, None]"), FAIL,
         "offsets are the image numbers, not image x bins", name="offsets without * bins"),
    Case("synthesis 3", ("(images * bins).astype(np.int64)", "images.astype(np.int64) * bins"), FAIL,
         "before it is scaled", name="converted to integers before * bins"),
    Case("synthesis 3", (_BINNED, "xp.clip(xp.floor(images * bins), 0, bins - 1).astype(xp.intp)"), PASS, "histograms",
         name="floor and clip"),
    Case("synthesis 3", ("index += (xp.arange(count) * bins)[:, None, None]\n    return xp.bincount(index.ravel(), "
                         "minlength=count * bins).reshape(count, bins)",
                         "return (index[..., None] == xp.arange(bins)).sum(axis=(1, 2))"), PASS, "histograms",
         name="one-hot comparison with every bin"),
    Case("synthesis 3", ("def histograms(images, bins):", "def histograms(images):\n    bins = 64"), FAIL,
         "histograms\\(images, bins\\)", name="bins dropped from the arguments"),
    # --- bright cells: integer coordinates, the argument threshold, no loop, the input left alone
    Case("synthesis 6", (_RETURNED, _RETURNED.replace("return coordinates,", "return coordinates.astype(np.float32),")),
         FAIL, "float32: an index is an integer", name="float32 coordinates"),
    Case("synthesis 6", (_RETURNED, _RETURNED.replace("return coordinates,", "return coordinates.astype(np.int8),")),
         FAIL, "int8, which holds up to 127", name="int8 coordinates"),
    Case("synthesis 6", (_RETURNED, _RETURNED.replace("return coordinates,", "return coordinates.astype(np.int32),")),
         PASS, "bright cells", name="int32 coordinates"),
    Case("synthesis 6", ("image > threshold", "image > analysis.SPOT_THRESHOLD"), FAIL, "not with 0.25.*image > threshold",
         name="the module's threshold for the argument"),
    Case("synthesis 6", (_ARGWHERE, "coordinates = xp.asarray([(r, q) for r in range(image.shape[0]) for q in "
                         "range(image.shape[1]) if image[r, q] > threshold], dtype=np.int64).reshape(-1, 2)"), FAIL,
         "Python loop.*per cell", name="a Python loop over the cells"),
    Case("synthesis 6", (_ARGWHERE, "image[image <= threshold] = 0\n    coordinates = xp.argwhere(image)"), FAIL, _CHANGED,
         name="the dim cells set to 0 in the image"),
    Case("synthesis 6", ("image > threshold", "image < threshold"), FAIL, "below the threshold", name="image < threshold"),
    Case("synthesis 6", (_ARGWHERE, "coordinates = xp.transpose(xp.nonzero(image > threshold))"), PASS, "bright cells",
         "cpu", name="nonzero transposed"),
    Case("synthesis 6", (_ARGWHERE, "coordinates = xp.transpose(xp.nonzero(image > threshold))"), FAIL,
         "xp.nonzero returns a tuple of arrays.*xp.argwhere", "gpu", name="nonzero transposed, on a GPU"),
    Case("synthesis 6", (_ARGWHERE, "coordinates = xp.stack(xp.nonzero(image > threshold), axis=1)"), PASS,
         "bright cells", name="nonzero stacked on axis 1"),
    Case("synthesis 6", (), PASS, _ON_CPU, "cpu", name="the reference: staying on the device not checked on a CPU"),
    # --- deciles: the input left alone, the indices, the repeats
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = images.ravel()\n    ordered.sort()"), FAIL,
         _CHANGED, name="the batch sorted in place"),
    Case("synthesis 4", ("np.floor(analysis", "np.ceil(analysis"), FAIL, "rounded up", name="np.ceil for np.floor"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = xp.unique(images)"), FAIL, "distinct values",
         name="the deciles of xp.unique"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = xp.sort(images, axis=None)"), PASS,
         "binary search", name="sort with axis=None"),
    # --- the similarity: the input left alone, the dtype, the usual slips
    Case("synthesis 5", (_COSINE, "rows /= xp.linalg.norm(rows, axis=1, keepdims=True)\n    return rows @ rows.T"), FAIL,
         _CHANGED, name="rows /= norms (rows a view of the images)"),
    Case("synthesis 5", (_COSINE, "unit = rows / xp.linalg.norm(rows, axis=1, keepdims=True)\n    return unit @ unit.T"),
         PASS, "similarity", name="unit rows first, into a new array"),
    Case("synthesis 5", (_ROWS, _ROWS + ".astype(np.float16)"), FAIL, "float16", name="float16 rows"),
    Case("synthesis 5", (_COSINE, "sums = rows.sum(axis=1)\n    return gram / xp.outer(sums, sums)"), FAIL,
         "the images' sums \\(their L1 norms\\)", name="divided by the outer product of the sums"),
    Case("synthesis 5", (_COSINE, "return gram / xp.linalg.norm(rows) ** 2"), FAIL, "one number for the whole batch",
         name="divided by the whole batch's norm"),
    Case("synthesis 5", (_COSINE, "return gram, norms"), FAIL, "you returned 2 arrays, a tuple: return",
         name="the Gram matrix and the norms returned"),
    Case("synthesis 5", (_COSINE, "similar = gram / (norms[:, None] * norms[None, :])\n    return similar * (1 - xp.eye(len(similar), dtype=similar.dtype))"),
         FAIL, "right but for its diagonal, set to 0", name="the diagonal zeroed on purpose"),
    Case("synthesis 5", (_ROWS, "rows = images.reshape(len(images), -1).astype(np.float64)"), PASS, "similarity",
         name="float64 rows"),
    Case("synthesis 5", (_COSINE, "return gram / norms[:, None] ** 2"), FAIL, "one image's norm squared",
         name="norms[:, None] ** 2"),
    Case("synthesis 5", (_COSINE, "return xp.corrcoef(rows)"), FAIL, "mean was removed.*corrcoef", name="xp.corrcoef"),
    Case("synthesis 5", (_ROWS, _ROWS + "\n    rows = rows - rows.mean(axis=1, keepdims=True)"), FAIL, "mean was removed",
         name="each image's mean removed"),
    Case("synthesis 5", (_ROWS, "rows = images.reshape(-1, images.shape[0]).T"), FAIL, "rows are not the images",
         name="images.reshape(-1, n).T"),
    Case("synthesis 5", ("return gram /", "return 1 - gram /"), FAIL, "1 - the similarity", name="1 - cosine"),
    # --- the histogram kernel: its shared array, CUDA's conversions
    Case("synthesis 7", ("extern __shared__ unsigned int block_counts[];", "unsigned int block_counts[64];"), FAIL,
         "block_counts is a thread's own array.*__shared__", name="block_counts without __shared__"),
    Case("synthesis 7", (_BIN, "min(__float2int_rd(image[i] * bins), bins - 1)"), PASS,
         "privatised", name="__float2int_rd"),
    Case("synthesis 7", (_BIN, "min((int) __float2uint_rz(image[i] * bins), bins - 1)"),
         PASS, "privatised", name="__float2uint_rz"),
    Case("synthesis 7", (_BIN, "min((int) __fmul_rn(image[i], bins), bins - 1)"), PASS, "histogram kernel: right",
         name="__fmul_rn, CUDA's product of a named rounding (on the CPU, the CPU's own)"),
    Case("synthesis 8", (_DIRECTION, "const bool ascending = __popc(i & k) == 0;"),
         NOT_CHECKED, "not checked here: it calls __popc", "cpu", name="__popc, which the CPU does not define"),
    Case("synthesis 7", (_BIN, "min((int) __fmul_rn(image[i], bins), bins - 1)"),
         PASS, "privatised", "gpu", name="__fmul_rn on a GPU"),
    Case("synthesis 8", (_DIRECTION, "const bool ascending = __popc(i & k) == 0;"),
         PASS, "bitonic sort", "gpu", name="__popc on a GPU"),
    # --- playtest 5: the histograms' offsets, the deciles sorted descending or rounded, the norms summed
    Case("synthesis 3", ("(xp.arange(count) * bins)", "(xp.arange(1, count + 1) * bins)"), FAIL,
         "the offsets are too large.*m \\* bins, from 0", name="offsets from 1"),
    Case("synthesis 3", ("(xp.arange(count) * bins)", "(xp.arange(count) * count)"), FAIL, "image x images, not image x bins",
         name="offsets image x count"),
    Case("synthesis 3", ("(xp.arange(count) * bins)[:, None, None]", "xp.arange(0, count * bins, bins).reshape(-1, 1, 1)"),
         PASS, "histograms", name="offsets by arange's step"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = xp.sort(images.ravel())[::-1]"), FAIL,
         "sorted in descending order", name="the values sorted descending"),
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = -xp.sort(-images.ravel())[::-1]"), PASS,
         "binary search", name="ascending as the negated values sorted, reversed"),
    Case("synthesis 4", ("edges = ordered[xp.asarray(index)]", "edges = ordered[xp.asarray(index)].astype(np.float16)"),
         FAIL, "edges are float16, which rounds them", name="float16 edges"),
    Case("synthesis 5", (_COSINE, "return gram / (norms[:, None] + norms[None, :])"), FAIL, "sum of the two norms",
         name="divided by the sum of the norms"),
    Case("synthesis 5", (_COSINE, "return gram / xp.outer(norms, norms)"), PASS, "similarity", name="xp.outer of the norms"),
    # --- playtest 5: the spot mass kernel's identity a name, its threshold a number
    Case("synthesis 2", ('identity = "0"', 'identity = "threshold"'), FAIL, "identity is the constant a sum starts from, 0",
         name="identity = threshold"),
    Case("synthesis 2", ('identity = "0"', 'identity = "(type_reduce) 0.0"'), FAIL, "names the reduction's type _type_reduce",
         name="identity cast to type_reduce"),
    Case("synthesis 2", ('identity = "0"', 'identity = "(_type_reduce) 0.0"'), PASS, "spot mass kernel: right",
         name="identity cast to _type_reduce"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > 0.1 ? v : 0.0"'), FAIL, "use threshold, the argument",
         name="0.1 written in map_expr"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"(v > threshold) * v"'), PASS, "spot mass kernel: right",
         name="(v > threshold) * v"),
    # --- playtest 6: a threshold scaled by the max, transposed coordinates, a product, the threshold for dim cells,
    # the flush into counts, a direction bit compared with 1
    Case("synthesis 6", ("image > threshold)", "image > threshold * image.max())"), FAIL, "",
         name="the threshold scaled by the image's max"),
    Case("synthesis 6", ("xp.argwhere(image > threshold)", "xp.argwhere(image.T > threshold)"), FAIL,
         "\\(col, row\\)", name="argwhere of image.T"),
    Case("synthesis 6", ("xp.argwhere(image > threshold)", "xp.argwhere(image > threshold)[:, ::-1]"), FAIL,
         "\\(col, row\\)", name="argwhere's columns reversed"),
    Case("synthesis 2", ('reduce_expr = "a + b"', 'reduce_expr = "a * b"'), FAIL, "multiplies the partial sums.*a \\+ b",
         name="reduce_expr a * b"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? v : threshold"'), FAIL, "dim cells give the threshold",
         name="dim cells given the threshold"),
    Case("synthesis 7", ("atomicAdd(&image_counts[b], block_counts[b])", "atomicAdd(&counts[b], block_counts[b])"), FAIL,
         "adds into counts\\[b\\], the first image's.*image_counts", name="the flush into counts"),
    Case("synthesis 8", ("(i & k) == 0", "(i & k) == 1"), FAIL, "never 1 once k > 1", name="(i & k) == 1"),
    Case("synthesis 7", ("i < cells", "i <= cells"), FAIL, "i <= cells, one past the last cell.*i < cells",
         name="the loop over the cells to i <= cells"),
    # --- playtest 5: past the shared array, its size fixed, each cell counted twice
    Case("synthesis 7", (_ZEROED, _ZEROED.replace("b < bins", "b <= bins")), FAIL, "sets an entry past the block.s histogram to 0.*b < bins",
         name="the zeroing loop to b <= bins"),
    Case("synthesis 7", ("for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&image_counts[b]",
                         "for (int b = threadIdx.x; b <= bins; b += blockDim.x) atomicAdd(&image_counts[b]"), FAIL, "one past the last bin.*b < bins",
         name="the flush loop to b <= bins"),
    Case("synthesis 7", (_ZEROED, _ZEROED.replace("b < bins", "bins > b")), PASS, "privatised",
         name="the zeroing loop's bound as bins > b"),
    Case("synthesis 7", ("extern __shared__ unsigned int block_counts[];", "__shared__ unsigned int block_counts[64];"),
         FAIL, "block_counts\\[64\\] has 64 entries.*bins = 100.*extern __shared__", name="block_counts[64], a fixed size"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicAdd(&block_counts[bin], 1u); atomicAdd(&image_counts[bin], 1u);"),
         FAIL, "each cell is counted twice", name="each cell added to shared and to global memory"),
    Case("synthesis 8", ("values[i] = b;\n            values[partner] = a;", "values[i] = atomicExch(&values[partner], a);"), PASS,
         "bitonic sort", "cpu", name="the exchange by atomicExch"),
    Case("synthesis 8", (analysis.BITONIC_BODY, "\n    const unsigned int other = i ^ k;\n    if (other > i && other < n) {\n"
                         "        const bool ascending = (i & k) == 0;\n        const float a = values[i], b = values[other];\n"
                         "        if ((a > b) == ascending) { values[i] = b; values[other] = a; }\n    }\n"), FAIL,
         "partner is i \\^ j, given as partner", name="the partner i ^ k"),
    Case("synthesis 8", (analysis.BITONIC_BODY, "\n    const unsigned int other = i ^ j;\n    if (other > i) {\n"
                         "        const bool ascending = (i & k) == 0;\n        const float a = values[i], b = values[other];\n"
                         "        if ((a > b) == ascending) { values[i] = b; values[other] = a; }\n    }\n"), PASS,
         "bitonic sort", name="a partner of its own, i ^ j"),
    # --- the bitonic step: barriers, temporaries, who writes what
    Case("synthesis 8", (_READ, _READ + "\n        __syncthreads();"), FAIL, "only some threads of the block reach",
         name="a __syncthreads() under if (partner > i)"),
    Case("synthesis 8", ("if (partner > i) {", "__syncthreads();\n    if (partner > i) {"), FAIL,
         "__syncthreads\\(\\) after.*if \\(i >= n\\) return;.*never reach it",
         name="a __syncthreads() after the template's return of the threads past n"),
    Case("synthesis 8", (_READ, _READ.replace("float", "int")), FAIL, "int temporaries", name="int temporaries"),
    Case("synthesis 8", (analysis.BITONIC_BODY, "\n    const bool ascending = ((i & k) == 0) == (partner > i);\n    "
                         + _READ + "\n    if ((a > b) == ascending) values[i] = b;\n"), FAIL, "a race.*values\\[i\\] only",
         "cpu", name="each thread writes values[i] only"),
    # --- another independent playtest: the values compared as integers, one cell counted at every iteration
    Case("synthesis 8", ("if ((a > b) == ascending)", "if (((int)a > (int)b) == ascending)"), FAIL,
         "casts the values to an integer \\(\\(int\\)a\\).*tie", name="(int)a > (int)b"),
    Case("synthesis 8", ("if ((a > b) == ascending)", "if ((static_cast<int>(values[i]) > b) == ascending)"), FAIL,
         "casts the values to an integer", name="static_cast<int>(values[i])"),
    Case("synthesis 8", ("if ((a > b) == ascending)", "if (((float)a > (float)b) == (bool)((int)(i & k) == 0))"), PASS,
         "bitonic sort", name="casts to float, and of the direction's bits to int"),
    Case("synthesis 7", ("min((int)(image[i] * bins)", "min((int)(image[first] * bins)"), FAIL,
         "counts image\\[first\\], the thread's first cell, again.*image\\[i\\]", name="image[first] at every iteration"),
    Case("synthesis 7", ("min((int)(image[i] * bins)", "min((int)(image[blockIdx.x * blockDim.x] * bins)"), FAIL,
         "counts image\\[blockIdx.x \\* blockDim.x\\] again", name="the block's first cell at every iteration"),
    Case("synthesis 7", ("const int bin = min((int)(image[i] * bins), bins - 1);",
                         "const float value = image[i];\n        const int bin = min((int)(value * bins), bins - 1);"), PASS,
         "privatised", name="the cell's value read into a local first"),
]

#: Playtest 7 (answers not in the tests) and others of their kinds: a result of the wrong dtype accepted, a
#: barrier after the template's return, a pair given as a list, and the hints that named another mistake
#: (a loop over the bins, a flush of 1, a spot mapped to the threshold) or none (float16 bins, the decile's
#: index and classes, norms of plain sums); with right answers written otherwise.
_SEARCHED = 'xp.searchsorted(edges, images, side="right")'
_INDEX = "np.floor(analysis.DECILES * (ordered.size - 1)).astype(np.int64)"
_NORMS = "norms = xp.sqrt(xp.diagonal(gram))"
_FLUSH = "atomicAdd(&image_counts[b], block_counts[b]);"
_BY_BIN = ("    index += (xp.arange(count) * bins)[:, None, None]\n    return xp.bincount(index.ravel(), "
           "minlength=count * bins).reshape(count, bins)")

PLAYTEST_7_SYNTHESIS = [
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? threshold : 0.0"'), FAIL,
         "gives a spot threshold, not its value.*sums the threshold once per spot", name="a spot mapped to the threshold"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? 0.5f : 0.0"'), FAIL, "gives a spot 0.5f, not its value",
         name="a spot mapped to 0.5f"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"threshold < v ? v : 0.0f"'), PASS, "spot mass kernel: right",
         name="threshold < v ? v : 0.0f"),
    Case("synthesis 3", ("(images * bins)", "(images.astype(np.float16) * bins)"), FAIL, "float16", name="float16 V scaled"),
    Case("synthesis 3", ("(images * bins).astype(np.int64)", "(images * bins).astype(np.float16).astype(np.int64)"), FAIL,
         "float16", name="the scaled V rounded to float16"),
    Case("synthesis 3", (_BY_BIN, "    index = index.reshape(count, -1)\n    out = xp.zeros((count, bins), np.int64)\n"
                                  "    for b in range(bins):\n        out[:, b] = (index == b).sum(axis=1)\n    return out"),
         FAIL, "loop over the bins.*per bin", name="a Python loop over the bins"),
    Case("synthesis 3", (_BY_BIN, "    return xp.stack([(index == b).sum(axis=(1, 2)) for b in range(bins)], axis=1)"), FAIL,
         "loop over the bins", name="a comprehension over the bins"),
    Case("synthesis 3", (_BY_BIN, "    return xp.stack([xp.bincount(one.ravel(), minlength=bins) for one in index])"), FAIL,
         "per image", name="a comprehension over the images"),
    Case("synthesis 6", ("return coordinates, image[coordinates[:, 0], coordinates[:, 1]]",
                         "return [coordinates, image[coordinates[:, 0], coordinates[:, 1]]]"), PASS, "bright cells",
         name="the pair returned as a list"),
    Case("synthesis 6", ("return coordinates, image[coordinates[:, 0], coordinates[:, 1]]",
                         "return [coordinates, image[tuple(coordinates.T)]]"), PASS, "bright cells",
         name="a list, the values indexed by a tuple"),
    Case("synthesis 6", ("return coordinates, image[coordinates[:, 0], coordinates[:, 1]]",
                         "return [coordinates, image[coordinates[:, 0], coordinates[:, 1]], threshold]"), FAIL,
         "return a pair", name="a list of three"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + ".astype(np.float32)"), FAIL, "classes are float32.*whole number",
         name="float32 classes"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + " * 1.0"), FAIL, "classes are float64", name="classes times 1.0"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + ".astype(np.int32)"), PASS, "binary search", name="int32 classes"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + ".astype(np.uint8)"), PASS, "binary search", name="uint8 classes"),
    Case("synthesis 4", (_SEARCHED, "xp.digitize(images, edges)"), PASS, "binary search", name="digitize"),
    Case("synthesis 4", (_INDEX, "np.floor(analysis.DECILES * ordered.size - 1).astype(np.int64)"), FAIL, "index q n - 1.*floor\\(q \\(n - 1\\)\\)",
         name="the index q n - 1"),
    Case("synthesis 4", (_INDEX, "(analysis.DECILES * ordered.size).astype(np.int64) - 1"), FAIL, "index q n - 1",
         name="the index int(q n) - 1"),
    Case("synthesis 4", (_INDEX, "np.floor(analysis.DECILES * (ordered.size + 1)).astype(np.int64) - 1"), FAIL, "index q \\(n \\+ 1\\) - 1",
         name="the index q (n + 1) - 1"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + " + 1"), FAIL, "one too high, 1 to 10.*0 to 9", name="classes + 1"),
    Case("synthesis 4", (_SEARCHED, _SEARCHED + " - 1"), FAIL, "one too low, -1 to 8", name="classes - 1"),
    Case("synthesis 5", (_NORMS, "norms = xp.sqrt(rows.sum(axis=1))"), FAIL, "square roots of each image's sum.*squares",
         name="the norms, square roots of the sums"),
    Case("synthesis 5", (_NORMS, "norms = rows.max(axis=1)"), FAIL, "each image's largest value.*sum of its squares",
         name="the norms, each image's largest value"),
    Case("synthesis 5", (_NORMS, "norms = xp.sqrt(xp.diagonal(gram)) + 1"), FAIL, "norms are not the images' norms.*squares",
         name="the norms plus 1"),
    Case("synthesis 5", (_NORMS, "norms = xp.sqrt((rows ** 2).sum(axis=1))"), PASS, "similarity", name="the norms, squares summed"),
    Case("synthesis 5", (_NORMS, "norms = xp.linalg.norm(rows, axis=1)"), PASS, "similarity", name="the norms, linalg.norm"),
    Case("synthesis 7", (_FLUSH, "atomicAdd(&image_counts[b], 1u);"), FAIL, "adds 1u.*block_counts\\[b\\]",
         name="the flush adds 1"),
    Case("synthesis 7", (_FLUSH, "atomicAdd(image_counts + b, blockDim.x);"), FAIL, "adds blockDim.x.*block_counts\\[b\\]",
         name="the flush adds blockDim.x"),
    Case("synthesis 7", (_FLUSH, "{ const unsigned int here = block_counts[b]; if (here > 0) atomicAdd(&image_counts[b], "
                                 "here); }"), PASS, "privatised", name="the flush of a nonzero bin, read into a local"),
    Case("synthesis 8", (analysis.BITONIC_BODY, analysis.BITONIC_BODY + "    __syncthreads();\n"), FAIL,
         "if \\(i >= n\\) return;.*never reach it", name="a __syncthreads() at the body's end"),
    Case("synthesis 8", (analysis.BITONIC_BODY, "\n    if (partner <= i) return;\n    const bool ascending = (i & k) == 0;\n"
                         "    " + _READ + "\n    if ((a > b) == ascending) { values[i] = b; values[partner] = a; }\n"), PASS,
         "bitonic sort", name="the upper thread of a pair returns early"),
    Case("synthesis 8", (analysis.BITONIC_BODY, "\n    // no __syncthreads(): one thread exchanges each pair, return or not"
                         + analysis.BITONIC_BODY), PASS, "bitonic sort", name="a comment that names __syncthreads()"),
]

#: Playtest 8 and others of their kinds: a half-precision operand of the Gram product, float64 edges, a flat
#: index of the wrong row length (once a raw IndexError, at random), values of shape (cells, 1), rows or
#: columns left out of the mass, a global flush by another atomic than atomicAdd; with right answers.
_FLAT = "image.ravel()[coordinates[:, 0] * {} + coordinates[:, 1]]"
_SUMMED = "images.sum(axis=(1, 2), dtype=np.float64)"
_GRAM = "gram = rows @ rows.T"

PLAYTEST_8_SYNTHESIS = [
    Case("synthesis 5", (_GRAM, "gram = rows @ rows.T.astype(np.float16)"), FAIL, "float16.*float32",
         name="one operand of the product in float16"),
    Case("synthesis 5", (_GRAM, "gram = rows.astype(np.float16) @ rows.T"), FAIL, "float16.*float32",
         name="the other operand in float16"),
    Case("synthesis 5", (_GRAM, "gram = xp.matmul(rows.astype(np.float64), rows.T)"), PASS, "similarity",
         name="the product in float64 by matmul"),
    Case("synthesis 5", (_GRAM, "gram = xp.einsum('ik,jk->ij', rows, rows)"), PASS, "similarity", name="einsum's product"),
    # the right values in a wider dtype: the exercise asks for the nine values, which these are
    Case("synthesis 4", ("edges = ordered[xp.asarray(index)]", "edges = ordered[xp.asarray(index)].astype(np.float64)"),
         PASS, "binary search", name="edges cast to float64"),
    Case("synthesis 4", ("edges = ordered[xp.asarray(index)]", "edges = xp.percentile(images, 100 * analysis.DECILES, "
                         "method='lower')"), PASS, "binary search", name="percentile's lower values"),
    *(Case("synthesis 6", (_RETURNED, "return coordinates, " + _FLAT.format(rows)), FAIL,
           "flat index.*shape\\[1\\]", name=f"a flat index of rows {rows} (run it many times: once at random)")
      for rows in ("image.shape[0]", "len(image)", "(image.shape[0] + 1)", "(image.shape[1] + 2)")),
    Case("synthesis 6", (_RETURNED, "return coordinates, " + _FLAT.format("image.shape[1]")), PASS, "bright cells",
         name="a flat index of rows image.shape[1]"),
    Case("synthesis 6", (_RETURNED, "return coordinates, image[tuple(coordinates.T)]"), PASS, "bright cells",
         name="the coordinates' columns as a tuple"),
    Case("synthesis 6", (_RETURNED, _RETURNED + "[:, None]"), FAIL, "values have shape \\(\\d+, 1\\).*\\(cells,\\)",
         name="values of shape (cells, 1)"),
    Case("synthesis 6", (_RETURNED, _RETURNED + ".reshape(1, -1)"), FAIL, "values have shape \\(1, \\d+\\).*\\(cells,\\)",
         name="values of shape (1, cells)"),
    Case("synthesis 6", (_RETURNED, "return coordinates, image[image > threshold]"), FAIL, "integer-array indexing",
         name="the values by the mask, in the same order (the exercise asks for integer-array indexing)"),
    Case("synthesis 1", (_SUMMED, "images[:, 1:, :].sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "leave out each image's first row", name="the first row left out"),
    Case("synthesis 1", (_SUMMED, "images[:, :-1, :].sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "leave out each image's last row", name="the last row left out"),
    Case("synthesis 1", (_SUMMED, "images[:, :, 2:].sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "leave out each image's first 2 columns", name="two columns left out"),
    Case("synthesis 1", (_SUMMED, "images[:, 1:-1, 1:-1].sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "leave out each image's first row, last row, first column and last column", name="the border left out"),
    Case("synthesis 1", (_SUMMED, "images.reshape(len(images), -1).sum(axis=1, dtype=np.float64)"), PASS, "mass",
         name="each image flattened, then summed"),
    Case("synthesis 1", (_SUMMED, "images.sum(axis=2, dtype=np.float64).sum(axis=1)"), PASS, "mass",
         name="the rows' sums, then their sum"),
    *(Case("synthesis 7", (_FLUSH, f"{atomic}(&image_counts[b], block_counts[b]);"), FAIL,
           f"{atomic}.*only atomicAdd adds", name=f"the flush by {atomic}") for atomic in ("atomicExch", "atomicMax", "atomicOr")),
    Case("synthesis 7", (_FLUSH, "atomicAdd(image_counts + b, block_counts[b]);"), PASS, "privatised",
         name="the flush to image_counts + b"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? (half)v : 0.0"'), NOT_CHECKED,
         "not checked here: it uses half, CUDA's half-precision type", "cpu", name="a (half) cast: CUDA's type, not checked"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? (half)v : 0.0"'), FAIL,
         "rounded to half precision \\(float16|half is not defined", "gpu", name="a (half) cast on a GPU"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? (float)v : 0.0f"'), PASS, "spot mass kernel: right",
         name="a (float) cast"),
]

#: Playtest 9 and others of their kinds: a product of the wrong orientation (rows.T @ rows, cells x cells; each image by
#: its own transpose) with the right norms, once blamed on the norms; coordinates from a flat index split by the number
#: of rows; with right answers (einsum, dot, unravel_index, divmod).
_RIGHT_NORMS = "gram = {}\n    norms = xp.sqrt((rows * rows).sum(axis=1))"
_DIAGONAL = "gram = rows @ rows.T\n    norms = xp.sqrt(xp.diagonal(gram))"
_OF_CELLS = "\\d+ x \\d+ Gram matrix of the cells.*not of the images \\(images x images\\).*rows @ rows\\.T"
_SPLIT = "idx = xp.flatnonzero(image > threshold)\n    coordinates = {}"
_SPLIT_BY_ROWS = "your coordinates: your flat index is split by a row length of image.shape\\[0\\], the number of rows.*shape\\[1\\]"

PLAYTEST_9_SYNTHESIS = [
    *(Case("synthesis 5", (_DIAGONAL, _RIGHT_NORMS.format(product)), FAIL, _OF_CELLS, name=f"{product}, the norms right")
      for product in ("rows.T @ rows", "xp.matmul(rows.T, rows)", "rows.T.dot(rows)", "xp.einsum('ki,kj->ij', rows, rows)")),
    Case("synthesis 5", (_DIAGONAL, "gram = rows.T @ rows\n    norms = xp.linalg.norm(rows, axis=1)",
                         _COSINE, "return gram / xp.outer(norms, norms)"), FAIL, _OF_CELLS, name="rows.T @ rows over xp.outer"),
    Case("synthesis 5", (_DIAGONAL, "gram = rows.T @ rows\n    norms = xp.linalg.norm(rows, axis=1)",
                         _COSINE, "return gram / norms[:, None] / norms[None, :]"), FAIL, _OF_CELLS,
         name="rows.T @ rows divided twice"),
    Case("synthesis 5", (_DIAGONAL, "gram = images @ images.transpose(0, 2, 1)\n    norms = xp.linalg.norm(rows, axis=1)"),
         FAIL, "each image by its own transpose.*one image a row.*rows @ rows\\.T", name="each image by its transpose"),
    Case("synthesis 5", "def similarity(images):\n    rows = images.reshape(images.shape[0], -1)\n    gram = rows.T @ rows\n"
         "    norms = xp.sqrt((rows * rows).sum(axis=1))\n    return gram / (norms[:, None] * norms[None, :])\n\n"
         "check.similarity(similarity, device_type=on_device, to_device=xp.asarray)\n", FAIL, _OF_CELLS,
         name="playtest 9: rows.T @ rows, the norms right"),
    Case("synthesis 5", (_DIAGONAL, _RIGHT_NORMS.format("xp.einsum('ij,kj->ik', rows, rows)"), _COSINE,
                         "return gram / xp.outer(norms, norms)"), PASS, "similarity", name="einsum ij,kj->ik over xp.outer"),
    Case("synthesis 5", (_DIAGONAL, _RIGHT_NORMS.format("rows.dot(rows.T)")), PASS, "similarity", name="rows.dot(rows.T)"),
    Case("synthesis 5", (_DIAGONAL, "gram = (rows.T.T) @ rows.T\n    norms = xp.linalg.norm(rows, axis=1)"), PASS,
         "similarity", name="rows.T.T @ rows.T, norms by linalg.norm"),
    *(Case("synthesis 6", (_ARGWHERE, _SPLIT.format(split)), FAIL, _SPLIT_BY_ROWS, name=f"coordinates {split}")
      for split in ("xp.stack([idx // image.shape[0], idx % image.shape[0]], axis=1)",
                    "xp.stack(divmod(idx, len(image)), axis=1)",
                    "xp.stack(xp.unravel_index(idx, image.shape[::-1]), axis=1)")),
    Case("synthesis 6", "def bright_cells(image, threshold):\n    rows, cols = image.shape\n    idx = xp.flatnonzero(image > "
         "threshold)\n    return xp.stack([idx // rows, idx % rows], axis=1), image.ravel()[idx]\n\ncheck.bright_cells("
         "bright_cells, device_type=on_device, to_device=xp.asarray)\n", FAIL, _SPLIT_BY_ROWS,
         name="playtest 9: the flat index split by rows, the values by the flat index"),
    Case("synthesis 6", (_ARGWHERE, "rows, cols = image.shape\n    idx = xp.flatnonzero(image > threshold)\n    r, c = "
                         "divmod(idx, rows)", _RETURNED, "return xp.stack((r, c), axis=1), image[r, c]"), FAIL, _SPLIT_BY_ROWS,
         name="divmod by rows, the values at r, c"),
    Case("synthesis 6", (_ARGWHERE, _SPLIT.format("xp.stack([idx // image.shape[0], idx % image.shape[1]], axis=1)")),
         FAIL, "coordinates.*split into rows by a row length of image.shape\\[0\\]", name="the row alone divided by the rows"),
    Case("synthesis 6", (_ARGWHERE, _SPLIT.format("xp.stack([idx // image.shape[1], idx % image.shape[0]], axis=1)")),
         FAIL, "coordinates.*split into columns by a row length of image.shape\\[0\\]", name="the column alone by the rows"),
    *(Case("synthesis 6", (_ARGWHERE, _SPLIT.format(split), _RETURNED, "return coordinates, image.ravel()[idx]"), PASS,
           "bright cells", name=f"coordinates {split}")
      for split in ("xp.stack(xp.unravel_index(idx, image.shape), axis=1)", "xp.stack(divmod(idx, image.shape[1]), axis=1)",
                    "xp.column_stack((idx // image.shape[1], idx % image.shape[1]))")),
    # The flat index beside its right columns in the frame is no split by a row length of 1: the IndexError is the values'.
    Case("synthesis 6", (_ARGWHERE, "idx = xp.flatnonzero(image > threshold)\n    cols = idx % image.shape[1]\n    rows = "
                         "idx // image.shape[1]", _RETURNED, "return xp.stack((rows, cols), 1), image[rows, cols + 1]"),
         FAIL, "^your values: an index went past the image's edge|^your values are V a column to the right of your coordinates",
         name="right coordinates, the values off by a column"),  # NumPy raises past the edge; CuPy wraps around
]

#: Playtest 10 (in real notebooks): an exchange no comparison of the values guards was told the pair's
#: threads both acted (the guard partner > i was there); right answers comparing by other spellings.
PLAYTEST_9_SYNTHESIS += [
    Case("synthesis 8", ("if ((a > b) == ascending) {", "{"), FAIL, "swaps every pair, in order or not",
         name="every pair swapped, no comparison"),
    Case("synthesis 8", ("if ((a > b) == ascending) {", "if (ascending ? (b < a) : (a < b)) {"), PASS, "sorted",
         name="the comparison by a conditional"),
    Case("synthesis 8", ("if ((a > b) == ascending) {", "if (fmaxf(a, b) == a && a != b && ascending || fminf(a, b) == a && a != b && !ascending) {"),
         PASS, "sorted", name="the comparison by fmaxf and fminf"),
]

#: Playtest 11 (synthesis notebook, in real kernels): hints that named another mistake or a distance.
_BOTH_ACT = "both threads of a pair compare and swap it \\(a race\\): .*{}.*only the one with partner > i may"
_EXCHANGE = "const bool ascending = (i & k) == 0;\n    " + _READ + "\n    if ((a > b) == ascending) { values[i] = b; values[partner] = a; }\n"


_ORDERED = "ordered = xp.sort(images.ravel())"
_HALF = "off by up to .*more than float32's rounding.*: {} rounded to float16 \\(about 3 digits\\).*float32"
#: Where the random images' rounding matches none of the recomputations (CI, ccf7f50: off by up to 1e-4), float16 named from the code.
_NAMED = "|your code names float16.*float32"
_BINS_LOOP = "for (int b = threadIdx.x; b < bins; b += blockDim.x) "
_FLUSH_LOOP = _BINS_LOOP + _FLUSH


def _bitonic(body: str) -> str:
    """The exercise's cell with `body` for the bitonic step."""
    return f'bitonic_body = r"""{body}"""\nbitonic_sort = check.bitonic_step(bitonic_body)\n'


PLAYTEST_11_SYNTHESIS = [
    # --- the bitonic step: both threads of a pair act, whatever the text of the guard (decided by running each alone)
    Case("synthesis 8", _bitonic("\n    const bool ascending = (i & k) == 0;\n    " + _READ + "\n    if (partner > i) {\n"
                                 "        if ((a > b) == ascending) { values[i] = b; values[partner] = a; }\n    } else {\n"
                                 "        if ((b > a) == ascending) { values[i] = b; values[partner] = a; }\n    }\n"),
         FAIL, _BOTH_ACT.format("the else of your if \\(partner > i\\)"), name="playtest 11: both threads act, the other in an else"),
    Case("synthesis 8", _bitonic("\n    if (partner > i)\n        {}\n    " + _EXCHANGE), FAIL,
         _BOTH_ACT.format("your if \\(partner > i\\) guards an empty block"), name="playtest 11: if (partner > i) {} above the exchange"),
    Case("synthesis 8", _bitonic("\n    if (partner > i); {\n        " + _EXCHANGE.replace("\n    ", "\n        ") + "    }\n"), FAIL,
         _BOTH_ACT.format("your if \\(partner > i\\); ends at its ';'.*Drop the ';'"), name="playtest 11: if (partner > i); { ... }"),
    Case("synthesis 8", ("if (partner > i) {", "if ((i & j) == 0); {"), FAIL, _BOTH_ACT.format("your if \\(\\(i & j\\) == 0\\); ends"),
         name="if ((i & j) == 0); { ... }"),
    Case("synthesis 8", ("if (partner > i) {", "if (partner != i) {"), FAIL,
         _BOTH_ACT.format("your if \\(partner != i\\) holds for both threads"), name="if (partner != i), true for both"),
    Case("synthesis 8", _bitonic("\n    const bool ascending = (i & k) == 0;\n    " + _READ + "\n    const bool out = (a > b) == ascending;\n"
                                 "    if (partner > i)\n        if (out) values[i] = b;\n        if (out) values[partner] = a;\n"), FAIL,
         _BOTH_ACT.format("your if \\(partner > i\\) has no braces, so it guards only its first statement"),
         name="if (partner > i) without braces over two lines"),
    Case("synthesis 8", _bitonic("\n    if (partner > i) {\n        const bool ascending = (i & k) == 0;\n    }\n    " + _READ
                                 + "\n    if ((a > b) == ((i & k) == 0)) { values[i] = b; values[partner] = a; }\n"), FAIL,
         _BOTH_ACT.format("guards a block without the exchange"), name="the exchange after the guard's block"),
    Case("synthesis 8", ("if ((a > b) == ascending) {", "if ((a > b) == ascending); {"), FAIL,
         "your if \\(\\(a > b\\) == ascending\\); ends at its ';'.*runs always", name="a stray ';' after the comparison's if"),
    Case("synthesis 8", ("if ((a > b) == ascending) {\n            values[i] = b;\n            values[partner] = a;\n        }",
                         "if ((a > b) == ascending)\n            values[i] = b;\n            values[partner] = a;"), FAIL,
         "your if \\(\\(a > b\\) == ascending\\) has no braces.*\\(values\\[i\\] = b;\\)", name="the comparison's if without braces"),
    Case("synthesis 8", _bitonic("\n    if (partner > i) {\n        " + _READ + "\n        if ((i & k) == 0 ? a > b : a < b) "
                                 "{ values[i] = b; values[partner] = a; }\n    }\n"), PASS, "bitonic sort",
         name="the direction as (i & k) == 0 ? a > b : a < b"),
    Case("synthesis 8", _bitonic("\n    if (i < partner) { " + _READ + " if ((a > b) == ((i & k) == 0)) { values[i] = b; "
                                 "values[partner] = a; } }\n"), PASS, "bitonic sort", name="if (i < partner), all on one line"),
    Case("synthesis 8", _bitonic("\n    if (partner < i) return;\n    " + _EXCHANGE), PASS, "bitonic sort",
         name="the upper thread returns, the exchange unbraced below"),
    Case("synthesis 8", _bitonic("\n    if (partner > i)\n        if ((values[i] > values[partner]) == ((i & k) == 0)) {\n"
                                 "            const float a = values[i];\n            values[i] = values[partner];\n"
                                 "            values[partner] = a;\n        }\n"), PASS,
         "bitonic sort", name="if (partner > i) over one if, no braces, a temporary"),
    Case("synthesis 8", _bitonic("\n    if (partner > i) {\n        " + _EXCHANGE.replace("\n    ", "\n        ") + "    } else {\n    }\n"),
         PASS, "bitonic sort", name="an empty else"),
    Case("synthesis 8", _bitonic("\n    if (partner < i) {\n        const bool ascending = (partner & k) == 0;\n"
                                 "        const float low = values[partner], high = values[i];\n        if ((low > high) == ascending) "
                                 "{ values[partner] = high; values[i] = low; }\n    }\n"), PASS, "bitonic sort",
         name="the upper thread exchanges the pair"),
    Case("synthesis 8", _bitonic("\n    if (partner > i) {\n        " + _READ + "\n        const bool up = (i & k) == 0;\n"
                                 "        values[i] = up ? fminf(a, b) : fmaxf(a, b);\n        values[partner] = up ? fmaxf(a, b) : fminf(a, b);\n"
                                 "    }\n"), PASS, "bitonic sort", name="fminf and fmaxf written whether in order or not"),
    # --- the histogram kernel: the block's counts into global memory otherwise than by atomicAdd
    Case("synthesis 7", (_FLUSH, "image_counts[b] = block_counts[b];"), FAIL,
         "stores the block's counts into global memory with = \\(image_counts\\[b\\] = block_counts\\[b\\];\\).*"
         "overwrites.*atomicAdd", name="playtest 11: image_counts[b] = block_counts[b]"),
    Case("synthesis 7", (_FLUSH_LOOP, "unsigned int* mine = counts + blockIdx.y * bins;\n    " + _BINS_LOOP + "mine[b] = block_counts[b];"),
         FAIL, "stores the block's counts into global memory with = \\(mine\\[b\\].*atomicAdd", name="a store through a pointer of its own"),
    Case("synthesis 7", (_FLUSH, "image_counts[b] += block_counts[b];"), FAIL,
         "adds to global memory without an atomic \\(image_counts\\[b\\] \\+= block_counts\\[b\\];\\).*atomicAdd",
         name="image_counts[b] += block_counts[b]"),
    Case("synthesis 7", (_FLUSH, "image_counts[b] = image_counts[b] + block_counts[b];"), FAIL,
         "adds to global memory without an atomic", name="image_counts[b] = image_counts[b] + block_counts[b]"),
    Case("synthesis 7", (_FLUSH_LOOP, "unsigned int* mine = counts + blockIdx.y * bins;\n    " + _BINS_LOOP
                         + "atomicAdd(mine + b, block_counts[b]);"), PASS, "privatised", name="atomicAdd(mine + b, ...) through a pointer"),
    Case("synthesis 7", (_FLUSH_LOOP, "int b = threadIdx.x;\n    while (b < bins) {\n        if (block_counts[b] != 0u) "
                         "atomicAdd(image_counts + b, block_counts[b]);\n        b += blockDim.x;\n    }"), PASS, "privatised",
         name="a while loop, empty bins skipped"),
    Case("synthesis 7", (_FLUSH, "atomicAdd(&counts[blockIdx.y * bins + b], block_counts[b]);"), PASS, "privatised",
         name="into counts at the image's offset, blockIdx.y * bins + b"),
    # --- the deciles: values sorted in pieces (xp.sort's default axis), searchsorted's arguments swapped
    Case("synthesis 4", "def deciles(values):\n    s = xp.sort(values)\n    flat = s.reshape(-1, s.shape[-1])[0]\n"
         "    idx = xp.asarray(np.floor(analysis.DECILES * (flat.size - 1)).astype(np.int64))\n    edges = flat[idx]\n"
         "    return edges, xp.searchsorted(edges, values, side=\"right\")\n\ncheck.deciles(deciles, device_type=on_device, "
         "to_device=xp.asarray)\n", FAIL, "deciles of image 0's row 0 only.*sorts each row apart.*axis=None",
         name="playtest 11: sorted along the last axis, the edges from the first row"),
    Case("synthesis 4", (_ORDERED, "ordered = xp.sort(images[0], axis=None)"), FAIL,
         "deciles of image 0 only.*whole batch.*axis=None", name="the first image's values only"),
    Case("synthesis 4", (_ORDERED, "ordered = xp.sort(images, axis=1)[-1, :, -1]"), FAIL,
         "deciles of image 4's column \\d+ only.*column sorted apart", name="sorted along axis 1, the last image's last column"),
    Case("synthesis 4", (_ORDERED, "ordered = xp.sort(images)[2, 3]"), FAIL,
         "deciles of image 2's row 3 only", name="sorted rows, one row read"),
    Case("synthesis 4", (_ORDERED + "\n    index = " + _INDEX + "\n    edges = ordered[xp.asarray(index)]",
                         "ordered = xp.sort(images)\n    index = np.floor(analysis.DECILES * (images.shape[-1] - 1)).astype(np.int64)"
                         "\n    edges = ordered[..., xp.asarray(index)]", _SEARCHED, "xp.searchsorted(edges[0, 0], images, side='right')"),
         FAIL, "deciles per row: xp.sort sorts along the last axis.*axis=None", name="each row's deciles, xp.sort's default axis"),
    Case("synthesis 4", (_SEARCHED, 'xp.searchsorted(images.ravel(), edges, side="right")'), FAIL,
         "classes have one value per edge.*placed the edges among the values.*edges come first", 
         name="playtest 11: searchsorted(values.ravel(), edges)"),
    Case("synthesis 4", (_SEARCHED, 'xp.searchsorted(images, edges, side="right")'), FAIL,
         "searchsorted\\(a, v\\) searches in a.*object too deep.*edges come first", name="searchsorted(images, edges)"),
    Case("synthesis 4", (_ORDERED, "ordered = xp.sort(images.reshape(-1))"), PASS, "binary search", name="sorted reshape(-1)"),
    Case("synthesis 4", (_ORDERED, "ordered = xp.sort(images.flatten(), axis=0)"), PASS, "binary search",
         name="sorted flatten(), axis=0"),
    Case("synthesis 4", (_SEARCHED, 'xp.searchsorted(edges, images.ravel(), side="right").reshape(images.shape)'), PASS,
         "binary search", name="searched flat, reshaped"),
    # --- the similarity: a float16 step cast back to float32 (off past the tolerance: named, not 'off at (0, 1)')
    Case("synthesis 5", "def similarity(images):\n    x = images.reshape(len(images), -1).astype(xp.float16)\n"
         "    g = (x @ x.T).astype(xp.float32)\n    n = xp.sqrt(xp.diag(g))\n    return g / xp.outer(n, n)\n\n"
         "check.similarity(similarity, device_type=on_device, to_device=xp.asarray)\n", FAIL, _HALF.format("the product \\(the Gram matrix\\) is")
         + _NAMED, name="playtest 11: the product of float16 rows, cast back to float32"),  # a GPU's GEMM: the code
    Case("synthesis 5", (_GRAM, "gram = (rows @ rows.T).astype(np.float16).astype(np.float32)"), FAIL,
         _HALF.format("the product \\(the Gram matrix\\) is") + _NAMED, name="the Gram matrix through float16"),
    Case("synthesis 5", (_COSINE, "return (gram / (norms[:, None] * norms[None, :])).astype(np.float16).astype(np.float32)"),
         FAIL, _HALF.format("the similarity is") + _NAMED, name="the similarity through float16"),
    Case("synthesis 5", (_GRAM, "gram = (rows.astype(np.float64) @ rows.T.astype(np.float64)).astype(np.float32)"), PASS,
         "similarity", name="the product in float64, cast to float32"),
    Case("synthesis 5", (_GRAM, "gram = xp.dot(rows, rows.T)", _NORMS, "norms = xp.linalg.norm(rows, axis=1)"), PASS,
         "similarity", name="xp.dot, norms by linalg.norm"),
    Case("synthesis 5", (_GRAM, "gram = xp.einsum('ic,jc->ij', rows, rows, dtype=np.float32)"), PASS, "similarity",
         name="einsum in float32"),
    # --- the ReductionKernel's strings: expressions, not statements
    Case("synthesis 2", ('reduce_expr = "a + b"', "reduce_expr = 'a + b;'"), FAIL,
         "reduce_expr is a C expression.*not a statement: no ';' in it, reduce_expr = 'a \\+ b'",
         name="playtest 11: reduce_expr 'a + b;'"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? v : 0.0;"'), FAIL,
         "map_expr is a C expression.*no ';' in it", name="map_expr ending in ';'"),
    Case("synthesis 2", ('reduce_expr = "a + b"', 'reduce_expr = "return a + b;"'), FAIL,
         "reduce_expr is a C expression.*no ';' or return in it, reduce_expr = 'a \\+ b'", name="reduce_expr 'return a + b;'"),
    Case("synthesis 2", ('identity = "0"', 'identity = "0;"'), FAIL, "identity is a C expression.*identity = '0'",
         name="identity '0;'"),
    Case("synthesis 2", ('reduce_expr = "a + b"', 'reduce_expr = "(a + b)"'), PASS, "spot mass", name="reduce_expr in parentheses"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"(v > threshold) ? v : 0.0f"'), PASS, "spot mass",
         name="map_expr with parentheses and 0.0f"),
    Case("synthesis 2", ('identity = "0"', 'identity = "0.0f"'), PASS, "spot mass", name="identity 0.0f"),
    # --- the mass of V squared; the histograms' bin numbers in a narrow integer type
    Case("synthesis 1", (_MASS, "return (images ** 2).sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "your masses sum V squared.*sums V itself", name="playtest 11: the sum of V squared"),
    Case("synthesis 1", (_MASS, "return (images * images).sum(axis=(1, 2), dtype=np.float64)"), FAIL,
         "your masses sum V squared", name="the sum of images * images"),
    Case("synthesis 3", "def histograms(images, bins):\n    n = len(images)\n    b = xp.minimum((images * bins).astype(xp.int8), "
         "bins - 1).reshape(n, -1)\n    idx = b + xp.arange(n, dtype=xp.int8)[:, None] * xp.int8(bins)\n    return xp.bincount("
         "idx.ravel().astype(xp.int64) % (n * bins), minlength=n * bins).reshape(n, bins)\n\ncheck.histograms(histograms, "
         "device_type=on_device, to_device=xp.asarray)\n", FAIL, "bin numbers wrapped around: int8 holds up to 127.*int64",
         name="playtest 11: int8 bin numbers, taken modulo images x bins"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * bins).astype(np.int16), bins - 1).astype(np.int8)"), FAIL,
         "bin numbers wrapped around: int8 holds up to 127", name="int8 bin numbers, bincount told they are negative"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * bins).astype(np.uint8), bins - 1)"), FAIL,
         "bin numbers are an 8- or 16-bit integer \\(.*uint8.*\\).*int64", name="uint8 bin numbers, the offsets added in place"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * bins).astype(np.uint8), bins - 1)", "(xp.arange(count) * bins)",
                         "(xp.arange(count, dtype=np.uint8) * np.uint8(bins))"), FAIL, "bin numbers wrapped around: uint8 holds up to 255", name="uint8 bin numbers, wrapped past 255"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * bins).astype(np.int16), bins - 1)"), PASS, "histograms",
         name="int16 bin numbers, offsets added in int64"),
    Case("synthesis 3", (_BINNED, "xp.minimum((images * bins).astype(np.int32), bins - 1)"), PASS, "histograms",
         name="int32 bin numbers"),
]
