"""A kernel's shared memory read without the barrier its stores need: the threads of a block store a
tile (tu[threadIdx.y][threadIdx.x] = u[cell]), then read cells of it that other threads store, with no
__syncthreads() between. Read from the C as written: a race, whatever values a run happens to give
(a thread may read a cell before the thread that stores it has run), so it is told before any run.
"""

from __future__ import annotations

import re

from .kernel_indices import without_comments

_STORE = r"\b{name}\s*((?:\[[^\[\]]*\]\s*)+)(?:[-+*/]?=(?!=))"
_READ = r"\b{name}\s*((?:\[[^\[\]]*\]\s*)+)(?![-+*/]?=(?!=)|\s*\[)"


def _spelt(index: str) -> str:
    return "".join(index.split())


def unsynchronised_tile(body: str, why: str) -> str | None:
    """The hint where a `__shared__` array of `body` is read, at another index than the thread stores, after
    a store into it with no __syncthreads() between the two; `why`: what the kernel should do instead."""
    code = without_comments(body)
    for name in re.findall(r"__shared__\s+[\w\s]*?\b(\w+)\s*\[", code):
        store = re.search(_STORE.format(name=re.escape(name)), code)
        if store is None:
            continue
        for read in re.finditer(_READ.format(name=re.escape(name)), code[store.end():]):
            between = code[store.end():store.end() + read.start()]
            if "__syncthreads" in between:
                break
            if _spelt(read[1]) != _spelt(store[1]):
                return (f"your kernel reads its shared array {name}{_spelt(read[1])}, cells that other threads of the "
                        f"block store ({name}{_spelt(store[1])} = ...), with no __syncthreads() between the stores and "
                        "the reads: a thread may read a cell before its thread has stored it (a race, whose values "
                        f"depend on the threads' order). {why}")
    return None
