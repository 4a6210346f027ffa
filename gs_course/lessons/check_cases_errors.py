"""The harness's cases from the fourteenth independent playtest and others of the same kinds: a student's own errors and wrong signatures told in one line (no checker's traceback), and kernels that do not compile told so (not as another mistake).
`gs_course.lessons.check_cases` puts them in its `CASES`; one line each, as there.
"""

from __future__ import annotations

from .check_answers import FAIL, NOT_CHECKED, PASS, Case  # noqa: F401 (the verdicts the cases use)


def _strip_launch(signature: str, body: str) -> str:
    """A whole cell of CuPy's exercise 6: strip_launch of `signature`, `body` its lines."""
    return f"def strip_launch({signature}):\n{body}\n\ncupy_check.strip_launch(strip_launch)\n"


_GRID = "    return (-(-cols // block[0]), -(-rows // (block[1] * strip_rows))), block"

#: The histogram kernel's lines the compile errors below change.
_ZEROED = "for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;"
_BIN = "const int bin = min((int)(image[i] * bins), bins - 1);"

ERRORS_14: list[Case] = [
    # F16: a wrong signature, one line naming the student's parameters and the exercise's call
    Case("cupy 6", _strip_launch("rows, cols, block", "    return (-(-cols // block[0]), -(-rows // block[1])), block"),
         FAIL, r"your strip_launch takes \(rows, cols, block\): the exercise calls it as "
               r"strip_launch\(rows, cols, block, strip_rows\)", name="playtest 14: strip_rows left out"),
    Case("cupy 6", _strip_launch("shape, block, strip_rows", "    rows, cols = shape\n" + _GRID), FAIL,
         r"your strip_launch takes \(shape, block, strip_rows\): the exercise calls it as strip_launch\(rows, cols",
         name="the shape as one parameter"),
    Case("cupy 6", _strip_launch("rows, cols, block, strip_rows, threads", _GRID), FAIL,
         r"takes \(rows, cols, block, strip_rows, threads\): the exercise calls it as", name="a fifth parameter"),
    Case("cupy 6", "def strip_launch(rows, cols, block, strip_rows):\n" + _GRID + "\n\ncupy_check.strip_launch("
         "strip_launch(1080, 1920, (128, 2), 8))\n", FAIL, r"your strip_launch is a tuple, not a function: give the "
         "function itself", name="the function's result given, not the function"),
    Case("cupy 6", _strip_launch("rows, cols, block, strip_rows=8", _GRID), PASS, "launch configuration: right",
         name="strip_rows with a default"),
    Case("cupy 6", _strip_launch("*args", "    rows, cols, block, strip_rows = args\n" + _GRID), PASS,
         "launch configuration: right", name="the arguments as *args"),
    Case("cupy 6", "import math\n" + _strip_launch("rows, cols, block, strip_rows, *, check=False",
                                 "    per_block = block[1] * strip_rows\n    return (math.ceil(cols / block[0]), "
                                 "(rows + per_block - 1) // per_block), tuple(block)"),
         PASS, "launch configuration: right", name="math.ceil, a keyword-only parameter"),
    # F17: an error raised in the student's own code, one line naming it and the student's line
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "-(-rows // (block[1] * strip_rows * 0))"), FAIL,
         r"your strip_launch raised ZeroDivisionError: integer division or modulo by zero \(line \d+ of your cell, "
         r"in strip_launch", name="playtest 14: a division by zero"),
    Case("cupy 6", ("-(-cols // block[0])", "-(-cols // block[2])"), FAIL,
         r"your strip_launch raised IndexError: tuple index out of range \(line \d+ of your cell", name="block[2]"),
    Case("cupy 6", ("-(-cols // block[0])", "-(-cols // threads[0])"), FAIL,
         r"your strip_launch raised NameError: name 'threads' is not defined \(line \d+ of your cell",
         name="a name never defined"),
    Case("cupy 6", ("-(-cols // block[0])", "-(-cols // block)"), FAIL,
         r"your strip_launch raised TypeError: unsupported operand .*\(line \d+ of your cell", name="a division by the tuple"),
    Case("cupy 6", "def blocks(n, per_block):\n    return -(-n // per_block)\n\n"
         "def strip_launch(rows, cols, block, strip_rows):\n"
         "    return (blocks(cols, block[0]), blocks(rows)), block\n\ncupy_check.strip_launch(strip_launch)\n", FAIL,
         r"your strip_launch calls blocks\(\) with other arguments than blocks takes", name="a helper called otherwise"),
    Case("cupy 3", ("update = check.elementwise_update(update_body, laplacian)",
                    "update = check.elementwise_update(update_body, lambda a, rows: a)"), FAIL,
         r"your laplacian takes \(a, rows\): the exercise calls it as laplacian\(a\)", name="a laplacian of two parameters"),
    Case("cupy 3", ("update = check.elementwise_update(update_body, laplacian)",
                    "def own_laplacian(a):\n    return a.laplacian()\n\nupdate = check.elementwise_update(update_body, "
                    "own_laplacian)"), FAIL, r"your laplacian raised AttributeError: .*laplacian.*\(line \d+ of your cell",
         name="a laplacian that raises"),
    # F21: a kernel that does not compile is told so first, with the student's line
    Case("synthesis 7", (_ZEROED + "\n    __syncthreads();\n    for (int i = first; i < cells; i += stride) {\n"
                         "        const int bin = min((int)(image[i] * bins), bins - 1);\n"
                         "        atomicAdd(&block_counts[bin], 1u);\n    }\n    __syncthreads();\n"
                         "    for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&image_counts[b], "
                         "block_counts[b]);",
                         _ZEROED[:-1] + "\n    __syncthreads();\n    atomicAdd(&image_counts[0], 1u);"), FAIL,
         r"your code does not compile: a ; is missing at the end of a statement .*line 3 of your C: for \(int b = "
         r"threadIdx\.x; b < bins; b \+= blockDim\.x\) block_counts\[b\] = 0( \(and \d+ more errors?\))?$", name="playtest 14: a ; missing"),
    Case("synthesis 7", (_BIN, _BIN[:-1]), FAIL, r"your code does not compile: a ; is missing .*line 6 of your C: "
         r"const int bin", name="a ; missing after the bin"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicAdd(&block_count[bin], 1u);"), FAIL,
         r"your code does not compile: block_count is not defined.*line 7 of your C: atomicAdd\(&block_count",
         name="a misspelt shared array"),
    Case("synthesis 7", ("        atomicAdd(&block_counts[bin], 1u);\n    }", "        atomicAdd(&block_counts[bin], 1u);"),
         FAIL, r"your code does not compile: the braces do not pair", name="the loop's closing brace left out"),
    Case("synthesis 7", (_BIN, "const int bin = image;"), FAIL,
         r"your code does not compile: .*line 6 of your C: const int bin = image;", name="a pointer as an int"),
    Case("synthesis 7", (_ZEROED, "for (int b = threadIdx.x; b < bins; b += blockDim.x) block_counts[b] = 0;;"), PASS,
         "privatised in shared memory", name="a doubled ;"),
    Case("synthesis 7", (_ZEROED, "// zero the block's bins; then wait\n    for (unsigned int b = threadIdx.x; b < bins; "
                                  "b += blockDim.x) {\n        block_counts[b] = 0u;\n    }"), PASS,
         "privatised in shared memory", name="the zeroing in braces, a comment with a ;"),
    Case("synthesis 8", ("const float a = values[i], b = values[partner];", "const float a = values[i], b = values[partner]"),
         FAIL, r"your code does not compile: a ; is missing .*line 4 of your C: const float a", name="a ; missing"),
    Case("synthesis 8", ("const bool ascending = (i & k) == 0;", "const bool ascending = (i & kk) == 0;"), FAIL,
         r"your code does not compile: kk is not defined.*line 3 of your C", name="an undeclared name"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc"), FAIL,
         r"your code does not compile: a ; is missing .*line 10 of your C: const float uvv", name="a ; missing"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu, lv = 0.0f\n    lu = 0.0f;"), FAIL,
         r"your code does not compile: a ; is missing .*line 3 of your C: float lu, lv = 0\.0f",
         name="a ; missing (before the check of values never set)"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v"), FAIL,
         r"your code does not compile: a ; is missing .*line 2 of your C: float uvv", name="a ; missing", where="cpu"),
]
