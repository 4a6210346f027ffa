"""Checkers of tutorial 4's CUDA C: the ReductionKernel's expressions and the privatised histogram
kernel (`bitonic_check` has the bitonic sort step; the notebook calls them through
`gs_course.lessons.analysis_check`).

Each kernel is checked by its values: on an NVIDIA GPU with CuPy, tried first in a separate process
(a wild pointer costs that process its GPU context, not the notebook's), then run; without one, its
C is compiled and run on the CPU (`gs_course.lessons.cuda_on_cpu`: threads that meet at `__syncthreads()`,
or that run one after another in both orders, so that a race shows). Where neither can run, the
checker says "not checked", never ticks. What the values cannot show (a `__syncthreads()` that not
every thread reaches, which may work by luck: `kernel_barriers`) is read from the code.
"""

from __future__ import annotations

import re

import numpy as np

from . import analysis, cuda_on_cpu
from .analysis_inputs import batch, close, first_difference, with_every_bin
from .check_core import NotYet, ok
from .kernel_runs import _gpu_errors_as_hints, c_text, compiles_first, trial_in_a_child
from .kernel_barriers import _DIVERGENT, _governing, _thread_dependent, divergent_barrier
from .kernel_indices import same_cell_each_time
from .histogram_flush import flush_mistake
from .reduction_statements import statement_hint
from ..backends import probe


def _spaceless(text: str) -> str:
    return "".join(text.split())


def _is_zero(expression: str) -> bool:
    try:
        return float(expression.strip().rstrip("fF")) == 0
    except ValueError:
        return False


def _first_hint(mistakes: list[tuple[bool, str]]) -> str | None:
    return next((hint for found, hint in mistakes if found), None)


def _gpu():
    """CuPy where it runs on a GPU here, else None (silently: the caller says what it does instead)."""
    if not probe("cupy").ok:
        return None
    import cupy
    return cupy


def _not_checked(what: str, as_text=(), why: str = "not checked here, it needs an NVIDIA GPU with CuPy, or a C++ "
                                                   "compiler to run it on the CPU") -> None:
    """Where the kernel cannot run: the first mistake its code shows, else the line that says it
    was not checked (never a tick)."""
    if hint := _first_hint(as_text):
        raise NotYet(hint)
    print(f"- {what}: {why}")


# --- Exercise: a ReductionKernel -------------------------------------------------------------------------

_SPOT_MAIN = r"""
    for (int m = 0; m < IMAGES; ++m) {
        _type_reduce partial[PARTIALS];
        for (int t = 0; t < PARTIALS; ++t) {
            partial[t] = (_type_reduce) (IDENTITY);
            for (int c = t; c < CELLS; c += PARTIALS) partial[t] = reduce_pair(partial[t], map_cell(images[m * CELLS + c], threshold[0]));
        }
        _type_reduce total = partial[0];
        for (int t = 1; t < PARTIALS; ++t) total = reduce_pair(total, partial[t]);
        mass[m] = total;
    }
"""


def _spot_given(given: str) -> str:
    """The hint for a map_expr that gives a spot `given` (its value part, spaces cut; "" for a
    comparison alone), not v: what that sums."""
    if given.strip("()") in ("", "1", "1.0", "1.0f", "1.f", "true"):
        return ("your map_expr gives a spot 1 (true), not its value: that counts the spots. Map a spot to v: "
                "v > threshold ? v : 0")
    summed = "the threshold" if given.strip("()") == "threshold" else given
    return (f"your map_expr gives a spot {given}, not its value v: that sums {summed} once per spot. Map a spot to v: "
            "v > threshold ? v : 0")


#: A second threshold the spot mass kernel runs with: a number written in map_expr ignores it.
_OTHER_THRESHOLD = 0.25


def _spot_mass_on_cpu(map_expr: str, reduce_expr: str, identity: str, images: np.ndarray) -> list[np.ndarray]:
    """What the ReductionKernel gives, as CuPy reduces: each of several partial sums starts from the
    identity, cells mapped and reduced into them, then the partial sums reduced together; with the
    threshold SPOT_THRESHOLD, then _OTHER_THRESHOLD."""
    kernel = ("typedef double _type_reduce;\n"
              f"static inline _type_reduce map_cell(float v, float threshold) {{ return ({map_expr}); }}\n"
              f"static inline _type_reduce reduce_pair(_type_reduce a, _type_reduce b) {{ return ({reduce_expr}); }}\n")
    main = (_SPOT_MAIN.replace("IMAGES", str(len(images))).replace("CELLS", str(images[0].size))
            .replace("PARTIALS", "8").replace("IDENTITY", identity))
    arrays = {"images": images, "threshold": np.array([analysis.SPOT_THRESHOLD], np.float32),
              "mass": np.zeros(len(images))}
    runs = [({"threshold": np.array([t], np.float32)}, {}) for t in (analysis.SPOT_THRESHOLD, _OTHER_THRESHOLD)]
    return [run["mass"] for run in cuda_on_cpu.run_checked(kernel, arrays, main, runs)]


