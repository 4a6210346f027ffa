"""The usual mistakes in the CuPy tutorial's step kernels (the ElementwiseKernel of the update and
the RawKernel of a whole step), named from the kernel's values and from its C.

Where a kernel's step is off the reference, `step_mistake` recomputes the step as each usual
mistake would have it (a window bound off by one, the row stride wrong or the index transposed,
the window sum for the Laplacian, an integer accumulator, V's update from the new U...) and names
the one whose values the kernel gave, the way `check_slips` names a slip of the formula; then it
reads the C for the mistakes whose values vary with how they are written (an integer variable
that holds a float, an output read instead of an input). `declared_again` reads the C before it
is compiled: a local with the name of a kernel parameter hides it (or does not compile), whatever
its value.
"""

from __future__ import annotations

import re

import numpy as np

from .c_code import unpaired, whole_function
from .kernel_indices import (block_left_out, border_unwritten, reads_own_cell, without_comments,
                             written_elsewhere as written_at_another_index)
from ..model import laplacian as reference_laplacian, reference_step, updated, window_counts

#: The names a kernel is given, which a local must not take: (kind, name) -> what it is.
PARAMETERS = {
    "elementwise": {**dict.fromkeys(("u", "v", "lu", "lv", "du", "dv", "feed", "kill", "dt"), "input"),
                    **dict.fromkeys(("u_next", "v_next"), "output"), "i": "index"},
    "raw": {**dict.fromkeys(("u", "v", "rows", "cols", "du", "dv", "feed", "kill", "dt"), "input"),
            **dict.fromkeys(("u_next", "v_next"), "output"), **dict.fromkeys(("row", "col", "cell"), "index")},
}
_FLOATS = {"u", "v", "lu", "lv", "du", "dv", "feed", "kill", "dt", "u_next", "v_next"}
_INTEGER_WORDS = {"int", "unsigned", "signed", "long", "short", "size_t", "int32_t", "int64_t", "uint32_t", "uint64_t"}
_TYPE_WORDS = _INTEGER_WORDS | {"float", "double", "half", "auto", "bool", "char"}
_QUALIFIERS = {"const", "static", "register", "volatile"}
_DECLARATION = re.compile(r"(?:^|(?<=[;{}(]))\s*((?:(?:const|static|register|volatile)\s+)*)((?:(?:%s)\b\s*)+)[*&\s]*"
                          r"(?=[A-Za-z_])" % "|".join(sorted(_TYPE_WORDS)))


def _declarations(code: str):
    """(type words, name, initialiser, where) of each variable `code` declares, for-loop headers included."""
    for found in _DECLARATION.finditer(code):
        words = found[1].split() + found[2].split()  # the qualifiers, then the type
        depth, start, at = 0, found.end(), found.end()
        while at < len(code):
            char = code[at]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char in ",;" and depth == 0:
                yield from _declarator(words, code[start:at], start)
                if char == ";":
                    break
                start = at + 1
            at += 1
        else:
            yield from _declarator(words, code[start:at], start)


def _declarator(words, text: str, where: int):
    named = re.match(r"\s*[*&\s]*([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(?:=(.*))?$", text, re.S)
    if named:
        yield words, named[1], (named[2] or "").strip(), where


def declared_again(body: str, kind: str) -> str | None:
    """The hint for a local declared with the name of one of the kernel's parameters (it hides the
    parameter, or does not compile), else None. A body that is a whole kernel (its parameters declared
    in its own signature) is left to the compile step, which says to give the body only."""
    if whole_function(body):
        return None
    names = PARAMETERS[kind]
    for words, name, initialiser, _ in _declarations(without_comments(body)):
        if name not in names:
            continue
        declared = f"`{' '.join(words)} {name}`"
        if names[name] == "output":
            return (f"{declared} declares a new local that hides the output {name}, so the output is never written: "
                    f"assign it without a type ({name} = ...)")
        if names[name] == "index":
            return (f"{declared} declares {name} again: " + (
                "the kernel's first lines compute row, col and cell; use them as they are" if kind == "raw" else
                "CuPy runs the body once for each cell, i its index, and u, v, lu and lv are that cell's values "
                "(write u, not u[i])"))
        if re.search(rf"\b{name}\b", initialiser):
            return (f"{declared} declares a new {name} that hides the kernel's input {name}, and is initialised from "
                    f"itself (a value never set): give your variable another name")
        return (f"{declared} declares a new local with the name of the kernel's input {name}, which it hides: give "
                "your variable another name")
    return None


