"""The harness's cases of the CuPy tutorial's kernels from the third playtest (issue 29) and their
kind: each usual mistake of the ElementwiseKernel, the RawKernel of a step and the strip launch,
in several spellings, and right answers written otherwise. `gs_course.lessons.check_cases` ends its
CASES with them (the format is its own: exercise, answer, verdict, a piece of the line, where).
"""

from __future__ import annotations

import re

from .check_answers import FAIL, NOT_CHECKED, PASS, Case



def _guarded_window(beyond: str) -> tuple[str, str]:
    """The step kernel's window loops unclamped, each neighbour outside the grid skipped by an if
    (r `beyond` rows: one outside)."""
    return ("for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r) {\n"
            "        for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {",
            "for (int r = row - 1; r <= row + 1; ++r) {\n        for (int c = col - 1; c <= col + 1; ++c) {\n"
            f"            if (r < 0 || r {beyond} rows || c < 0 || c >= cols) continue;")


#: An early return of every cell at the border.
_BORDER_RETURN = "if (row == 0 || row == rows - 1 || col == 0 || col == cols - 1) return;\n    "

KERNEL_CASES = [
    Case("cupy 3", ("float uvv = u * v * v;\nu_next = u + dt * (du * lu - uvv + feed * (1.0f - u));",
                    "float uvv = u * v * v;\nfloat du = du * lu - uvv + feed * (1.0f - u);\nu_next = u + dt * du;"),
         FAIL, "`float du` declares a new du that hides the kernel's input du, and is initialised from itself",
         name="the rate named du, hiding the input"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v;\nconst float dt = 0.5f;"), FAIL,
         "`const float dt` declares a new local with the name of the kernel's input dt", name="a constant named dt"),
    Case("cupy 3", ("u_next = u + dt", "float u_next = u + dt"), FAIL, "hides the output u_next",
         name="u_next declared as a local"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v, rate_u = du * lu - uvv + feed * (1.0f - u);"),
         PASS, "step: right", name="a second local in the declaration, other names"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc;\n    for (int row = 0; row < 1; ++row) {}"),
         FAIL, "declares row again", name="row declared again"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;", "lu += u[r * rows + c] - uc;"), FAIL, "a row is cols cells long",
         name="the row stride rows for cols"),
    Case("cupy 4", ("u[r * cols + c]", "u[c * rows + r]", "v[r * cols + c]", "v[c * rows + r]"), FAIL,
         "transposed \\(c \\* rows \\+ r\\)", name="the index transposed"),
    Case("cupy 4", ("u[r * cols + c]", "u[r + c * cols]", "v[r * cols + c]", "v[r + c * cols]"), FAIL,
         "transposed \\(c \\* cols \\+ r\\)", name="the index transposed, written r + c * cols"),
    Case("cupy 4", ("u[r * cols + c]", "u[c + r * cols]", "v[r * cols + c]", "v[cols * r + c]"), PASS, "step: right",
         name="the index written c + r * cols"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "lu += u[r * cols + c];\n            lv += v[r * cols + c];"), FAIL, "window sums, not Laplacians",
         name="the window sum (no - uc)"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "if (r != row || c != col) { lu += u[r * cols + c]; lv += v[r * cols + c]; }"), FAIL,
         "sums of the neighbours", name="the neighbours summed, the centre never taken out"),
    Case("cupy 4", ("r <= min(row + 1, rows - 1)", "r < min(row + 1, rows - 1)", "c <= min(col + 1, cols - 1)",
                    "c < min(col + 1, cols - 1)"), FAIL, "off by one \\(rows and columns\\): r < min", name="< for <="),
    Case("cupy 4", ("c <= min(col + 1, cols - 1)", "c <= min(col + 1, cols)"), FAIL, "off by one: min\\(col \\+ 1, cols\\)",
         name="the window's last column min(col + 1, cols)"),
    Case("cupy 4", ("max(row - 1, 0)", "max(row - 1, 1)"), FAIL, "off by one: max\\(row - 1, 1\\)",
         name="the window's first row max(row - 1, 1)"),
    Case("cupy 4", ("for (int r = max(row - 1, 0); r <= min(row + 1, rows - 1); ++r)",
                    "for (int r = max(row - 1, 0); r < min(row + 2, rows); r++)"), PASS, "step: right",
         name="the window written r < min(row + 2, rows)"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "int lu = 0, lv = 0;"), FAIL, "lu and lv are int: .*declare them float",
         name="integer accumulators"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "long lu = 0;\n    float lv = 0.0f;"), FAIL, "lu is long: .*declare it float",
         name="one accumulator a long"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "double lu = 0.0, lv = 0.0;"), PASS, "step: right",
         name="double accumulators"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;", "lu += u_next[r * cols + c] - uc;"), FAIL,
         "reads u_next\\[r \\* cols \\+ c\\], an output.*read the input u", name="the neighbours read from u_next"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = u_next[cell], vc = v[cell];"), FAIL,
         "reads u_next before writing it", name="the centre read from u_next"),
    Case("cupy 4", ("v_next[cell] = vc + dt * (dv * lv + uvv", "v_next[cell] = vc + dt * (dv * lv + u_next[cell] * vc * vc"),
         FAIL, "V's update uses the new U", name="V's update from the new U, a kernel"),
    Case("cupy 3", ("v_next = v + dt * (dv * lv + uvv", "v_next = v + dt * (dv * lv + u_next * v * v"), FAIL,
         "V's update uses the new U \\(u_next\\)", name="V's update from u_next"),
    Case("cupy 3", ("float uvv = u * v * v;\nu_next = u + dt * (du * lu - uvv + feed * (1.0f - u));\nv_next = v + dt * (dv * lv + uvv - (feed + kill) * v);",
                    "v_next = v + dt * (dv * lv + u * v * v - (feed + kill) * v);\nu_next = u + dt * (du * lu - u * v_next * v_next + feed * (1.0f - u));"),
         FAIL, "U's update uses the new V \\(v_next\\)", name="U's update from v_next"),
    Case("cupy 3", ("float uvv = u * v * v;\nu_next = u + dt * (du * lu - uvv + feed * (1.0f - u));\nv_next = v + dt * (dv * lv + uvv - (feed + kill) * v);",
                    "const float r = u * v * v;\nv_next = v + dt * (dv * lv + r - (feed + kill) * v);\nu_next = u + dt * (du * lu - r + feed * (1.0f - u));"),
         PASS, "step: right", name="V's update first, both from the old values"),
    Case("cupy 3", ("u_next = u + dt * (du * lu - uvv + feed * (1.0f - u));\nv_next = v + dt * (dv * lv + uvv",
                    "const float un = u + dt * (du * lu - uvv + feed * (1.0f - u));\nu_next = un;\n"
                    "v_next = v + dt * (dv * lv + un * v * v"), FAIL, "V's update uses the new U",
         name="V's update from the new U, kept in a local"),
    Case("cupy 3", ("float uvv = u * v * v;", "int uvv = u * v * v;"), FAIL, "uvv is int: .*declare it float",
         name="uvv an int"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u_next * v * v;"), FAIL, "reads u_next before writing it",
         name="uvv from u_next before it is written"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows)))\n    return grid, block",
                    "-(-rows // (block[1] * strip_rows)), 1)\n    return grid, (block[0], block[1], 1)"), PASS,
         "launch configuration: right", name="a 3-D grid and block, z = 1"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows)))", "-(-rows // (block[1] * strip_rows)), 2)"), FAIL,
         "2 layers of blocks along z", name="a grid of 2 along z"),
    Case("cupy 6", ("return grid, block", "return grid, (*block, 2)"), FAIL, "your block is \\(.*, 2\\)",
         name="a block of 2 along z"),
    Case("cupy 6", ("return grid, block", "return list(grid), block"), FAIL, "a list.*takes a tuple", name="the grid a list"),
    Case("cupy 6", ("grid = (-(-cols // block[0]), -(-rows // (block[1] * strip_rows)))",
                    "grid = tuple(np.ceil(np.array([cols / block[0], rows / (block[1] * strip_rows)])).astype(np.int64))"),
         PASS, "launch configuration: right", name="the grid NumPy's int64s"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;", "{ float du = du; lu += u[r * cols + c] - uc; }"), FAIL,
         "`float du` declares a new du that hides the kernel's input du, and is initialised from itself",
         name="du declared again in the window's loop"),
    Case("cupy 3", ("float uvv = u * v * v;", "int i = blockIdx.x * blockDim.x + threadIdx.x;\nfloat uvv = u * v * v;"), FAIL,
         "`int i` declares i again: CuPy runs the body once for each cell", name="the cell's index computed as in a RawKernel"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v; // float du = 2;\n/* double dt = 1; */ float du_ = du;"),
         PASS, "step: right", name="declarations in comments, a name like du's"),
    Case("cupy 4", ("u[r * cols + c]", "u[cell + (r - row) * rows + (c - col)]", "v[r * cols + c]",
                    "v[cell + (r - row) * rows + (c - col)]"), FAIL, "a row is cols cells long: the neighbour",
         name="the row stride rows, relative to cell"),
    Case("cupy 4", ("u[r * cols + c]", "u[cell + (r - row) * cols + (c - col)]", "v[r * cols + c]",
                    "v[cell + (r - row) * cols + c - col]"), PASS, "step: right", name="the neighbour relative to cell"),
    Case("cupy 4", ("r <= min(row + 1, rows - 1)", "r <= min(row + 1, rows)"), FAIL,
         "off by one: min\\(row \\+ 1, rows\\) is outside the grid", name="the window's last row min(row + 1, rows)"),
    Case("cupy 4", _guarded_window(">"), FAIL, "off by one",
         name="the window guarded by r > rows"),
    Case("cupy 4", _guarded_window(">="), PASS, "step: right",
         name="the window guarded by an if"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "unsigned int lu = 0u;\n    float lv = 0.0f;"), FAIL,
         "lu is unsigned int: .*declare it float", name="an unsigned accumulator"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu = 0.0f, lv = 0.0f;\n    int n = 0;", "lu += u[r * cols + c] - uc;",
                    "lu += u[r * cols + c] - uc;\n            n += 1;"), PASS, "step: right", name="an int counting the window's cells"),
    Case("cupy 4", ("u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));",
                    "u_next[cell] = uc;\n    u_next[cell] += dt * (du * lu - uvv + feed * (1.0f - uc));"), PASS, "step: right",
         name="u_next written, then added to"),
    # The fourth playtest's: compile errors of a known mistake, and a local never given a value.
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v**2;"), FAIL, "C has no \\*\\*", name="v**2"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v ** 2.0f;"), FAIL, "C has no \\*\\*",
         name="v ** 2.0f"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * powf(v, 2.0f);"), PASS, "step: right", name="powf(v, 2.0f)"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v;\nlu *= 1.0f;"), FAIL,
         "lu is an input, which the kernel cannot change", name="an input changed (lu *= ...)"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv;\nuvv = u * v * v;"), PASS, "step: right",
         name="uvv declared, then assigned"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv;\nuvv += u * v * v;"), FAIL, "uvv is never given a value",
         name="uvv never given a value"),
    Case("cupy 4", ("u_next[cell] = uc + dt", "u[cell] = uc + dt"), FAIL,
         "u is an input \\(const float\\*\\).*write the output, u_next\\[cell\\]", name="u[cell] written"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc;\n    v[cell]++;"), FAIL,
         "v is an input \\(const float\\*\\)", name="v[cell]++"),
    Case("cupy 4", ("lv += v[r * cols + c] - vc;\n        }", "lv += v[r * cols + c] - vc;"), FAIL,
         "the braces do not pair: 2 \\{ and 1 \\}", name="the inner loop's } missing"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;", "lu += (u[r * cols + c] - uc;"), FAIL, "parentheses do not pair",
         name="a ( too many"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu, lv;"), FAIL, "lu and lv are never given a value.*= 0.0f",
         name="lu and lv never given a value"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu = 0.0f, lv;"), FAIL, "lv is never given a value",
         name="lv never given a value"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu, lv;\n    lu = lv = 0.0f;"), PASS, "step: right",
         name="lu and lv declared, then set to 0"),
    # The fourth playtest's: the cell's own values read, or its values written, at another index.
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * v[cell + 1] * v[cell + 1];"), FAIL,
         "uvv reads v at cell \\+ 1, a neighbour", name="uvv from v[cell + 1]"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = u[cell - cols] * vc * vc;"), FAIL,
         "uvv reads u at cell - cols, a neighbour", name="uvv from u[cell - cols]"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = u[row * cols + col] * vc * v[cell];"), PASS,
         "step: right", name="uvv from the cell written otherwise"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];",
                    "const int me = col * cols + row;\n    const float uc = u[me], vc = v[me];"), FAIL,
         "reads the cell's own u and v at col \\* cols \\+ row", name="the cell's index transposed, col * cols + row"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = u[col * rows + row], vc = v[col * rows + row];"),
         FAIL, "reads the cell's own u and v at col \\* rows \\+ row", name="the cell's index col * rows + row"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const int me = row * cols + col;\n    const float uc = u[me], vc = v[me];"),
         PASS, "step: right", name="the cell's index computed again"),
    Case("cupy 4", ("u_next[cell] =", "u_next[col * rows + row] =", "v_next[cell] =", "v_next[col * rows + row] ="), FAIL,
         "writes u_next\\[col \\* rows \\+ row\\] and v_next\\[col \\* rows \\+ row\\], another cell", name="written to col * rows + row"),
    Case("cupy 4", ("v_next[cell] =", "v_next[col * cols + row] ="), FAIL,
         "writes v_next\\[col \\* cols \\+ row\\], another cell", name="v_next written to col * cols + row"),
    Case("cupy 4", ("u_next[cell] =", "u_next[row * cols + col] =", "v_next[cell] =", "v_next[cols * row + col] ="), PASS,
         "step: right", name="written to row * cols + col"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;", "lu += v[r * cols + c] - uc;"), FAIL, "lu sums v's neighbours",
         name="lu summing v"),
    Case("cupy 4", ("lv += v[r * cols + c] - vc;", "lv += v[r * cols + c] - uc;"), FAIL, "lv takes uc from v's neighbours",
         name="lv taking uc"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "lu += v[r * cols + c] - uc;\n            lv += u[r * cols + c] - vc;"), FAIL,
         "lu sums v's neighbours and lv u's", name="lu and lv each summing the other"),
    Case("cupy 4", ("c <= min(col + 1, cols - 1)", "c <= min(col + 1, rows - 1)"), FAIL,
         "column bound uses rows where it is cols", name="the column bound with rows"),
    Case("cupy 4", ("r <= min(row + 1, rows - 1)", "r <= min(row + 1, cols - 1)"), FAIL,
         "row bound uses cols where it is rows", name="the row bound with cols"),
    Case("cupy 4", ("c <= min(col + 1, cols - 1)", "c < min(col + 2, rows)"), FAIL,
         "column bound uses rows where it is cols", name="the column bound with rows, written < min(col + 2, rows)"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = u[cell + 1], vc = v[cell + 1];"), FAIL,
         "reads the cell's own u and v at cell \\+ 1", name="the cell's values read at cell + 1"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * v[2 * cell];"), FAIL,
         "reads outside its arrays at cell \\(\\d+, \\d+\\), inside the grid", name="a read past the end inside the grid"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * (v ^ 2);"), FAIL, "\\^ is C's exclusive or",
         name="v ^ 2"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = u[cell], vc = v[cell - cols];"), FAIL,
         "reads the cell's own v at cell - cols", name="vc read at cell - cols"),
    Case("cupy 4", ("feed * (1.0f - uc)", "feed * (1.0f - u[cell + 1])"), FAIL, "feed \\* \\(1 - u\\) reads u at cell \\+ 1",
         name="the feed term's u at cell + 1"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "lu += u[cell] - uc;\n            lv += v[cell] - vc;"), FAIL, "each \\+= reads the cell itself",
         name="the centre read in the window's loop"),
    Case("cupy 4", ("lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "if (r == row && c == col) continue;\n            lu += u[r * cols + c] - uc;\n"
                    "            lv += v[r * cols + c] - vc;"), PASS, "step: right", name="the centre skipped (it adds 0)"),
    Case("cupy 4", ("float lu = 0.0f, lv = 0.0f;", "float lu = 0.0f, lv = 0.0f; int n = 0;",
                    "lu += u[r * cols + c] - uc;\n            lv += v[r * cols + c] - vc;",
                    "++n;\n            if (r == row && c == col) continue;\n            lu += u[r * cols + c];\n"
                    "            lv += v[r * cols + c];", "const float uvv", "lu -= n * uc;\n    lv -= n * vc;\n    const float uvv"),
         FAIL, "leaves the centre out of its sums, yet takes uc out", name="the centre left out, counted in n"),
    Case("cupy 3", ('update_body = """', 'update_body = ["u_next = u;", "v_next = v;"]\nunused = """'), FAIL,
         "your update's body is a list: write the C as one string", name="the body a list of lines"),
    Case("cupy 3", ("float uvv = u * v * v;", "# the reaction\nfloat uvv = u * v * v;"), FAIL,
         "preprocessor directive in C, not a comment: comments are //", name="a Python comment in the C"),
    Case("synthesis 7", ("    extern __shared__ unsigned int block_counts[];\n", ""), FAIL,
         "block_counts is not defined.*extern __shared__ unsigned int block_counts\\[\\];",
         name="the shared array never declared"),
    Case("synthesis 7", ("const int bin = min((int)(image[i] * bins), bins - 1);\n        atomicAdd(&block_counts[bin], 1u);",
                         "atomicAdd(&block_counts[min(image[i] * bins, bins - 1)], 1u);"), FAIL,
         "an index is a float.*cast it, \\(int\\)", name="a float as the bin index"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "-(-rows // block[1]) * strip_rows"), FAIL,
         "multiplies the blocks by strip_rows", name="the row blocks times strip_rows"),
    Case("cupy 6", ("-(-rows // (block[1] * strip_rows))", "-(-rows // (block[1] + strip_rows))"), FAIL,
         "divides by block\\[1\\] \\+ strip_rows", name="block[1] + strip_rows"),
    # Another independent playtest's: an output written at the row, the border returned early, a read outside
    # the array multiplied by 0 (its value changes nothing, the read is still out of bounds).
    Case("cupy 4", ("u_next[cell] =", "u_next[row] ="), FAIL, "writes u_next\\[row\\], another cell than its own.*"
         "write u_next\\[cell\\]", name="u_next[row] for u_next[cell]"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", _BORDER_RETURN + "const float uc = u[cell], vc = v[cell];"),
         FAIL, "leaves the border cells .*unwritten.*the model computes them too.*no early return", name="the border returned early"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "if (row == 0) return;\n    const float uc = u[cell], vc = v[cell];"),
         FAIL, "leaves the first row unwritten", name="the first row returned early"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "if (row >= rows || col >= cols) return;\n    "
                    "const float uc = u[cell], vc = v[cell];"), PASS, "step: right", name="the template's return again"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc + 0.0f * v[cell + 1];"), FAIL,
         "reads v\\[cell \\+ 1\\] outside v at cell \\(\\d+, \\d+\\).*past its end.*multiplying by 0 does not make an out-of-bounds read safe",
         name="0.0f * v[cell + 1], out of bounds at the last cell"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc + 0.0f * u[cell - 1];"), FAIL,
         "reads u\\[cell - 1\\] outside u at cell \\(0, 0\\).*before its start", name="0.0f * u[cell - 1], out of bounds at the first cell"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc + (col + 1 < cols ? 0.0f * v[cell + 1] : 0.0f);"),
         PASS, "step: right", name="0.0f * v[cell + 1] where it is inside the row"),
    Case("cupy 4", ("u_next[cell] =", "const int out = row * cols + col;\n    u_next[out] ="), PASS, "step: right",
         name="u_next written through an index of its own"),
    Case("cupy 4", ("++c", "c += 2"), FAIL, "your loop over c steps by 2.*skips neighbours",
         name="the window's column loop stepping by 2 (no float in it)"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? (int)v : 0"'), FAIL,
         "spot masses are \\(nearly\\) 0: the cast \\(int\\) makes each value of V", name="the spot's value cast to int"),
    Case("synthesis 7", ("extern __shared__ unsigned int block_counts[];", "extern __shared__ unsigned long long block_counts[];"),
         FAIL, "block_counts is unsigned long long, 8 bytes an entry.*declare it unsigned int",
         name="the shared histogram of 8-byte entries"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicAdd(&block_counts[bin], 1u);\n        "
                         "atomicAdd(&block_counts[bins], 0u);"), FAIL,
         "writes past its shared memory array.*an atomic update at byte 256.*which holds 256 bytes", "cpu",
         name="an atomic that adds 0 one past the shared histogram"),
    Case("cupy 4", ("v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);",
                    "v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);\n    u_next[cell + cols] = u_next[cell + cols];"),
         FAIL, "writes u_next\\[cell \\+ cols\\], another cell than its own.*points outside the arrays",
         name="a neighbour's cell copied onto itself (its values unchanged)"),
    Case("cupy 6", ("return grid, block", "return block, grid"), FAIL, "return them unchanged, after the grid: return grid, block",
         name="(block, grid), the pair swapped"),
    # CUDA's own functions: those the CPU's stand-in defines are checked there, the others said not checked
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * __powf(vc, 2.0f);"), PASS, "step: right",
         name="__powf, CUDA's fast power"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * __powf(v, 2.0f);"), PASS, "step: right",
         name="__powf in the ElementwiseKernel"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = __fmul_rn(u, v * v);"), PASS, "step: right",
         name="__fmul_rn in the ElementwiseKernel"),
    Case("cupy 4", ("const float uc = u[cell], vc = v[cell];", "const float uc = __ldg(&u[cell]), vc = __ldg(&v[cell]);"),
         PASS, "step: right", name="__ldg, the read-only cache's read"),
    Case("cupy 4", ("u_next[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));",
                    "u_next[cell] = __fmaf_rn(dt, du * lu - uvv + feed * (1.0f - uc), uc);"), PASS, "step: right",
         name="__fmaf_rn, a fused multiply-add"),
    Case("cupy 4", ("v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);",
                    "v_next[cell] = vc + dt * (dv * lv + uvv - (feed + kill) * vc);\n    __threadfence();"), PASS,
         "step: right", name="a __threadfence() that does no harm"),
    Case("cupy 4", ("const float uvv = uc * vc * vc;", "const float uvv = uc * vc * vc + 0.0f * __popc(cell);"), NOT_CHECKED,
         "your RawKernel: not checked here: it calls __popc, one of CUDA's own", "cpu",
         name="__popc, which the CPU's stand-in does not define: not checked, no failure"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicInc(&block_counts[bin], 0xffffffffu);"), PASS,
         "histogram kernel: right", name="atomicInc with the largest limit"),
    Case("synthesis 7", ("atomicAdd(&block_counts[bin], 1u);", "atomicAdd_block(&block_counts[bin], 1u);"), PASS,
         "histogram kernel: right", name="atomicAdd_block, the block's scope"),
    Case("synthesis 2", ('"v > threshold ? v : 0.0"', '"v > threshold ? __powf(v, 1.0f) : 0.0f"'), PASS,
         "spot mass kernel: right", name="__powf in the map"),
]

