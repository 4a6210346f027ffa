"""Which threads of a block reach a student's `__syncthreads()`, read from the C of a kernel's body
and of the template around it (the values cannot show it: a barrier that some threads never reach
may hang, or seem to work). Every thread of a block must reach each barrier: one under a condition
on a thread's own index, in a loop of a thread's own bounds, or after the template has returned the
threads outside the array (`if (i >= n) return;`) is refused, with the mistake named.
"""

from __future__ import annotations

import re

from .kernel_indices import without_comments

#: The template's names that differ from thread to thread.
_THREAD_NAMES = {"threadIdx", "first", "i", "partner"}


def _thread_dependent(body: str) -> set[str]:
    """The names whose values differ between the threads of a block: the template's, and every
    variable assigned from one of them (followed until nothing changes)."""
    names = set(_THREAD_NAMES)
    assignments = re.findall(r"\b(\w+)\s*(?:\[[^\]]*\])?\s*[-+*/|&^]?=(?!=)\s*([^;]*)", body)
    for name, header in re.findall(r"for\s*\(\s*(?:[\w\s]+?\s)?(\w+)\s*=\s*([^;]*);", body):
        assignments.append((name, header))
    while True:
        more = {name for name, value in assignments if set(re.findall(r"\w+", value)) & names} - names
        if not more:
            return names
        names |= more


def _governing(body: str, at: int) -> list[str]:
    """The headers (if, for, while, else, and the start of the statement itself) that decide
    whether the statement at position `at` of `body` runs."""
    headers, stack, start = [], [], 0
    for position, char in enumerate(body[:at]):
        if char == "{":
            stack.append(body[start:position])
            start = position + 1
        elif char == "}":
            if stack:
                stack.pop()
            start = position + 1
        elif char == ";" and not _inside_parentheses(body[start:position]):
            start = position + 1
    headers = [h for h in stack if re.search(r"\b(if|for|while|else|do)\b", h)]
    statement = body[start:at]
    if re.search(r"\b(if|for|while|else)\b", statement):
        headers.append(statement)
    return headers


def _inside_parentheses(text: str) -> bool:
    return text.count("(") > text.count(")")


def divergent_barrier(body: str) -> bool:
    """Whether some `__syncthreads()` of `body` may be reached by some threads of a block and not
    others: under a condition (or in a loop) on a thread's own values, or after a `return` of some
    threads. CUDA leaves that undefined (it may hang, or seem to work). Read without the comments: a
    `__syncthreads()`, a `return` or a brace a comment names is no statement."""
    body = without_comments(body)
    names = _thread_dependent(body)
    barriers = [m.start() for m in re.finditer(r"__syncthreads\s*\(", body)]
    for at in barriers:
        for header in _governing(body, at):
            if re.search(r"\belse\b", header) or set(re.findall(r"\w+", header)) & names:
                return True
        earlier_returns = [m.start() for m in re.finditer(r"\breturn\b", body[:at])]
        if any(_governing(body, r) for r in earlier_returns):
            return True
    return False


_DIVERGENT = ("a __syncthreads() that only some threads of the block reach (under a condition, or in a loop, on a "
              "thread's own index): every thread of the block must reach each one. Put it outside the if or loop")


def barrier_mistake(template: str, body: str, returned: str, needed: str) -> str | None:
    """The hint for a __syncthreads() of `body` that not every thread of a block reaches: under a condition
    or in a loop of its own, else after the early return of `template` (the kernel, BODY where the body
    goes) of the threads `returned` (which, and the line that does it); `needed`: why the kernel needs none."""
    if divergent_barrier(body):
        return _DIVERGENT
    if divergent_barrier(template.replace("BODY", body)):
        return (f"a __syncthreads() after the kernel's first lines have returned the threads {returned}: those "
                f"threads never reach it, and CUDA leaves that undefined. {needed}")
    return None