def uninitialised(body: str) -> str | None:
    """The hint for a local declared without a value and then added to (or read) before anything is
    assigned to it: it starts with whatever its memory held, which may be 0 by luck, so its values
    cannot show it."""
    code = without_comments(body)
    unset = []
    for words, name, initialiser, where in _declarations(code):
        if initialiser or name in unset or re.match(rf"\s*[*&\s]*{name}\s*\[", code[where:]):
            continue  # an array, or a value given
        end = code.find(";", where)
        first = re.search(rf"\b{name}\b(?!\s*=(?!=))", code[end:])
        assigned = re.search(rf"\b{name}\s*=(?!=)", code[end:])
        if first and (assigned is None or first.start() < assigned.start()):
            unset.append(name)
    if not unset:
        return None
    several = len(unset) > 1
    return (f"{' and '.join(unset)} {'are' if several else 'is'} never given a value before {'they are' if several else 'it is'} "
            f"used: a local starts with whatever its memory held; start {'them' if several else 'it'} at 0 "
            f"({', '.join(f'{name} = 0.0f' for name in unset)} where declared)")


# --- What the compiler's errors mean, read with the C ---------------------------------------------------

#: The compilers' words (g++, clang++ on the CPU; nvrtc on the GPU) for each mistake named below.
_POWER_WORDS = (r"invalid type argument of unary .\*.|indirection requires pointer operand|"
                r"operand of \"\*\" must be a pointer")
_XOR_WORDS = r"operator\^|invalid operands to binary (expression|\^)|must have integral or (unscoped )?enum type"
_READ_ONLY_WORDS = (r"(assignment|increment|decrement) of read-only|read-only variable is not assignable|"
                    r"cannot assign to (variable|return value)|const-qualified type|expression must be a modifiable lvalue")


def _written_input(code: str, kind: str) -> str | None:
    """The first input of the kernel that `code` assigns to (or increments)."""
    inputs = "|".join(name for name, what in PARAMETERS[kind].items() if what == "input")
    found = re.search(rf"(?:\+\+|--)\s*\b({inputs})\b|\b({inputs})\s*(?:\[[^\]]*\]\s*)?(?:[-+*/%|&^]?=(?!=)|\+\+|--)", code)
    return (found[1] or found[2]) if found else None


def compile_mistake(body: str, kind: str, errors: list[str]) -> str | None:
    """The mistake of a kernel whose body does not compile, named from its C and the compiler's
    error lines (`errors`), where it is one of the usual ones; else None (the compiler's own line)."""
    code, said = without_comments(body), "\n".join(errors)
    if hint := unpaired(code):
        return hint
    if re.search(_POWER_WORDS, said) and re.search(r"[\w)\]]\s*\*\*\s*[\w(.]", code) and not re.search(
            rf"\b(?:{'|'.join(sorted(_TYPE_WORDS))})\s*\*\*", code):
        return "C has no ** (Python's power): write v * v (or powf(v, 2.0f))"
    if re.search(_XOR_WORDS, said) and re.search(r"\^\s*\d", code):
        return "^ is C's exclusive or, not a power: write v * v (or powf(v, 2.0f))"
    if re.search(_READ_ONLY_WORDS, said) and (name := _written_input(code, kind)):
        if kind == "raw" and name in ("u", "v"):
            return (f"{name} is an input (const float*), which the kernel cannot write: write the output, "
                    f"{name}_next[cell]")
        output = f"write the output {name}_next, or " if name in ("u", "v") else ""
        return f"{name} is an input, which the kernel cannot change: {output}keep the new value in a local of another name"
    return None


# --- What the C shows, once the values are known to be wrong -------------------------------------------

def _without_subscripts(text: str) -> str:
    while re.search(r"\[[^\[\]]*\]", text):
        text = re.sub(r"\[[^\[\]]*\]", "#", text)
    return text


def _loop_skips(code: str) -> str | None:
    """The hint for a window's loop that steps by more than one (c += 2): it skips neighbours."""
    found = re.search(r"for\s*\([^;]*;[^;]*;\s*(\w+)\s*\+=\s*([2-9]|\d\d+)\s*\)", code)
    return found and (f"your loop over {found[1]} steps by {found[2]} ({found[1]} += {found[2]}): it skips neighbours "
                      f"of the window. Step by one, ++{found[1]}, from one before the cell to one after it")


def _expression_from(code: str, start: int) -> str:
    """The expression that starts at `start`: up to its `;`, or to the `)` that closes a for's
    header around it (c += 2) in for (...; c += 2) lu += ...;)."""
    depth = 0
    for at in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[at], 0)
        if code[at] == ";" or depth < 0:
            return code[start:at]
    return code[start:]