#: Playtest 7 and others of their kinds: a step kernel that also writes a neighbour's cell (a race), and an
#: image changed after it was handed to the background writer, which reads it later; with right answers.
_OWN_U = "u_next[cell] = uc + dt"
_WRITTEN = "            writer.write(simulation.fetch_v())"
_FETCHED = "            image = simulation.fetch_v()\n"

PLAYTEST_7_CUPY = [
    Case("cupy 4", (_OWN_U, "u_next[min(cell + 1, rows * cols - 1)] = 0.0f;\n    " + _OWN_U), FAIL,
         "u_next\\[min\\(cell \\+ 1, rows \\* cols - 1\\)\\], another cell than its own, besides u_next\\[cell\\].*race", name="a neighbour's u_next set to 0 too"),
    Case("cupy 4", ("v_next[cell] = vc", "v_next[max(cell - cols, 0)] = vc;\n    v_next[cell] = vc"), FAIL,
         "v_next\\[max\\(cell - cols, 0\\)\\], another cell than its own, besides v_next\\[cell\\]", name="the cell above's v_next written too"),
    Case("cupy 4", (_OWN_U, "u_next[min(cell, rows * cols - 1)] = uc + dt"), PASS, "step kernel|RawKernel|right",
         name="its own cell through min(cell, rows * cols - 1)"),
    Case("cupy 4", (_OWN_U, "/* no __syncthreads() { } here: each thread writes its own cell */\n    " + _OWN_U), PASS,
         "step kernel|RawKernel|right", name="a comment that names __syncthreads()"),
    Case("cupy 7", (_WRITTEN, _FETCHED + "            writer.write(image)\n            image[:] = 0"), FAIL,
         "overwr.*after.*writer.write", name="the image zeroed after writer.write"),
    Case("cupy 7", (_WRITTEN, _FETCHED + "            writer.write(image)\n            image.fill(0.5)"), FAIL,
         "overwr.*after.*writer.write", name="the image filled after writer.write"),
    Case("cupy 7", (_WRITTEN, _FETCHED + "            writer.write(image.copy())\n            image[:] = 0"), PASS,
         "saved images", name="a copy written, the image zeroed after"),
]

