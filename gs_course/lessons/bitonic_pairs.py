"""Which threads of a bitonic pair act on it, found by running each alone; and, where both do, what in
the code lets the second one through (a stray ';', an empty or one-statement guard, an else).

A step whose two threads both compare and swap their pair sorts right however they run: one after the
other, the second finds the pair in order; in lockstep, both write the same two values. So the sort's
values cannot tell it, and the exercise asks for one thread a pair (two writing the same addresses is
a race, and the work done twice). Nor can the text: `if (partner > i);` or `if (partner > i) {}` holds
the words of a guard that guards nothing. So the body runs in a wrapper kernel launched with every thread of the
values, each i its real index (a body that computes its own, blockIdx.x * blockDim.x + threadIdx.x,
gets the same), where only the threads marked in `acting` go past the first return: the lower threads
of a few pairs alone, then their upper threads alone, on pairs in order and out of order. A pair that
each of its threads changes, alone, has two threads acting on it. The wrapper is the course's kernel
with that return widened: the same on an NVIDIA GPU and on the CPU. (A body with a __syncthreads()
never gets here: barrier_mistake refuses it first, as after the course's own return.)
"""

from __future__ import annotations

import re

import numpy as np

from . import analysis, cuda_on_cpu
from .check_core import NotYet
from .c_statements import If, ifs, slip_hint

#: The course's bitonic kernel, where only the threads i with acting[i] run the body: i stays the thread's
#: own index, so a body that derives it again (or its partner) from blockIdx and threadIdx agrees with it.
PROBE_KERNEL = analysis.BITONIC_KERNEL.replace("void bitonic_step(float* values, int j, int k, int n)",
                                               "void bitonic_probe(float* values, int j, int k, int n, const int* acting)").replace(
    "if (i >= n) return;", "if (i >= n || !acting[i]) return;")
assert "!acting[i]" in PROBE_KERNEL and "int* acting" in PROBE_KERNEL, "analysis.BITONIC_KERNEL's first lines changed"

#: The step probed: j = 2 within k = 4 on 8 values, the pairs (0, 2) and (1, 3) ascending, (4, 6) and (5, 7) descending.
_J, _K, _N = 2, 4, 8
_LOWER = np.array([0, 1, 4, 5], np.int32)
_UPPER = _LOWER ^ _J
_ASCENDING = (_LOWER & _K) == 0


def _pairs(in_order: bool) -> np.ndarray:
    """The 8 values, distinct, each pair in the order its direction wants or the other."""
    values = np.zeros(_N, np.float32)
    small, large = np.float32([0.1, 0.2, 0.3, 0.4]), np.float32([0.9, 0.8, 0.7, 0.6])
    first_small = _ASCENDING == in_order
    values[_LOWER] = np.where(first_small, small, large)
    values[_UPPER] = np.where(first_small, large, small)
    return values