def _integer_holding_a_float(code: str) -> str | None:
    """The hint for a variable of an integer type given a float value (an accumulator of int summing cells)."""
    declared = list(_declarations(code))
    integer = [set(words) - _QUALIFIERS <= _INTEGER_WORDS for words, *_ in declared]
    floats = set(_FLOATS) | {name for words, name, _, _ in declared if set(words) & {"float", "double", "half", "auto"}}
    integers = {name: " ".join(w for w in words if w not in _QUALIFIERS)
                for (words, name, _, _), whole in zip(declared, integer) if whole}
    values = [(name, initialiser) for words, name, initialiser, _ in declared if name in integers]
    values += [(found[1], _expression_from(code, found.end()))
               for found in re.finditer(r"\b(\w+)\s*(?:[-+*/]?=)(?!=)\s*", code)]
    wrong = []
    for name, value in values:
        value = _without_subscripts(value)
        if name in integers and not re.match(r"\s*\(\s*(int|long|unsigned)", value) and \
                set(re.findall(r"[A-Za-z_]\w*", value)) & floats and name not in wrong:
            wrong.append(name)
    if not wrong:
        return None
    names = " and ".join(wrong)
    verb = "are" if len(wrong) > 1 else "is"
    return (f"{names} {verb} {integers[wrong[0]]}: a float added to or stored in {'them' if len(wrong) > 1 else 'it'} "
            f"is truncated to a whole number; declare {'them' if len(wrong) > 1 else 'it'} float")


def _input_written_through_a_cast(code: str) -> str | None:
    """The hint for a kernel that writes its input u or v through a pointer whose const it cast away
    ((float*)u, const_cast): C lets it, and the values show only other threads' neighbours off."""
    cast = r"(?:\(\s*float\s*\*\s*\)|const_cast\s*<\s*float\s*\*\s*>\s*\()\s*({name})\b"
    for name in ("u", "v"):
        aliases = [m[1] for m in re.finditer(r"(\w+)\s*=\s*" + cast.format(name=name), code)]
        written = [a for a in aliases if re.search(rf"\b{a}\s*\[[^\]]*\]\s*[-+*/]?=(?!=)", code)]
        if written or re.search(r"\(\s*" + cast.format(name=name) + r"\s*\)?\s*\)\s*\[[^\]]*\]\s*[-+*/]?=(?!=)", code):
            through = f" (through {written[0]}, its const cast away)" if written else " (its const cast away)"
            return (f"your kernel writes its input {name}{through}: the other threads read {name} as their "
                    f"neighbours, in any order, so some read new values. Write only the outputs, {name}_next[cell]")
    return None


def _output_read(code: str, kind: str) -> str | None:
    """The hint for a kernel that reads an output (u_next, v_next) where it should read an input."""
    for name, other in (("u_next", "v_next"), ("v_next", "u_next")):
        written = None
        for found in re.finditer(rf"\b{name}\b", code):
            after = code[found.end():]
            index = re.match(r"\s*\[([^\]]*)\]", after)
            rest = after[index.end():] if index else after
            if re.match(r"\s*=(?!=)", rest):
                written = found.start() if written is None else written
                continue
            array = name[0]
            if kind == "raw" and index and index[1].strip() != "cell":
                return (f"your kernel reads {name}[{index[1].strip()}], an output: other threads write it, in any "
                        f"order, and it holds no {array.upper()} yet; read the input {array} "
                        f"({array}[{index[1].strip()}])")
            if written is None or written > found.start():
                return (f"your kernel reads {name} before writing it: an output holds what its array held before, "
                        f"not {array.upper()}; read the input {array}")
            statement = code[code.rfind(";", 0, found.start()) + 1:]
            if re.match(rf"\s*{other}\b", statement):
                return _new_value_hint(name)
    return None


def _new_value_hint(name: str) -> str:
    mine, theirs = ("V", "U") if name == "u_next" else ("U", "V")
    return (f"{mine}'s update uses the new {theirs} ({name}): compute both updates from the old u and v (the same "
            f"uvv = u * v * v for both), then write them")


# --- The kernel's step as each mistake has it ----------------------------------------------------------

_OUTSIDE = object()


def _bound(low_shift=0, low=0, high_shift=0, high=0, exclusive=False, other=False):
    """The window along one axis of cell i of n (m along the other axis): from max(i - 1 + low_shift,
    low) to min(i + 1 + high_shift, n - 1 + high), m for n where `other`, less one where `exclusive`."""
    return (lambda i, n, m: np.maximum(i - 1 + low_shift, low),
            lambda i, n, m: np.minimum(i + 1 + high_shift, (m if other else n) - 1 + high) - exclusive)


