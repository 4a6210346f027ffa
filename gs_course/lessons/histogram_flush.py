"""How a histogram kernel's counts reach the image's histogram in global memory, read from its C:
the mistakes that lose counts however the barriers stand.

The blocks of an image add into the same bins at the same time, so only atomicAdd keeps every
block's counts. A plain store (`image_counts[b] = block_counts[b]`) leaves the last block's; a `+=`
that is not atomic keeps one of two blocks adding at once (on the CPU, whose blocks run one after
another, it even gives the right counts); an atomic that does not add (atomicExch, atomicMax...)
does something else with the count. The checker's values show counts lost; the generic line for
that blames a missing atomicAdd or __syncthreads(), which such a kernel may well have elsewhere, so
the hint names the statement.
"""

from __future__ import annotations

import re

from .kernel_indices import without_comments

#: CUDA's atomics that do not add, and what each does with the count it is given.
_NOT_ADDING = {"atomicExch": "puts the value in place of the count there", "atomicMax": "keeps the larger of the two",
               "atomicMin": "keeps the smaller of the two", "atomicSub": "subtracts the value",
               "atomicOr": "ORs the value's bits in", "atomicAnd": "ANDs the value's bits in",
               "atomicXor": "XORs the value's bits in"}

_ADD = "atomicAdd(&image_counts[b], block_counts[b])"


def _not_adding(code: str) -> str | None:
    """The hint where a count goes through an atomic that does not add (atomicExch(&image_counts[b], ...),
    atomicMax...)."""
    if found := re.search(rf"\b({'|'.join(_NOT_ADDING)})(?:_block|_system)?\s*\(([^;]*)\)\s*;", code):
        arguments = " ".join(found[2].split())
        return (f"your kernel counts with {found[1]}({arguments}), which {_NOT_ADDING[found[1]]}: only atomicAdd adds a "
                f"count to what is there, atomicAdd({arguments})")
    return None


def _global_names(code: str) -> list[str]:
    """The names of the global histograms: the kernel's counts and image_counts, and the pointers the
    code makes from them (unsigned int* row = counts + blockIdx.y * bins;)."""
    names = ["image_counts", "counts"]
    for name, value in re.findall(r"\*\s*(?:const\s+)?(\w+)\s*=\s*([^;]*)", code):
        if re.search(rf"\b({'|'.join(names)})\b", value) and name not in names:
            names.append(name)
    return names


def _written_plainly(code: str) -> str | None:
    """The hint where a global histogram's entry is written without an atomic: stored with =, or
    added with +=, ++ or x = x + ... (blocks adding at once keep one's counts)."""
    names = "|".join(_global_names(code))
    entry = rf"(?:\b(?:{names})\s*\[[^\]]*\]|\*\s*\(\s*(?:{names})\s*\+[^)]*\))"
    for found in re.finditer(rf"(?:\+\+|--)\s*{entry}|{entry}\s*(\+\+|--|[-+|]?=(?!=))\s*([^;]*);", code):
        statement = " ".join(found[0].split())
        operator, value = found[1] or "++", found[2] or ""
        target = re.escape(" ".join(re.match(entry, found[0].lstrip("+-").lstrip())[0].split()))
        if operator == "=" and not re.search(target.replace(r"\ ", r"\s*"), value):
            return (f"your kernel stores the block's counts into global memory with = ({statement}): each block of "
                    f"the image overwrites what the others put there, so only one block's counts stay. Add them, {_ADD}")
        return (f"your kernel adds to global memory without an atomic ({statement}): two blocks adding to one bin "
                f"at once keep one's counts. Add with {_ADD}")
    return None


def flush_mistake(body: str) -> str | None:
    """The hint where the counts reach global memory otherwise than by atomicAdd, else None."""
    code = without_comments(body)
    return _not_adding(code) or _written_plainly(code)
