"""What a student's CUDA C says before it runs, read as text: the compilers' words for common
mistakes (g++ or clang++ on the CPU, nvrtc on the GPU) in one line each, and a loop that never
ends. Plain functions of strings: the checkers raise the hints they return."""

from __future__ import annotations

import re


#: The compilers' words (g++, clang++, nvrtc) for a name never declared, the name in the first group that matched.
UNDECLARED = r"‘(\w+)’ was not declared|identifier \"(\w+)\" is undefined|use of undeclared identifier '(\w+)'"
#: The compilers' words (g++ or clang++ on the CPU, nvrtc on the GPU) for common mistakes, and what each is.
_COMPILE_ERRORS = (
    (r"invalid types ‘[^’]*\[(?:float|double)\]’ for array subscript|array subscript is not an integer|"
     r"expression must have integral or unscoped enum type",
     "an index is a float: an array's index must be an integer, cast it, (int)(...)"),
    (r'more than one instance of overloaded function "(?:min|max)"',  # nvrtc: min(float, int), as for an index
     "an index is a float, or min or max of a float and an int (CUDA has no such min): cast it, (int)(...)"),
    (r"(invalid|unrecognized) preprocess(ing|or) directive",
     "a line starting with # is a preprocessor directive in C, not a comment: comments are // or /* */"),
    (r"invalid types .* for array subscript|pointer-to-object type|subscripted value is not an array",
     "a value indexed as if it were an array: in an ElementwiseKernel u, v, lu and lv are one cell's values "
     "(write u, not u[i]); in a RawKernel index the arrays (u[cell]), not the values read from them"),
    (UNDECLARED,
     "{name} is not defined: declare it before its use (a value: const float {name} = ...; a block's shared "
     "array: extern __shared__ unsigned int {name}[];) or use the kernel's own names"),
    (r"expected ‘;’|expected ';'|expected a \";\"|expected ‘,’ or ‘;’",
     "a ; is missing at the end of a statement"),
)


def _changes(name: str) -> str:
    """A regular expression for a C statement that changes `name` (++name, name += ..., name = ...)."""
    return rf"(\+\+|--)\s*\b{name}\b|\b{name}\s*(\+\+|--|[-+*/%|&^]?=(?!=))"


def endless_loop(code: str) -> str | None:
    """The loop of a kernel's C that never ends, read from the code: a for loop whose variable
    nothing changes, or a while loop whose condition's names nothing in it changes; else None."""
    for found in re.finditer(r"\bfor\s*\(\s*(?:[\w\s]+?\s)?(\w+)\s*=[^;]*;([^;]*);([^)]*)\)", code):
        name, condition = found[1], found[2].strip()
        if not re.search(_changes(name), found[3]) and not re.search(_changes(name), code[found.end():]):
            return f"the loop over {name} never ends: {name} is never incremented (for (...; {condition}; ++{name}))"
    for found in re.finditer(r"\bwhile\s*\(", code):
        depth, end = 1, found.end()
        while end < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        condition = code[found.end() : end - 1].strip()
        names = set(re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*\()", condition))
        if names and not any(re.search(_changes(n), code[end:]) for n in names):
            return f"the loop while ({condition}) never ends: nothing in it changes {', '.join(sorted(names))}"
    return None


def unpaired(code: str) -> str | None:
    """The hint for braces or parentheses of `code` (comments left out) that do not pair, else None:
    the compiler's error then names where it noticed, seldom where one is missing."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", code, flags=re.S)
    for opening, closing, what in (("{", "}", "braces"), ("(", ")", "parentheses")):
        opened, closed = code.count(opening), code.count(closing)
        if opened != closed:
            missing = closing if opened > closed else opening
            return (f"the {what} do not pair: {opened} {opening} and {closed} {closing} (a {missing} is missing, "
                    f"or one too many)")
    return None


#: A function's definition: its return type (qualifiers and extern "C" before it), name, parameters, then its brace.
_DEFINITION = re.compile(r'(?:extern\s*"C"\s*)?(?:(?:__global__|__device__|static|inline)\s+)*'
                         r'(?:void|float|double|int|unsigned(?:\s+int)?|bool)\s*\*?\s+(\w+)\s*\([^;{}]*\)\s*\{')
#: Words that a definition's pattern could take for a name: C's statements with parentheses.
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def whole_function(body: str) -> str | None:
    """The hint for a body that defines a function, signature and braces (the kernel printed by the notebook
    pasted with BODY filled in, or a helper of the student's own): a definition inside the kernel the
    checker puts the body in, which the compilers refuse in words of their own ("a function-definition is
    not allowed here", "expected a ;"), none of which says to give the body only. Else None."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", body, flags=re.S)
    found = next((d for d in _DEFINITION.finditer(code) if d[1] not in _KEYWORDS), None)
    if found is None and "__global__" not in code:
        return None
    name = f"{found[1]}(...) {{ ... }}" if found else "a __global__ function"
    return (f"your C defines a whole function, {name}: the checker puts your C inside the kernel's braces, where "
            "no function may be defined. Give only the body, the statements inside the braces (the checker writes the "
            "signature around them; a helper's lines go in the body itself)")


def compile_hint(errors: list[str], where: str = "") -> str:
    """One line for a compiler's error lines: the first error, and what it means where it is common;
    `where`, the student's line (`your_line`), after it."""
    lines = [re.sub(r"^.*?error:\s*", "", line).strip() for line in errors if line.strip()] or ["no message"]
    more = f" (and {len(lines) - 1} more error{'s' if len(lines) > 2 else ''})" if len(lines) > 1 else ""
    for pattern, meaning in _COMPILE_ERRORS:
        found = re.search(pattern, lines[0])
        if found:
            name = next((g for g in found.groups() if g), "")
            return f"your code does not compile: {meaning.format(name=name)} ({lines[0][:120]}){where}{more}"
    return f"your code does not compile: {lines[0][:200]}{where}{more}"


#: Where a compiler's error line puts the error in the student's code (`cuda_on_cpu.marked`): g++ and
#: clang++ write "your code:3:5: error:", nvrtc "your code(3): error:".
_AT_YOUR_LINE = re.compile(r"your code(?::(\d+):\d+:|\((\d+)\):)\s*(?:fatal\s+)?error")
_MISSING_SEMICOLON = r"expected ‘;’|expected ';'|expected a \";\"|expected ‘,’ or ‘;’"


def your_line(errors: list[str], body: str) -> str:
    """", line N of your C: <its text>" for the first of a compiler's `errors` where it lies in the
    student's `body` (lines counted in the string, from 1); "" where it lies elsewhere. A missing ';'
    that a compiler places on the next statement (nvrtc does) is put at the end of the line that lacks it."""
    first = next((line for line in errors if "error" in line), "")
    at = _AT_YOUR_LINE.search(first)
    lines = body.split("\n")
    if not at or not 1 <= int(at[1] or at[2]) <= len(lines):
        return ""
    number = int(at[1] or at[2])

    def code(n: int) -> str:
        return re.sub(r"//.*", "", lines[n - 1]).strip()

    if re.search(_MISSING_SEMICOLON, first) and (not code(number) or code(number)[-1] in ";{}"):
        earlier = next((n for n in range(number - 1, 0, -1) if code(n)), None)
        if earlier and code(earlier)[-1] not in ";{}" and not code(earlier).startswith("#"):
            number = earlier
    return f", line {number} of your C: {' '.join(lines[number - 1].split())[:100]}"