_RIGHT = _bound()

#: The bounds of one axis that are off by one: (bound, what is wrong, with {k} the window's variable,
#: {i} the cell's and {n} the count along the axis).
_OFF_BY_ONE = (
    (_bound(exclusive=True), "{k} < min({i} + 1, {n} - 1) stops one short: the window's last {k} is min({i} + 1, {n} - 1), "
                             "included (<=)"),
    (_bound(high=1), "min({i} + 1, {n}) is outside the grid at the border: the last {k} is min({i} + 1, {n} - 1)"),
    (_bound(high=-1), "min({i} + 1, {n} - 2) leaves out the last one: the window ends at min({i} + 1, {n} - 1)"),
    (_bound(low=1), "max({i} - 1, 1) leaves out the first one: the window starts at max({i} - 1, 0)"),
    (_bound(low=-1), "max({i} - 1, -1) is outside the grid at the border: the window starts at max({i} - 1, 0)"),
    (_bound(low_shift=1), "the window starts at {i}: it starts one before, max({i} - 1, 0)"),
    (_bound(high_shift=-1), "the window ends at {i}: it ends one after, min({i} + 1, {n} - 1)"),
)
#: The bound of one axis that counts the other's cells: where the other axis is longer, its values
#: are those of min({i} + 1, {n}) (_UNCLAMPED), and the C tells them apart (_other_count).
_OTHER_COUNT = (_bound(other=True), "the window's {a} bound uses {m} where it is {n}: the last {k} is min({i} + 1, {n} - 1)")
_UNCLAMPED = _OFF_BY_ONE[1][0]
_AXES = ({"k": "r", "i": "row", "n": "rows", "m": "cols", "a": "row"},
         {"k": "c", "i": "col", "n": "cols", "m": "rows", "a": "column"})
_ONE_CELL = "lu += u[r * cols + c] - uc"


def _index(i, j, rows, cols):
    return i * cols + j


#: Wrong flat indices of the neighbour (r, c) of cell (row, col): (index, hint).
_WRONG_INDICES = (
    (lambda r, c, row, col, rows, cols: r * rows + c,
     "a row is cols cells long: the cell (r, c) is u[r * cols + c], not r * rows + c"),
    (lambda r, c, row, col, rows, cols: c * rows + r,
     "your index is transposed (c * rows + r): the cell (r, c) is u[r * cols + c], row r times the row's length plus c"),
    (lambda r, c, row, col, rows, cols: c * cols + r,
     "your index is transposed (c * cols + r): the cell (r, c) is u[r * cols + c], row r times the row's length plus c"),
    (lambda r, c, row, col, rows, cols: row * cols + col + (r - row) * rows + (c - col),
     "a row is cols cells long: the neighbour (r, c) is cell + (r - row) * cols + (c - col), not (r - row) * rows"),
    (lambda r, c, row, col, rows, cols: row * cols + col + (c - col) * cols + (r - row),
     "your index is transposed: the neighbour (r, c) is cell + (r - row) * cols + (c - col), the row's offset "
     "times the row's length plus the column's"),
    (lambda r, c, row, col, rows, cols: row * cols + c,
     "your index uses row where the window's r belongs: the neighbour is u[r * cols + c]"),
    (lambda r, c, row, col, rows, cols: r * cols + col,
     "your index uses col where the window's c belongs: the neighbour is u[r * cols + c]"),
)


def _add(total, term):
    return total + term


def _add_as_int(total, term):
    """`int lu; lu += x - uc;` in C: the float sum truncated to a whole number at each addition."""
    return np.trunc(total.astype(np.float32) + term.astype(np.float32)).astype(np.float64)


def _windowed(a, bounds=(_RIGHT, _RIGHT), index=None, centres=None, accumulate=_add, column_major=False):
    """The Laplacian a kernel computes with these window bounds, index and accumulation, the centre
    taken out for each cell of the window (centres None: the right one) or `centres` times in all;
    and where it read outside the array."""
    rows, cols = a.shape
    flat = a.ravel()
    row, col = np.indices(a.shape)
    (row_low, row_high), (col_low, col_high) = bounds
    total, outside = np.zeros(a.shape), np.zeros(a.shape, bool)
    offsets = [(dr, dc) for dr in range(-2, 3) for dc in range(-2, 3)]
    for dr, dc in sorted(offsets, key=lambda o: o[::-1]) if column_major else offsets:
        r, c = row + dr, col + dc
        used = ((r >= row_low(row, rows, cols)) & (r <= row_high(row, rows, cols)) & (c >= col_low(col, cols, rows))
                & (c <= col_high(col, cols, rows)))
        k = (index or (lambda r, c, *_: _index(r, c, rows, cols)))(r, c, row, col, rows, cols)
        read_outside = used & ((k < 0) | (k >= flat.size))
        outside |= read_outside
        value = flat[np.clip(k, 0, flat.size - 1)] - (a if centres is None else 0)
        total = np.where(used & ~read_outside, accumulate(total, value), total)
    if centres is not None:
        total = total - centres * a
    return total, outside