def spot_mass_kernel(map_expr: str, reduce_expr: str, identity: str):
    """The three expressions of a ReductionKernel that gives each image's spot mass (V summed over
    the cells above a threshold). Returns the kernel, called as `kernel(images, threshold, axis=(1, 2))`
    with the threshold a float32 array of 0 dimensions (None without a GPU)."""
    for text, what in ((map_expr, "map_expr"), (reduce_expr, "reduce_expr"), (identity, "identity")):
        c_text(text, what)
        if statement := statement_hint(text, what):  # the compiler would say "expected ')' before ';'"
            raise NotYet(statement)
    value = map_expr.split("?", 1)[1].split(":", 1)[0] if "?" in map_expr else map_expr
    if re.search(r"\b(if|else)\b", map_expr):  # before compiling: the compiler's error would not say this
        raise NotYet("map_expr is C, not Python: C's conditional is condition ? value : other, as in "
                     "v > threshold ? v : 0")
    if re.search(r"(?<!_)\btype_reduce\b", identity):
        raise NotYet("identity: CuPy's kernel names the reduction's type _type_reduce, not type_reduce; the constant "
                     "alone is enough, 0")
    if names := set(re.findall(r"\b[A-Za-z_]\w*", identity)) - {"_type_reduce", "float", "double", "int", "unsigned"}:
        raise NotYet(f"identity is the constant a sum starts from, 0: not {sorted(names)[0]}, which is no constant")
    as_text = [
        ("threshold" not in map_expr, "your map_expr does not use the threshold: map each cell to v where "
                                      "v > threshold, else to 0"),
        ("v" not in re.findall(r"\w+", value) or ("?" not in map_expr and "*" not in map_expr),
         _spot_given(" ".join(value.split()) if "?" in map_expr else "")),
        (">=" in map_expr, "a cell exactly on the threshold is not above it: v > threshold, not >="),
        (_spaceless(reduce_expr) not in ("a+b", "b+a"), "reduce_expr combines two partial sums: a + b"),
        (not _is_zero(identity), "the identity starts every thread's partial sum, so it must add nothing "
                                 "(0 for a sum)"),
    ]
    images = batch()
    threshold = np.float32(analysis.SPOT_THRESHOLD)
    cupy, kernel = _gpu(), None
    if cupy is not None:
        with _gpu_errors_as_hints(cupy):
            kernel = analysis.spot_mass_kernel(cupy, map_expr, reduce_expr, identity)
            got, other = (kernel(cupy.asarray(images), cupy.asarray(np.float32(t)), axis=(1, 2)).get()
                          for t in (threshold, _OTHER_THRESHOLD))
    elif cuda_on_cpu.compiler() is not None:
        try:
            got, other = _spot_mass_on_cpu(map_expr, reduce_expr, identity, images)
        except cuda_on_cpu.NotOnCpu as err:  # CUDA's own (half, __fmul_rn...): a GPU compiles it
            return _not_checked("your ReductionKernel", as_text, str(err))
    else:
        return _not_checked("your ReductionKernel", as_text)
    want, spots = analysis.spot_mass(images), np.where(images > threshold, images, 0)
    if _spaceless(reduce_expr) in ("a*b", "b*a") and not close(got, want):
        raise NotYet("reduce_expr multiplies the partial sums (a product from 0 stays 0): it combines two partial "
                     "sums, a + b")
    if not close(got, want) and (cast := re.search(r"\(\s*(?:int|long|unsigned)\b[^)]*\)|__float2u?int", value)):
        raise NotYet(f"your spot masses are (nearly) 0: the cast {cast[0]} makes each value of V, in [0, 1], a whole "
                     "number, 0 but for 1 itself: map a spot to v itself, v > threshold ? v : 0")
    if close(other, got) and not close(other, analysis.spot_mass(images, _OTHER_THRESHOLD)) and not any(
            close(got, same) for same in (analysis.mass(images), spots.max(axis=(1, 2)))):  # the same either way
        raise NotYet(f"with threshold = {_OTHER_THRESHOLD} your kernel gives what it gives with {threshold:g}: use "
                     "threshold, the argument, not a number of your own (v > threshold ? v : 0)")
    if not close(got, want):
        if close(got, analysis.mass(images)):
            raise NotYet("that is the mass of every cell: map each cell to v where v > threshold, else to 0")
        if close(got, np.where(images >= threshold, images, 0).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("a cell exactly on the threshold is not above it: v > threshold, not >=")
        if close(got, (images > threshold).sum(axis=(1, 2)).astype(np.float64)):
            raise NotYet("that counts the spots: map a spot to its value v, not to 1 (v > threshold ? v : 0)")
        if close(got, threshold * (images > threshold).sum(axis=(1, 2)).astype(np.float64)):
            raise NotYet(_spot_given("threshold"))
        if close(got, spots.astype(np.float16).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("your spots are rounded to half precision (float16, about 3 digits) before the sum: map a spot "
                         "to v itself, a float, v > threshold ? v : 0")
        if close(got, spots.max(axis=(1, 2))):
            raise NotYet("that is the largest value: reduce_expr combines two partial sums, a + b")
        if close(got, np.where(images < threshold, images, 0).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("that is the mass of the background: the condition is inverted, v > threshold ? v : 0")
        if close(got, np.where(images > threshold, images, threshold).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("the dim cells give the threshold: a cell that is no spot adds nothing, v > threshold ? v : 0")
        if close(got, np.where(images > threshold, images - threshold, 0).sum(axis=(1, 2), dtype=np.float64)):
            raise NotYet("that sums each spot's excess over the threshold: map a spot to its value, v > threshold ? v : 0")
        offset = got - want
        if np.all(offset > 1e-3) and np.allclose(offset, offset[0], rtol=1e-3):
            raise NotYet(f"each image's sum is {offset[0]:.4g} too large: the identity starts every thread's "
                         "partial sum, so it must add nothing (0 for a sum)")
        raise NotYet(_first_hint(as_text) or first_difference(got, want, "your spot mass"))
    where = "" if cupy is not None else " (run on the CPU)"
    ok(f"spot mass kernel: right on {len(images)} random images{where}, cells on the threshold left out")
    return kernel


# --- Exercise: the privatised histogram kernel ----------------------------------------------------------

_CPU_BLOCKS, _CPU_THREADS = 4, 32


def _histograms_on_gpu(cupy, body: str, images: np.ndarray):
    """(the counts, the kernel) on the GPU, the kernel tried in a child process first."""
    trial_in_a_child("gs_course.lessons.kernel_check:_trial_histogram", body)
    with _gpu_errors_as_hints(cupy):
        kernel = analysis.histogram_kernel(cupy, body)
        checked = analysis.histogram_kernel(cupy, _POISON_DYNAMIC + body + _PAST_THE_END)
        _poison_shared_memory(cupy)  # a histogram never set to 0 then starts from what this leaves in shared memory
        # [the flag, the histograms, a word past them]: the student's writes past the last bin land after the flag
        flat = cupy.zeros(len(images) * analysis.BINS + 2, np.uint32)
        analysis.launch_histograms(checked, cupy.asarray(images), spare=1, counts=flat[1:])
        flat = flat.get().astype(np.int64)
    if flat[0] in (1, 2):
        raise NotYet(_TOP_EDGE if flat[0] == 2 else _ZEROED_PAST_THE_END)
    return flat[1:-1].reshape(len(images), analysis.BINS), kernel


def _trial_histogram(body: str) -> None:
    """The child's side of the histogram kernel's trial: one launch on a small batch, no checking."""
    import cupy

    try:
        kernel = analysis.histogram_kernel(cupy, body)
        analysis.launch_histograms(kernel, cupy.asarray(batch(images=2, grid=(37, 53))))
    except cupy.cuda.compiler.CompileException:
        return  # the notebook's process reports it, with the compiler's lines
    cupy.cuda.Device().synchronize()


def _histograms_on_cpu(body: str, images: np.ndarray) -> np.ndarray:
    """The kernel's counts on the CPU: _CPU_BLOCKS blocks of 32 threads an image, each thread of its own."""
    main = (f"    dynamic_shared_bytes = {analysis.BINS} * 4;  // launch_histograms' shared_mem, bins * 4\n"
            f"    launch(dim3({_CPU_BLOCKS}, {len(images)}), dim3({_CPU_THREADS}), true, false, [&] "
            f"{{ histograms(images, {images[0].size}, {analysis.BINS}, counts); }});")
    arrays = {"images": images, "counts": np.zeros((len(images), analysis.BINS), np.uint32)}
    kernel = analysis.HISTOGRAM_KERNEL.replace("BODY", body)
    return cuda_on_cpu.run_checked(kernel, arrays, main, [({}, {})], timeout=10)[0]["counts"].astype(np.int64)


def _thread_loops(images: np.ndarray, blocks: int, threads: int):
    """(the counts a thread loop over the cells other than (first; i += stride) gives, its hint):
    each thread of `blocks` x `threads` starting elsewhere or stepping otherwise, counted per cell
    (cell c is counted by every thread whose start s <= c has s = c modulo the step)."""
    cells = images[0].size
    block, thread = np.divmod(np.arange(blocks * threads), threads)
    stride, first = blocks * threads, block * threads + thread
    start_first = "start at first (blockIdx.x * blockDim.x + threadIdx.x), each thread its own cells"
    variants = (
        (np.zeros_like(first), stride, f"the loop over the cells starts at 0 for every thread: {start_first}"),
        (first, 1, "the loop over the cells steps by 1, so every thread counts all the cells after its first: step "
                   "by stride (gridDim.x * blockDim.x, all the image's threads)"),
        (np.zeros_like(first), 1, "every thread counts every cell (the loop starts at 0 and steps by 1): "
                                  "for (int i = first; i < cells; i += stride)"),
        (first, threads, "the loop over the cells steps by blockDim.x, one block's threads: step by stride "
                         "(gridDim.x * blockDim.x, all the image's threads)"),
        (block, blocks, f"the loop over the cells starts at blockIdx.x, the same for a block's threads: {start_first}"),
        (thread, stride, f"the loop over the cells starts at threadIdx.x, the same in every block: {start_first}"),
    )
    bins = np.minimum((images * np.float32(analysis.BINS)).astype(np.int64), analysis.BINS - 1).reshape(len(images), -1)
    for starts, step, hint in variants:
        began = np.bincount(starts[starts < cells], minlength=-(-cells // step) * step)
        visits = np.cumsum(began.reshape(-1, step), axis=0).ravel()[:cells]
        yield np.stack([np.bincount(b, weights=visits, minlength=analysis.BINS) for b in bins]).astype(np.int64), hint


_SHARED = re.compile(r"__shared__[^;]*?(\w+)\s*\[")  # the name of each array in shared memory


def _not_privatised(body: str) -> bool:
    """Whether an atomicAdd inside the loop over the cells adds to an array that is not __shared__."""
    shared = set(_SHARED.findall(body))
    for found in re.finditer(r"atomicAdd\s*\(\s*&?\s*\(?\s*(\w+)", body):
        if found[1] not in shared and any("cells" in header for header in _governing(body, found.start())):
            return True
    return False


def _phases(body: str) -> dict[str, list[int]]:
    """Where `body` sets the block's histogram to 0 ("zero": shared[...] = 0), counts into it ("count": an
    atomicAdd to a shared element), adds it to global memory ("flush": an atomicAdd of one); its barriers."""
    names = "|".join(_SHARED.findall(body)) or r"(?!)"
    return {"zero": [m.start() for m in re.finditer(rf"\b(?:{names})\s*\[[^\]]*\]\s*=\s*0", body)],
            "count": [m.start() for m in re.finditer(rf"atomicAdd\s*\(\s*&?\s*\(?\s*(?:{names})\b", body)],
            "flush": [m.start() for m in re.finditer(rf"atomicAdd\s*\([^,;]*,[^;]*\b(?:{names})\b", body)],
            "barrier": [m.start() for m in re.finditer(r"__syncthreads\s*\(", body)]}


def _missing_barrier(body: str) -> str | None:
    """The hint of a __syncthreads() missing between two phases of the block's histogram (_phases)."""
    at = _phases(body)
    for before, after, hint in (
            ("zero", "count", "no __syncthreads() between setting the block's histogram to 0 and counting into it: a thread "
                              "may count into a bin that another thread has not yet set to 0 (or sets to 0 afterwards). "
                              "Put __syncthreads() after the loop that sets the bins to 0"),
            ("count", "flush", "no __syncthreads() between counting into the block's histogram and adding it to global "
                               "memory: a thread may add a bin before the others have finished counting into it. Put "
                               "__syncthreads() after the loop over the cells")):
        if at[before] and at[after] and max(at[before]) < min(at[after]) and not any(
                max(at[before]) < b < min(at[after]) for b in at["barrier"]):
            return hint
    return None


_EVERY_BIN = "for (int b = threadIdx.x; b < bins; b += blockDim.x)"


def _not_looped(body: str, phase: str) -> bool:
    """Whether the block's histogram is set to 0 (or added to global memory) one bin a thread, with
    no loop over the bins: the bins from blockDim.x on are then left out."""
    return any(not any(re.search(r"\b(for|while|do)\b", h) for h in _governing(body, at)) for at in _phases(body)[phase])


def _flushed_by_every_thread(body: str) -> bool:
    """Whether every thread of a block adds the whole block's histogram to global memory: an addition
    of a shared element under no condition on the thread's own values, nor in a loop that starts there."""
    names = _thread_dependent(body)

    def own(header: str) -> set[str]:  # a loop's own variable, assigned in every thread, is not the thread's own
        loop = re.search(r"\bfor\s*\(\s*(?:[\w\s]+?\s)?(\w+)\s*=([^;]*);([^;]*)", header)
        return set(re.findall(r"\w+", loop[2] + loop[3])) - {loop[1]} if loop else set(re.findall(r"\w+", header))

    return any(not any(own(h) & names for h in _governing(body, at)) for at in _phases(body)["flush"])


def _bins_added_again(got: np.ndarray, want: np.ndarray, threads: int, body: str) -> str | None:
    """The hint where each bin reaches global memory a whole number of times, the same in every image and
    not everywhere the same (or blockDim.x times, every thread adding every bin): added by several threads."""
    times = got // np.maximum(want, 1)
    if not (np.array_equal(got, want * times) and (times == times[0]).all() and (times > 1).any()
            and (times <= threads).all()):  # more: counted on from what shared memory held
        return None
    if (times == threads).all() and _flushed_by_every_thread(body):
        return (f"each image counted {threads} times, once a thread of the block: every thread adds the whole block's "
                f"histogram to global memory. Share the bins among the threads, {_EVERY_BIN}, each adding its own once")
    if not (times == times[0, 0]).all():
        b = int(np.argmax(times[0] > 1))
        return (f"bins are added to global memory by several threads of a block (bin {b} {times[0, b]} times): each bin "
                f"must be added by one thread, {_EVERY_BIN}")
    return None


def _bins_named(bins: np.ndarray, threads: int) -> str:
    if bins.tolist() == list(range(threads, analysis.BINS)):
        return f"bins {threads} to {analysis.BINS - 1} (from blockDim.x = {threads} on)"
    if bins.size in (1, analysis.BINS) or bins.tolist() != list(range(bins[0], bins[-1] + 1)):
        return {1: f"bin {bins[0]}", analysis.BINS: "every bin"}.get(bins.size, f"{bins.size} bins")
    return f"bins {bins[0]} to {bins[-1]}"


def _bins_left_out(got: np.ndarray, want: np.ndarray, threads: int) -> str | None:
    """The hint where some bins, the same in every image, are never set to 0 (each counts on from what
    shared memory held: too many, on a GPU not the same number everywhere) or never added to global memory (0)."""
    wrong = got != want
    if not wrong.any() or not (wrong == wrong[0]).all():
        return None
    which = np.flatnonzero(wrong[0])
    if (got[:, which] == 0).all():
        return (f"{_bins_named(which, threads)}: never added to global memory (0 in every image's histogram). Add "
                f"every bin however many threads, {_EVERY_BIN} atomicAdd(&image_counts[b], block_counts[b])")
    if (got[:, which] > want[:, which]).all() and which.size < analysis.BINS:  # all of them: "more counts than cells"
        return (f"{_bins_named(which, threads)}: never set to 0, so they count on from what shared memory held: set "
                f"the block's histogram to 0, every bin however many threads, {_EVERY_BIN} block_counts[b] = 0")
    return None


def _added_arguments(body: str):
    """(where, the array added into, the value added) of each atomicAdd of `body`."""
    for found in re.finditer(r"\batomicAdd\s*\(", body):
        depth, parts, start = 0, [], found.end()
        for at in range(found.end(), len(body)):
            depth += {"(": 1, ")": -1}.get(body[at], 0)
            if depth < 0 or (body[at] == "," and depth == 0):
                parts.append(body[start:at].strip())
                start = at + 1
            if depth < 0:
                break
        if len(parts) == 2 and (target := re.match(r"[&(\s]*(\w+)", parts[0])):
            yield found.start(), target[1], " ".join(parts[1].split())


def _flushed_otherwise(body: str) -> str | None:
    """The hint where the block's histogram reaches global memory as something else than its counts: an
    atomicAdd into a global array, out of the loop over the cells, of a value that no shared bin gives
    (atomicAdd(&image_counts[b], 1u)), followed through the locals assigned from one."""
    shared = _SHARED.findall(body)
    holding, assigned = set(shared), re.findall(r"\b(\w+)\s*=(?!=)\s*([^;]*)", body)
    while more := {name for name, value in assigned if set(re.findall(r"\w+", value)) & holding} - holding:
        holding |= more
    for at, target, value in _added_arguments(body):
        if shared and target not in shared and not set(re.findall(r"\w+", value)) & holding and not any(
                "cells" in header for header in _governing(body, at)):
            return (f"your kernel adds {value} to each bin of the image's histogram, not the block's count of it: "
                    f"atomicAdd(&image_counts[b], {shared[0]}[b])")
    return None


def _thread_own_array(body: str) -> str | None:
    """The name of an array declared without __shared__ that an atomicAdd counts into: one per thread."""
    for statement in re.split(r"[;{}]", body):
        found = re.match(r"\s*(?:(?:const|unsigned|signed|volatile)\s+)*(?:int|float|long|unsigned)\s+(\w+)\s*\[", statement)
        if found and re.search(rf"atomicAdd\s*\(\s*&?\s*\(?\s*{found[1]}\b", body):
            return found[1]
    return None


_INTO_COUNTS = ("every block adds into counts[b], the first image's histogram: add into its own image's, "
                "image_counts[b] (counts + blockIdx.y * bins)")
#: A loop over the bins or the cells to <= their count (not <= bins - 1): one past the last.
_ONE_PAST = re.compile(r"(\w+)\s*<=\s*(bins|cells)\b(?!\s*-)")
#: The block's histogram added into counts, the first image's row, instead of image_counts (counts
#: indexed with the image's offset, counts[blockIdx.y * bins + b], is image_counts[b]).
_INTO_COUNTS_CODE = re.compile(r"&\s*counts\s*\[(?![^\]]*blockIdx\.y)")


def _one_past(body: str) -> str | None:
    """The hint for a loop over the bins or the cells to <= their count, one past the last."""
    if found := _ONE_PAST.search(body):
        index, count = found.groups()
        return (f"a loop runs to {index} <= {count}, one past the last {count[:-1]} ({count} - 1): "
                f"{index} < {count}")
    return None


_ZEROED_PAST_THE_END = ("your kernel sets an entry past the block's histogram to 0 (it has bins entries, bins * 4 "
                        "bytes at launch): its indices go from 0 to bins - 1, b < bins")
_TOP_EDGE = "the cells of value 1 are missing: (int)(v * bins) = bins is one past the last bin, min((int)(v * bins), bins - 1)"


def _fixed_size_shared(body: str) -> str | None:
    """The hint of a __shared__ array of a size written in the code: bins is the kernel's argument."""
    for statement in re.split(r"[;{}]", body):
        found = re.search(r"__shared__[^\[]*?(\w+)\s*\[\s*([^\]\s][^\]]*?)\s*\]", statement)
        if found and not re.search(r"\bextern\b", statement):
            return (f"{found[1]}[{found[2]}] has {found[2]} entries whatever bins is (with bins = 100 the counts run past "
                    f"it): bins is an argument, so declare extern __shared__ unsigned int {found[1]}[]; sized at launch "
                    "(bins * 4 bytes)")
    return None


def histogram_kernel(body: str):
    """`body` completes analysis.HISTOGRAM_KERNEL: each block counts its cells into a histogram in
    shared memory, then adds it to the image's histogram in global memory. Returns the kernel
    (None without a GPU)."""
    c_text(body, "your kernel's body")
    # The counts' type first: nvrtc refuses an 8-bit atomicAdd, and its line names no type
    if narrow := re.search(r"__shared__\s+((?:unsigned\s+)?(?:char|short)|u?int(?:8|16)_t)\s+(\w+)", body):
        raise NotYet(f"{narrow[2]} is {narrow[1]}: a block counts thousands of cells into a bin, past what it holds, "
                     f"and CUDA's atomicAdd has no 8- or 16-bit form: declare it unsigned int")
    if wide := re.search(r"extern\s+__shared__\s+((?:unsigned\s+)?long\s+long|u?int64_t|double|size_t)\s+(\w+)", body):
        raise NotYet(f"{wide[2]} is {wide[1]}, 8 bytes an entry: the launch gives the block bins * 4 bytes of shared "
                     "memory, one unsigned int a bin, so half its bins lie past the end: declare it unsigned int")
    compiles_first(analysis.HISTOGRAM_KERNEL, body, "histograms")  # before anything else is read from its code
    one_past, into_counts, flush = _one_past(body), _INTO_COUNTS_CODE.search(body) is not None, flush_mistake(body)
    as_text = [
        (one_past is not None, one_past or ""),
        (into_counts, _INTO_COUNTS),
        (flush is not None, flush or ""),  # a += not atomic gives the right counts where blocks run one at a time
        (_not_privatised(body), "not privatised: every thread adds each of its cells to global memory "
                                "(atomicAdd(&image_counts[bin], ...)), all the threads of the image contending for a "
                                "few bins. Count into the block's histogram in shared memory, atomicAdd(&block_counts"
                                "[bin], 1u), then add it to global memory once per bin"),
        ("__shared__" not in body, "no __shared__ array: count into a histogram of the block in shared memory "
                                   "(extern __shared__), then add it to global memory once"),
        (len(re.findall(r"\batomic(?:Add|Inc)\w*\s*\(", body)) < 2,  # atomicInc(p, 0xffffffffu) is a +1 too
         "two additions must be atomicAdd: a thread's +1 to the block's histogram, and the block's counts to the "
         "image's (other threads add at the same time)"),
        (body.count("__syncthreads") < 2, "__syncthreads() twice: after the block's histogram is set to 0, and "
                                          "before it is added to global memory"),
        (_not_looped(body, "zero") or _not_looped(body, "flush"),
         f"one bin a thread (block_counts[threadIdx.x]) leaves out the bins from blockDim.x on when there are more bins "
         f"than threads: loop over the bins, {_EVERY_BIN}"),
        (re.search(r"\]\s*=\s*0", body) is None, "set the block's histogram to 0 first (block_counts[b] = 0 for "
                                                 "each bin): shared memory starts with whatever an earlier kernel "
                                                 "left there"),
    ]
    if own := _thread_own_array(body):  # read from the code: each thread's counts are lost at its end
        raise NotYet(f"{own} is a thread's own array, one per thread: declare it __shared__ (extern __shared__ unsigned "
                     f"int {own}[];), one for the block's threads to count into")
    if barrier := _DIVERGENT if divergent_barrier(body) else _missing_barrier(body):  # read from the code
        raise NotYet(barrier)
    if fixed := _fixed_size_shared(body):
        raise NotYet(fixed)
    cupy, kernel, fault = _gpu(), None, None
    if cupy is not None:
        images = with_every_bin(batch(images=3, grid=(301, 419)))  # 64 blocks of 256 threads an image
        try:
            got, kernel = _histograms_on_gpu(cupy, body, images)
        except NotYet as err:  # a fault on the GPU says where, not what: the CPU's run below may name it
            if cuda_on_cpu.compiler() is None or "outside its arrays" not in str(err):
                raise
            fault, cupy = err, None
        else:
            blocks = min(analysis.HISTOGRAM_BLOCKS, -(-images[0].size // analysis.HISTOGRAM_THREADS))
            threads = analysis.HISTOGRAM_THREADS
    if cupy is None:
        if cuda_on_cpu.compiler() is None:
            return _not_checked("your histogram kernel", as_text)
        images = with_every_bin(batch(images=2, grid=(37, 53)))
        try:
            got, blocks, threads = _histograms_on_cpu(body, images), _CPU_BLOCKS, _CPU_THREADS
        except cuda_on_cpu.NotOnCpu as err:
            return _not_checked("your histogram kernel", as_text, str(err))
        except NotYet as err:
            if past := re.search(r"past its shared memory.*wrote (\d+) at", str(err)):
                # a count into bin `bins`, else a 0 there
                raise NotYet(_TOP_EDGE if past[1] != "0" else _ZEROED_PAST_THE_END) from None
            if one_past and "outside" in str(err):
                raise NotYet(one_past) from None
            raise
    want = analysis.histograms(images)
    cells = images[0].size
    if one_past and not np.array_equal(got, want):  # on a GPU, it lands in the next image's bins or cells
        raise NotYet(one_past)
    if not np.array_equal(got, want) and (same := same_cell_each_time(body) or _flushed_otherwise(body) or flush):
        raise NotYet(same)  # read from the code: image[first], a flush of 1u, or one by = or atomicExch
    if np.array_equal(got, want * blocks):
        raise NotYet(f"every block counted every cell ({blocks} blocks, each image counted {blocks} times): walk "
                     "the cells from first by stride (for (int i = first; i < cells; i += stride)), one thread each")
    if np.array_equal(got, 2 * want):
        raise NotYet("each cell is counted twice, into global memory and into the block's histogram: in the loop over "
                     "the cells count into shared memory only, then add the block's histogram to global memory once")
    if added_again := _bins_added_again(got, want, threads, body):
        raise NotYet(added_again)
    for counts, hint in _thread_loops(images, blocks, threads):
        if np.array_equal(got, counts):
            raise NotYet(hint)
    if left_out := _bins_left_out(got, want, threads):
        raise NotYet(left_out)
    tops = (images == 1).sum(axis=(1, 2))
    if np.array_equal(got, want - np.outer(tops, np.arange(analysis.BINS) == analysis.BINS - 1)) and tops.any():
        raise NotYet(_TOP_EDGE)
    if into_counts and not np.array_equal(got, want):
        raise NotYet(_INTO_COUNTS)
    if np.any(got.sum(axis=1) > cells):
        raise NotYet("more counts than cells: the block's histogram in shared memory starts with whatever was "
                     "there; set it to 0, then __syncthreads(), before counting")
    if np.any(got.sum(axis=1) < cells):
        raise NotYet("fewer counts than cells: increments were lost. Two threads adding to one bin at once keep "
                     "one +1 unless the addition is atomicAdd; and wait with __syncthreads() for every thread "
                     "of the block to have counted before adding the block's histogram to global memory")
    if not np.array_equal(got, want):
        raise NotYet("every cell counted once, but in the wrong bins: bin = min((int)(v * bins), bins - 1). "
                     + first_difference(got, want, "your histograms"))
    if fault is not None:
        raise fault
    if "__shared__" not in body:
        raise NotYet("right counts, with every thread adding to global memory: that is the first kernel. Count "
                     "into a histogram of the block in shared memory (extern __shared__), then add it once")
    if hint := _first_hint(as_text):  # a race can give the right counts by luck
        raise NotYet(hint)
    where = "" if cupy is not None else f" (run on the CPU, {_CPU_THREADS} threads a block)"
    ok(f"histogram kernel: right on {len(images)} images of {cells:,} cells{where}, privatised in shared memory")
    return kernel


#: Put ahead of the student's body in the kernel the checker runs: the block's dynamic shared memory
#: (where an `extern __shared__` histogram lives) filled with nonzero counts in that very kernel. The
#: poison kernel below left them only where the next kernel's blocks happened to land: under load
#: (the suite's 8 processes on the H200) a histogram never set to 0 found zeros and was ticked.
_POISON_DYNAMIC = """
    { extern __shared__ unsigned int checker_poison[];
      for (int b = threadIdx.x; b < bins; b += blockDim.x) checker_poison[b] = 7u;
      if (threadIdx.x == 0) checker_poison[bins] = 0xC0FFEEu;
      __syncthreads(); }
"""

#: Put after the student's body: the word past the histogram (launched with one spare, its value set
#: by _POISON_DYNAMIC) changed says the body wrote past its end, into the flag ahead of counts
#: (counts[-1]): 1 for a value below the mark (a 0 set there, counts after it), 2 above (counted into
#: without a 0, bin `bins`).
#: On the GPU a write just past a shared array lands in the block's shared memory, without a fault.
_PAST_THE_END = """
    { extern __shared__ unsigned int checker_end[];
      const unsigned int mark = checker_end[bins];
      if (mark != 0xC0FFEEu) counts[-1] = mark < 0xC0FFEEu ? 1u : 2u; }
"""


def _poison_shared_memory(cupy) -> None:
    """Fill every multiprocessor's shared memory with nonzero counts. Shared memory is not cleared between
    kernels: a kernel that never zeroes a histogram of static shared memory (`__shared__ unsigned int
    block_counts[64]`, out of _POISON_DYNAMIC's reach) shows it, where its blocks land on these."""
    kernel = cupy.RawKernel(r"""extern "C" __global__ void poison(int bins) {
        extern __shared__ unsigned int junk[];
        for (int b = threadIdx.x; b < bins; b += blockDim.x) junk[b] = 7u;
    }""", "poison")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    kernel((8 * sms,), (analysis.HISTOGRAM_THREADS,), (np.int32(analysis.BINS),), shared_mem=analysis.BINS * 4)
