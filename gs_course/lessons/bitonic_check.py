"""The checker of tutorial 4's bitonic sort step, as `kernel_check`'s kernels are checked: by its
values, on an NVIDIA GPU tried first in a separate process, else compiled and run on the CPU with
the launches in both orders (a race shows), else "not checked"; the direction read from the code.
"""

from __future__ import annotations

import re

import numpy as np

from . import analysis, cuda_on_cpu
from .check_core import NotYet, ok
from .kernel_runs import _gpu_errors_as_hints, c_text, compiles_first, trial_in_a_child
from .kernel_barriers import barrier_mistake
from .bitonic_pairs import both_act_hint, both_threads_act, pair_guard
from .c_statements import first_slip
from .kernel_check import _gpu, _not_checked, _spaceless


# --- Exercise: a bitonic sort kernel ----------------------------------------------------------------------

_BITONIC_MAIN = r"""
    const int n = N;
    const unsigned int threads = n < 256 ? n : 256;
    for (int k = 2; k <= n; k *= 2)
        for (int j = k / 2; j > 0; j /= 2)
            launch(dim3(n / threads), dim3(threads), OWN, reverse, [&] { bitonic_step(values, j, k, n); });
"""


def _padded(values: np.ndarray) -> np.ndarray:
    n = 1 << max(0, values.size - 1).bit_length()
    return np.concatenate([values, np.full(n - values.size, np.inf, np.float32)])


def _trial_bitonic(body: str) -> None:
    """The child's side of the bitonic kernel's trial: one sort of a small array, no checking."""
    import cupy

    try:
        kernel = analysis.bitonic_kernel(cupy, body)
        analysis.bitonic_sort(kernel, cupy.asarray(np.random.default_rng().random(1000, dtype=np.float32)))
    except cupy.cuda.compiler.CompileException:
        return
    cupy.cuda.Device().synchronize()