def _raw_laplacians():
    """(the Laplacian as a wrong kernel computes it: a -> (values, read outside), its hint, the axes whose
    window ends unclamped at min(i + 1, n): `_other_count` reads which bound the C has there)."""
    for bounds, hint in (*_OFF_BY_ONE, _OTHER_COUNT):
        for axes, both in (((bounds, _RIGHT), False), ((_RIGHT, bounds), False), ((bounds, bounds), True)):
            named = [hint.format(**_AXES[axis]) for axis in range(2) if axes[axis] is bounds]
            unclamped = tuple(axis for axis in range(2) if axes[axis] is _UNCLAMPED)
            if bounds is _OTHER_COUNT[0]:
                yield (lambda a, b=axes: _windowed(a, b)), "; ".join(named), unclamped
                continue
            yield (lambda a, b=axes: _windowed(a, b)), ("the window's bounds are off by one" + (
                " (rows and columns): " if both else ": ") + named[0]), unclamped
    for index, hint in _WRONG_INDICES:
        yield (lambda a, i=index: _windowed(a, index=i)), hint, ()
    yield (lambda a: _windowed(a, centres=0)), (f"lu and lv are window sums, not Laplacians: add (neighbour - centre) "
                                                f"for each cell of the window, {_ONE_CELL}"), ()
    yield (lambda a: _windowed(a, centres=1)), (
        f"lu and lv are the sums of the neighbours (the centre taken out once): take uc out for each cell of the "
        f"window, {_ONE_CELL}"), ()
    yield (lambda a: _windowed(a, centres=8)), (f"the centre is taken out 8 times, whatever the window: take uc out for "
                                                f"each cell of the window (9 inside, fewer at the border), {_ONE_CELL}"), ()
    yield (lambda a: (lambda total, outside: (total - a, outside))(*_windowed(a))), (
        "the window leaves the centre out of its sums, yet takes uc out for each of its cells, the centre's too: "
        "each cell is off by its own value. Sum the whole window, the centre included"), ()
    for column_major in (False, True):
        yield (lambda a, m=column_major: _windowed(a, accumulate=_add_as_int, column_major=m)), _TRUNCATED, ()


#: Sums truncated at each += (in [0, 1] a difference truncates to 0): an integer accumulator, or a
#: window that adds the centre minus itself, whose sums are 0 too: `_truncated_or_centre` tells which.
_TRUNCATED = ("the window's sums are truncated to whole numbers at each +=: an accumulator of an integer type (int lu?); "
              "declare them float (float lu = 0.0f)")


def _truncated_or_centre(code: str, shape) -> str:
    """The hint for window sums that come out 0: the C adds a value read at the cell itself, however its
    index is spelt (lu += u[cell] - uc, u[row * cols + col]), an integer accumulator truncated them, or
    else (float accumulators) each += adds a difference that is 0."""
    if own := reads_own_cell(code, *shape):
        return (f"lu and lv add up to 0: each += reads the cell itself ({own}), whatever the window's r and c, so it "
                "adds uc - uc. Read the window's cell, u[r * cols + c], an index made of the loop's r and c")
    accumulators = set(re.findall(r"\b(\w+)\s*\+=", code))
    if any(re.search(rf"\b(?:float|double)\b[^;]*\b{name}\b", code) for name in accumulators) and not any(
            re.search(rf"\b(?:int|long|short|char)\b[^;]*\b{name}\b", code) for name in accumulators):
        return ("lu and lv add up to 0 at every cell: each += adds 0, the neighbour read being the centre's value. "
                f"Add each window cell's own value minus the centre's, {_ONE_CELL}, with r and c the loop's")
    return _TRUNCATED