#: Playtest 8 and others of their kinds: the update's sign, dt applied twice, a window bound off by any
#: offset, writer.close() inside the loop that writes; with right answers.
_UPDATE_U = "u_next = u + dt * (du * lu - uvv + feed * (1.0f - u));"
_ROW_FROM = "int r = max(row - 1, 0)"

PLAYTEST_8_CUPY = [
    Case("cupy 3", ("u_next = u + dt", "u_next = u - dt"), FAIL, "u_next = u - dt.*sign.*u \\+ dt", name="u's update subtracted"),
    Case("cupy 3", ("v_next = v + dt", "v_next = v - dt"), FAIL, "v_next = v - dt.*sign.*v \\+ dt", name="v's update subtracted"),
    Case("cupy 3", ("float uvv = u * v * v;", "float uvv = u * v * v * dt;"), FAIL, "dt twice.*uvv",
         name="uvv times dt, then dt again"),
    Case("cupy 3", (_UPDATE_U, "u_next = u + dt * du * lu - dt * uvv + dt * feed * (1.0f - u);"), PASS, "step: right",
         name="u's update expanded, dt on each term"),
    Case("cupy 3", (_UPDATE_U, "u_next = dt * (du * lu - uvv + feed * (1.0f - u)) + u;"), PASS, "step: right",
         name="u's update, u added last"),
    *(Case("cupy 4", (old, new), FAIL, f"{re.escape(bound)}.*window", name=f"the window's bound {bound}")
      for old, new, bound in ((_ROW_FROM, "int r = max(row - 2, 0)", "row - 2"),
                              ("r <= min(row + 1, rows - 1)", "r <= min(row + 2, rows - 1)", "row + 2"),
                              ("int c = max(col - 1, 0)", "int c = max(col - 3, 0)", "col - 3"),
                              ("c <= min(col + 1, cols - 1)", "c <= min(col + 2, cols - 1)", "col + 2"))),
    Case("cupy 4", (_ROW_FROM, "int r = row > 0 ? row - 1 : 0"), PASS, "step: right", name="the window's first row by ?:"),
    Case("cupy 7", ("            writer.write(simulation.fetch_v())", "            writer.write(simulation.fetch_v())\n"
                    "            writer.close()"), FAIL, "writer.close\\(\\) inside the loop", name="writer.close() in the loop"),
    Case("cupy 7", ("            writer.write(simulation.fetch_v())", "            writer.write(simulation.fetch_v())\n"
                    "            if _ == nbimage - 1:\n                writer.close()"), PASS, "saved images",
         name="writer.close() after the last image"),
]