def _sorted_on_cpu(body: str, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`values` sorted by the kernel on the CPU, its threads in order and in reverse order; where it has a
    __syncthreads(), once, its threads of their own meeting there (the two results then the same)."""
    padded, barrier = _padded(values), _has_barrier(body)
    main = _BITONIC_MAIN.replace("OWN", "true" if barrier else "false").replace("N", str(padded.size))
    kernel = analysis.BITONIC_KERNEL.replace("BODY", body)
    orders = [({}, {"reverse": False})] + ([] if barrier else [({}, {"reverse": True})])
    runs = cuda_on_cpu.run_checked(kernel, {"values": padded}, main, orders)
    return runs[0]["values"][:values.size], runs[-1]["values"][:values.size]


def _has_barrier(body: str) -> bool:
    return re.search(r"__syncthreads\s*\(", body) is not None


def _int_temporaries(body: str) -> str | None:
    """The hint for values read into integer temporaries, which truncate them to 0 (they are in [0, 1))."""
    if re.search(r"\b(?:int|unsigned|long|short|char)(?:\s+int)?\s+\w+\s*=\s*values\s*\[[^\]]*\]\s*[,;]", body):
        return "the values are float: int temporaries truncate them (int a = values[i]); declare them float"
    return None


_INTEGER_TYPE = r"(?:(?:un)?signed\s+)?(?:int|long(?:\s+long)?|short|char|unsigned|u?int(?:8|16|32|64)_t|size_t)"


def _integer_casts(body: str) -> str | None:
    """The hint for values cast to an integer type ((int)a > (int)b): the cast drops the fraction,
    so values that differ only in it tie and are never swapped."""
    names = [n for n in dict.fromkeys(re.findall(r"\b(\w+)\s*=\s*values\s*\[", body)) if n != "values"]
    value = "|".join([*(rf"{n}\b" for n in names), r"values\s*\[[^\]]*\]"])
    cast = re.search(rf"\(\s*{_INTEGER_TYPE}\s*\)\s*(?:{value}|\(\s*(?:{value})\s*\))|"
                     rf"static_cast\s*<\s*{_INTEGER_TYPE}\s*>\s*\(\s*(?:{value})\s*\)|"
                     rf"(?<![\w)])\b{_INTEGER_TYPE}\s*\(\s*(?:{value})\s*\)|__float2u?int_r[dnuz]\s*\(\s*(?:{value})\s*\)", body)
    if cast is None:
        return None
    return (f"your exchange casts the values to an integer ({' '.join(cast[0].split())}): the cast drops the fraction, "
            "so values that differ only in it (here all of them, in [0, 1): each becomes 0) tie, and a tied pair is never "
            "swapped. Compare the floats themselves, (a > b) == ascending")


def _indices_compared(code: str) -> str | None:
    """The hint for an exchange decided by comparing i with partner, no values compared (code without spaces)."""
    indices = r"\((?:i[<>]=?partner|partner[<>]=?i)\)"
    compared = [pair for pair in re.findall(r"([\w\]\[]+)[<>]=?([\w\]\[]+)", code)
                if not {*pair} <= {"i", "partner", "n", "size", "k", "j"}]
    if re.search(rf"{indices}==|==\s*{indices}", code) and not compared:
        return ("the exchange compares the indices i and partner, not the values: compare the two values read, "
                "values[i] and values[partner]")
    return None


#: The step's names that are no index of a value, and what each is: values[j] for values[partner] reads the same
#: element for every thread of a step, and its exchange then writes there from every thread at once.
_NOT_INDICES = {
    "j": "j is the distance between a pair's two elements (a power of two, the same for every thread of the step)",
    "k": "k is the length of the sequences being merged (the same for every thread of the step)",
    "n": "n is the number of values, one past the last index",
    "threadIdx.x": "threadIdx.x is the thread's number within its block only (its index among the values is i)",
    "blockIdx.x": "blockIdx.x is the block's number (the thread's index among the values is i)",
}


def _wrong_index(body: str) -> str | None:
    """The hint for values indexed by one of the step's other names (values[j] where values[partner] belongs),
    read from the code (comments and spaces removed): the race or the lost values it causes would otherwise be
    named instead."""
    code = _spaceless(re.sub(r"//[^\n]*|/\*.*?\*/", "", body, flags=re.S))
    found = re.search(r"values\[(j|k|n|threadIdx\.x|blockIdx\.x)\]", code)
    if found is None:
        return None
    return (f"your exchange uses values[{found[1]}], but {_NOT_INDICES[found[1]]}, not the partner's index: the pair is "
            "values[i] and values[partner] (partner = i ^ j, given)")


def _lost_hint(body: str) -> str:
    """Why an exchange run one thread after another lost a value, where the code shows it."""
    code = _spaceless(body)
    if truncated := _int_temporaries(body):
        return truncated
    if hint := _indices_compared(code):
        return hint
    if not ("values[i]=" in code and "values[partner]=" in code):
        under_one = re.search(r"if\([^{;]*?(partner>=?i|i<partner|\(i&j\)==0|\(j&i\)==0|!\((i&j|j&i)\))", code)
        return ("values were lost: an exchange writes both values[i] and values[partner]" if under_one
                else "a race: each thread writes values[i] only, while the partner's thread reads values[i] too "
                     "(before or after the write). Let one thread of each pair (partner > i) read both values and write both")
    return ("values were lost or duplicated by the exchange itself: read both values first (a = values[i], "
            "b = values[partner]), then write values[i] = b, values[partner] = a")


def _bitonic_hint(code: str) -> str:
    """The usual cause of a wrong sort, where the code shows it (the values have shown that it is wrong)."""
    if hint := _indices_compared(code):
        return hint
    if not ("values[i]=" in code and "values[partner]=" in code):
        return "an exchange writes both values[i] and values[partner]"
    if not _compares_values(code):
        return ("your exchange swaps every pair, in order or not: compare the two values first and swap only a pair "
                "out of order, if ((a > b) == ascending)")
    if not re.search(r"&k\b|\bk&", code):
        return "the direction of a pair comes from i & k: ascending where it is 0"
    return "thread i and thread partner share a pair: only the one with partner > i may compare and swap"


def _compares_values(code: str) -> bool:
    """Whether the code (spaces removed) compares anything but indices (partner > i, i < n, the bit of
    i & k): an exchange that no comparison of the values guards swaps every pair."""
    rest = re.sub(r"partner>=?i|i<=?partner|\b(i|partner)>=?n\b|\b(i|partner)<n\b|\([ijk]&[ijk]\)[=!]=0", "", code)
    return bool(re.search(r"[<>]|\bf?(min|max)f?\(", rest))


def _bitonic_network(values: np.ndarray, ascending, pair=lambda i, j, k: i ^ j) -> np.ndarray:
    """`values` (a power of two of them) after the course's steps with the direction of each pair
    `ascending(i, j, k)` (the right one: (i & k) == 0) and each element's partner `pair(i, j, k)`
    (the right one: i ^ j; one past the values pairs with none), every pair exchanged by its lower thread."""
    v, i = values.copy(), np.arange(values.size)
    k = 2
    while k <= v.size:
        j = k // 2
        while j > 0:
            partner = pair(i, j, k)
            a, b = v, v[np.minimum(partner, v.size - 1)]
            swap = (partner > i) & (partner < v.size) & ((a > b) == ascending(i, j, k))
            low, high = i[swap], partner[swap]
            v[low], v[high] = v[high], v[low].copy()
            j //= 2
        k *= 2
    return v


def _lost(values: np.ndarray, got: np.ndarray) -> bool:
    """Whether `got` holds a value that is not among `values` or more often than there: an exchange
    that lost one (the +inf padding sorted into the first values is misplaced, not lost)."""
    kept, times = np.unique(got[np.isfinite(got)], return_counts=True)
    known, available = np.unique(values, return_counts=True)
    at = np.minimum(np.searchsorted(known, kept), known.size - 1)
    return bool((known[at] != kept).any() or (times > available[at]).any())


_DIRECTION = "the direction of a pair comes from bit k of i, ascending where (i & k) == 0"

#: Directions other than (i & k) == 0: how each is written (spaces removed), and what it is.
_WRONG_DIRECTIONS = (
    (lambda i, j, k: (i & (k - 1)) == 0, r"k-1", f"{_DIRECTION}: i & (k - 1) tests the bits below k"),
    (lambda i, j, k: (i & j) == 0, r"i&j\b|\bj&i", f"{_DIRECTION}: i & j is the bit that picks the pair, not its direction"),
    (lambda i, j, k: (i & (k // 2)) == 0, r"k/2|k>>1", f"{_DIRECTION}: i & (k / 2) tests the bit below it"),
    (lambda i, j, k: (i & (2 * k)) == 0, r"2\*k|k\*2|k<<1", f"{_DIRECTION}: i & (2 * k) tests the bit above it"),
    (lambda i, j, k: (i & k) == 1, r"\((i&k|k&i)\)==1", f"{_DIRECTION}: i & k is 0 or k, never 1 once k > 1"),
    (lambda i, j, k: np.ones(i.shape, bool), r"ascending=true|ascending=1\b",
     f"every pair is put in ascending order, the direction ignored (every subsequence sorted the same way): {_DIRECTION}, "
     "so that the halves merged next are one ascending, one descending"),
)


def _wrong_direction(code: str, values: np.ndarray, got: np.ndarray) -> str | None:
    """The hint of the wrong direction whose sort gives `got`; where several give it, the one the
    code (spaces removed) is written with, else the last (the direction ignored, where it is one:
    under partner > i, (i & j) == 0 is always true)."""
    found = [(written, hint) for direction, written, hint in _WRONG_DIRECTIONS
             if np.array_equal(got, _bitonic_network(_padded(values), direction)[:values.size])]
    return next((hint for written, hint in found if re.search(written, code)), found[-1][1] if found else None)


#: Why a bitonic step needs no __syncthreads(): no thread reads what another of its block writes in it.
_NO_BARRIER = "A step needs none: one thread exchanges each pair, and the next step is the next launch"


def bitonic_step(body: str):
    """`body` completes analysis.BITONIC_KERNEL: one compare-and-exchange step. Checked by sorting
    random arrays of several sizes (one not a power of two) with analysis.bitonic_sort; returns
    `sort(values)` (None without a GPU)."""
    c_text(body, "your exchange's body")
    compiles_first(analysis.BITONIC_KERNEL, body, "bitonic_step")  # before anything is read from its code
    code = _spaceless(body)
    if barrier := barrier_mistake(analysis.BITONIC_KERNEL, body, "past the values (if (i >= n) return;)", _NO_BARRIER):
        raise NotYet(barrier)  # read from the code: on a GPU it may hang, or seem to work
    rng = np.random.default_rng()
    cupy = _gpu()
    if cupy is not None:
        trial_in_a_child("gs_course.lessons.bitonic_check:_trial_bitonic", body)
        with _gpu_errors_as_hints(cupy):
            kernel = analysis.bitonic_kernel(cupy, body)
            sizes = (1000, 4096, 2**16 + 3)
            sorts = [(values, analysis.bitonic_sort(kernel, cupy.asarray(values)).get(), None)
                     for values in (rng.random(size, dtype=np.float32) for size in sizes)]
    elif cuda_on_cpu.compiler() is not None:
        kernel, sizes = None, (1000, 37)
        try:
            sorts = [(values, *_sorted_on_cpu(body, values)) for values in (rng.random(s, dtype=np.float32) for s in sizes)]
        except cuda_on_cpu.NotOnCpu as err:
            return _not_checked("your bitonic sort kernel", why=str(err))
    else:
        return _not_checked("your bitonic sort kernel")
    for values, got, reversed_order in sorts:
        want = np.sort(values)
        if np.array_equal(got, want) and (reversed_order is None or np.array_equal(reversed_order, want)):
            continue
        if hint := _integer_casts(body) or _wrong_index(body):
            raise NotYet(hint)
        padded_descending = np.sort(_padded(values))[::-1]
        descending = np.array_equal(got, want[::-1]) or np.array_equal(got, padded_descending[:values.size])
        # Both threads acting sorts the wrong way round (the upper one undoes the exchange); a guard that
        # guards nothing (a stray ';', an empty block) gives other results where the rest is wrong too.
        own_index = not re.search(r"values\[(i|partner)\]", code)  # its own names: the text's hints cannot read it
        if (descending or pair_guard(body) or own_index) and both_threads_act(body, cupy, _has_barrier(body)):
            raise NotYet(("sorted in descending order: " if descending else "") + both_act_hint(body))
        if slip := first_slip(body):
            raise NotYet(slip)
        if descending:
            if re.search(r"partner<i\b|\bi>partner|partner<=i\b|\bi>=partner", code):
                raise NotYet("sorted in descending order: the thread that acts is the upper one of its pair "
                             "(partner < i), so its values[i] is the pair's second value, not its first. Let the "
                             "lower thread act, if (partner > i)")
            raise NotYet("sorted in descending order: a pair goes in ascending order where (i & k) == 0")
        if np.array_equal(got, _bitonic_network(_padded(values), lambda i, j, k: (i & k) == 0,
                                                lambda i, j, k: i ^ k)[:values.size]):
            raise NotYet("each thread's partner is i ^ j, given as partner: i ^ k pairs it across the whole sequence "
                         "being merged at every step")
        direction = _wrong_direction(code, values, got)
        if direction:
            raise NotYet(direction)
        if _lost(values, got):
            if reversed_order is not None:  # threads one after another: only the exchange itself loses a value
                raise NotYet(_lost_hint(body))
            raise NotYet(_int_temporaries(body) or "values were lost or duplicated: " + _bitonic_hint(code))
        if reversed_order is not None and not np.array_equal(got, reversed_order):
            raise NotYet("the result depends on the order the threads run in (a race): " + _bitonic_hint(code))
        first = int(np.argmax(got[1:] < got[:-1]))
        raise NotYet(f"not sorted ({values.size:,} values): {got[first]} comes before {got[first + 1]} at index "
                     f"{first}; {_bitonic_hint(code)}")
    if both_threads_act(body, cupy, _has_barrier(body)):  # sorted all the same: the second finds its pair in order
        raise NotYet(both_act_hint(body))
    where = "" if cupy is not None else (" (run on the CPU, threads of their own)" if _has_barrier(body) else
                                         " (run on the CPU, the threads in both orders)")
    ok(f"bitonic sort: {', '.join(f'{s:,}' for s in sizes)} random values sorted as numpy.sort sorts them{where}")
    return (lambda values: analysis.bitonic_sort(kernel, values)) if kernel is not None else None
