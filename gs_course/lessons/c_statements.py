"""The if statements of a student's C, read as text: each if's condition and the one statement it
guards. C's two classic slips hide there, and a kernel's wrong values do not show them: `if (c);`
guards the empty statement ';' (the block after it runs always), and an if without braces guards
its first statement only (the lines indented under it with that one run always). The checkers use
these to name a mistake their runs have shown, never to decide one.
"""

from __future__ import annotations

import dataclasses
import re

from .kernel_indices import without_comments


@dataclasses.dataclass(frozen=True)
class If:
    """One `if (condition) statement`: the condition (spaces made single), the statement it guards
    as written (a block with its braces, ';' for the empty one), and the code after that statement."""

    condition: str
    guarded: str
    rest: str
    indent: int  # the if's line's indentation
    guarded_indent: int | None  # its statement's, where that starts a line of its own (else None)

    @property
    def spelt(self) -> str:
        return f"if ({self.condition})"


def _closing(code: str, start: int, opening: str, closing: str) -> int:
    """The index just past the bracket that closes the one at `start` (len(code) where none does)."""
    depth = 0
    for at in range(start, len(code)):
        depth += (code[at] == opening) - (code[at] == closing)
        if depth == 0:
            return at + 1
    return len(code)


def _statement_end(code: str, start: int) -> int:
    """The index just past the statement at `start`: its ';' outside brackets, or its block; an if
    with its else."""
    depth, at = 0, start
    while at < len(code):
        if code[at] == "{" and depth == 0:
            end = _closing(code, at, "{", "}")
            break
        depth += (code[at] in "([") - (code[at] in ")]")
        if code[at] == ";" and depth == 0:
            end = at + 1
            break
        at += 1
    else:
        return len(code)
    if re.match(r"\s*if\b", code[start:]) and re.match(r"\s*else\b", code[end:]):
        otherwise = end + re.match(r"\s*else\b\s*", code[end:]).end()
        return _statement_end(code, otherwise)
    return end


def ifs(body: str) -> list[If]:
    """Every if of `body` (comments left out), nested ones too, in the order they are written."""
    code, found = without_comments(body), []
    for start in re.finditer(r"\bif\s*\(", code):
        end = _closing(code, start.end() - 1, "(", ")")
        at = end + len(code[end:]) - len(code[end:].lstrip())
        stop = _statement_end(code, at)
        own_line = "\n" in code[end:at]
        found.append(If(" ".join(code[start.end():end - 1].split()), code[at:stop].strip(), code[stop:],
                        _indent(code, start.start()), _indent(code, at) if own_line else None))
    return found


def _unbraced(found: If) -> bool:
    """Whether `found` has no braces, its statement on a line of its own under the if, and a line after
    that indented as much: written as if guarded too, but run always."""
    if found.guarded.startswith("{") or found.guarded_indent is None or found.guarded_indent <= found.indent:
        return False
    following = re.match(r"[ \t]*\n\s*?([ \t]*)\S", found.rest)
    return bool(following) and len(following[1].expandtabs(4)) == found.guarded_indent


def _indent(code: str, at: int) -> int:
    """The indentation (tabs as 4 spaces) of the line holding code[at]."""
    start = code.rfind("\n", 0, at) + 1
    return len(re.match(r"[ \t]*", code[start:])[0].expandtabs(4))


def slip_hint(found: If, runs: str = "always") -> str | None:
    """The line naming `found`'s slip, if it has one: a stray ';', or no braces above a line indented
    under it. `runs`: whom what the if was meant to guard runs for ("always", "for both threads")."""
    if found.guarded == ";":
        return (f"your {found.spelt}; ends at its ';', an empty statement, which is all it guards: the block after it "
                f"runs {runs}. Drop the ';'")
    if _unbraced(found):
        first = " ".join(found.guarded.split())[:60]
        return (f"your {found.spelt} has no braces, so it guards only its first statement ({first}): the line after it, "
                f"indented as if under it too, runs {runs}. Put them in braces, {found.spelt} {{ ... }}")
    return None


def first_slip(body: str) -> str | None:
    """The line naming the first if of `body` with a slip (see slip_hint), else None."""
    return next((hint for found in ifs(body) if (hint := slip_hint(found))), None)