def _other_count(code: str, axes) -> str | None:
    """The hint for a window's bound, along one of `axes`, that the C gives with the other axis's count
    (c <= min(col + 1, rows - 1), c < rows): where that axis is the longer, its values are those of an
    unclamped window, min(col + 1, cols)."""
    for axis in axes:
        names = _AXES[axis]
        if re.search(r"\b{k}\s*(?:<=?|>=?)\s*(?:min\s*\(\s*{i}\s*\+\s*\d+\s*,\s*)?{m}\b".format(**names), code):
            return _OTHER_COUNT[1].format(**names)
    return None


#: Wrong flat indices of the cell (row, col) itself, in a grid of rows x cols: (index, as written).
_WRONG_CELLS = (
    (lambda row, col, rows, cols: col * rows + row, "col * rows + row"),
    (lambda row, col, rows, cols: col * cols + row, "col * cols + row"),
    (lambda row, col, rows, cols: row * rows + col, "row * rows + col"),
)
_CELL = "cell (row, col) is row * cols + col, the kernel's cell"
#: The neighbours next to a cell: (flat offset in a grid of `cols` columns, as written after cell).
_SHIFTS = ((lambda cols: 1, "+ 1"), (lambda cols: -1, "- 1"), (lambda cols: cols, "+ cols"), (lambda cols: -cols, "- cols"))


def _read(a, k):
    """a's cells at flat indices k, and where k is outside a."""
    outside = (k < 0) | (k >= a.size)
    return a.ravel()[np.clip(k, 0, a.size - 1)], outside


def _own_values_elsewhere(u, v, p):
    """(the step, where it read outside, the hint) where a kernel reads the cell's own u and v at
    another index: the centre of the window and of the update (uc, vc) at a wrong index of the cell;
    the reaction term's u or v a neighbour's (v[cell + 1]); a Laplacian summing the other array."""
    rows, cols = u.shape
    row, col = np.indices(u.shape)
    counts = window_counts(rows, cols, np.float64)
    sums = [reference_laplacian(a) + counts * a for a in (u, v)]

    def stepped(uc, vc, lu, lv, uvv, fed=None, decaying=None):
        """The step; `fed` the u of feed * (1 - u), `decaying` the v of (feed + kill) * v (else uc, vc)."""
        return (uc + p.dt * (p.du * lu - uvv + p.feed * (1 - (uc if fed is None else fed))),
                vc + p.dt * (p.dv * lv + uvv - (p.feed + p.kill) * (vc if decaying is None else decaying)))

    shifted = tuple((lambda row, col, rows, cols, s=shift: row * cols + col + s(cols), f"cell {written}")
                    for shift, written in _SHIFTS)
    for index, written in _WRONG_CELLS + shifted:
        (us, outside), (vs, _) = _read(u, index(row, col, rows, cols)), _read(v, index(row, col, rows, cols))
        for uc, vc, what in ((us, vs, "u and v"), (us, v, "u"), (u, vs, "v")):
            yield (stepped(uc, vc, sums[0] - counts * uc, sums[1] - counts * vc, uc * vc * vc), outside,
                   f"your kernel reads the cell's own {what} at {written}, another cell: the {_CELL}")
    lu, lv = reference_laplacian(u), reference_laplacian(v)
    for shift, written in _SHIFTS:
        written = f"cell {written}"
        (us, outside), (vs, _) = _read(u, row * cols + col + shift(cols)), _read(v, row * cols + col + shift(cols))
        for uvv, what in ((u * vs * vs, "v"), (u * v * vs, "v"), (us * v * v, "u"), (us * vs * vs, "u and v")):
            yield (stepped(u, v, lu, lv, uvv), outside,
                   f"uvv reads {what} at {written}, a neighbour, where the cell's own value is meant: uvv = uc * vc * vc")
        yield (stepped(u, v, lu, lv, u * v * v, fed=us), outside,
               f"feed * (1 - u) reads u at {written}, a neighbour, where the cell's own value is meant: feed * (1.0f - uc)")
        yield (stepped(u, v, lu, lv, u * v * v, decaying=vs), outside,
               f"(feed + kill) * v reads v at {written}, a neighbour, where the cell's own value is meant: (feed + kill) * vc")
    mixed_u = ((sums[1] - counts * u, "lu sums v's neighbours"), (sums[0] - counts * v, "lu takes vc from u's neighbours"))
    mixed_v = ((sums[0] - counts * v, "lv sums u's neighbours"), (sums[1] - counts * u, "lv takes uc from v's neighbours"))
    nowhere = np.zeros(u.shape, bool)
    for wrong_u, said in mixed_u:
        yield stepped(u, v, wrong_u, lv, u * v * v), nowhere, f"{said}: lu += u[r * cols + c] - uc"
    for wrong_v, said in mixed_v:
        yield stepped(u, v, lu, wrong_v, u * v * v), nowhere, f"{said}: lv += v[r * cols + c] - vc"
    yield (stepped(u, v, mixed_u[0][0], mixed_v[0][0], u * v * v), nowhere,
           "lu sums v's neighbours and lv u's: lu += u[r * cols + c] - uc, lv += v[r * cols + c] - vc")