#: Playtest 9 and others of their kinds: V fetched once, before the loop, and written every image (the simulation
#: advanced once, or advanced every image but never fetched again), once told that the next image overwrites its
#: buffer; the simulation advanced once, V fetched every image; with the fetch inside the loop in other spellings.
_LOOP = "        for _ in range(nbimage):\n            simulation.advance(nbextrastep)\n" + _WRITTEN
_SAME_V = "V after {steps} steps: every image is the same V, fetched once, before the loop.*fetch.*inside the loop"

PLAYTEST_9_CUPY = [
    Case("cupy 7", "def save_images(simulation, path, nbimage, nbextrastep):\n    rows, cols = simulation.rows, simulation.cols\n"
         "    with BackgroundWriter(FrameWriter(path, nbimage, rows, cols, simulation.params, nbextrastep, deflate=None)) as "
         "writer:\n        simulation.advance(nbextrastep)\n        v = simulation.fetch_v()\n        for _ in range(nbimage):\n"
         "            writer.write(v)\n\ncheck.saved_images(save_images, BACKEND, overlapped=True)\n", FAIL,
         _SAME_V.format(steps="7, 7, 7, 7") + ".*advance", name="playtest 9: advanced once, fetched once, written 4 times"),
    Case("cupy 7", (_LOOP, "        simulation.advance(nbextrastep)\n        v = simulation.fetch_v()\n"
                           "        for _ in range(nbimage):\n            simulation.advance(nbextrastep)\n"
                           "            writer.write(v)"), FAIL, _SAME_V.format(steps="7, 7, 7, 7"),
         name="advanced every image, V fetched once after the first"),
    Case("cupy 7", (_LOOP, "        v = simulation.fetch_v()\n        for _ in range(nbimage):\n"
                           "            simulation.advance(nbextrastep)\n            writer.write(v)"), FAIL,
         _SAME_V.format(steps="0, 0, 0, 0"), name="V fetched once, before any step"),
    Case("cupy 7", (_LOOP, "        simulation.advance(nbextrastep)\n        v = simulation.fetch_v()\n"
                           "        for _ in range(nbimage):\n            writer.write(v.copy())"), FAIL,
         _SAME_V.format(steps="7, 7, 7, 7"), name="V fetched once, a copy written every image"),
    Case("cupy 7", (_LOOP, "        simulation.advance(nbextrastep)\n        for _ in range(nbimage):\n" + _WRITTEN), FAIL,
         "V after 7, 7, 7, 7 steps: every image is the same V.*advances once, before the loop",
         name="advanced once, V fetched every image"),
    Case("cupy 7", (_WRITTEN, "            v = simulation.fetch_v()\n            writer.write(v)"), PASS, "saved images",
         name="V fetched into a name, then written"),
    Case("cupy 7", (_WRITTEN, "            u, v = simulation.fetch()\n            writer.write(v)"), PASS, "saved images",
         name="U and V fetched, V written"),
    Case("cupy 7", (_WRITTEN, "            writer.write(simulation.fetch()[1])"), PASS, "saved images",
         name="fetch()[1] written"),
    Case("cupy 7", (_LOOP, "        v = None\n        for _ in range(nbimage):\n            simulation.advance(nbextrastep)\n"
                           "            v = simulation.fetch_v()\n            writer.write(v)"), PASS, "saved images",
         name="V fetched into a name made before the loop"),
    # a GPU array handed to the writer: CuPy's refusal to convert it is told as the writer's, not NumPy's
    Case("cupy 7", ("writer.write(simulation.fetch_v())", 'writer.write(__import__("cupy").asarray(simulation.fetch_v()))'),
         FAIL, "hands the writer a CuPy array.*fetch_v\\(\\)", where="gpu", name="a CuPy array handed to the writer"),
]