def _changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per pair (in _LOWER's order), whether either of its values changed."""
    return (after[_LOWER] != before[_LOWER]) | (after[_UPPER] != before[_UPPER])


def _acting(threads: np.ndarray) -> np.ndarray:
    """The `acting` mask of the probe kernel: 1 for `threads`, 0 for the others of the _N."""
    mask = np.zeros(_N, np.int32)
    mask[threads] = 1
    return mask


def _runs() -> list[tuple[np.ndarray, np.ndarray, bool]]:
    """(values, acting, lower) of each probe: each pair's order, each role alone."""
    return [(_pairs(order), _acting(threads), lower) for order in (True, False)
            for threads, lower in ((_LOWER, True), (_UPPER, False))]


def _results_on_cpu(body: str, barrier: bool) -> list[np.ndarray] | None:
    if cuda_on_cpu.compiler() is None:
        return None
    main = (f"    launch(dim3(1), dim3({_N}), {'true' if barrier else 'false'}, false, "
            f"[&] {{ bitonic_probe(values, {_J}, {_K}, {_N}, acting); }});")
    runs = [({"values": values, "acting": acting}, {}) for values, acting, _ in _runs()]
    return [run["values"] for run in cuda_on_cpu.run_checked(PROBE_KERNEL.replace("BODY", body),
                                                             {"values": _pairs(True), "acting": _acting(_LOWER)}, main, runs)]


def _results_on_gpu(body: str, cupy) -> list[np.ndarray]:
    kernel = cupy.RawKernel(PROBE_KERNEL.replace("BODY", body), "bitonic_probe")
    results = []
    for values, acting, _ in _runs():
        on_device = cupy.asarray(values)
        kernel((1,), (_N,), (on_device, np.int32(_J), np.int32(_K), np.int32(_N), cupy.asarray(acting)))
        results.append(on_device.get())
    return results


def both_threads_act(body: str, cupy=None, barrier: bool = False) -> bool:
    """Whether both threads of a pair compare and swap it: for some pair, its lower thread alone and its
    upper thread alone each change it (the pair in order or not). Run on the GPU where `cupy` is given,
    else on the CPU; False where it cannot run (no compiler) or fails (the sort's checks tell that)."""
    try:
        results = _results_on_gpu(body, cupy) if cupy is not None else _results_on_cpu(body, barrier)
    except (NotYet, RuntimeError, OSError):
        return False
    except Exception:  # CuPy's own errors (nvrtc, a launch): the sort ran this body, so the probe's alone
        if cupy is None:
            raise
        return False
    if results is None:
        return False
    acted = {True: np.zeros(_LOWER.size, bool), False: np.zeros(_LOWER.size, bool)}
    for (values, _, lower), after in zip(_runs(), results):
        acted[lower] |= _changed(values, after)
    return bool((acted[True] & acted[False]).any())


#: A condition that names the pair's threads: i and partner both, or the bit j of i.
_PAIR_WORDS = r"(?=.*\bpartner\b)(?=.*\bi\b)|\bi\s*&\s*j\b|\bj\s*&\s*i\b"


def _holds_for_both(condition: str) -> bool:
    """Whether `condition` (C of i, partner, j, k, n and numbers only) is true for both threads of a pair."""
    python = re.sub(r"!(?!=)", " not ", condition.replace("&&", " and ").replace("||", " or "))
    python = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", python))
    python = re.sub(r"(\d+)[uUlL]+\b", r"\1", python)
    if set(re.findall(r"[A-Za-z_]\w*", python)) - {"i", "partner", "j", "k", "n", "and", "or", "not", "True", "False"}:
        return False
    try:
        return all(bool(eval(python, {"__builtins__": {}}, {"i": int(i), "partner": int(i ^ _J), "j": _J, "k": _K, "n": _N}))
                   for i in (*_LOWER, *_UPPER))
    except Exception:  # not Python once translated (a cast, a ternary): not read
        return False


def pair_guard(body: str) -> If | None:
    """The first if on the pair's threads (partner > i, (i & j) == 0...), else None."""
    return next((found for found in ifs(body) if re.search(_PAIR_WORDS, found.condition)), None)


def guard_mistake(body: str) -> str:
    """What lets both threads of a pair act, read from the code (the probe has shown that they do): the
    guard on the pair's threads ended by a stray ';', true for both, with an else, guarding {} or less
    than the exchange; without one, that no if picks a thread."""
    if (guard := pair_guard(body)) is None:
        return "no if picks one thread of each pair"
    if slip := slip_hint(guard, "for both threads"):
        return slip
    if _holds_for_both(guard.condition):
        return f"your {guard.spelt} holds for both threads of a pair"
    if guard.rest.lstrip().startswith("else"):
        return f"the else of your {guard.spelt} lets the pair's other thread compare and swap it too: drop the else"
    if re.search(r"\bvalues\s*\[[^\]]*\]\s*=(?!=)", guard.rest):
        what = ("an empty block {}" if re.fullmatch(r"\{\s*\}", guard.guarded) else "a block without the exchange"
                if guard.guarded.startswith("{") else f"only its first statement ({' '.join(guard.guarded.split())[:60]})")
        return (f"your {guard.spelt} guards {what}, and the exchange after it runs for both threads. "
                "Put the whole exchange inside the if's braces, if (...) { ... }")
    return f"your {guard.spelt} lets both threads of a pair through"


def both_act_hint(body: str) -> str:
    """The line for both threads of a pair comparing and swapping it."""
    return (f"both threads of a pair compare and swap it (a race): {guard_mistake(body)}. Thread i and thread partner "
            "share a pair: only the one with partner > i may compare and swap")