def _written_elsewhere(got, want) -> str | None:
    """The hint where the kernel wrote each cell's values to another cell (u_next[col * rows + row]): of
    one output or both, the cells that several threads write left out (their order is the GPU's)."""
    rows, cols = want[0].shape
    row, col = np.indices((rows, cols))
    for index, written in _WRONG_CELLS:
        k = index(row, col, rows, cols).ravel()
        if (k < 0).any() or (k >= rows * cols).any():
            continue  # a write outside the array: told as such before
        once = np.bincount(k, minlength=rows * cols)[k] == 1
        known = np.zeros(rows * cols, bool)
        known[k[once]] = True
        known[np.bincount(k, minlength=rows * cols) == 0] = True  # never written: NaN, as the model has it
        if known.mean() < 0.25:
            continue
        moved, right = [], 0
        for name, g, w in zip(("u_next", "v_next"), got, want):
            model = np.full(rows * cols, np.nan)
            model[k] = w.ravel()
            if np.allclose(g.ravel()[known], model[known], rtol=1e-5, atol=1e-4, equal_nan=True):
                moved.append(name)
            else:
                right += np.allclose(g, w, rtol=0, atol=1e-5)
        if moved and len(moved) + right == 2:
            return (f"your kernel writes {' and '.join(f'{name}[{written}]' for name in moved)}, another cell than its "
                    f"own: write {' and '.join(f'{name}[cell]' for name in moved)} (the {_CELL})")
    return None


def _cross_steps(u, v, p):
    """(u_next, v_next) where one update uses the other's new value, and the hint."""
    lu, lv = reference_laplacian(u), reference_laplacian(v)
    un, vn = updated(u, v, lu, lv, p)
    yield (un, v + p.dt * (p.dv * lv + un * v * v - (p.feed + p.kill) * v)), _new_value_hint("u_next")
    yield (u + p.dt * (p.du * lu - u * vn * vn + p.feed * (1 - u)), vn), _new_value_hint("v_next")


def _update_slips(u, v, p):
    """(u_next, v_next) of an update whose sign is reversed (u_next = u - dt * (...)) or that applies dt twice to
    a term (float uvv = u * v * v * dt; then dt * (...) again), and the hint in the kernel's words: every cell
    is then off by a little, which a distance to the reference does not name."""
    lu, lv = reference_laplacian(u), reference_laplacian(v)
    terms = ({"du * lu": p.du * lu, "uvv": -u * v * v, "feed * (1 - u)": p.feed * (1 - u)},
             {"dv * lv": p.dv * lv, "uvv": u * v * v, "(feed + kill) * v": -(p.feed + p.kill) * v})
    right = [a + p.dt * sum(rate.values()) for a, rate in zip((u, v), terms)]
    for which in ((0,), (1,), (0, 1)):
        names = ["uv"[k] for k in which]
        yield ([a - p.dt * sum(rate.values()) if k in which else right[k] for k, (a, rate) in enumerate(zip((u, v), terms))],
               " and ".join(f"{n}_next = {n} - dt * (...)" for n in names) + " subtracts the update: its sign is +, "
               + " and ".join(f"{n}_next = {n} + dt * (...)" for n in names))
    # an operator slipped in the feed's terms (1 / u for 1 - u, a parenthesis left out): its values, named
    with np.errstate(divide="ignore"):
        fed, decay = p.feed * (1 - u), (p.feed + p.kill) * v
        slips = ((0, p.feed * (1 / u), "feed * (1 / u)"), (0, p.feed * (1 + u), "feed * (1 + u)"),
                 (0, p.feed * (u - 1), "feed * (u - 1)"), (0, p.feed - u, "feed * 1 - u"),
                 (1, (p.feed - p.kill) * v, "(feed - kill) * v"), (1, p.feed * p.kill * v, "feed * kill * v"),
                 (1, p.feed + p.kill * v, "feed + kill * v"))
    for k, wrong, written in slips:
        term = ("U's feed term", "feed * (1.0f - u)") if k == 0 else ("V's loss term", "(feed + kill) * v")
        how = "the parentheses left out" if written.count("(") < term[1].count("(") else "another operator"
        yield ([right[0] + p.dt * (wrong - fed), right[1]] if k == 0 else [right[0], right[1] - p.dt * (wrong - decay)],
               f"{term[0]} computes {written} ({how}): it is {term[1]}")
    for term in dict.fromkeys([*terms[0], *terms[1]]):
        for which in ((0,), (1,), (0, 1)):
            if all(term in terms[k] for k in which):
                yield ([right[k] + p.dt * (p.dt - 1) * terms[k][term] if k in which else right[k] for k in range(2)],
                       f"dt twice on {term}: it is multiplied by dt already, and the update's dt * (...) multiplies it "
                       f"again; leave dt out of {term}, the update applies it once")