#: Playtest 11 (CuPy and cuPyNumeric notebooks, in real kernels): hints that named another mistake or a distance.
PLAYTEST_11_CUPY = [
    Case("cupy 1", ("counts = window_counts(rows, cols)", "counts = window_counts(135, 240)"), FAIL,
         "too far apart for a slice.*rows, cols = a.shape", name="the counts of the notebook's grid"),
    Case("cupy 1", ("counts = window_counts(rows, cols)", "counts = window_counts(rows + 1, cols)"), FAIL,
         "a slice one row or column off", name="the counts a row too many"),
    Case("cupy 2", ("    uvv = u * v * v", "    u16, v16 = u.astype(xp.float16), v.astype(xp.float16)\n    uvv = u16 * v16 * v16",
                    "p.feed * (1 - u)", "p.feed * (1 - u16)", "(p.feed + p.kill) * v\n", "(p.feed + p.kill) * v16\n"), FAIL,
         "float16", name="the reaction in float16"),
    Case("cupy 3", ("(feed + kill) * v);", "(feed + kill) * v) * (1 / 2) * 2;"), FAIL,
         "your v_next is off: .*adds nothing.*1 / 2 is 0", name="V's increment times (1 / 2) * 2"),
    Case("cupy 4", ("for (int c = max(col - 1, 0); c <= min(col + 1, cols - 1); ++c) {", "for (int c = col - 1; c <= col + 1; ++c) {\n            if (r * cols + c < 0 || r * cols + c >= rows * cols) continue;"),
         FAIL, "only the first and last columns are off.*bound the column", name="the columns unbounded (a flat index wraps)"),
    Case("cupy 6", ("return grid, block", "return [grid, block]"), PASS, "launch configuration: right",
         name="the pair returned as a list"),
    Case("cupy 7", ("simulation.advance(nbextrastep)", "simulation.advance(32)"), FAIL,
         "^(?!.*fori_loop).*image 0 is V after 32 steps.*simulation.advance\\(nbextrastep\\)", name="32 steps an image"),
]


#: The ReductionKernel's map_expr and reduce_expr in the reference answer.
_MAP, _REDUCE = '"v > threshold ? v : 0.0"', 'reduce_expr = "a + b"'

#: The histograms' bin numbers in the reference answer, int64.
_BINNED = "xp.minimum((images * bins).astype(np.int64), bins - 1)"


def _bitonic_cell(body: str) -> str:
    """A whole cell of the bitonic exercise with `body` as bitonic_body."""
    return f'bitonic_body = r"""{body}"""\nbitonic_sort = check.bitonic_step(bitonic_body)\n'


#: The second reading of playtest 11's fixes: right answers a new check rejected, hints worded for one cause of two.
REVIEW_11 = [
    # playtest 13: edges read from values not sorted, at other indices than the values as they are
    Case("synthesis 4", ("ordered = xp.sort(images.ravel())", "ordered = images.ravel()[::-7]"), FAIL,
         "not in increasing order.*axis=None", name="edges from values not sorted, every 7th from the end"),
    # playtest 12: the input written through a pointer whose const is cast away (neighbours read new values)
    Case("cupy 4", ("    u_next[cell] = uc + dt", "    float* uu = (float*)u;\n    uu[cell] = uc + dt * (du * lu - uvv + feed * (1.0f - uc));\n"
                    "    u_next[cell] = uc + dt"), FAIL, "writes its input u \\(through uu, its const cast away\\)",
         name="u written through (float*)u"),
    # bitonic bodies that compute their own index from blockIdx and threadIdx: the probe of both threads
    # acting keeps each thread's real index (it gave thread t the index who[t] before, so me was 0-3 in both runs)
    Case("synthesis 8", _bitonic_cell("""
    const unsigned int me = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int other = me ^ j;
    if (other > me) {
        const bool ascending = (me & k) == 0;
        const float a = values[me], b = values[other];
        if ((a > b) == ascending) { values[me] = b; values[other] = a; }
    }
"""), PASS, "bitonic sort", name="own index and partner, other > me"),
    Case("synthesis 8", _bitonic_cell("""
    const int t = threadIdx.x + blockDim.x * blockIdx.x;
    if ((t & j) != 0) return;
    const int u = t | j;
    const bool up = (t & k) == 0;
    const float lo = values[t], hi = values[u];
    if (up ? lo > hi : lo < hi) { values[t] = hi; values[u] = lo; }
"""), PASS, "bitonic sort", name="own index, the upper threads returned by bit j"),
    Case("synthesis 8", _bitonic_cell("""
    const unsigned int me = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int other = me ^ j;
    const bool ascending = (me & k) == 0;
    const float a = values[me], b = values[other];
    if ((a > b) == ascending) { values[me] = b; values[other] = a; }
"""), FAIL, "both threads of a pair compare and swap it", name="own index, no thread of a pair picked"),
    # deciles: searchsorted's "object too deep" from edges per row or per image, the edges given first, is not told
    # that the edges come first; the array searched in at the call tells which mistake, a method call names both
    Case("synthesis 4", ("xp.sort(images.ravel())", "xp.sort(images)", "ordered.size - 1", "ordered.shape[-1] - 1",
                         "ordered[xp.asarray(index)]", "ordered[..., xp.asarray(index)]"), FAIL,
         "^(?!.*edges come first).*object too deep.*your edges have shape \\(\\d+, \\d+, 9\\): deciles per row.*axis=None",
         name="edges per row (xp.sort without axis=None), given first"),
    Case("synthesis 4", ("xp.sort(images.ravel())", "xp.sort(images.reshape(len(images), -1))", "ordered.size - 1",
                         "ordered.shape[-1] - 1", "ordered[xp.asarray(index)]", "ordered[:, xp.asarray(index)]",
                         "xp.searchsorted(edges, images, side=\"right\")", "xp.digitize(images, edges)"), FAIL,
         "xp.digitize\\(x, bins\\) searches in bins.*your edges have shape \\(\\d+, 9\\): deciles per image",
         name="edges per image, digitize(images, edges)"),
    Case("synthesis 4", ("xp.sort(images.ravel())", "xp.sort(images)", "ordered.size - 1", "ordered.shape[-1] - 1",
                         "ordered[xp.asarray(index)]", "ordered[..., xp.asarray(index)]",
                         "xp.searchsorted(edges, images, side=\"right\")", "edges.searchsorted(images, side=\"right\")"),
         FAIL, "object too deep.*(either the batch went where the edges go.*or your edges have more than one axis|your edges "
         "have shape \\(5, \\d+, 9\\): deciles per row)",  # CuPy's method calls the watched function: its shape is read
         name="edges per row, edges.searchsorted(images): both causes named, or the shape where it is seen"),
    # histograms: unsigned bin numbers, the int64 offsets added in place, are told that NumPy and CuPy refuse it
    # (same_kind), and that the type is too small only where it is (uint8: 255 < 319; uint16 holds 65535)
    Case("synthesis 3", (_BINNED, _BINNED.replace("int64", "uint16")), FAIL,
         "^(?!.*(cannot hold|255|65535)).*uint16.*will not add the int64 image offsets into uint16, an unsigned integer, "
         "in place\\. Make the bin numbers int64", name="uint16 bin numbers, the offsets added in place"),
    Case("synthesis 3", (_BINNED, _BINNED.replace("int64", "uint8")), FAIL,
         "will not add the int64 image offsets into uint8, an unsigned integer, in place, and uint8 holds up to 255 only.*"
         "images x bins - 1 = 319\\. Make the bin numbers int64", name="uint8 bin numbers: refused in place, and 255 < 319"),
    Case("synthesis 3", (_BINNED, _BINNED.replace("int64", "uint32")), FAIL,
         "^(?!.*(8- or 16-bit|cannot hold|holds up to)).*bin numbers are uint32.*will not add the int64 image offsets into "
         "uint32", name="uint32 bin numbers, the offsets added in place"),
    # ReductionKernel: a ';' between statements is asked to be one expression (the text without its ';' does not
    # compile); an if ... else in reduce_expr gets a line of its own (it got the compiler's "before 'if'")
    Case("synthesis 2", (_MAP, '"float x = v; x > threshold ? x : 0.0f"'), FAIL,
         "^(?!.*float x = v x).*map_expr must be one C expression.*no declarations.*conditional expression on v directly, "
         "as in map_expr = 'v > threshold \\? v : 0'", name="map_expr a declaration, then the expression"),
    Case("synthesis 2", (_MAP, '"float x = v; return x > threshold ? x : 0.0f;"'), FAIL,
         "^(?!.*float x = v).*map_expr must be one C expression.*conditional expression on v directly",
         name="map_expr a declaration, then a return"),
    Case("synthesis 2", (_REDUCE, 'reduce_expr = "if (a > b) return a; else return b;"'), FAIL,
         "^(?!.*primary-expression)reduce_expr is one C expression.*no if \\.\\.\\. else.*a > b \\? a : b, or max\\(a, b\\)",
         name="reduce_expr an if ... else of returns"),
    Case("synthesis 2", (_REDUCE, 'reduce_expr = "a if a > b else b"'), FAIL,
         "reduce_expr is one C expression.*Python's conditional.*condition \\? value : other", name="reduce_expr Python's if"),
    Case("synthesis 2", (_REDUCE, 'reduce_expr = "a + b;;"'), FAIL, "no ';' in it, reduce_expr = 'a \\+ b'$",
         name="reduce_expr 'a + b;;'"),
]