#: A window bound of the C as written: (its comparison, the axis's index, the sign, the offset).
_REACH = re.compile(r"(<=|<|(?<![=<>!])=(?!=))\s*(?:(?:max|min)\s*\(\s*(?:\w+\s*,\s*)?)?\b(row|col)\s*([-+])\s*(\d+)\b")


def _window_reach(code: str) -> str | None:
    """The hint where the C's window reaches another number of cells than one each side of the cell
    (max(row - 2, 0), min(col + 3, cols - 1), r < row + 3), whatever the offset: the values' models try the
    bounds off by one only."""
    for comparison, index, sign, offset in _REACH.findall(code):
        reach = int(offset) - (comparison == "<")
        if (comparison == "=") == (sign == "-") and reach != 1:
            axis = "row" if index == "row" else "column"
            return (f"your window's bound {index} {sign} {offset} takes it {reach} {axis}{'s' * (reach != 1)} "
                    f"{'before' if sign == '-' else 'after'} the cell: the 3 x 3 window runs from max({index} - 1, 0) to "
                    f"min({index} + 1, {index}s - 1), one {axis} each side")
    return None


def _matches(got, model, outside, want) -> bool:
    inside = ~outside
    if inside.mean() < 0.25:  # an index transposed reads outside the array for most cells of a wide grid
        return False
    if all(np.allclose(m[inside], w[inside], rtol=0, atol=1e-5) for m, w in zip(model, want)):
        # The mistake shows only where it reads outside: the kernel's values are huge exactly there (what
        # fills the memory around the arrays), and right elsewhere.
        huge = np.maximum(*(np.abs(np.nan_to_num(g)) for g in got)) > 1e15
        return bool(outside.any() and huge[outside].all() and not huge[inside].any()) and all(
            np.allclose(g[inside], w[inside], rtol=0, atol=1e-4) for g, w in zip(got, want))
    return all(np.allclose(g[inside], m[inside], rtol=1e-5, atol=1e-4) for g, m in zip(got, model))


def step_mistake(body: str, kind: str, u, v, p, got) -> str | None:
    """The usual mistake whose step gives `got` (u_next, v_next) from (u, v) with parameters p,
    or that the C shows, where `got` is off the reference step; else None."""
    u, v = (np.asarray(a, np.float64) for a in (u, v))
    got = [np.asarray(g) for g in got]
    want = reference_step(u, v, p)
    if all(np.allclose(g, w, rtol=0, atol=1e-5) for g, w in zip(got, want)):
        return None
    code = without_comments(body)
    if hint := _integer_holding_a_float(code):  # it names the variables, whatever the values show
        return hint
    nowhere = np.zeros(u.shape, bool)
    for model, hint in (*_cross_steps(u, v, p), *_update_slips(u, v, p)):
        if _matches(got, model, nowhere, want):
            return hint
    if kind == "raw":
        right = reference_laplacian(u), reference_laplacian(v)
        for laplacian, hint, unclamped in _raw_laplacians():
            (lu, outside_u), (lv, outside_v) = laplacian(u), laplacian(v)
            for pair, outside in (((lu, lv), outside_u | outside_v), ((lu, right[1]), outside_u), ((right[0], lv), outside_v)):
                if _matches(got, updated(u, v, *pair, p), outside, want):  # in both arrays' windows, or in one
                    return _other_count(code, unclamped) or (_truncated_or_centre(code, u.shape) if hint is _TRUNCATED else hint)
        for model, outside, hint in _own_values_elsewhere(u, v, p):
            if _matches(got, model, outside, want):
                return hint
        if hint := block_left_out(code) or _written_elsewhere(got, want) or written_at_another_index(code, *u.shape) or \
                border_unwritten(code, got, want) or _loop_skips(code) or _window_reach(code) or \
                _input_written_through_a_cast(code):
            return hint
    return _output_read(code, kind)
